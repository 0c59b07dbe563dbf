// Package statestoretest is the behaviour every statestore backend shares,
// as a suite each backend's tests run, and a throwaway redis-server for the
// tests of the Redis backend.
package statestoretest

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/hookhost/hookhost/gateway/statestore"
)

// Backend is what the suite tests: a Store and a Counter in one.
type Backend interface {
	statestore.Store
	statestore.Counter
}

// Harness is one fresh backend under test and what the suite needs to
// know of it.
type Harness struct {
	Backend Backend
	// Now reads, and Sleep lets pass, the time by which the backend
	// expires values and ends windows: a clock the harness moves by hand,
	// or the real one.
	Now   func() time.Time
	Sleep func(time.Duration)
	// TTL is the shortest ttl and window the suite tries. With the real
	// clock a check whose timing a loaded machine spoilt (a sleep that
	// overran) is inconclusive, and is tried again with twice the time.
	TTL time.Duration
	// Fits is the size of a value the backend keeps, large enough to be
	// compressed where the backend compresses; TooLarge is the size of one
	// it refuses with ErrTooLarge.
	Fits, TooLarge int
	// Bounded opens another fresh backend, on the same clock, whose
	// tenants each hold no more than tenantEntries values and
	// tenantBytes bytes (0: no bound).
	Bounded func(t *testing.T, tenantEntries int, tenantBytes int64) Backend
}

// attempts is how many times a timing-dependent check is tried, doubling
// its times, before the suite gives up on it.
const attempts = 6

// margin covers the backend's clock counting in milliseconds.
const margin = 5 * time.Millisecond

// long is a window no test outlasts, unless it starts just before the
// window's end; then the check is tried again.
const long = time.Hour

// Run runs the suite, each test on a fresh backend from open.
func Run(t *testing.T, open func(t *testing.T) Harness) {
	for _, tc := range []struct {
		name string
		test func(*testing.T, Harness)
	}{
		{"PutGetDelete", testPutGetDelete},
		{"TenantIsolation", testTenantIsolation},
		{"Expiry", testExpiry},
		{"TooLarge", testTooLarge},
		{"LargeValues", testLargeValues},
		{"TenantBound", testTenantBound},
		{"CounterLimit", testCounterLimit},
		{"CounterSettle", testCounterSettle},
		{"CounterRollover", testCounterRollover},
		{"CounterSettleAfterWindow", testCounterSettleAfterWindow},
		{"CounterConcurrent", testCounterConcurrent},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.test(t, open(t)) })
	}
}

func get(t *testing.T, s statestore.Store, tenant, key string) ([]byte, bool) {
	t.Helper()
	v, ok, err := s.Get(context.Background(), tenant, key)
	if err != nil {
		t.Fatalf("Get(%q, %q): %v", tenant, key, err)
	}
	return v, ok
}

func put(t *testing.T, s statestore.Store, tenant, key, value string, ttl time.Duration) {
	t.Helper()
	if err := s.Put(context.Background(), tenant, key, []byte(value), ttl); err != nil {
		t.Fatalf("Put(%q, %q): %v", tenant, key, err)
	}
}

func reserve(t *testing.T, c statestore.Counter, tenant, key string, n, limit int64, window time.Duration) statestore.Reservation {
	t.Helper()
	r, err := c.Reserve(context.Background(), tenant, key, n, limit, window)
	if err != nil {
		t.Fatalf("Reserve(%q, %q, %d, %d, %v): %v", tenant, key, n, limit, window, err)
	}
	return r
}

func settle(t *testing.T, c statestore.Counter, r statestore.Reservation, delta int64) {
	t.Helper()
	if err := c.Settle(context.Background(), r, delta); err != nil {
		t.Fatalf("Settle(%+v, %d): %v", r, delta, err)
	}
}

