package kora

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/hookhost/hookhost/plugins/kora/internal/ledger"
)

// Pacing of the ledger writer, variables so that tests can drive them.
var (
	// flushEvery is how long a record waits, at most, before the writer
	// commits it with whatever else arrived meanwhile. It is what a
	// SIGKILL of Kora can lose, and how stale a reader in another process
	// (kora export) may be.
	flushEvery = 50 * time.Millisecond
	// maxBatch is the most records one transaction carries; a queue that
	// reaches it is written at once rather than at the next tick.
	maxBatch = 1000
	// maxQueued bounds the records waiting for a database that fails:
	// past it, a record is refused and the host logs the refusal.
	maxQueued = 100_000
	// writeTimeout bounds one transaction, and the flush at Close.
	writeTimeout = 10 * time.Second
	// maxRetryEvery bounds the wait between two tries of a batch the
	// database failed; the wait doubles from flushEvery up to it.
	maxRetryEvery = 5 * time.Second
	// spendRefreshEvery is how often the writer rereads today's spend
	// from the database for the daily budget, which picks up what other
	// processes sharing the ledger spent.
	spendRefreshEvery = 5 * time.Second
)

// batchStore is what the writer needs of the ledger.
type batchStore interface {
	AppendBatch(ctx context.Context, infs []ledger.Inference, calls []ledger.ToolCall) error
	Burn(ctx context.Context, since time.Time) ([]ledger.BurnGroup, error)
}

// writer takes the ledger's writes off the hooks' path: post_llm_call and
// post_tool_call queue their record and return, and one goroutine commits
// what is queued every flushEvery, in one transaction per batch (one sync
// of the database's log for many records). A batch that fails stays
// queued, first in line, and is tried again after a wait that doubles up
// to maxRetryEvery (at once when a flush is asked for); a record the
// database refuses on its own (not a lock, a full disk or an outage: the
// record itself) is logged whole at ERROR and dropped, so it cannot hold
// up the others forever. Nothing queued is lost on Close, which writes it
// all; a SIGKILL loses what was queued, at most flushEvery of records
// while the database works.
//
// The writer also keeps today's spend by route for the daily budget
// (spentToday), in memory: the last total read from the database, plus
// what this process committed since, plus what is queued. It alone commits
// and rereads, so the three never count a record twice.
type writer struct {
	store batchStore
	log   hclog.Logger
	now   func() time.Time
	// trackSpend keeps the spend totals fresh (a daily budget is set).
	trackSpend bool

	mu       sync.Mutex
	infs     []ledger.Inference
	calls    []ledger.ToolCall
	closed   bool
	spend    spendTotals
	inFlight int // records taken by the goroutine and not yet settled

	kick chan struct{}
	reqs chan writerRequest
	stop chan struct{}
	done chan struct{}
}

// writerRequest asks the goroutine to write what is queued, then, with
// refresh, to reread today's spend; the result goes to done.
type writerRequest struct {
	refresh bool
	done    chan error
}

// spendTotals is today's spend in nano-dollars by route, as the writer
// knows it.
type spendTotals struct {
	day    int64            // the UTC day read holds; -1 before the first read
	read   map[string]int64 // by route, read from the database at the last refresh
	since  map[dayRoute]int64
	queued map[dayRoute]int64
}

type dayRoute struct {
	day   int64
	route string
}

func newWriter(store batchStore, log hclog.Logger, now func() time.Time, trackSpend bool) *writer {
	if now == nil {
		now = time.Now
	}
	w := &writer{
		store: store, log: log, now: now, trackSpend: trackSpend,
		spend: spendTotals{day: -1, read: map[string]int64{}, since: map[dayRoute]int64{}, queued: map[dayRoute]int64{}},
		kick:  make(chan struct{}, 1),
		reqs:  make(chan writerRequest),
		stop:  make(chan struct{}),
		done:  make(chan struct{}),
	}
	go w.run()
	return w
}

