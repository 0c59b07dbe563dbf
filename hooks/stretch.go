package hooks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// A stretch is consecutive hooks of the tool pipeline, for one tool call,
// asked of one plugin in one exchange. The full design, and why it keeps
// the catalogue's rules, is written down on ToolRun.

// StretchStage is one hook of a stretch with its own deadline, counted from
// the moment the stage starts.
type StretchStage struct {
	Hook    Name
	Timeout time.Duration
}

// StretchRequest asks one plugin for consecutive stages of the tool
// pipeline for one call: pre_tool_call, pre_tool_call_can_provide_result
// and transform_tool_result, in that order, two or three of them.
type StretchRequest struct {
	Call   ToolCallRequest
	Stages []StretchStage
}

// Stretcher is implemented by plugins that can answer a stretch in one
// exchange (remote plugins speaking protocol v2). Stretch answers
// ErrNoStretch when it cannot at the moment, and the Bus then asks hook by
// hook. Stretch must return within the first stage's timeout, whatever
// ctx's deadline: any other error is the first stage's failure, as a plain
// call's error would be.
type Stretcher interface {
	Stretch(ctx context.Context, req StretchRequest) (Stretch, error)
}

// Stretch is one stretch under way.
type Stretch interface {
	// Next waits for the next stage's answer, of the hook's answer type
	// (nil for no opinion), or its failure, until ctx ends. It must return
	// soon after ctx ends.
	Next(ctx context.Context) (any, error)
	// Close ends the exchange; the plugin is told to cancel the stages not
	// answered yet. Safe to call more than once, and while a Next waits
	// (which then returns).
	Close()
}

// ErrNoStretch is what Stretcher.Stretch returns when the plugin cannot
// answer a stretch now (its process speaks protocol v1).
var ErrNoStretch = errors.New("plugin cannot answer several hooks in one exchange")

// ErrBadStretch is what RunStretch reports for a request that is not a
// legal stretch: stages other than one of LegalStretches, or a stage
// without a positive timeout. It is the host's mistake, not the plugin's.
var ErrBadStretch = errors.New("not a legal stretch")

// legalStretches are the runs of the tool pipeline one plugin may be asked
// for in one exchange, read from the catalogue.
var legalStretches = LegalStretches()

// checkStretch reports whether req is a legal stretch (see ErrBadStretch).
func checkStretch(req StretchRequest) error {
	legal := false
	for _, l := range legalStretches {
		if slices.EqualFunc(l, req.Stages, func(h Name, s StretchStage) bool { return h == s.Hook }) {
			legal = true
			break
		}
	}
	if !legal {
		hooks := make([]string, len(req.Stages))
		for i, s := range req.Stages {
			hooks[i] = string(s.Hook)
		}
		return fmt.Errorf("%w: stages [%s]", ErrBadStretch, strings.Join(hooks, ", "))
	}
	for _, s := range req.Stages {
		if s.Timeout <= 0 {
			return fmt.Errorf("%w: stage %s has timeout %v, want a positive one", ErrBadStretch, s.Hook, s.Timeout)
		}
	}
	return nil
}

