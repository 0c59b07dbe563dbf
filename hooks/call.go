package hooks

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"
)

// FailureKind classifies why a plugin call counted as nil.
type FailureKind int

// Failure kinds, each logged at WARN once per plugin and hook.
const (
	KindNone        FailureKind = iota
	KindError                   // the plugin returned an error
	KindPanic                   // the handler panicked
	KindTimeout                 // the plugin's deadline passed
	KindMalformed               // the result broke the hook's rules
	KindUnavailable             // the plugin process is not running
	KindCancelled               // the caller gave up (not the plugin's fault)
	KindRefused                 // the host would not send the call (not the plugin's fault)
	numKinds
)

var kindNames = [numKinds]string{"none", "error", "panic", "timeout", "malformed", "unavailable", "cancelled", "refused"}

func (k FailureKind) String() string { return kindNames[k] }

// ContextHonouring is implemented by plugins whose calls always return soon
// after their context ends (remote adapters: gRPC enforces the deadline). The
// Bus calls them directly instead of on a watchdog goroutine.
type ContextHonouring interface {
	HonoursContext() bool
}

type warnKey struct {
	plugin string
	hook   Name
	kind   FailureKind
}

type callResult[T any] struct {
	v   T
	err error
}

// ask makes one hook call of subscriber s with payload req through invoke,
// and takes the answer as the hook's answer type T: an answer of another
// type is malformed.
func ask[T any](ctx context.Context, b *Bus, s *subscriber, req any) (T, FailureKind) {
	v, kind, _ := askErr[T](ctx, b, s, req)
	return v, kind
}

// askErr is ask that also returns the failure (see invokeErr).
func askErr[T any](ctx context.Context, b *Bus, s *subscriber, req any) (T, FailureKind, error) {
	v, kind, err := invokeErr(ctx, b, s, func(ctx context.Context) (T, error) {
		return Ask[T](ctx, s.m.plugin, s.hook, req)
	})
	if kind != KindNone {
		return v, kind, err
	}
	return checked(b, s, v)
}

// checked applies the hook's rules (checkAnswer) to an answer: one that
// breaks them is counted and logged as malformed and becomes no answer.
func checked[T any](b *Bus, s *subscriber, v T) (T, FailureKind, error) {
	if s.observer {
		return v, KindNone, nil
	}
	err := checkAnswer(v, limits{maxSize: s.m.opts.MaxResultSize, maxTemperature: b.maxTemperature})
	if err == nil {
		return v, KindNone, nil
	}
	e := &MalformedError{Plugin: s.m.name, Hook: s.hook, Problem: err.Error()}
	if big, ok := err.(errTooLarge); ok {
		e.Size, e.Limit = big.size, big.limit
	}
	b.fail(s, KindMalformed, e)
	var zero T
	return zero, KindMalformed, e
}

// invoke runs one plugin call under the plugin's deadline and turns every way
// it can fail into a FailureKind. It never panics and never outlives the
// deadline by more than scheduling noise, even if the plugin ignores ctx. A
// result that arrives once the deadline has passed is dropped as a timeout,
// on the inline and the watchdog path alike.
func invoke[T any](ctx context.Context, b *Bus, s *subscriber, fn func(context.Context) (T, error)) (T, FailureKind) {
	v, kind, _ := invokeErr(ctx, b, s, fn)
	return v, kind
}

// invokeErr is invoke that also returns the failure, for a rule whose
// answer must say what went wrong (a fail_closed guard that is down).
func invokeErr[T any](ctx context.Context, b *Bus, s *subscriber, fn func(context.Context) (T, error)) (T, FailureKind, error) {
	s.calls.Add(1)
	cctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()

	var r callResult[T]
	if s.m.inline {
		r = guarded(cctx, fn)
	} else {
		done := make(chan callResult[T], 1)
		go func() { done <- guarded(cctx, fn) }()
		select {
		case r = <-done:
		case <-cctx.Done():
			r.err = cctx.Err()
		}
	}
	if r.err == nil && pastDeadline(cctx) {
		// An answer that comes after its deadline is a timeout, whatever it
		// says: the caller has already been told nothing came, and a plugin
		// that ignores its deadline must not win by racing the watchdog.
		r.err = fmt.Errorf("result arrived after the deadline and was dropped: %w", ended(cctx))
	}
	if r.err == nil {
		return r.v, KindNone, nil
	}
	var zero T
	kind := KindError
	switch {
	case errors.As(r.err, new(*panicError)) || errors.Is(r.err, ErrPanicked):
		kind = KindPanic
	case errors.Is(r.err, ErrUnavailable):
		kind = KindUnavailable
	case errors.Is(r.err, ErrMalformed):
		kind = KindMalformed
	case errors.Is(r.err, ErrRefused):
		kind = KindRefused
	case ctx.Err() != nil:
		kind = KindCancelled
	case pastDeadline(cctx) || errors.Is(r.err, context.DeadlineExceeded):
		kind = KindTimeout
	}
	b.fail(s, kind, r.err)
	return zero, kind, r.err
}

