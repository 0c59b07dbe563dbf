// Written by go run ./internal/gencatalogue from hooks/catalogue.go (make generate);
// do not edit: make check-generated fails when this file differs from what it writes.

package sdk

import (
	"context"

	"github.com/hookhost/hookhost/hooks"
)

// The per-hook interfaces. Each is one hook of the catalogue (see package
// hooks for when it fires and how answers combine); implement the ones the
// plugin needs.
type (
	// SessionStarter observes on_session_start (a session begins).
	SessionStarter interface {
		OnSessionStart(context.Context, hooks.SessionStart) error
	}
	// ToolListFinalizer answers pre_tool_list_finalized (before each model call):
	// it returns a replacement tool list; first non-nil wins, for that call only.
	ToolListFinalizer interface {
		PreToolListFinalized(context.Context, hooks.ToolListRequest) (*hooks.ToolListOverride, error)
	}
	// RequestMutator answers pre_api_request_mutable (before each model call): it
	// returns a patch of request fields; merged in priority order; first write per
	// field wins: a lower-priority plugin sees, and may patch, only fields nobody
	// above it set.
	RequestMutator interface {
		PreAPIRequestMutable(context.Context, hooks.APIRequest) (*hooks.RequestPatch, error)
	}
	// Reissuer answers post_llm_call_can_reissue (after each model response): it
	// returns a request patch + reason; first non-nil wins; at most one reissue
	// per iteration, not counted against the budget.
	Reissuer interface {
		PostLLMCallCanReissue(context.Context, hooks.LLMCall) (*hooks.Reissue, error)
	}
	// LLMCallObserver observes post_llm_call (after every model call, reissues
	// included).
	LLMCallObserver interface {
		PostLLMCall(context.Context, hooks.Inference) error
	}
	// ToolCallGuard answers pre_tool_call (before each tool call): it returns
	// block with a message, or modified arguments; any block wins; modifies apply
	// in order, each plugin seeing the arguments so far.
	ToolCallGuard interface {
		PreToolCall(context.Context, hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error)
	}
	// ResultProvider answers pre_tool_call_can_provide_result (before native
	// dispatch): it returns a tool result; first non-nil wins and skips native
	// dispatch.
	ResultProvider interface {
		PreToolCallCanProvideResult(context.Context, hooks.ToolCallRequest) (*hooks.ToolResult, error)
	}
	// ToolCallObserver observes post_tool_call (after every tool call).
	ToolCallObserver interface {
		PostToolCall(context.Context, hooks.ToolCallOutcome) error
	}
	// ResultTransformer answers transform_tool_result (before a result joins the
	// conversation): it returns a replacement result; chain in priority order.
	ResultTransformer interface {
		TransformToolResult(context.Context, hooks.ToolCallOutcome) (*hooks.ToolResult, error)
	}
	// OutputTransformer answers transform_llm_output (on the final answer): it
	// returns replacement text; chain in priority order.
	OutputTransformer interface {
		TransformLLMOutput(context.Context, hooks.LLMOutput) (*hooks.TextReplacement, error)
	}
	// SessionEnder observes on_session_end (each run of a session ends).
	SessionEnder interface {
		OnSessionEnd(context.Context, hooks.SessionEnd) error
	}
)

// adaptHooks sets the Funcs field of each per-hook interface p implements.
// The manifest's hook list follows from the fields set.
func adaptHooks(p Plugin, f *hooks.Funcs) {
	if h, ok := p.(SessionStarter); ok {
		f.OnSessionStartFunc = h.OnSessionStart
	}
	if h, ok := p.(ToolListFinalizer); ok {
		f.PreToolListFinalizedFunc = h.PreToolListFinalized
	}
	if h, ok := p.(RequestMutator); ok {
		f.PreAPIRequestMutableFunc = h.PreAPIRequestMutable
	}
	if h, ok := p.(Reissuer); ok {
		f.PostLLMCallCanReissueFunc = h.PostLLMCallCanReissue
	}
	if h, ok := p.(LLMCallObserver); ok {
		f.PostLLMCallFunc = h.PostLLMCall
	}
	if h, ok := p.(ToolCallGuard); ok {
		f.PreToolCallFunc = h.PreToolCall
	}
	if h, ok := p.(ResultProvider); ok {
		f.PreToolCallCanProvideResultFunc = h.PreToolCallCanProvideResult
	}
	if h, ok := p.(ToolCallObserver); ok {
		f.PostToolCallFunc = h.PostToolCall
	}
	if h, ok := p.(ResultTransformer); ok {
		f.TransformToolResultFunc = h.TransformToolResult
	}
	if h, ok := p.(OutputTransformer); ok {
		f.TransformLLMOutputFunc = h.TransformLLMOutput
	}
	if h, ok := p.(SessionEnder); ok {
		f.OnSessionEndFunc = h.OnSessionEnd
	}
}