func testPutGetDelete(t *testing.T, h Harness) {
	s, ctx := h.Backend, context.Background()
	put(t, s, "a", "k", "v1", long)
	put(t, s, "a", "k", "v2", long)
	if v, ok := get(t, s, "a", "k"); !ok || string(v) != "v2" {
		t.Fatalf("Get = %q %v, want the value put last", v, ok)
	}
	put(t, s, "a", "empty", "", long)
	if v, ok := get(t, s, "a", "empty"); !ok || len(v) != 0 {
		t.Fatalf("Get of an empty value = %q %v", v, ok)
	}
	if _, ok := get(t, s, "a", "never"); ok {
		t.Fatal("Get of a key never put found one")
	}
	if gone, err := s.Delete(ctx, "a", "k"); err != nil || !gone {
		t.Fatalf("Delete = %v %v, want true", gone, err)
	}
	if _, ok := get(t, s, "a", "k"); ok {
		t.Fatal("Delete did not remove the key")
	}
	if gone, err := s.Delete(ctx, "a", "k"); err != nil || gone {
		t.Fatalf("a second Delete = %v %v, want false", gone, err)
	}
}

// Values and counters of one tenant are not another's, however their
// names are made, and a counter is not a value of the same name.
func testTenantIsolation(t *testing.T, h Harness) {
	s, ctx := h.Backend, context.Background()
	pairs := [][2]string{{"a", "k"}, {"b", "k"}, {"a:b", "c"}, {"a", "b:c"}, {"a%3Ab", "c"}, {"", "a:k"}}
	for i, p := range pairs {
		put(t, s, p[0], p[1], fmt.Sprint(i), long)
	}
	for i, p := range pairs {
		if v, ok := get(t, s, p[0], p[1]); !ok || string(v) != fmt.Sprint(i) {
			t.Fatalf("tenant %q key %q holds %q %v, want %d: two pairs share a key", p[0], p[1], v, ok, i)
		}
	}
	if gone, err := s.Delete(ctx, "b", "k"); err != nil || !gone {
		t.Fatalf("Delete = %v %v", gone, err)
	}
	if _, ok := get(t, s, "a", "k"); !ok {
		t.Fatal("tenant b's Delete removed tenant a's value")
	}

	for try := range attempts {
		key := fmt.Sprint("k", try)
		ra := reserve(t, s, "a", key, 3, 0, long)
		rb := reserve(t, s, "b", key, 5, 0, long)
		rab := reserve(t, s, "a:b", "c", 7, 0, long)
		ra2 := reserve(t, s, "a", key, 0, 0, long)
		if ra.Start != ra2.Start {
			continue // a window ended between the two: try again
		}
		if ra2.Count != 3 || rb.Count != 5 || rab.Count != 7 {
			t.Fatalf("counts %d %d %d, want 3 5 7: tenants share a counter", ra2.Count, rb.Count, rab.Count)
		}
		if _, ok := get(t, s, "a", "k"); !ok {
			t.Fatal("a counter replaced the value of the same name")
		}
		return
	}
	t.Fatalf("every one of %d tries straddled a window's end", attempts)
}

// Values expire ttl after their last Put or Get.
func testExpiry(t *testing.T, h Harness) {
	for try, ttl := 0, h.TTL; try < attempts; try, ttl = try+1, 2*ttl {
		used, idle := fmt.Sprint("used", try), fmt.Sprint("idle", try)
		t0 := h.Now()
		put(t, h.Backend, "a", used, "1", ttl)
		put(t, h.Backend, "a", idle, "2", ttl)
		t1 := h.Now()
		h.Sleep(ttl * 6 / 10)
		t2 := h.Now()
		_, usedOK := get(t, h.Backend, "a", used)
		t3 := h.Now()
		if t3.Sub(t0) >= ttl-margin {
			continue // the sleep overran: used may have expired by right
		}
		if !usedOK {
			t.Fatalf("a value expired %v after its Put, before its ttl %v", t3.Sub(t0), ttl)
		}
		h.Sleep(ttl * 6 / 10)
		t4 := h.Now()
		_, usedOK = get(t, h.Backend, "a", used)
		_, idleOK := get(t, h.Backend, "a", idle)
		t5 := h.Now()
		if t5.Sub(t2) >= ttl-margin || t4.Sub(t1) <= ttl+margin {
			continue
		}
		if !usedOK {
			t.Fatalf("a value expired %v after a Get, before its ttl %v: the Get did not restart it", t5.Sub(t2), ttl)
		}
		if idleOK {
			t.Fatalf("a value unused for %v, longer than its ttl %v, is still there", t4.Sub(t1), ttl)
		}
		return
	}
	t.Fatalf("every one of %d tries was spoilt by sleeps that overran", attempts)
}

