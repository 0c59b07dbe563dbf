package kora

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/hookhost/hookhost/internal/syncbuf"
	"github.com/hookhost/hookhost/plugins/kora/internal/ledger"
)

// fakeBatches is a batchStore that keeps what it is given, fails while
// told to, and counts its reads.
type fakeBatches struct {
	mu      sync.Mutex
	batches [][2]int // sizes of the committed batches: inferences, tool calls
	infs    []ledger.Inference
	calls   []ledger.ToolCall
	// fail, when set, decides the error of a batch before it commits.
	fail  func(infs []ledger.Inference, calls []ledger.ToolCall) error
	burns int
	// burned is what Burn answers, by route, in nano-dollars.
	burned map[string]int64
}

func (f *fakeBatches) AppendBatch(_ context.Context, infs []ledger.Inference, calls []ledger.ToolCall) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail != nil {
		if err := f.fail(infs, calls); err != nil {
			return err
		}
	}
	f.batches = append(f.batches, [2]int{len(infs), len(calls)})
	f.infs = append(f.infs, infs...)
	f.calls = append(f.calls, calls...)
	for _, rec := range infs {
		if f.burned == nil {
			f.burned = map[string]int64{}
		}
		f.burned[rec.Route] += ledger.NanoUSD(rec.CostUSD)
	}
	return nil
}

func (f *fakeBatches) Burn(context.Context, time.Time) ([]ledger.BurnGroup, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.burns++
	var gs []ledger.BurnGroup
	for route, nano := range f.burned {
		gs = append(gs, ledger.BurnGroup{Model: "m", Route: route, Totals: ledger.Totals{CostNanoUSD: nano}})
	}
	return gs, nil
}

func (f *fakeBatches) setFail(fn func([]ledger.Inference, []ledger.ToolCall) error) {
	f.mu.Lock()
	f.fail = fn
	f.mu.Unlock()
}

func (f *fakeBatches) snapshot() ([]ledger.Inference, []ledger.ToolCall, [][2]int, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.infs), slices.Clone(f.calls), slices.Clone(f.batches), f.burns
}

// slowTicks makes the writer commit only when asked (Flush, a full
// batch, Close) for the test's length, so what it batches is up to the
// test.
func slowTicks(t *testing.T) { set(t, &flushEvery, time.Hour) }

// set gives a pacing variable v for the test's length. Call it before
// starting a writer: cleanups run last first, so the writer, closed by
// its own cleanup, is gone before v is restored.
func set[T any](t *testing.T, v *T, to T) {
	t.Helper()
	old := *v
	*v = to
	t.Cleanup(func() { *v = old })
}

func newTestWriter(t *testing.T, store batchStore, track bool) (*writer, *syncbuf.Buffer) {
	t.Helper()
	logs := &syncbuf.Buffer{}
	w := newWriter(store, hclog.New(&hclog.LoggerOptions{Output: logs, Level: hclog.Debug}), nil, track)
	t.Cleanup(func() { w.Close() })
	return w, logs
}

func flushWriter(t *testing.T, w *writer) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return w.Flush(ctx)
}

// Records queued meanwhile go to the database in one transaction, each
// stream in the order it arrived.
func TestWriterBatchesInOrder(t *testing.T) {
	slowTicks(t)
	store := &fakeBatches{}
	w, _ := newTestWriter(t, store, false)
	for i := range 10 {
		if err := w.AppendInference(ledger.Inference{SessionID: fmt.Sprint(i), Model: "m", Route: "gateway"}); err != nil {
			t.Fatal(err)
		}
		if err := w.AppendToolCall(ledger.ToolCall{CallID: fmt.Sprint(i), Name: "now"}); err != nil {
			t.Fatal(err)
		}
	}
	if infs, _, _, _ := store.snapshot(); len(infs) != 0 {
		t.Fatalf("%d records written before any flush; the hooks must only queue", len(infs))
	}
	if err := flushWriter(t, w); err != nil {
		t.Fatal(err)
	}
	infs, calls, batches, _ := store.snapshot()
	if !slices.Equal(batches, [][2]int{{10, 10}}) {
		t.Fatalf("batches = %v, want the 20 records in one", batches)
	}
	for i := range 10 {
		if infs[i].SessionID != fmt.Sprint(i) || calls[i].CallID != fmt.Sprint(i) {
			t.Fatalf("record %d out of order: %+v / %+v", i, infs[i], calls[i])
		}
		if infs[i].Time.IsZero() || calls[i].Time.IsZero() {
			t.Fatalf("record %d not stamped when queued", i)
		}
	}
}