// pastDeadline reports whether ctx has ended or its deadline has passed.
// The clock decides, not only ctx.Err: a context's timer may fire a little
// after its deadline, and an answer that a remote plugin sent once its own
// copy of the deadline had passed must not slip into that gap.
func pastDeadline(ctx context.Context) bool {
	if ctx.Err() != nil {
		return true
	}
	d, ok := ctx.Deadline()
	return ok && !time.Now().Before(d)
}

// ended is why ctx is over, for a context pastDeadline reported.
func ended(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return context.DeadlineExceeded
}

type panicError struct {
	value any
	stack []byte
}

func (p *panicError) Error() string { return fmt.Sprintf("panic: %v", p.value) }

// Unwrap makes a recovered panic ErrPanicked to errors.Is, so that it
// reads the same once it has crossed the wire.
func (p *panicError) Unwrap() error { return ErrPanicked }

func guarded[T any](ctx context.Context, fn func(context.Context) (T, error)) (r callResult[T]) {
	defer func() {
		if v := recover(); v != nil {
			r = callResult[T]{err: &panicError{value: v, stack: debug.Stack()}}
		}
	}()
	v, err := fn(ctx)
	return callResult[T]{v: v, err: err}
}

// fail counts a failed call and logs it: WARN the first time this plugin
// fails this hook this way, DEBUG after that, so a flapping plugin cannot
// flood the log.
func (b *Bus) fail(s *subscriber, kind FailureKind, err error) {
	s.fails[kind].Add(1)
	if kind == KindCancelled {
		return
	}
	args := []any{"plugin", s.m.name, "hook", string(s.hook), "kind", kind.String(), "error", err.Error()}
	_, seen := b.warned.LoadOrStore(warnKey{s.m.name, s.hook, kind}, struct{}{})
	if !seen {
		b.log.Warn("plugin call failed; treating as no result", args...)
	}
	// A stack is for whoever debugs the plugin, at DEBUG only, even on the
	// first failure.
	if p := (*panicError)(nil); errors.As(err, &p) {
		args = append(args, "stack", string(p.stack))
	} else if !seen {
		return
	}
	b.log.Debug("plugin call failed; treating as no result", args...)
}

// HookStats counts the calls of one plugin for one hook.
type HookStats struct {
	Plugin string
	Hook   Name
	// Observer marks an observer hook: its calls are queued deliveries,
	// made by a worker, that never delay the conversation.
	Observer bool
	Calls    uint64
	Failures map[string]uint64 // by FailureKind name; absent when zero
}

// Stats is a snapshot of the Bus's counters.
type Stats struct {
	Hooks   []HookStats
	Dropped map[string]uint64 // observer events dropped, by plugin
}

// Calls returns the total number of plugin calls made, over all hooks.
func (s Stats) Calls() uint64 {
	var n uint64
	for _, h := range s.Hooks {
		n += h.Calls
	}
	return n
}

// SyncCalls returns the number of calls the conversation waited for: every
// call of a hook that is not an observer. Observer deliveries are not
// counted, however many were made.
func (s Stats) SyncCalls() uint64 {
	var n uint64
	for _, h := range s.Hooks {
		if !h.Observer {
			n += h.Calls
		}
	}
	return n
}

// Failures returns how many calls of plugin for hook failed with kind.
func (s Stats) Failures(plugin string, hook Name, kind FailureKind) uint64 {
	for _, h := range s.Hooks {
		if h.Plugin == plugin && h.Hook == hook {
			return h.Failures[kind.String()]
		}
	}
	return 0
}

// Stats returns a snapshot of the counters, ordered by plugin priority then
// catalogue order.
func (b *Bus) Stats() Stats {
	st := Stats{Dropped: map[string]uint64{}}
	if b == nil {
		return st
	}
	for _, m := range b.members {
		for _, h := range Catalogue {
			for _, s := range b.subs[h] {
				if s.m != m {
					continue
				}
				hs := HookStats{Plugin: m.name, Hook: h, Observer: h.Observer(), Calls: s.calls.Load()}
				for k := KindError; k < numKinds; k++ {
					if n := s.fails[k].Load(); n > 0 {
						if hs.Failures == nil {
							hs.Failures = map[string]uint64{}
						}
						hs.Failures[k.String()] = n
					}
				}
				st.Hooks = append(st.Hooks, hs)
			}
		}
		if n := m.dropped.Load(); n > 0 {
			st.Dropped[m.name] = n
		}
	}
	return st
}