func testTooLarge(t *testing.T, h Harness) {
	ctx := context.Background()
	if err := h.Backend.Put(ctx, "a", "k", make([]byte, h.TooLarge), long); !errors.Is(err, statestore.ErrTooLarge) {
		t.Fatalf("Put of %d bytes: %v, want ErrTooLarge", h.TooLarge, err)
	}
	if _, ok := get(t, h.Backend, "a", "k"); ok {
		t.Fatal("a refused value was kept")
	}
	if err := h.Backend.Put(ctx, "a", "k", []byte("v"), 0); err == nil {
		t.Fatal("Put with no ttl succeeded")
	}
	if _, ok := get(t, h.Backend, "a", "k"); ok {
		t.Fatal("a value put with no ttl was kept")
	}
}

// Values as large as the backend keeps come back as they went, whether
// they compress well or not at all.
func testLargeValues(t *testing.T, h Harness) {
	text := bytes.Repeat([]byte(`{"role":"assistant","content":"hello"},`), h.Fits/38+1)[:h.Fits]
	noise := make([]byte, h.Fits)
	rand.Read(noise)
	for name, v := range map[string][]byte{"text": text, "noise": noise, "1KiB": noise[:1024], "1KiB+1": text[:1025]} {
		if err := h.Backend.Put(context.Background(), "a", name, v, long); err != nil {
			t.Fatalf("Put of %s (%d bytes): %v", name, len(v), err)
		}
		if got, ok := get(t, h.Backend, "a", name); !ok || !bytes.Equal(got, v) {
			t.Fatalf("%s (%d bytes) came back as %d bytes, found %v", name, len(v), len(got), ok)
		}
	}
}

// Reserve admits up to the limit and no more, and reports the count.
func testCounterLimit(t *testing.T, h Harness) {
	for try := range attempts {
		key := fmt.Sprint("rpm", try)
		rs := []statestore.Reservation{
			reserve(t, h.Backend, "a", key, 1, 2, long),
			reserve(t, h.Backend, "a", key, 1, 2, long),
			reserve(t, h.Backend, "a", key, 1, 2, long),
			reserve(t, h.Backend, "a", key, 0, 0, long),
			reserve(t, h.Backend, "a", key, 3, 0, long),
		}
		if rs[0].Start != rs[4].Start {
			continue
		}
		for i, want := range []struct {
			ok    bool
			count int64
		}{{true, 1}, {true, 2}, {false, 2}, {true, 2}, {true, 5}} {
			if rs[i].OK != want.ok || rs[i].Count != want.count {
				t.Fatalf("Reserve %d: ok %v count %d, want %v %d", i, rs[i].OK, rs[i].Count, want.ok, want.count)
			}
		}
		if r := rs[2]; r.RetryAfter <= 0 || r.RetryAfter > long {
			t.Fatalf("a refused reservation says retry after %v", r.RetryAfter)
		}
		if r := reserve(t, h.Backend, "a", key, 10, 5, long); r.OK || r.Count != 5 {
			t.Fatalf("n larger than the limit: ok %v count %d, want refused at 5", r.OK, r.Count)
		}
		return
	}
	t.Fatalf("every one of %d tries straddled a window's end", attempts)
}