// A queue that reaches maxBatch is written at once, maxBatch records a
// transaction, without waiting for the tick.
func TestWriterWritesAFullBatchAtOnce(t *testing.T) {
	slowTicks(t)
	set(t, &maxBatch, 4)
	store := &fakeBatches{}
	w, _ := newTestWriter(t, store, false)
	for i := range 4 {
		if err := w.AppendInference(ledger.Inference{Iteration: i, Route: "gateway"}); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if infs, _, _, _ := store.snapshot(); len(infs) == 4 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a full batch was not written within 10s of filling up")
		}
		time.Sleep(time.Millisecond)
	}
	for i := range 9 {
		if err := w.AppendToolCall(ledger.ToolCall{Name: fmt.Sprint(i)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := flushWriter(t, w); err != nil {
		t.Fatal(err)
	}
	_, calls, batches, _ := store.snapshot()
	if len(calls) != 9 || slices.ContainsFunc(batches, func(b [2]int) bool { return b[0]+b[1] > 4 }) {
		t.Fatalf("batches %v, %d tool calls; want every batch at most 4 records, all 9 written", batches, len(calls))
	}
}

// Close writes everything still queued, then refuses new records.
func TestWriterFlushesOnClose(t *testing.T) {
	slowTicks(t)
	store := &fakeBatches{}
	w, _ := newTestWriter(t, store, false)
	for i := range 25 {
		if err := w.AppendInference(ledger.Inference{Iteration: i, Route: "gateway"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if infs, _, _, _ := store.snapshot(); len(infs) != 25 {
		t.Fatalf("%d of 25 queued records written by Close", len(infs))
	}
	if err := w.AppendInference(ledger.Inference{}); !errors.Is(err, errWriterClosed) {
		t.Fatalf("a record after Close: %v, want it refused", err)
	}
}

// A batch the database fails stays queued, in front of what arrives
// meanwhile, and is written, in order, once the database works; Close
// with the database still failing says how many records it lost, and
// logs it.
func TestWriterRetriesAFailedBatch(t *testing.T) {
	slowTicks(t)
	store := &fakeBatches{}
	locked := &ledger.Error{Kind: ledger.KindLocked, Backend: "sqlite", Op: "append batch", Err: errors.New("busy")}
	store.setFail(func([]ledger.Inference, []ledger.ToolCall) error { return locked })
	w, _ := newTestWriter(t, store, false)
	for i := range 3 {
		if err := w.AppendInference(ledger.Inference{Iteration: i, Route: "gateway"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := flushWriter(t, w); ledger.KindOf(err) != ledger.KindLocked {
		t.Fatalf("flush while the database is locked = %v, want ledger_locked", err)
	}
	for i := 3; i < 5; i++ {
		if err := w.AppendInference(ledger.Inference{Iteration: i, Route: "gateway"}); err != nil {
			t.Fatal(err)
		}
	}
	store.setFail(nil)
	if err := flushWriter(t, w); err != nil {
		t.Fatal(err)
	}
	infs, _, _, _ := store.snapshot()
	var order []int
	for _, rec := range infs {
		order = append(order, rec.Iteration)
	}
	if !slices.Equal(order, []int{0, 1, 2, 3, 4}) {
		t.Fatalf("written %v, want all five in the order they were queued", order)
	}

	store.setFail(func([]ledger.Inference, []ledger.ToolCall) error { return locked })
	set(t, &writeTimeout, 100*time.Millisecond)
	w2, logs := newTestWriter(t, store, false)
	if err := w2.AppendToolCall(ledger.ToolCall{Name: "now"}); err != nil {
		t.Fatal(err)
	}
	if err := w2.Close(); err == nil || !strings.Contains(err.Error(), "1 records could not be written") {
		t.Fatalf("Close with the database failing = %v, want the lost record counted", err)
	}
	if !strings.Contains(logs.String(), "records lost at shutdown") {
		t.Errorf("the loss at shutdown was not logged:\n%s", logs.String())
	}
}

// A record the database refuses on its own is logged whole and dropped;
// the rest of its batch is written.
func TestWriterDropsOnlyTheRecordTheDatabaseRefuses(t *testing.T) {
	slowTicks(t)
	store := &fakeBatches{}
	store.setFail(func(infs []ledger.Inference, _ []ledger.ToolCall) error {
		for _, rec := range infs {
			if rec.Model == "poison" {
				return &ledger.Error{Kind: ledger.KindFailed, Backend: "postgres", Op: "append batch", Err: errors.New("invalid byte sequence")}
			}
		}
		return nil
	})
	w, logs := newTestWriter(t, store, false)
	for _, m := range []string{"a", "poison", "b"} {
		if err := w.AppendInference(ledger.Inference{Model: m, Route: "gateway"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.AppendToolCall(ledger.ToolCall{Name: "now"}); err != nil {
		t.Fatal(err)
	}
	if err := flushWriter(t, w); err != nil {
		t.Fatal(err)
	}
	infs, calls, _, _ := store.snapshot()
	var models []string
	for _, rec := range infs {
		models = append(models, rec.Model)
	}
	if !slices.Equal(models, []string{"a", "b"}) || len(calls) != 1 {
		t.Fatalf("written %v and %d tool calls, want a and b and the tool call", models, len(calls))
	}
	if l := logs.String(); !strings.Contains(l, "refuses this inference; it is dropped") || !strings.Contains(l, "Model:poison") {
		t.Errorf("the dropped record was not logged whole:\n%s", l)
	}
}

// A database that fails for long fills the queue; past maxQueued a record
// is refused with an error the host logs, not silently lost.
func TestWriterRefusesPastTheQueueBound(t *testing.T) {
	slowTicks(t)
	set(t, &maxQueued, 3)
	store := &fakeBatches{}
	w, _ := newTestWriter(t, store, false)
	for i := range 3 {
		if err := w.AppendToolCall(ledger.ToolCall{Name: fmt.Sprint(i)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.AppendToolCall(ledger.ToolCall{Name: "3"}); err == nil || !strings.Contains(err.Error(), "3 records are waiting") {
		t.Fatalf("a record past the bound = %v, want it refused, saying why", err)
	}
}

// The daily budget's spend is kept in memory: what the database said at
// the last read, plus what this process committed since, plus what is
// queued, never counting a record twice, and reading the database only
// when the day's total is first needed and when it is refreshed.
func TestWriterKeepsTodaysSpend(t *testing.T) {
	slowTicks(t)
	store := &fakeBatches{burned: map[string]int64{"gateway": ledger.NanoUSD(2)}} // spent by another process
	w, _ := newTestWriter(t, store, true)
	ctx := context.Background()
	spent := func(route string) float64 {
		t.Helper()
		usd, err := w.spentToday(ctx, route)
		if err != nil {
			t.Fatal(err)
		}
		return usd
	}
	if got := spent("gateway"); got != 2 {
		t.Fatalf("spent before any record = %v, want the database's 2", got)
	}
	if err := w.AppendInference(ledger.Inference{Route: "gateway", CostUSD: 0.5}); err != nil {
		t.Fatal(err)
	}
	if err := w.AppendInference(ledger.Inference{Route: "bypass", CostUSD: 7}); err != nil {
		t.Fatal(err)
	}
	if got := spent("gateway"); got != 2.5 {
		t.Fatalf("spent with a record queued = %v, want 2.5", got)
	}
	if err := flushWriter(t, w); err != nil {
		t.Fatal(err)
	}
	if got := spent("gateway"); got != 2.5 {
		t.Fatalf("spent once the record is committed = %v, want 2.5 (counted once)", got)
	}
	if err := w.ask(ctx, writerRequest{refresh: true}); err != nil {
		t.Fatal(err)
	}
	if got := spent("gateway"); got != 2.5 {
		t.Fatalf("spent after rereading the database = %v, want 2.5 (counted once)", got)
	}
	for range 100 {
		spent("gateway")
	}
	if _, _, _, burns := store.snapshot(); burns != 2 {
		t.Fatalf("the database was read %d times, want 2 (the first use and the refresh): the budget check must not read it", burns)
	}
	if got := spent("bypass"); got != 7 {
		t.Fatalf("bypass spent = %v, want 7", got)
	}
}

// What another process sharing the ledger spends reaches the budget
// check at the writer's next periodic reread, without the check itself
// reading the database.
func TestWriterRereadsTodaysSpendPeriodically(t *testing.T) {
	set(t, &flushEvery, time.Millisecond)
	set(t, &spendRefreshEvery, time.Millisecond)
	store := &fakeBatches{}
	w, _ := newTestWriter(t, store, true)
	ctx := context.Background()
	if usd, err := w.spentToday(ctx, "gateway"); err != nil || usd != 0 {
		t.Fatalf("spent on an empty ledger = %v, %v", usd, err)
	}
	// Another replica commits $3 on the gateway route.
	store.mu.Lock()
	store.burned = map[string]int64{"gateway": ledger.NanoUSD(3)}
	store.mu.Unlock()
	deadline := time.Now().Add(10 * time.Second)
	for {
		usd, err := w.spentToday(ctx, "gateway")
		if err != nil {
			t.Fatal(err)
		}
		if usd == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("spent = %v 10s after another process spent $3, want 3", usd)
		}
		time.Sleep(time.Millisecond)
	}
}

// A failure that is not the database refusing a statement (a database that
// cannot be opened, say) drops nothing: the records wait for it.
func TestWriterKeepsRecordsWhenTheDatabaseCannotBeUsed(t *testing.T) {
	slowTicks(t)
	store := &fakeBatches{}
	store.setFail(func([]ledger.Inference, []ledger.ToolCall) error {
		return errors.New("kora: ledger: no such DSN scheme")
	})
	w, logs := newTestWriter(t, store, false)
	for _, m := range []string{"a", "b"} {
		if err := w.AppendInference(ledger.Inference{Model: m, Route: "gateway"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := flushWriter(t, w); err == nil {
		t.Fatal("flush succeeded while the database could not be used")
	}
	store.setFail(nil)
	if err := flushWriter(t, w); err != nil {
		t.Fatal(err)
	}
	if infs, _, _, _ := store.snapshot(); len(infs) != 2 {
		t.Fatalf("%d of 2 records written once the database works", len(infs))
	}
	if strings.Contains(logs.String(), "dropped") {
		t.Errorf("a record was dropped:\n%s", logs.String())
	}
}
