package hookbus

import (
	"context"

	"github.com/hookhost/hookhost/hooks"
)

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
		default:
			s.m.dropped.Add(1)
			if _, seen := b.warned.LoadOrStore(warnKey{s.m.name, hook, numKinds}, struct{}{}); !seen {
				b.log.Warn("observer queue full; dropping events", "plugin", s.m.name, "hook", string(hook))
			}
		}
	}
}

// observe delivers one plugin's observer events in order until Close, then
// delivers what is still queued and returns. Deliveries run under the
// plugin's own deadline, detached from the caller (whose request may be
// over) but not from Close: once Close gives up, they are cancelled.
func (b *Bus) observe(m *member) {
	defer b.workers.Done()
	handle := func(ev observerEvent) {
		if ev.barrier != nil {
			close(ev.barrier)
			return
		}
		ask[any](b.workCtx, b, ev.sub, ev.payload)
	}
	for {
		select {
		case ev := <-m.queue:
			handle(ev)
		case <-b.stop:
			for {
				select {
				case ev := <-m.queue:
					handle(ev)
				default:
					return
				}
			}
		}
	}
}

// Flush waits until every observer event queued before the call has been
// delivered, or ctx ends. After Close it returns at once.
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