// Settle corrects the count a reservation was made in, admitted or not,
// never below 0.
func testCounterSettle(t *testing.T, h Harness) {
	for try := range attempts {
		key := fmt.Sprint("tpm", try)
		r := reserve(t, h.Backend, "a", key, 10, 100, long)
		settle(t, h.Backend, r, 5)
		c1 := reserve(t, h.Backend, "a", key, 0, 0, long)
		settle(t, h.Backend, r, -12)
		c2 := reserve(t, h.Backend, "a", key, 0, 0, long)
		refused := reserve(t, h.Backend, "a", key, 200, 100, long)
		settle(t, h.Backend, refused, 7)
		c3 := reserve(t, h.Backend, "a", key, 0, 0, long)
		settle(t, h.Backend, r, -100)
		c4 := reserve(t, h.Backend, "a", key, 0, 0, long)
		if r.Start != c4.Start {
			continue
		}
		if !r.OK || c1.Count != 15 || c2.Count != 3 || refused.OK || c3.Count != 10 || c4.Count != 0 {
			t.Fatalf("reserve 10 (ok %v), +5: %d, -12: %d, refused 200 (ok %v) +7: %d, -100: %d; want true 15 3 false 10 0",
				r.OK, c1.Count, c2.Count, refused.OK, c3.Count, c4.Count)
		}
		return
	}
	t.Fatalf("every one of %d tries straddled a window's end", attempts)
}

// When a window ends its count starts again from 0.
func testCounterRollover(t *testing.T, h Harness) {
	for try, w := 0, h.TTL; try < attempts; try, w = try+1, 2*w {
		key := fmt.Sprint("roll", try)
		r1 := reserve(t, h.Backend, "a", key, 1, 2, w)
		r2 := reserve(t, h.Backend, "a", key, 1, 2, w)
		r3 := reserve(t, h.Backend, "a", key, 1, 2, w)
		if r1.Start != r3.Start {
			continue
		}
		if !r1.OK || !r2.OK || r3.OK || r3.Count != 2 {
			t.Fatalf("window of %v, limit 2: ok %v %v %v, count %d", w, r1.OK, r2.OK, r3.OK, r3.Count)
		}
		h.Sleep(r3.RetryAfter + margin)
		r4 := reserve(t, h.Backend, "a", key, 1, 2, w)
		if !r4.OK || r4.Count != 1 || !r4.Start.After(r3.Start) {
			t.Fatalf("after waiting out the window (%v) the count is %d (ok %v, window %v, was %v)", r3.RetryAfter, r4.Count, r4.OK, r4.Start, r3.Start)
		}
		return
	}
	t.Fatalf("every one of %d tries straddled a window's end", attempts)
}

// Settling a reservation whose window has ended counts more usage in the
// current window and drops a refund.
func testCounterSettleAfterWindow(t *testing.T, h Harness) {
	for try, w := 0, h.TTL; try < attempts; try, w = try+1, 2*w {
		key := fmt.Sprint("late", try)
		old := reserve(t, h.Backend, "a", key, 10, 0, w)
		h.Sleep(old.RetryAfter + margin)
		now := reserve(t, h.Backend, "a", key, 3, 0, w)
		settle(t, h.Backend, old, -5)
		settle(t, h.Backend, old, 4)
		after := reserve(t, h.Backend, "a", key, 0, 0, w)
		if now.Start != after.Start {
			continue
		}
		if !now.Start.After(old.Start) || after.Count != 7 {
			t.Fatalf("3 in a new window, then a late -5 and +4: %d, want 7", after.Count)
		}
		return
	}
	t.Fatalf("every one of %d tries straddled a window's end", attempts)
}