// RunStretch answers a stretch on the plugin's side, calling p for each
// stage in order under the stage's own deadline and handing each answer (or
// failure) to emit as soon as it is known: emit is called once per stage
// answered, in stage order, from the calling goroutine, and never after
// RunStretch returns. It stops after a stage that failed, a block, a
// decision that breaks the rules, a provide that gave nothing, and when ctx
// ends; a stage that was not started because ctx ended is emitted as a
// failure wrapping ctx's error, so that the exchange always ends with a
// message. A provide stage is never started once ctx has ended: a
// cancelled turn must not run a tool.
//
// A handler panic is a failure wrapping ErrPanicked; a handler still
// running when its stage's deadline passes is a failure wrapping
// context.DeadlineExceeded (context.Canceled when ctx ended first), and is
// left to finish on its own; an answer of the wrong type wraps
// ErrMalformed. Arguments modified by the pre_tool_call stage are what the
// later stages see. The transform stage sees the call as the host would
// show it: arguments after the modify, the provided result as JSON
// (AsJSON), status provided_by:<p's name>, and the time the stretch took so
// far. A request that is not a legal stretch is answered with one failure
// wrapping ErrBadStretch.
func RunStretch(ctx context.Context, p Plugin, req StretchRequest, emit func(answer any, err error)) {
	start := time.Now()
	if err := checkStretch(req); err != nil {
		emit(nil, err)
		return
	}
	call := req.Call
	var provided *ToolResult
	for _, st := range req.Stages {
		if err := ctx.Err(); err != nil {
			emit(nil, fmt.Errorf("%s not started: %w", st.Hook, err))
			return
		}
		switch st.Hook {
		case PreToolCall:
			d, err := runStage[*PreToolCallDecision](ctx, p, st, call)
			if err != nil {
				emit(nil, err)
				return
			}
			emit(answerOf(d), nil)
			if d == nil {
				continue
			}
			if d.Block != nil || d.check() != nil {
				return
			}
			if d.ModifiedArgs != nil {
				call.Arguments = d.ModifiedArgs
			}
		case PreToolCallCanProvideResult:
			r, err := runStage[*ToolResult](ctx, p, st, call)
			if err != nil {
				emit(nil, err)
				return
			}
			emit(answerOf(r), nil)
			if r == nil {
				return
			}
			provided = r
		case TransformToolResult:
			ev := ToolCallOutcome{
				SessionID: call.SessionID, CallID: call.CallID, Name: call.Name, Arguments: call.Arguments,
				Result: provided.AsJSON(), Status: ProvidedBy(p.Manifest().Name), Duration: time.Since(start),
			}
			r, err := runStage[*ToolResult](ctx, p, st, ev)
			emit(answerOf(r), err)
		}
	}
}

// answerOf turns a nil answer of a stage's answer type into a plain nil,
// so that whoever receives it can test for "no opinion" with == nil.
func answerOf(v any) any {
	switch v := v.(type) {
	case *PreToolCallDecision:
		if v == nil {
			return nil
		}
	case *ToolResult:
		if v == nil {
			return nil
		}
	}
	return v
}

// runStage calls one stage of a stretch under the stage's deadline, on a
// goroutine so that a handler that ignores its context cannot hold the
// stretch past the deadline.
func runStage[T any](ctx context.Context, p Plugin, st StretchStage, req any) (T, error) {
	cctx, cancel := context.WithTimeout(ctx, st.Timeout)
	defer cancel()
	done := make(chan callResult[T], 1)
	go func() {
		done <- guarded(cctx, func(ctx context.Context) (T, error) { return Ask[T](ctx, p, st.Hook, req) })
	}()
	var r callResult[T]
	select {
	case r = <-done:
	case <-cctx.Done():
	}
	if r.err == nil && pastDeadline(cctx) {
		// Late, even if it raced the deadline and won: the host has been
		// told, or will be, that the stage timed out.
		var zero T
		return zero, fmt.Errorf("%s: %w", st.Hook, ended(cctx))
	}
	if r.err != nil {
		var zero T
		return zero, fmt.Errorf("%s: %w", st.Hook, r.err)
	}
	return r.v, nil
}

