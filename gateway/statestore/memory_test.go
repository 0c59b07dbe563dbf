package statestore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// clock is a time source a test moves by hand.
type clock struct{ t time.Time }

func (c *clock) now() time.Time      { return c.t }
func (c *clock) add(d time.Duration) { c.t = c.t.Add(d) }
func newClock() *clock               { return &clock{t: time.Unix(1_700_000_000, 0)} }
func kb(n int) []byte                { return bytes.Repeat([]byte("x"), n<<10) }
func has(m *Memory, tenant, key string) bool {
	_, ok, _ := m.Get(context.Background(), tenant, key)
	return ok
}

func TestMemoryPutGetDelete(t *testing.T) {
	ctx := context.Background()
	m := NewMemory(Limits{Entries: 10, Bytes: 1 << 20}, nil)
	if err := m.Put(ctx, "a", "k", []byte("v1"), time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := m.Put(ctx, "a", "k", []byte("v2"), time.Hour); err != nil {
		t.Fatal(err)
	}
	v, ok, err := m.Get(ctx, "a", "k")
	if err != nil || !ok || string(v) != "v2" {
		t.Fatalf("Get = %q %v %v, want the value put last", v, ok, err)
	}
	if n, _, _ := m.Usage(); n != 1 {
		t.Fatalf("%d entries after putting one key twice", n)
	}
	if has(m, "b", "k") {
		t.Fatal("another tenant sees the key")
	}
	if gone, _ := m.Delete(ctx, "b", "k"); gone {
		t.Fatal("another tenant deleted the key")
	}
	if gone, _ := m.Delete(ctx, "a", "k"); !gone || has(m, "a", "k") {
		t.Fatal("Delete did not remove the key")
	}
	if gone, _ := m.Delete(ctx, "a", "k"); gone {
		t.Fatal("a second Delete reports a key")
	}
	if n, b, _ := m.Usage(); n != 0 || b != 0 {
		t.Fatalf("an empty store holds %d entries, %d bytes", n, b)
	}
}

// The value is copied: the caller's buffer may be reused.
func TestMemoryPutCopies(t *testing.T) {
	ctx := context.Background()
	m := NewMemory(Limits{Entries: 10, Bytes: 1 << 20}, nil)
	buf := []byte("first")
	m.Put(ctx, "", "k", buf, time.Hour)
	copy(buf, "XXXXX")
	if v, _, _ := m.Get(ctx, "", "k"); string(v) != "first" {
		t.Fatalf("stored value changed with the caller's buffer: %q", v)
	}
}

// Values expire ttl after their last use, by the injected clock.
func TestMemoryExpiry(t *testing.T) {
	ctx := context.Background()
	c := newClock()
	m := NewMemory(Limits{Entries: 10, Bytes: 1 << 20}, c.now)
	m.Put(ctx, "a", "used", []byte("1"), time.Hour)
	m.Put(ctx, "a", "idle", []byte("2"), time.Hour)
	c.add(50 * time.Minute)
	if !has(m, "a", "used") {
		t.Fatal("expired early")
	}
	c.add(20 * time.Minute) // used: 20m since its Get; idle: 70m
	if !has(m, "a", "used") {
		t.Fatal("a Get did not restart the ttl")
	}
	if has(m, "a", "idle") {
		t.Fatal("a value unused for longer than its ttl is still there")
	}
	c.add(61 * time.Minute)
	// Expired values are dropped by a Put too, not only when asked for.
	m.Put(ctx, "b", "other", []byte("3"), time.Hour)
	m.Put(ctx, "a", "new", []byte("4"), time.Hour)
	if n, _, _ := m.Usage(); n != 2 {
		t.Fatalf("%d entries, want the 2 just put", n)
	}
}

func TestMemoryTooLarge(t *testing.T) {
	ctx := context.Background()
	m := NewMemory(Limits{Entries: 10, Bytes: 1 << 20, TenantBytes: 8 << 10}, nil)
	if err := m.Put(ctx, "a", "k", kb(8), time.Hour); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Put of more than a tenant's share: %v, want ErrTooLarge", err)
	}
	if err := m.Put(ctx, "a", "k", kb(4), 0); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Put with no ttl: %v, want ErrTooLarge (nothing kept)", err)
	}
	if n, _, _ := m.Usage(); n != 0 {
		t.Fatal("a refused value was kept")
	}
	none := NewMemory(Limits{}, nil)
	if err := none.Put(ctx, "a", "k", []byte("v"), time.Hour); err == nil || has(none, "a", "k") {
		t.Fatal("a store of no bytes kept a value")
	}
}

