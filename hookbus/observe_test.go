package hookbus_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookhost/hookhost/hookbus"
	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/hookstretch"
	"github.com/hookhost/hookhost/internal/wiretest"
)

// batching records the observer batches a plugin is sent and forwards them
// to next (a plugin over protocol v2, or local, which answers each event
// in-process); block, when set, holds each batch until it is closed.
type batching struct {
	hooks.Plugin
	next  hookstretch.Batcher // nil: answer each event with Plugin.Handle
	block chan struct{}

	mu      sync.Mutex
	batches [][]string // each event's tool or model name
}

var _ hookstretch.Batcher = (*batching)(nil)

func (b *batching) HonoursContext() bool { return true }

func (b *batching) ObserveBatch(ctx context.Context, events []hookstretch.Event, done func(int, error)) error {
	names := make([]string, len(events))
	for i, ev := range events {
		names[i] = eventName(ev.Payload)
	}
	b.mu.Lock()
	b.batches = append(b.batches, names)
	b.mu.Unlock()
	if b.block != nil {
		<-b.block
	}
	if b.next != nil {
		return b.next.ObserveBatch(ctx, events, done)
	}
	for i, ev := range events {
		cctx, cancel := context.WithTimeout(ctx, ev.Timeout)
		_, err := b.Plugin.Handle(cctx, ev.Hook, ev.Payload)
		cancel()
		done(i, err)
	}
	return nil
}

func (b *batching) sent() [][]string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([][]string(nil), b.batches...)
}

func eventName(payload any) string {
	switch p := payload.(type) {
	case hooks.ToolCallOutcome:
		return p.Name
	case hooks.Inference:
		return p.Model
	}
	return fmt.Sprintf("%T", payload)
}

func toolOutcome(name string) hooks.ToolCallOutcome {
	return hooks.ToolCallOutcome{Name: name, Arguments: json.RawMessage(`{}`)}
}