// ToolRun fires the tool pipeline's hooks for one tool call, in order:
// PreToolCall, ProvideResult, Done (post_tool_call), Transform, then Close.
// Each step applies the combine rule of the Bus method of the same hook and
// gives the same outcome; what a ToolRun adds is stretches. A ToolRun is for
// one goroutine; a nil Bus gives a ToolRun that fires nothing.
//
// # Stretches
//
// A stretch is consecutive stages of the tool pipeline, for one call, asked
// of one plugin in one exchange: the host sends the call once, with each
// stage's deadline, and the plugin answers each stage as soon as it knows
// it and goes on to the next by itself (RunStretch is its side; protocol v2
// carries it). A remote plugin in pre_tool_call,
// pre_tool_call_can_provide_result and transform_tool_result then costs
// one round trip where it cost three.
//
// When the host forms one. The run looks at who is subscribed for this
// tool, per-hook matchers applied (StartToolCall, and ProvideResult when no
// stretch was sent yet). Let P be the plugin asked first for
// pre_tool_call_can_provide_result. If P is also the plugin asked last for
// pre_tool_call, and P implements Stretcher, P is asked [pre_tool_call,
// pre_tool_call_can_provide_result] in one stretch, with
// transform_tool_result added when P is also the first transform_tool_result
// subscriber. Otherwise, if P is the first transform_tool_result subscriber,
// P is asked [pre_tool_call_can_provide_result, transform_tool_result].
// The same holds when pre_tool_call was fired outside the run (a caller
// that must see the final arguments before any plugin is asked for a
// result fires Bus.PreToolCall, then starts the run). Everything else is
// asked hook by hook, and so is everything when Stretch returns
// ErrNoStretch (a process speaking protocol v1); any other error from
// Stretch is the first stage's failure. A run sends at most one
// stretch, when P's first stage is reached and not before: after every
// plugin above P has answered pre_tool_call, with the arguments as they
// modified them, and never once one of them has blocked.
//
// Why the catalogue's rules hold:
//
//   - Order across plugins. A stretch covers only stages between which no
//     other plugin is asked: P is the last pre_tool_call subscriber and the
//     first provide and transform subscriber, and post_tool_call, between
//     provide and transform, only observes. Every plugin sees what it would
//     see hook by hook; P's provide stage sees the arguments after every
//     modify, its own included.
//   - Any block wins, and nothing is provided after a block. A block from a
//     plugin above P ends the run before the stretch is sent. A block from
//     P ends P's stretch on both sides: RunStretch runs no stage after a
//     block, and the host closes the stretch.
//   - A fail_closed guard's failure still blocks. A stage's answer goes
//     through the combine rule exactly as a plain call's answer does, so a
//     failed pre stage of a fail_closed P blocks, and nothing is provided.
//   - Transform sees the final result. P's transform stage runs only on the
//     result P itself provided, which is final (the first provided result
//     wins and native dispatch does not run), and sees the call as the
//     pipeline shows it: arguments after every modify, the result as JSON
//     (AsJSON), status provided_by:P. Before using that stage's answer the
//     host checks that the call it is transforming is that one; if not, it
//     closes the stretch and asks P by a plain call.
//   - Per-hook deadlines and failure accounting are unchanged. Each stage's
//     answer is read (Stretch.Next) under that hook's own deadline through
//     the accounting of a plain call: one call counted per hook asked,
//     failures classified and logged the same way, FailClosed honoured, the
//     answer checked by the same rules (one that breaks them is
//     malformed). After a stage that failed, blocked, broke the rules or
//     provided nothing, the host closes the stretch and goes on exactly as
//     hook by hook: after a failed pre stage of a P that is not fail_closed,
//     P is asked pre_tool_call_can_provide_result by a plain call. Sending
//     the stretch is bounded by its first stage's deadline too: a process
//     that does not take it in time (it stopped reading) fails that stage
//     with a timeout, and holds the run no longer than a plain call would.
//   - A cancelled turn runs no tool. The stretch lives under the context of
//     the step that sent it; when that context ends, or at Close, the
//     plugin is told to cancel, and it never starts a provide stage once
//     cancelled.
//
// What differs. The plugin starts each stage as soon as the one before is
// answered, not when the host asks: P's provide stage may run while the
// host still handles P's pre answer, and its transform stage while
// post_tool_call is being queued. Each side counts a stage's deadline from
// when it starts the stage, so a pre stage the host has given up on may
// still have let the plugin start its provide stage, which the host then
// cancels before asking provide by a plain call (the same holds for a
// cancellation that reaches the plugin after it started a provide). The
// Duration the transform stage sees is measured by the plugin, from when it
// received the stretch, not by the host's pipeline.
type ToolRun struct {
	b   *Bus
	req ToolCallRequest

	// plan is the stretch planned for this call, nil when there is none or
	// once it is over.
	plan *stretchPlan
	// st is the stretch under way: nil before it is sent and once closed;
	// cancel ends the context it was sent with.
	st     Stretch
	cancel context.CancelFunc
	// next indexes plan.subs: the stage whose answer is read next.
	next int
	// provided is the result the stretch's provide stage gave.
	provided *ToolResult
	// tried says a stretch was sent, or refused, in this run: a run sends
	// at most one, and once it is over every hook is asked plainly.
	tried bool
}

// stretchPlan is one plugin's subscribers for the consecutive stages it
// will be asked in one exchange.
type stretchPlan struct {
	m    *member
	subs []*subscriber
}

