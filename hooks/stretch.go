package hooks

import (
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
// hook.
type Stretcher interface {
	Stretch(ctx context.Context, req StretchRequest) (Stretch, error)
}

// Stretch is one stretch under way.
type Stretch interface {
	// Next waits for the next stage's answer, of the hook's answer type
	// (nil for no opinion), or its failure, until ctx ends.
	Next(ctx context.Context) (any, error)
	// Close ends the exchange; the plugin is told to cancel the stages not
	// answered yet. Safe to call more than once.
	Close()
}

// ErrNoStretch is what Stretcher.Stretch returns when the plugin cannot
// answer a stretch now (its process speaks protocol v1).
var ErrNoStretch = errors.New("plugin cannot answer several hooks in one exchange")

// ErrBadStretch is what RunStretch reports for a request that is not a
// legal stretch: stages other than [pre_tool_call,
// pre_tool_call_can_provide_result], [pre_tool_call,
// pre_tool_call_can_provide_result, transform_tool_result] and
// [pre_tool_call_can_provide_result, transform_tool_result], or a stage
// without a positive timeout. It is the host's mistake, not the plugin's.
var ErrBadStretch = errors.New("not a legal stretch")

// legalStretches are the runs of the tool pipeline one plugin may be asked
// for in one exchange: consecutive stages, each but the last able to let
// the call go on to the next.
var legalStretches = [][]Name{
	{PreToolCall, PreToolCallCanProvideResult},
	{PreToolCall, PreToolCallCanProvideResult, TransformToolResult},
	{PreToolCallCanProvideResult, TransformToolResult},
}

// CheckStretch reports whether req is a legal stretch (see ErrBadStretch).
func CheckStretch(req StretchRequest) error {
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
// far. A request that is not a legal stretch (CheckStretch) is answered
// with one failure wrapping ErrBadStretch.
func RunStretch(ctx context.Context, p Plugin, req StretchRequest, emit func(answer any, err error)) {
	start := time.Now()
	if err := CheckStretch(req); err != nil {
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
	if r.err == nil && cctx.Err() != nil {
		// Late, even if it raced the deadline and won: the host has been
		// told, or will be, that the stage timed out.
		var zero T
		return zero, fmt.Errorf("%s: %w", st.Hook, cctx.Err())
	}
	if r.err != nil {
		var zero T
		return zero, fmt.Errorf("%s: %w", st.Hook, r.err)
	}
	return r.v, nil
}

// ToolRun fires the tool pipeline's hooks for one tool call, in order:
// PreToolCall, ProvideResult, Done (post_tool_call), Transform. Each step
// has the combine rule of the Bus method of the same hook.
type ToolRun struct {
	b   *Bus
	req ToolCallRequest
}

// StartToolCall begins the hooks of one tool call.
func (b *Bus) StartToolCall(req ToolCallRequest) *ToolRun {
	return &ToolRun{b: b, req: req}
}

// PreToolCall fires pre_tool_call (see Bus.PreToolCall). Later steps see
// the arguments as modified.
func (r *ToolRun) PreToolCall(ctx context.Context) PreToolCallOutcome {
	out := r.b.PreToolCall(ctx, r.req)
	r.req.Arguments = out.Arguments
	return out
}

// ProvideResult fires pre_tool_call_can_provide_result (see
// Bus.ProvideResult).
func (r *ToolRun) ProvideResult(ctx context.Context) *ProvidedResult {
	return r.b.ProvideResult(ctx, r.req)
}

// Done fires post_tool_call (see Bus.ToolCallDone).
func (r *ToolRun) Done(ev ToolCallOutcome) { r.b.ToolCallDone(ev) }

// Transform fires transform_tool_result (see Bus.TransformToolResult).
func (r *ToolRun) Transform(ctx context.Context, ev ToolCallOutcome) (ToolResult, []string) {
	return r.b.TransformToolResult(ctx, ev)
}

// Close releases what the run holds; call it when the call is over.
func (r *ToolRun) Close() {}
