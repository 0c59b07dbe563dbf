package relay

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/llm"
)

// clock is a settable time source for a Store.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func testEntry(id string, content string) *entry {
	return &entry{
		key: id, sessionID: "s-" + id,
		hidden: []keptMessage{{Message: hooks.Message{Role: hooks.RoleAssistant, Content: content, ToolCalls: []hooks.ToolCall{{ID: id, Name: "t"}}}}},
		calls:  map[string]*handedCall{id: {Name: "t"}},
	}
}

func TestStoreExpiresEntriesAfterTTL(t *testing.T) {
	c := &clock{t: time.Unix(1000, 0)}
	s := NewStore(time.Minute, 10)
	s.now = c.now
	if _, kept := s.put(testEntry("a", "x")); !kept {
		t.Fatal("entry not kept")
	}
	c.add(50 * time.Second)
	if _, _, ok := s.rounds("a"); !ok {
		t.Fatal("entry gone before its ttl")
	}
	// The lookup above counts as use: the ttl runs from there.
	c.add(50 * time.Second)
	if _, _, ok := s.handed("a"); !ok {
		t.Fatal("entry gone although used within its ttl")
	}
	c.add(61 * time.Second)
	if _, _, ok := s.rounds("a"); ok {
		t.Fatal("entry outlived its ttl")
	}
	if _, _, ok := s.handed("a"); ok {
		t.Fatal("call outlived its entry")
	}
	if s.Len() != 0 {
		t.Errorf("Len = %d after expiry", s.Len())
	}
}

func TestStoreEvictsTheLeastRecentlyUsed(t *testing.T) {
	c := &clock{t: time.Unix(1000, 0)}
	s := NewStore(time.Hour, 2)
	s.now = c.now
	s.put(testEntry("a", "x"))
	s.put(testEntry("b", "x"))
	s.rounds("a") // a is now the most recent
	evicted, _ := s.put(testEntry("c", "x"))
	if evicted != 1 {
		t.Errorf("evicted %d, want 1", evicted)
	}
	if _, _, ok := s.rounds("b"); ok {
		t.Error("b survived although least recently used")
	}
	for _, k := range []string{"a", "c"} {
		if _, _, ok := s.rounds(k); !ok {
			t.Errorf("%s evicted", k)
		}
	}
	// Expired entries are dropped on the next put and counted.
	c.add(2 * time.Hour)
	evicted, _ = s.put(testEntry("d", "x"))
	if evicted != 2 || s.Len() != 1 {
		t.Errorf("evicted %d, Len %d; want 2 and 1", evicted, s.Len())
	}
}

func TestStoreBoundsItsBytes(t *testing.T) {
	s := NewStore(time.Hour, 1000)
	big := strings.Repeat("x", 3000)
	// Room for three entries and a bit, not four.
	s.maxBytes = 3*testEntry("0", big).measure() + 100
	for i := 0; i < 10; i++ {
		if _, kept := s.put(testEntry(fmt.Sprint(i), big)); !kept {
			t.Fatalf("entry %d not kept", i)
		}
		if s.bytes > s.maxBytes {
			t.Fatalf("store holds %d bytes, cap %d", s.bytes, s.maxBytes)
		}
	}
	if s.Len() != 3 {
		t.Errorf("Len = %d, want the 3 newest that fit", s.Len())
	}
	if _, _, ok := s.rounds("9"); !ok {
		t.Error("the newest entry was evicted")
	}
	if _, kept := s.put(testEntry("huge", strings.Repeat("y", 20*1024))); kept {
		t.Error("an entry larger than the cap was kept")
	}
	if _, _, ok := s.rounds("9"); !ok {
		t.Error("an oversized entry evicted others")
	}
	// A transformed result that would overflow the cap is not kept.
	s.answered("9", [32]byte{1}, hooks.ToolResult{Content: strings.Repeat("z", 20*1024)})
	if _, c, _ := s.handed("9"); c.Done {
		t.Error("a result past the cap was kept")
	}
	if s.bytes > s.maxBytes {
		t.Errorf("store holds %d bytes, cap %d", s.bytes, s.maxBytes)
	}
	var zero *Store
	if _, kept := zero.put(testEntry("a", "x")); kept {
		t.Error("a nil store kept an entry")
	}
}

func TestStoreIsSafeForConcurrentUse(t *testing.T) {
	s := NewStore(time.Hour, 50)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				id := fmt.Sprintf("%d-%d", g, i%60)
				s.put(testEntry(id, "x"))
				s.rounds(id)
				s.answered(id, [32]byte{}, hooks.ToolResult{Content: "r"})
				s.handed(id)
			}
		}(g)
	}
	wg.Wait()
	if s.Len() > 50 {
		t.Errorf("Len = %d, over the bound of 50", s.Len())
	}
}

// After eviction the continuation goes upstream as the client holds it, and
// the Observer hears of the eviction.
func TestEvictedRoundsAreLostAndCounted(t *testing.T) {
	rec := &recorder{}
	bus := newBus(t, kora(`{"usd":1}`))
	store := NewStore(time.Hour, 1)
	up := &scripted{steps: []step{
		calls("", 1, 1, tc("k1", "kora__burn", `{}`)),
		calls("", 1, 1, tc("c1", "read_file", `{}`)),
		calls("", 1, 1, tc("c2", "read_file", `{}`)),
		text("ok", 1, 1),
	}}
	r := New(Config{Provider: up, Bus: bus, Store: store, Observe: rec})
	front := testFront{llm.ProtocolChat}
	first := runOK(t, r, front, userCall("one", readFile), nil)
	runOK(t, r, front, userCall("two", readFile), nil) // evicts the first entry
	rec.mu.Lock()
	evicted := rec.evicted
	rec.mu.Unlock()
	if evicted != 1 {
		t.Errorf("observer told of %d evictions, want 1", evicted)
	}
	next := userCall("one", readFile)
	next.Request.Messages = append(next.Request.Messages,
		hooks.Message{Role: hooks.RoleAssistant, ToolCalls: first.ToolCalls},
		hooks.Message{Role: hooks.RoleTool, ToolCallID: first.ToolCalls[0].ID, Content: "data"})
	runOK(t, r, front, next, nil)
	msgs := up.calls()[3].req.Messages
	if len(msgs) != 3 || msgs[1].ToolCalls[0].ID != first.ToolCalls[0].ID || msgs[2].ToolCallID != first.ToolCalls[0].ID {
		t.Errorf("after eviction the history should be the client's own: %+v", msgs)
	}
}