// StartToolCall begins the hooks of one tool call and plans its stretch
// (see ToolRun).
func (b *Bus) StartToolCall(req ToolCallRequest) *ToolRun {
	r := &ToolRun{b: b, req: req}
	if b != nil && b.stretchers {
		r.plan = b.planStretch(req.Name, true)
	}
	return r
}

// planStretch plans the stretch of a call of tool, from pre_tool_call when
// withPre is set and from pre_tool_call_can_provide_result otherwise.
func (b *Bus) planStretch(tool string, withPre bool) *stretchPlan {
	first := func(h Name) *subscriber {
		for _, s := range b.subs[h] {
			if s.matches(tool) {
				return s
			}
		}
		return nil
	}
	prov := first(PreToolCallCanProvideResult)
	if prov == nil {
		return nil
	}
	if _, ok := prov.m.plugin.(Stretcher); !ok {
		return nil
	}
	var lastPre *subscriber
	for _, s := range b.subs[PreToolCall] {
		if withPre && s.matches(tool) {
			lastPre = s
		}
	}
	var subs []*subscriber
	if lastPre != nil && lastPre.m == prov.m {
		subs = append(subs, lastPre)
	}
	subs = append(subs, prov)
	if tr := first(TransformToolResult); tr != nil && tr.m == prov.m {
		subs = append(subs, tr)
	}
	if len(subs) < 2 {
		return nil
	}
	return &stretchPlan{m: prov.m, subs: subs}
}

// stage reports whether s's answer is the stretch's next stage, sending
// the stretch first when s is its first stage; false means ask s by a
// plain call. A stretch the plugin does not take within its first stage's
// deadline (a process that stopped reading what the host sends) is that
// stage's failure, returned as err: the host must not wait on it longer
// than on a plain call.
func (r *ToolRun) stage(ctx context.Context, s *subscriber, req ToolCallRequest) (ok bool, err error) {
	if r.plan == nil || r.next >= len(r.plan.subs) || r.plan.subs[r.next] != s {
		return false, nil
	}
	if r.st != nil {
		return true, nil
	}
	if r.next > 0 {
		return false, nil
	}
	sreq := StretchRequest{Call: req}
	for _, s := range r.plan.subs {
		sreq.Stages = append(sreq.Stages, StretchStage{Hook: s.hook, Timeout: s.timeout})
	}
	r.tried = true
	// The stretch lives as long as the run's context allows, but sending
	// it may take no longer than its first stage.
	sctx, cancel := context.WithCancel(ctx)
	bound := time.AfterFunc(s.timeout, cancel)
	st, err := r.plan.m.plugin.(Stretcher).Stretch(sctx, sreq)
	if !bound.Stop() && ctx.Err() == nil {
		if st != nil {
			st.Close()
		}
		cancel()
		return true, fmt.Errorf("the plugin did not take the stretch within the deadline of its first stage: %w", context.DeadlineExceeded)
	}
	if err != nil && !errors.Is(err, ErrNoStretch) {
		// The first stage failed as a plain call would have (refused,
		// unavailable, not taken in time); asking it again by a plain call
		// would make the run wait for it twice.
		cancel()
		return true, err
	}
	if err != nil || st == nil {
		// The plugin cannot answer a stretch now: hook by hook, and
		// nothing is counted, since every hook will be asked plainly.
		cancel()
		r.plan = nil
		return false, nil
	}
	r.st, r.cancel = st, cancel
	return true, nil
}

// readStage reads the answer of the stretch's next stage, the answer of s,
// as a plain call's answer is read: under s's deadline, counted, its
// failure classified and logged, and its rules checked. sendErr is why the
// stretch could not be sent, when it could not: that is the stage's
// failure.
func readStage[T any](ctx context.Context, r *ToolRun, s *subscriber, sendErr error) (T, FailureKind, error) {
	r.next++
	st := r.st
	v, kind, err := invokeErr(ctx, r.b, s, func(ctx context.Context) (T, error) {
		var zero T
		if sendErr != nil {
			return zero, sendErr
		}
		a, err := st.Next(ctx)
		if err != nil || a == nil {
			return zero, err
		}
		t, ok := a.(T)
		if !ok {
			return zero, fmt.Errorf("%w: %s stage answered with a %T, want %T", ErrMalformed, s.hook, a, zero)
		}
		return t, nil
	})
	if kind != KindNone {
		return v, kind, err
	}
	return checked(r.b, s, v)
}