// Concurrent reservations admit exactly the limit, and concurrent
// additions sum exactly.
func testCounterConcurrent(t *testing.T, h Harness) {
	const workers, each, limit = 8, 40, 100
	for try := range attempts {
		limited, open := fmt.Sprint("limited", try), fmt.Sprint("open", try)
		var (
			wg     sync.WaitGroup
			mu     sync.Mutex
			ok     int
			starts = map[time.Time]bool{}
			errs   []error
		)
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range each {
					r, err := h.Backend.Reserve(context.Background(), "a", limited, 1, limit, long)
					o, err2 := h.Backend.Reserve(context.Background(), "a", open, 3, 0, long)
					mu.Lock()
					if err := errors.Join(err, err2); err != nil {
						errs = append(errs, err)
					}
					if r.OK {
						ok++
					}
					starts[r.Start], starts[o.Start] = true, true
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		if len(errs) > 0 {
			t.Fatal(errs[0])
		}
		l := reserve(t, h.Backend, "a", limited, 0, 0, long)
		o := reserve(t, h.Backend, "a", open, 0, 0, long)
		starts[l.Start], starts[o.Start] = true, true
		if len(starts) != 1 {
			continue
		}
		if ok != limit || l.Count != limit {
			t.Fatalf("%d reservations of 1 under a limit of %d: %d admitted, count %d", workers*each, limit, ok, l.Count)
		}
		if o.Count != 3*workers*each {
			t.Fatalf("%d concurrent additions of 3 sum to %d, want %d", workers*each, o.Count, 3*workers*each)
		}
		return
	}
	t.Fatalf("every one of %d tries straddled a window's end", attempts)
}

// A tenant's bound makes room by dropping its own values, those used
// least recently first, never another tenant's; a Delete or a replacement
// gives back what the value held.
func testTenantBound(t *testing.T, h Harness) {
	ctx := context.Background()
	s := h.Bounded(t, 3, 0)
	has := func(tenant, key string) bool { _, ok := get(t, s, tenant, key); return ok }
	// Apart in time, so that values nearest to expiring are never a tie.
	step := func() { h.Sleep(margin) }
	put(t, s, "quiet", "keep", "q", long)
	for i := range 5 {
		step()
		put(t, s, "a", fmt.Sprint(i), "v", long)
		if i == 2 {
			step()
			has("a", "0") // 0 is now used more recently than 1 and 2
		}
	}
	want := map[string]bool{"0": true, "1": false, "2": false, "3": true, "4": true}
	for key, w := range want {
		if has("a", key) != w {
			t.Fatalf("tenant a's value %s kept = %v, want %v (bound of 3, 0 used after 2)", key, !w, w)
		}
	}
	if !has("quiet", "keep") {
		t.Fatal("tenant a's bound dropped another tenant's value")
	}
	if gone, err := s.Delete(ctx, "a", "3"); err != nil || !gone {
		t.Fatalf("Delete = %v %v", gone, err)
	}
	step()
	put(t, s, "a", "4", "replaced", long)
	step()
	put(t, s, "a", "5", "v", long)
	for _, key := range []string{"0", "4", "5"} {
		if !has("a", key) {
			t.Fatalf("value %s was dropped though a Delete and a replacement left room for it", key)
		}
	}

	const bound, size = 64 << 10, 6 << 10
	s = h.Bounded(t, 0, bound)
	whole := make([]byte, bound) // incompressible: as large stored as given
	rand.Read(whole)
	noise := whole[:size]
	if err := s.Put(ctx, "a", "k", whole, long); !errors.Is(err, statestore.ErrTooLarge) {
		t.Fatalf("Put of a tenant's whole bound: %v, want ErrTooLarge", err)
	}
	for i := range 2 {
		if err := s.Put(ctx, "quiet", fmt.Sprint(i), noise, long); err != nil {
			t.Fatal(err)
		}
	}
	const flood = 40
	for i := range flood {
		step()
		if err := s.Put(ctx, "loud", fmt.Sprint(i), noise, long); err != nil {
			t.Fatal(err)
		}
	}
	kept := 0
	for i := range flood {
		if has("loud", fmt.Sprint(i)) {
			kept++
		}
	}
	if !has("loud", fmt.Sprint(flood-1)) || has("loud", "0") {
		t.Fatal("the flood did not keep its newest value and drop its oldest")
	}
	if kept*size > bound || kept < bound/size/2 {
		t.Fatalf("a tenant bounded to %d bytes keeps %d values of %d", bound, kept, size)
	}
	for i := range 2 {
		if !has("quiet", fmt.Sprint(i)) {
			t.Fatal("one tenant's flood dropped another's value")
		}
	}
}
