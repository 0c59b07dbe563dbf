package hooks

import (
	"context"
	"errors"
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

// RunStretch answers a stretch on the plugin's side, calling p for each
// stage in order under the stage's own deadline and handing each answer (or
// failure) to emit as soon as it is known. It stops after a stage that
// failed, a block, a malformed decision, a provide that gave nothing, and
// when ctx ends. The transform stage sees the call as the host would show
// it: arguments after the modify, the provided result as JSON (AsJSON),
// status provided_by:<p's name>, and the time the stretch took so far.
func RunStretch(ctx context.Context, p Plugin, req StretchRequest, emit func(answer any, err error)) {
	panic("hooks: RunStretch: not written yet")
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