// closeStretch ends the stretch, if one is under way, and the plan: every
// hook still to ask is asked by a plain call.
func (r *ToolRun) closeStretch() {
	if r.st != nil {
		r.st.Close()
		r.cancel()
		r.st, r.cancel = nil, nil
	}
	r.plan = nil
}

// PreToolCall fires pre_tool_call (see Bus.PreToolCall). Later steps see
// the arguments as modified.
func (r *ToolRun) PreToolCall(ctx context.Context) PreToolCallOutcome {
	if r.b == nil {
		return PreToolCallOutcome{Arguments: r.req.Arguments}
	}
	out := r.b.preToolCall(ctx, r.req, func(ctx context.Context, s *subscriber, req ToolCallRequest) (*PreToolCallDecision, FailureKind, error) {
		use, sendErr := r.stage(ctx, s, req)
		if !use {
			return r.b.askPre(ctx, s, req)
		}
		d, kind, err := readStage[*PreToolCallDecision](ctx, r, s, sendErr)
		if kind != KindNone || (d != nil && d.Block != nil) {
			r.closeStretch()
		}
		return d, kind, err
	})
	if out.Blocked {
		r.closeStretch()
	}
	r.req.Arguments = out.Arguments
	return out
}

// ProvideResult fires pre_tool_call_can_provide_result (see
// Bus.PreToolCallCanProvideResult).
func (r *ToolRun) ProvideResult(ctx context.Context) *ProvidedResult {
	if r.b == nil {
		return nil
	}
	if r.st == nil && !r.tried && r.b.stretchers {
		// pre_tool_call sent no stretch, or was fired outside this run:
		// provide and transform may still go in one.
		r.plan = r.b.planStretch(r.req.Name, false)
	}
	return r.b.provideResult(ctx, r.req, func(ctx context.Context, s *subscriber, req ToolCallRequest) (*ToolResult, FailureKind, error) {
		use, sendErr := r.stage(ctx, s, req)
		if !use {
			return r.b.askProvide(ctx, s, req)
		}
		res, kind, err := readStage[*ToolResult](ctx, r, s, sendErr)
		if kind != KindNone || res == nil || r.next == len(r.plan.subs) {
			r.closeStretch()
		} else {
			r.provided = res
		}
		return res, kind, err
	})
}

// Done fires post_tool_call (see Bus.PostToolCall).
func (r *ToolRun) Done(ev ToolCallOutcome) { r.b.PostToolCall(ev) }

// Transform fires transform_tool_result (see Bus.TransformToolResult).
func (r *ToolRun) Transform(ctx context.Context, ev ToolCallOutcome) (ToolResult, []string) {
	if r.b == nil {
		return ev.Result, nil
	}
	return r.b.transformToolResult(ctx, ev, func(ctx context.Context, s *subscriber, ev ToolCallOutcome) (*ToolResult, FailureKind, error) {
		if r.st != nil && r.next < len(r.plan.subs) && r.plan.subs[r.next] == s {
			if r.showsProvided(ev) {
				res, kind, err := readStage[*ToolResult](ctx, r, s, nil)
				r.closeStretch()
				return res, kind, err
			}
			// The plugin is transforming another call than this one: its
			// stage's answer does not apply.
			r.closeStretch()
		}
		return r.b.askTransform(ctx, s, ev)
	})
}

// showsProvided reports whether ev is the call the stretch's transform
// stage sees: this call, as the plugin's provided result left it.
func (r *ToolRun) showsProvided(ev ToolCallOutcome) bool {
	if r.provided == nil {
		return false
	}
	return ev.SessionID == r.req.SessionID && ev.CallID == r.req.CallID && ev.Name == r.req.Name &&
		bytes.Equal(ev.Arguments, r.req.Arguments) &&
		ev.Status == ProvidedBy(r.plan.m.name) && ev.Result == r.provided.AsJSON()
}

// Close releases what the run holds; call it when the call is over,
// whichever steps ran.
func (r *ToolRun) Close() { r.closeStretch() }
