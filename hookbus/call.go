package hookbus

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/hookstretch"
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
	hook   hooks.Name
	kind   FailureKind
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
	var start time.Time
	if b.onCall != nil {
		start = time.Now()
	}
	v, kind, err := invokeErr(ctx, b, s, func(ctx context.Context) (T, error) {
		return hooks.Ask[T](ctx, s.m.plugin, s.hook, req)
	})
	return recorded(ctx, b, s, req, start, v, kind, err)
}

// recorded applies the hook's rules to what one call (plain, or a stage of
// a stretch) returned, and tells Config.OnCall of the call when it is set.
func recorded[T any](ctx context.Context, b *Bus, s *subscriber, payload any, start time.Time, v T, kind FailureKind, err error) (T, FailureKind, error) {
	if kind != KindNone {
		if b.onCall != nil {
			b.record(ctx, s, payload, start, nil, kind, err)
		}
		return v, kind, err
	}
	answer, kind, err := checked(b, s, v)
	if b.onCall != nil {
		b.record(ctx, s, payload, start, v, kind, err)
	}
	return answer, kind, err
}

// checked applies the hook's rules (CheckAnswer) to an answer: one that
// breaks them is counted and logged as malformed and becomes no answer.
func checked[T any](b *Bus, s *subscriber, v T) (T, FailureKind, error) {
	if s.observer {
		return v, KindNone, nil
	}
	err := hooks.CheckAnswer(s.m.name, s.hook, v, s.m.opts.MaxResultSize, b.maxTemperature)
	if err == nil {
		return v, KindNone, nil
	}
	b.fail(s, KindMalformed, err)
	var zero T
	return zero, KindMalformed, err
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

	var r hookstretch.CallResult[T]
	if s.m.inline {
		r = hookstretch.Guarded(cctx, fn)
	} else {
		done := make(chan hookstretch.CallResult[T], 1)
		go func() { done <- hookstretch.Guarded(cctx, fn) }()
		select {
		case r = <-done:
		case <-cctx.Done():
			r.Err = cctx.Err()
		}
	}
	if r.Err == nil && hookstretch.PastDeadline(cctx) {
		// An answer that comes after its deadline is a timeout, whatever it
		// says: the caller has already been told nothing came, and a plugin
		// that ignores its deadline must not win by racing the watchdog.
		r.Err = fmt.Errorf("result arrived after the deadline and was dropped: %w", hookstretch.Ended(cctx))
	}
	return classified(ctx, b, s, r.V, r.Err, r.Err != nil && hookstretch.PastDeadline(cctx))
}

// classified is a call's outcome as the Bus takes it: v when err is nil,
// else no answer, the failure's kind (pastDeadline says the call's own
// deadline passed), counted and logged.
func classified[T any](ctx context.Context, b *Bus, s *subscriber, v T, err error, pastDeadline bool) (T, FailureKind, error) {
	if err == nil {
		return v, KindNone, nil
	}
	var zero T
	kind := failureKind(ctx, err, pastDeadline)
	b.fail(s, kind, err)
	return zero, kind, err
}

// failureKind classifies a failed call made under ctx; pastDeadline says
// the call's own deadline passed.
func failureKind(ctx context.Context, err error, pastDeadline bool) FailureKind {
	switch {
	case errors.As(err, new(*hookstretch.PanicError)) || errors.Is(err, hooks.ErrPanicked):
		return KindPanic
	case errors.Is(err, hooks.ErrUnavailable):
		return KindUnavailable
	case errors.Is(err, hooks.ErrMalformed):
		return KindMalformed
	case errors.Is(err, hooks.ErrRefused):
		return KindRefused
	case ctx.Err() != nil:
		return KindCancelled
	case pastDeadline || errors.Is(err, context.DeadlineExceeded):
		return KindTimeout
	}
	return KindError
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
	if p := (*hookstretch.PanicError)(nil); errors.As(err, &p) {
		args = append(args, "stack", string(p.Stack))
	} else if !seen {
		return
	}
	b.log.Debug("plugin call failed; treating as no result", args...)
}

// HookStats counts the calls of one plugin for one hook.
type HookStats struct {
	Plugin string
	Hook   hooks.Name
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
func (s Stats) Failures(plugin string, hook hooks.Name, kind FailureKind) uint64 {
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
		for _, h := range hooks.Catalogue {
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