var errWriterClosed = errors.New("kora: ledger: the writer is closed (Kora is shutting down); the record is not kept")

// stamp is the time a record is given when it is queued: the time Kora
// saw it, not the time its batch was committed.
func (w *writer) stamp() time.Time { return w.now().UTC().Truncate(time.Millisecond) }

// AppendInference queues rec. It fails only when Kora is closing or the
// queue is full because the database has been failing for long.
func (w *writer) AppendInference(rec ledger.Inference) error {
	if rec.Time.IsZero() {
		rec.Time = w.stamp()
	}
	w.mu.Lock()
	if err := w.admit(); err != nil {
		w.mu.Unlock()
		return err
	}
	w.infs = append(w.infs, rec)
	w.spend.queued[dayRoute{dayOf(rec.Time), rec.Route}] += ledger.NanoUSD(rec.CostUSD)
	full := len(w.infs)+len(w.calls) >= maxBatch
	w.mu.Unlock()
	if full {
		w.nudge()
	}
	return nil
}

// AppendToolCall queues rec, as AppendInference.
func (w *writer) AppendToolCall(rec ledger.ToolCall) error {
	if rec.Time.IsZero() {
		rec.Time = w.stamp()
	}
	w.mu.Lock()
	if err := w.admit(); err != nil {
		w.mu.Unlock()
		return err
	}
	w.calls = append(w.calls, rec)
	full := len(w.infs)+len(w.calls) >= maxBatch
	w.mu.Unlock()
	if full {
		w.nudge()
	}
	return nil
}

// admit says whether one more record may be queued; w.mu is held.
func (w *writer) admit() error {
	if w.closed {
		return errWriterClosed
	}
	if n := len(w.infs) + len(w.calls) + w.inFlight; n >= maxQueued {
		return fmt.Errorf("kora: ledger: %d records are waiting for the database, which has been failing (see Kora's ERROR lines); this one is not kept", n)
	}
	return nil
}

