package hookbus

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/hookstretch"
)

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
// pre_tool_call, and P implements hookstretch.Stretcher, P is asked [pre_tool_call,
// pre_tool_call_can_provide_result] in one stretch, with
// transform_tool_result added when P is also the first transform_tool_result
// subscriber. Otherwise, if P is the first transform_tool_result subscriber,
// P is asked [pre_tool_call_can_provide_result, transform_tool_result].
// The same holds when pre_tool_call was fired outside the run (a caller
// that must see the final arguments before any plugin is asked for a
// result fires Bus.PreToolCall, then starts the run). Everything else is
// asked hook by hook, and so is everything when Stretch returns
// hookstretch.ErrNoStretch (a process speaking protocol v1); any other error from
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
	req hooks.ToolCallRequest

	// plan is the stretch planned for this call, nil when there is none or
	// once it is over.
	plan *stretchPlan
	// st is the stretch under way: nil before it is sent and once closed;
	// cancel ends the context it was sent with.
	st     hookstretch.Stretch
	cancel context.CancelFunc
	// next indexes plan.subs: the stage whose answer is read next.
	next int
	// provided is the result the stretch's provide stage gave.
	provided *hooks.ToolResult
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
func (b *Bus) StartToolCall(req hooks.ToolCallRequest) *ToolRun {
	r := &ToolRun{b: b, req: req}
	if b != nil && b.stretchers {
		r.plan = b.planStretch(req.Name, true)
	}
	return r
}