// A worker lingering for more events sends what it has when Flush or Close
// waits, however long the linger: with it an hour here, the test could not
// end otherwise. Events keep their order across batches, and no batch is
// over the bound.
func TestObserverBatchesKeepOrderBoundAndFlushPromptly(t *testing.T) {
	t.Cleanup(hookbus.SetObserverLinger(time.Hour))
	var mu sync.Mutex
	var seen []string
	p := &hooks.Funcs{Name: "ledger", PostToolCallFunc: func(_ context.Context, ev hooks.ToolCallOutcome) error {
		mu.Lock()
		seen = append(seen, ev.Name)
		mu.Unlock()
		return nil
	}}
	bp := &batching{Plugin: p}
	b, err := hookbus.New([]hookbus.Member{{Plugin: bp}}, hookbus.Config{ObserverQueue: 1000})
	if err != nil {
		t.Fatal(err)
	}
	flush := func() {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := b.Flush(ctx); err != nil {
			t.Fatalf("Flush waited for the linger: %v", err)
		}
	}

	b.PostToolCall(toolOutcome("a"))
	b.PostToolCall(toolOutcome("b"))
	b.PostToolCall(toolOutcome("c"))
	flush()
	// The first event goes alone: until the plugin takes a batch, the Bus
	// sends one event at a time.
	if got := fmt.Sprint(bp.sent()); got != "[[a] [b c]]" {
		t.Fatalf("batches %s, want the first event alone, then the others in one", got)
	}

	const n = 300
	var want []string
	for i := range n {
		want = append(want, fmt.Sprint(i))
		b.PostToolCall(toolOutcome(fmt.Sprint(i)))
	}
	flush()
	batches := bp.sent()[2:]
	var got []string
	for _, batch := range batches {
		if len(batch) > hookbus.MaxObserverBatch {
			t.Fatalf("a batch of %d events, over the bound of %d", len(batch), hookbus.MaxObserverBatch)
		}
		got = append(got, batch...)
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("batched out of order or lost events:\n got %v\nwant %v", got, want)
	}
	if len(batches) < n/hookbus.MaxObserverBatch {
		t.Fatalf("%d batches for %d events", len(batches), n)
	}

	// Close cuts a linger short too, and delivers the event.
	b.PostToolCall(toolOutcome("last"))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := b.Close(ctx); err != nil {
		t.Fatalf("Close waited for the linger: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != n+4 || seen[len(seen)-1] != "last" {
		t.Fatalf("delivered %d events ending %q, want %d ending last", len(seen), seen[len(seen)-1], n+4)
	}
	if st := b.Stats(); st.Calls() != n+4 || len(st.Dropped) != 0 {
		t.Fatalf("stats %+v, want %d calls and nothing dropped", st, n+4)
	}
}

// While a batch is being delivered, what is queued behind it waits and
// goes in the next batches, at most the bound each, in order.
func TestObserverBatchesGatherWhatQueuedMeanwhile(t *testing.T) {
	t.Cleanup(hookbus.SetObserverLinger(0))
	p := &hooks.Funcs{Name: "ledger", PostToolCallFunc: func(context.Context, hooks.ToolCallOutcome) error { return nil }}
	bp := &batching{Plugin: p, block: make(chan struct{})}
	b, err := hookbus.New([]hookbus.Member{{Plugin: bp}}, hookbus.Config{ObserverQueue: 1000})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close(context.Background())
	b.PostToolCall(toolOutcome("first"))
	waitUntil(t, "the first batch to be sent", func() bool { return len(bp.sent()) == 1 })
	for i := range 100 {
		b.PostToolCall(toolOutcome(fmt.Sprint(i)))
	}
	close(bp.block)
	if err := b.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	sent := bp.sent()
	if len(sent) != 3 || len(sent[1]) != hookbus.MaxObserverBatch || len(sent[2]) != 100-hookbus.MaxObserverBatch {
		sizes := make([]int, len(sent))
		for i, s := range sent {
			sizes[i] = len(s)
		}
		t.Fatalf("batch sizes %v, want [1 %d %d]", sizes, hookbus.MaxObserverBatch, 100-hookbus.MaxObserverBatch)
	}
	if sent[1][0] != "0" || sent[2][0] != fmt.Sprint(hookbus.MaxObserverBatch) {
		t.Fatalf("batches out of order: %v", sent)
	}
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// Every event of a batch is counted, logged and recorded as its own hook's
// call, exactly as a plain delivery of it: the same figures whether the
// plugin is in-process (one by one) or over protocol v2 (in batches), a
// failed event not ending its batch.
func TestObserverBatchFailuresAreCountedPerEvent(t *testing.T) {
	t.Cleanup(hookbus.SetObserverLinger(time.Hour))
	for _, way := range wiretest.Ways {
		t.Run(way.Name, func(t *testing.T) {
			block := make(chan struct{})
			t.Cleanup(func() { close(block) })
			var mu sync.Mutex
			var delivered []string
			p := &hooks.Funcs{
				Name: "picky",
				PostToolCallFunc: func(ctx context.Context, ev hooks.ToolCallOutcome) error {
					switch ev.Name {
					case "fail":
						return errors.New("the ledger is read-only")
					case "panic":
						panic("ledger bug")
					case "hang":
						select {
						case <-block:
						case <-ctx.Done():
						}
						return ctx.Err()
					}
					mu.Lock()
					delivered = append(delivered, ev.Name)
					mu.Unlock()
					return nil
				},
				PostLLMCallFunc: func(_ context.Context, ev hooks.Inference) error {
					mu.Lock()
					delivered = append(delivered, "llm:"+ev.Model)
					mu.Unlock()
					return nil
				},
			}
			remote := wiretest.Over(t, way, p)
			var member hooks.Plugin = remote
			var bp *batching
			if nb, ok := remote.(hookstretch.Batcher); ok && way.Version == 2 {
				bp = &batching{Plugin: remote, next: nb}
				member = bp
			}
			var recMu sync.Mutex
			var records []hookbus.CallRecord
			log := &syncBuffer{}
			b, err := hookbus.New([]hookbus.Member{{Plugin: member, Options: hookbus.Options{Timeout: 300 * time.Millisecond}}},
				hookbus.Config{Logger: testLogger(log), OnCall: func(_ context.Context, c hookbus.CallRecord) {
					recMu.Lock()
					records = append(records, c)
					recMu.Unlock()
				}})
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close(context.Background())
			for _, name := range []string{"one", "fail", "two", "panic", "hang", "three"} {
				b.PostToolCall(toolOutcome(name))
			}
			b.PostLLMCall(hooks.Inference{Model: "m"})
			if err := b.Flush(context.Background()); err != nil {
				t.Fatal(err)
			}
			if bp != nil {
				if got := fmt.Sprint(bp.sent()); got != "[[one] [fail two panic hang three m]]" {
					t.Fatalf("batches %s, want the first event alone (the plugin had taken no batch yet), then every other in one", got)
				}
			}
			mu.Lock()
			if got := strings.Join(delivered, " "); got != "one two three llm:m" {
				t.Errorf("delivered %q, want every event after a failed one too", got)
			}
			mu.Unlock()
			st := b.Stats()
			for kind, want := range map[hookbus.FailureKind]uint64{hookbus.KindError: 1, hookbus.KindPanic: 1, hookbus.KindTimeout: 1} {
				if got := st.Failures("picky", hooks.PostToolCall, kind); got != want {
					t.Errorf("%s failures of post_tool_call: %d, want %d (%+v)", kind, got, want, st.Hooks)
				}
			}
			calls := map[hooks.Name]uint64{}
			for _, h := range st.Hooks {
				calls[h.Hook] = h.Calls
			}
			if calls[hooks.PostToolCall] != 6 || calls[hooks.PostLLMCall] != 1 {
				t.Errorf("calls %v, want 6 post_tool_call and 1 post_llm_call", calls)
			}
			recMu.Lock()
			var kinds []string
			for _, r := range records {
				kinds = append(kinds, fmt.Sprintf("%s:%s:%s", r.Hook, eventName(r.Payload), r.Kind))
				if r.Plugin != "picky" || (r.Kind == hookbus.KindNone) != (r.Err == nil) {
					t.Errorf("record %+v", r)
				}
			}
			recMu.Unlock()
			want := "post_tool_call:one:none post_tool_call:fail:error post_tool_call:two:none post_tool_call:panic:panic " +
				"post_tool_call:hang:timeout post_tool_call:three:none post_llm_call:m:none"
			if got := strings.Join(kinds, " "); got != want {
				t.Errorf("records\n got %s\nwant %s", got, want)
			}
			for _, kind := range []string{"error", "panic", "timeout"} {
				if !strings.Contains(log.String(), `"kind":"`+kind+`"`) {
					t.Errorf("no WARN for the %s failure:\n%s", kind, log.String())
				}
			}
		})
	}
}

// declining declines batches, as a plugin process speaking protocol v1 does.
type declining struct {
	hooks.Plugin
	asked int
}

func (r *declining) ObserveBatch(context.Context, []hookstretch.Event, func(int, error)) error {
	r.asked++
	return hookstretch.ErrNoBatch
}

// A plugin that declines batches gets its events one by one, each counted
// once.
func TestObserverBatchDeclinedDeliversOneByOne(t *testing.T) {
	var seen []string
	p := &hooks.Funcs{Name: "old", PostToolCallFunc: func(_ context.Context, ev hooks.ToolCallOutcome) error {
		seen = append(seen, ev.Name)
		return nil
	}}
	rp := &declining{Plugin: p}
	b := newBus(t, hookbus.Member{Plugin: rp})
	for _, n := range []string{"a", "b", "c"} {
		b.PostToolCall(toolOutcome(n))
	}
	if err := b.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if strings.Join(seen, " ") != "a b c" || rp.asked == 0 {
		t.Fatalf("delivered %v after %d declined batches", seen, rp.asked)
	}
	if got := b.Stats().Calls(); got != 3 {
		t.Fatalf("%d calls counted, want 3", got)
	}
}

// shortchanging reports the first event of each batch and then gives up,
// breaking the Batcher contract.
type shortchanging struct{ hooks.Plugin }

func (shortchanging) ObserveBatch(_ context.Context, _ []hookstretch.Event, done func(int, error)) error {
	done(0, nil)
	return errors.New("the adapter lost its connection")
}

// An adapter that leaves events without an outcome cannot lose them: they
// count as failed.
func TestObserverBatchEventsWithoutOutcomeCountAsFailed(t *testing.T) {
	t.Cleanup(hookbus.SetObserverLinger(time.Hour))
	p := &hooks.Funcs{Name: "lossy", PostToolCallFunc: func(context.Context, hooks.ToolCallOutcome) error { return nil }}
	b := newBus(t, hookbus.Member{Plugin: shortchanging{p}})
	// The first goes alone; the three others in one batch.
	for _, n := range []string{"a", "b", "c", "d"} {
		b.PostToolCall(toolOutcome(n))
	}
	if err := b.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	st := b.Stats()
	if st.Calls() != 4 || st.Failures("lossy", hooks.PostToolCall, hookbus.KindError) != 2 {
		t.Fatalf("stats %+v, want 4 calls of which 2 failed", st.Hooks)
	}
}
