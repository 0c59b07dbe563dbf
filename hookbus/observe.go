package hookbus

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/hookstretch"
)

// maxObserverBatch bounds the observer events sent to a plugin in one
// batch.
const maxObserverBatch = 64

// observerLinger is how long a worker whose plugin takes batches waits for
// more events after the first before sending, so that events batch at low
// rates too: long enough to catch the next few requests of one sequential
// client (about 1 ms each on the gateway), short next to any deadline.
// Measured on the gateway benchmark's observer target, one client, against
// 0 and 2 ms, 5 ms cost the plugin the least CPU per request and gave the
// lowest median latency. Flush and Close cut it short. A variable for
// tests.
var observerLinger = 5 * time.Millisecond

// observerEvent is one queued observer delivery; barrier, when set, marks a
// Flush point instead.
type observerEvent struct {
	sub     *subscriber
	payload any
	barrier chan struct{}
}

// emit queues an observer event for every subscriber of hook (filtered by
// tool for per-tool hooks). It never blocks: a full queue drops the event.
// The read lock only orders emits against Close; nothing blocks under it.
func (b *Bus) emit(hook hooks.Name, tool string, payload any) {
	if b == nil || len(b.subs[hook]) == 0 {
		return
	}
	b.obsMu.RLock()
	defer b.obsMu.RUnlock()
	for _, s := range b.subs[hook] {
		if hook.ToolScoped() && !s.matches(tool) {
			continue
		}
		if b.obsClosed {
			s.m.dropped.Add(1)
			continue
		}
		select {
		case s.m.queue <- observerEvent{sub: s, payload: payload}:
			if len(s.m.queue) >= maxObserverBatch {
				// A full batch is waiting: a lingering worker sends it now.
				s.m.hurry()
			}
		default:
			s.m.dropped.Add(1)
			if _, seen := b.warned.LoadOrStore(warnKey{s.m.name, hook, numKinds}, struct{}{}); !seen {
				b.log.Warn("observer queue full; dropping events", "plugin", s.m.name, "hook", string(hook))
			}
		}
	}
}

// hurry cuts a lingering worker's wait short.
func (m *member) hurry() {
	select {
	case m.wake <- struct{}{}:
	default: // already told
	}
}

// observe delivers one plugin's observer events in order until Close, then
// delivers what is still queued and returns. Deliveries run under the
// plugin's own deadline, detached from the caller (whose request may be
// over) but not from Close: once Close gives up, they are cancelled.
//
// A plugin that takes observer batches (hookstretch.Batcher) is sent what
// is queued, up to maxObserverBatch events, in one exchange, after
// lingering up to observerLinger for more; any other is sent one event at
// a time, at once (an in-process plugin gains nothing from waiting).
func (b *Bus) observe(m *member) {
	defer b.workers.Done()
	batcher, _ := m.plugin.(hookstretch.Batcher)
	// Until a batch is taken, the plugin is sent one event at a time: one
	// that declines batches must not have events taken off its queue early,
	// which would lift the queue's bound.
	w := &observerWorker{b: b, m: m, batcher: batcher, declined: true}
	defer w.stopTimer()
	for {
		select {
		case ev := <-m.queue:
			w.handle(ev, true)
		case <-b.stop:
			for {
				select {
				case ev := <-m.queue:
					w.handle(ev, false)
				default:
					return
				}
			}
		}
	}
}

// observerWorker is the state of one plugin's observer worker.
type observerWorker struct {
	b       *Bus
	m       *member
	batcher hookstretch.Batcher
	// declined is true until the plugin takes a batch, and again after it
	// declines one: it is then sent one event per exchange, with no
	// gathering and no linger.
	declined bool
	timer    *time.Timer
	batch    []observerEvent
}