// A tenant's own bound evicts its own least recently used values.
func TestMemoryTenantBound(t *testing.T) {
	ctx := context.Background()
	m := NewMemory(Limits{Entries: 100, Bytes: 1 << 20, TenantEntries: 3}, nil)
	m.Put(ctx, "b", "keep", []byte("b"), time.Hour)
	for i := range 5 {
		m.Put(ctx, "a", fmt.Sprint(i), []byte("a"), time.Hour)
		if i == 2 {
			has(m, "a", "0") // 0 is now used more recently than 1 and 2
		}
	}
	for key, want := range map[string]bool{"0": true, "1": false, "2": false, "3": true, "4": true} {
		if has(m, "a", key) != want {
			t.Errorf("tenant a key %s kept = %v, want %v", key, !want, want)
		}
	}
	if !has(m, "b", "keep") {
		t.Fatal("tenant a's bound evicted tenant b's value")
	}
}

// A flood of big values from one tenant evicts its own, never the values
// of a tenant holding less, by bytes and by count.
func TestMemoryFloodEvictsTheFlooder(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		lim  Limits
		size int
	}{
		{"bytes", Limits{Entries: 1000, Bytes: 64 << 10}, 6},
		{"entries", Limits{Entries: 8, Bytes: 1 << 30}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := NewMemory(tc.lim, nil)
			for i := range 2 {
				if err := m.Put(ctx, "quiet", fmt.Sprint(i), kb(tc.size), time.Hour); err != nil {
					t.Fatal(err)
				}
			}
			for i := range 200 {
				if err := m.Put(ctx, "loud", fmt.Sprint(i), kb(tc.size), time.Hour); err != nil {
					t.Fatal(err)
				}
			}
			for i := range 2 {
				if !has(m, "quiet", fmt.Sprint(i)) {
					t.Fatalf("the flood evicted the quiet tenant's value %d", i)
				}
			}
			if !has(m, "loud", "199") {
				t.Fatal("the flooder's newest value is not kept")
			}
			n, b, ev := m.Usage()
			if n > tc.lim.Entries || b > tc.lim.Bytes || ev == 0 {
				t.Fatalf("store holds %d entries, %d bytes, evicted %d: over its bounds %+v or evicted nothing", n, b, ev, tc.lim)
			}
		})
	}
}

// A tenant holding more than the others gives way when another needs room.
func TestMemoryHeaviestGivesWay(t *testing.T) {
	ctx := context.Background()
	m := NewMemory(Limits{Entries: 4, Bytes: 1 << 30}, nil)
	for i := range 4 {
		m.Put(ctx, "big", fmt.Sprint(i), []byte("v"), time.Hour)
	}
	m.Put(ctx, "small", "s", []byte("v"), time.Hour)
	if !has(m, "small", "s") || has(m, "big", "0") || !has(m, "big", "3") {
		t.Fatal("the newcomer's value did not take the oldest value of the tenant holding the most")
	}
}

// Counters of ended windows are dropped as new ones come, so that many
// keys over time hold no more than those of the current windows.
func TestMemoryCountersSwept(t *testing.T) {
	ctx := context.Background()
	c := newClock()
	m := NewMemory(Limits{}, c.now)
	for round := range 10 {
		for i := range 3 * minSweep {
			if _, err := m.Reserve(ctx, "a", fmt.Sprint(round, "/", i), 1, 0, time.Minute); err != nil {
				t.Fatal(err)
			}
		}
		c.add(time.Minute)
	}
	if n := len(m.counters); n > 2*3*minSweep {
		t.Fatalf("%d counters held after 10 windows of %d keys each", n, 3*minSweep)
	}
	if _, err := m.Reserve(ctx, "a", "k", 1, 0, time.Microsecond); err == nil {
		t.Fatal("a window shorter than a millisecond was taken")
	}
}