// planStretch plans the stretch of a call of tool, from pre_tool_call when
// withPre is set and from pre_tool_call_can_provide_result otherwise.
func (b *Bus) planStretch(tool string, withPre bool) *stretchPlan {
	first := func(h hooks.Name) *subscriber {
		for _, s := range b.subs[h] {
			if s.matches(tool) {
				return s
			}
		}
		return nil
	}
	prov := first(hooks.PreToolCallCanProvideResult)
	if prov == nil {
		return nil
	}
	if _, ok := prov.m.plugin.(hookstretch.Stretcher); !ok {
		return nil
	}
	var lastPre *subscriber
	for _, s := range b.subs[hooks.PreToolCall] {
		if withPre && s.matches(tool) {
			lastPre = s
		}
	}
	var subs []*subscriber
	if lastPre != nil && lastPre.m == prov.m {
		subs = append(subs, lastPre)
	}
	subs = append(subs, prov)
	if tr := first(hooks.TransformToolResult); tr != nil && tr.m == prov.m {
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
func (r *ToolRun) stage(ctx context.Context, s *subscriber, req hooks.ToolCallRequest) (ok bool, err error) {
	if r.plan == nil || r.next >= len(r.plan.subs) || r.plan.subs[r.next] != s {
		return false, nil
	}
	if r.st != nil {
		return true, nil
	}
	if r.next > 0 {
		return false, nil
	}
	sreq := hookstretch.Request{Call: req}
	for _, s := range r.plan.subs {
		sreq.Stages = append(sreq.Stages, hookstretch.Stage{Hook: s.hook, Timeout: s.timeout})
	}
	r.tried = true
	// The stretch lives as long as the run's context allows, but sending
	// it may take no longer than its first stage.
	sctx, cancel := context.WithCancel(ctx)
	bound := time.AfterFunc(s.timeout, cancel)
	st, err := r.plan.m.plugin.(hookstretch.Stretcher).Stretch(sctx, sreq)
	if !bound.Stop() && ctx.Err() == nil {
		if st != nil {
			st.Close()
		}
		cancel()
		return true, fmt.Errorf("the plugin did not take the stretch within the deadline of its first stage: %w", context.DeadlineExceeded)
	}
	if err != nil && !errors.Is(err, hookstretch.ErrNoStretch) {
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

// readStage reads the answer of the stretch's next stage, the answer of s
// (readAnswer). sendErr is why the stretch could not be sent, when it
// could not: that is the stage's failure.
func readStage[T any](ctx context.Context, r *ToolRun, s *subscriber, payload any, sendErr error) (T, FailureKind, error) {
	r.next++
	return readAnswer[T](ctx, r.b, s, payload, r.st, sendErr)
}

// readAnswer reads s's answer from the exchange st (a stretch or a model
// stage) as a plain call's answer is read: under s's deadline, counted,
// its failure classified and logged, recorded, and its rules checked;
// sendErr, when set, is why the exchange could not be sent, and is the
// answer's failure.
func readAnswer[T any](ctx context.Context, b *Bus, s *subscriber, payload any, st hookstretch.Stretch, sendErr error) (T, FailureKind, error) {
	var start time.Time
	if b.onCall != nil {
		start = time.Now()
	}
	if r, ok := st.(hookstretch.Ready); ok && sendErr == nil {
		// An answer already received is on time whatever the deadline:
		// it needs no deadline to wait under.
		if a, got, err := r.TryNext(); got {
			v, kind, err := settleReady[T](ctx, b, s, a, err)
			return recorded(ctx, b, s, payload, start, v, kind, err)
		}
	}
	v, kind, err := invokeErr(ctx, b, s, func(ctx context.Context) (T, error) {
		var zero T
		if sendErr != nil {
			return zero, sendErr
		}
		a, err := st.Next(ctx)
		if err != nil {
			return zero, err
		}
		return answerAs[T](s, a)
	})
	return recorded(ctx, b, s, payload, start, v, kind, err)
}

// answerAs is a stage's answer a as the hook's answer type; nil is no
// opinion.
func answerAs[T any](s *subscriber, a any) (T, error) {
	var zero T
	if a == nil {
		return zero, nil
	}
	t, ok := a.(T)
	if !ok {
		return zero, fmt.Errorf("%w: %s stage answered with a %T, want %T", hooks.ErrMalformed, s.hook, a, zero)
	}
	return t, nil
}

// settleReady counts and classifies an answer taken without waiting
// (hookstretch.Ready) as invokeErr does one waited for.
func settleReady[T any](ctx context.Context, b *Bus, s *subscriber, a any, err error) (T, FailureKind, error) {
	s.calls.Add(1)
	var v T
	if err == nil {
		v, err = answerAs[T](s, a)
	}
	return classified(ctx, b, s, v, err, false)
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
	out := r.b.preToolCall(ctx, r.req, func(ctx context.Context, s *subscriber, req hooks.ToolCallRequest) (*hooks.PreToolCallDecision, FailureKind, error) {
		use, sendErr := r.stage(ctx, s, req)
		if !use {
			return r.b.askPre(ctx, s, req)
		}
		d, kind, err := readStage[*hooks.PreToolCallDecision](ctx, r, s, req, sendErr)
		if kind != KindNone || (d != nil && (d.Block != nil || d.Ask != nil)) {
			r.closeStretch()
		}
		return d, kind, err
	})
	if out.Blocked || out.Asked() {
		// Nothing is provided before a person approves: after an ask the
		// remaining hooks are asked by plain calls, once approved.
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
	return r.b.provideResult(ctx, r.req, func(ctx context.Context, s *subscriber, req hooks.ToolCallRequest) (*hooks.ToolResult, FailureKind, error) {
		use, sendErr := r.stage(ctx, s, req)
		if !use {
			return r.b.askProvide(ctx, s, req)
		}
		res, kind, err := readStage[*hooks.ToolResult](ctx, r, s, req, sendErr)
		if kind != KindNone || res == nil || r.next == len(r.plan.subs) {
			r.closeStretch()
		} else {
			r.provided = res
		}
		return res, kind, err
	})
}

// Done fires post_tool_call (see Bus.PostToolCall).
func (r *ToolRun) Done(ev hooks.ToolCallOutcome) { r.b.PostToolCall(ev) }

// Transform fires transform_tool_result (see Bus.TransformToolResult).
func (r *ToolRun) Transform(ctx context.Context, ev hooks.ToolCallOutcome) (hooks.ToolResult, []string) {
	if r.b == nil {
		return ev.Result, nil
	}
	return r.b.transformToolResult(ctx, ev, func(ctx context.Context, s *subscriber, ev hooks.ToolCallOutcome) (*hooks.ToolResult, FailureKind, error) {
		if r.st != nil && r.next < len(r.plan.subs) && r.plan.subs[r.next] == s {
			if r.showsProvided(ev) {
				res, kind, err := readStage[*hooks.ToolResult](ctx, r, s, ev, nil)
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
func (r *ToolRun) showsProvided(ev hooks.ToolCallOutcome) bool {
	if r.provided == nil {
		return false
	}
	return ev.SessionID == r.req.SessionID && ev.CallID == r.req.CallID && ev.Name == r.req.Name &&
		bytes.Equal(ev.Arguments, r.req.Arguments) &&
		ev.Status == hooks.ProvidedBy(r.plan.m.name) && ev.Result == r.provided.AsJSON()
}

// Close releases what the run holds; call it when the call is over,
// whichever steps ran.
func (r *ToolRun) Close() { r.closeStretch() }