// handle delivers ev, and with it, for a batching plugin, what else is
// queued behind it up to the next Flush point.
func (w *observerWorker) handle(ev observerEvent, mayLinger bool) {
	if ev.barrier != nil {
		close(ev.barrier)
		return
	}
	if w.batcher == nil {
		ask[any](w.b.workCtx, w.b, ev.sub, ev.payload)
		return
	}
	w.batch = append(w.batch[:0], ev)
	var barrier chan struct{}
	if !w.declined {
		barrier = w.gather()
	}
	if barrier == nil && mayLinger && !w.declined && len(w.batch) < maxObserverBatch {
		w.wait()
		barrier = w.gather()
	}
	w.deliver(w.batch)
	clear(w.batch) // the payloads are not held until the next batch
	if barrier != nil {
		close(barrier)
	}
}

// gather adds to the batch what is queued, up to maxObserverBatch events,
// stopping at a Flush point, which it returns.
func (w *observerWorker) gather() chan struct{} {
	for len(w.batch) < maxObserverBatch {
		select {
		case ev := <-w.m.queue:
			if ev.barrier != nil {
				return ev.barrier
			}
			w.batch = append(w.batch, ev)
		default:
			return nil
		}
	}
	return nil
}

// wait lingers until observerLinger has passed, Flush or a full batch
// hurries the worker, or Close stops it. It does not watch the queue: each
// event would wake the worker for nothing.
func (w *observerWorker) wait() {
	if w.timer == nil {
		w.timer = time.NewTimer(w.b.obsLinger)
	} else {
		w.timer.Reset(w.b.obsLinger)
	}
	select {
	case <-w.timer.C:
	case <-w.m.wake:
		w.timer.Stop()
	case <-w.b.stop:
		w.timer.Stop()
	}
}

func (w *observerWorker) stopTimer() {
	if w.timer != nil {
		w.timer.Stop()
	}
}

// deliver sends a batch of events and accounts for each exactly as for a
// plain delivery of it: counted, classified, logged and recorded against
// its own hook. A plugin that declines the batch gets the events one by
// one.
func (w *observerWorker) deliver(batch []observerEvent) {
	b, ctx := w.b, w.b.workCtx
	events := make([]hookstretch.Event, len(batch))
	for i, ev := range batch {
		events[i] = hookstretch.Event{Hook: ev.sub.hook, Payload: ev.payload, Timeout: ev.sub.timeout}
	}
	start := time.Now()
	reported := 0
	report := func(i int, err error) {
		s := batch[i].sub
		s.calls.Add(1)
		kind := KindNone
		if err != nil {
			kind = failureKind(ctx, err, false)
			b.fail(s, kind, err)
		}
		recorded[any](ctx, b, s, batch[i].payload, start, nil, kind, err)
		// The next event's delivery starts when this one's ended: the
		// plugin handles them in order.
		start = time.Now()
		reported = i + 1
	}
	err := w.batcher.ObserveBatch(ctx, events, report)
	if errors.Is(err, hookstretch.ErrNoBatch) && reported == 0 {
		w.declined = true
		for _, ev := range batch {
			ask[any](ctx, b, ev.sub, ev.payload)
		}
		return
	}
	w.declined = false
	// Never reached with a Batcher that keeps its contract; if one did not
	// report every event, the rest count as failed rather than vanish.
	if reported < len(batch) {
		if err == nil {
			err = errors.New("the plugin's adapter gave no outcome for it")
		}
		err = fmt.Errorf("host: observer event not delivered: %w", err)
		for i := reported; i < len(batch); i++ {
			report(i, err)
		}
	}
}

// Flush waits until every observer event queued before the call has been
// delivered, or ctx ends. After Close it returns at once. A worker
// lingering for more events sends what it has at once.
func (b *Bus) Flush(ctx context.Context) error {
	if b == nil {
		return nil
	}
	var barriers []chan struct{}
	for _, m := range b.members {
		if m.queue == nil {
			continue
		}
		c := make(chan struct{})
		select {
		case m.queue <- observerEvent{barrier: c}:
			m.hurry()
			barriers = append(barriers, c)
		case <-b.stop:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	for _, c := range barriers {
		select {
		case <-c:
		case <-b.workersDone:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}