func (w *writer) nudge() {
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// Flush returns once every record queued before it was called is
// committed, or with the error that kept one from it.
func (w *writer) Flush(ctx context.Context) error { return w.ask(ctx, writerRequest{}) }

// ask hands r to the goroutine and waits for its answer.
func (w *writer) ask(ctx context.Context, r writerRequest) error {
	r.done = make(chan error, 1)
	select {
	case w.reqs <- r:
	case <-w.done:
		return errWriterClosed
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-r.done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// spentToday returns what was spent today (UTC) on route, in USD: O(1),
// except on the first call of a day, which waits for the database's total.
func (w *writer) spentToday(ctx context.Context, route string) (float64, error) {
	today := dayOf(w.now().UTC())
	w.mu.Lock()
	fresh := w.spend.day == today
	w.mu.Unlock()
	if !fresh {
		if err := w.ask(ctx, writerRequest{refresh: true}); err != nil {
			return 0, err
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	k := dayRoute{today, route}
	nano := w.spend.since[k] + w.spend.queued[k]
	if w.spend.day == today {
		nano += w.spend.read[route]
	}
	return ledger.USD(nano), nil
}

// Close writes what is queued, within writeTimeout, and stops the
// goroutine. Records it could not write are counted in its error (and
// logged); records offered after Close are refused.
func (w *writer) Close() error {
	w.mu.Lock()
	already := w.closed
	w.closed = true
	w.mu.Unlock()
	if !already {
		close(w.stop)
	}
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	if n := len(w.infs) + len(w.calls); n > 0 {
		return fmt.Errorf("kora: ledger: %d records could not be written before Kora stopped (see the ERROR lines above)", n)
	}
	return nil
}

func (w *writer) run() {
	defer close(w.done)
	tick := time.NewTicker(flushEvery)
	defer tick.Stop()
	var (
		lastRefresh time.Time
		// After a failed write, ticks wait for retryAt; a flush asked
		// for tries at once.
		backoff time.Duration
		retryAt time.Time
	)
	for {
		var req *writerRequest
		select {
		case <-w.stop:
			ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
			err := w.writeQueued(ctx)
			cancel()
			if err != nil {
				w.mu.Lock()
				n := len(w.infs) + len(w.calls)
				w.mu.Unlock()
				w.log.Error("ledger: records lost at shutdown: the database failed while Kora wrote what it had queued", "records", n, "error", err.Error())
			}
			return
		case <-tick.C:
		case <-w.kick:
		case r := <-w.reqs:
			req = &r
		}
		ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
		var err error
		if req != nil || !time.Now().Before(retryAt) {
			err = w.writeQueued(ctx)
			if err != nil {
				backoff = min(max(2*backoff, flushEvery), maxRetryEvery)
				retryAt = time.Now().Add(backoff)
			} else {
				backoff, retryAt = 0, time.Time{}
			}
		}
		refresh := req != nil && req.refresh ||
			w.trackSpend && time.Now().Sub(lastRefresh) >= spendRefreshEvery
		if refresh {
			// A failed reread waits for the next interval too: a
			// database that is down is not asked every tick.
			lastRefresh = time.Now()
			rerr := w.refreshSpend(ctx)
			if req != nil && req.refresh {
				// The spend counts what is queued whether or not it
				// was written: the reread is the answer.
				err = rerr
			}
		}
		cancel()
		if req != nil {
			req.done <- err
		}
	}
}

// writeQueued commits everything queued, maxBatch records a transaction.
// On an error the records not committed are queued again, first.
func (w *writer) writeQueued(ctx context.Context) error {
	w.mu.Lock()
	infs, calls := w.infs, w.calls
	w.infs, w.calls = nil, nil
	w.inFlight = len(infs) + len(calls)
	w.mu.Unlock()
	defer func() {
		w.mu.Lock()
		w.inFlight = 0
		w.mu.Unlock()
	}()
	for len(infs) > 0 || len(calls) > 0 {
		ni := min(len(infs), maxBatch)
		nc := min(len(calls), maxBatch-ni)
		bi, bc := infs[:ni], calls[:nc]
		err := w.store.AppendBatch(ctx, bi, bc)
		var written []ledger.Inference
		if err == nil {
			written = bi
		} else if refusedRecord(err) {
			// Not the database's state but something in the batch: find
			// the record at fault by writing them one at a time.
			written, bi, bc, err = w.writeEach(ctx, bi, bc)
		}
		if err != nil {
			w.settle(written)
			w.mu.Lock()
			w.infs = slices.Concat(bi, infs[ni:], w.infs)
			w.calls = slices.Concat(bc, calls[nc:], w.calls)
			w.mu.Unlock()
			return err
		}
		w.settle(written)
		infs, calls = infs[ni:], calls[nc:]
	}
	return nil
}

// writeEach writes the records one a transaction. A record the database
// refuses on its own is logged whole and dropped; another failure stops
// it. It returns the inferences committed and, on that failure, the
// records not yet written.
func (w *writer) writeEach(ctx context.Context, infs []ledger.Inference, calls []ledger.ToolCall) (written, leftInfs []ledger.Inference, leftCalls []ledger.ToolCall, err error) {
	for i, rec := range infs {
		err := w.store.AppendBatch(ctx, []ledger.Inference{rec}, nil)
		switch {
		case err == nil:
			written = append(written, rec)
		case refusedRecord(err):
			w.drop(rec)
			w.log.Error("ledger: the database refuses this inference; it is dropped", "record", fmt.Sprintf("%+v", rec), "error", err.Error())
		default:
			return written, slices.Clone(infs[i:]), slices.Clone(calls), err
		}
	}
	for i, rec := range calls {
		err := w.store.AppendBatch(ctx, nil, []ledger.ToolCall{rec})
		switch {
		case err == nil:
		case refusedRecord(err):
			w.log.Error("ledger: the database refuses this tool call; it is dropped", "record", fmt.Sprintf("%+v", rec), "error", err.Error())
		default:
			return written, nil, slices.Clone(calls[i:]), err
		}
	}
	return written, nil, nil, nil
}

// settle moves committed inferences' cost from queued to committed.
func (w *writer) settle(infs []ledger.Inference) {
	if len(infs) == 0 {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, rec := range infs {
		k := dayRoute{dayOf(rec.Time), rec.Route}
		c := ledger.NanoUSD(rec.CostUSD)
		w.spend.queued[k] -= c
		w.spend.since[k] += c
	}
}

// drop forgets a dropped inference's queued cost.
func (w *writer) drop(rec ledger.Inference) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.spend.queued[dayRoute{dayOf(rec.Time), rec.Route}] -= ledger.NanoUSD(rec.CostUSD)
}

// refreshSpend rereads today's spend. Only the goroutine calls it, between
// writes, so no commit of this process lands between the read and the
// reset of what it committed since.
func (w *writer) refreshSpend(ctx context.Context) error {
	t := w.now().UTC()
	midnight := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	groups, err := w.store.Burn(ctx, midnight)
	if err != nil {
		return err
	}
	read := map[string]int64{}
	for _, g := range groups {
		read[g.Route] += g.CostNanoUSD
	}
	today := dayOf(t)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.spend.day, w.spend.read = today, read
	for k := range w.spend.since {
		delete(w.spend.since, k)
	}
	for k, v := range w.spend.queued {
		if k.day < today && v == 0 {
			delete(w.spend.queued, k)
		}
	}
	return nil
}

// dayOf is the UTC day number of t, as the ledger counts days.
func dayOf(t time.Time) int64 {
	const dayMS = 24 * 60 * 60 * 1000
	ms := t.UnixMilli()
	d := ms / dayMS
	if ms%dayMS < 0 {
		d--
	}
	return d
}

// readYourWrites is the ledger as Kora's tools read it: each report first
// waits for the records queued before it to be committed, so a tool sees
// every call the host reported before asking it. A flush that fails (the
// database is failing) is left to the read, which fails the same way or
// answers what is committed.
type readYourWrites struct {
	*lazyStore
	w *writer
}

func (r readYourWrites) flush(ctx context.Context) { _ = r.w.Flush(ctx) }

func (r readYourWrites) Burn(ctx context.Context, since time.Time) ([]ledger.BurnGroup, error) {
	r.flush(ctx)
	return r.lazyStore.Burn(ctx, since)
}

func (r readYourWrites) RecentInferences(ctx context.Context, limit int) ([]ledger.Inference, int64, error) {
	r.flush(ctx)
	return r.lazyStore.RecentInferences(ctx, limit)
}

func (r readYourWrites) RecentToolCalls(ctx context.Context, limit int) ([]ledger.ToolCall, int64, error) {
	r.flush(ctx)
	return r.lazyStore.RecentToolCalls(ctx, limit)
}

func (r readYourWrites) ExportInferences(ctx context.Context, since time.Time, fn func(ledger.Inference) error) error {
	r.flush(ctx)
	return r.lazyStore.ExportInferences(ctx, since, fn)
}

func (r readYourWrites) ExportToolCalls(ctx context.Context, since time.Time, fn func(ledger.ToolCall) error) error {
	r.flush(ctx)
	return r.lazyStore.ExportToolCalls(ctx, since, fn)
}

var _ ledger.Store = readYourWrites{}

// refusedRecord tells a statement the database refused (a failure of no
// known kind while writing) from a database that cannot be used at all
// (locked, full, down, or not opened), which the records wait out.
func refusedRecord(err error) bool {
	var le *ledger.Error
	return errors.As(err, &le) && le.Kind == ledger.KindFailed && le.Op == "append batch"
}
