// Written by go run ./internal/gencatalogue from hooks/catalogue.go (make generate);
// do not edit: make check-generated fails when this file differs from what it writes.

package plugintest

import (
	"github.com/hookhost/hookhost/hookbus"
	"github.com/hookhost/hookhost/hooks"
)

// The Harness's firing helpers, one per hook of the catalogue.

// OnSessionStart fires the on_session_start observer.
func (h *Harness) OnSessionStart(model string) {
	h.Bus.OnSessionStart(hooks.SessionStart{SessionID: SessionID, Model: model, Route: hooks.RouteGateway})
}

// PreToolListFinalized fires pre_tool_list_finalized with tools; nil means no override.
func (h *Harness) PreToolListFinalized(tools ...hooks.ToolSpec) *hookbus.ToolListChange {
	return h.Bus.PreToolListFinalized(h.ctx(), hooks.ToolListRequest{SessionID: SessionID, Tools: tools})
}

// PreAPIRequestMutable fires pre_api_request_mutable and returns the patched
// request and who changed which fields.
func (h *Harness) PreAPIRequestMutable(req hooks.ModelRequest) (hooks.ModelRequest, []hookbus.RequestChange) {
	return h.Bus.PreAPIRequestMutable(h.ctx(), hooks.APIRequest{SessionID: SessionID, Request: req})
}

// PostLLMCallCanReissue fires post_llm_call_can_reissue on a response to req; nil means
// no reissue.
func (h *Harness) PostLLMCallCanReissue(req hooks.ModelRequest, resp hooks.ModelResponse) *hookbus.ReissueRequest {
	return h.Bus.PostLLMCallCanReissue(h.ctx(), hooks.LLMCall{SessionID: SessionID, Route: hooks.RouteGateway, Request: req, Response: resp})
}

// PostLLMCall fires the post_llm_call observer; call Flush before
// asserting on what the plugin recorded. An empty SessionID in ev is
// filled in.
func (h *Harness) PostLLMCall(ev hooks.Inference) {
	if ev.SessionID == "" {
		ev.SessionID = SessionID
	}
	h.Bus.PostLLMCall(ev)
}

// PreToolCall fires pre_tool_call for a call of tool name with argsJSON
// (passed through as is, so invalid JSON can be tested too).
func (h *Harness) PreToolCall(name, argsJSON string) hookbus.PreToolCallOutcome {
	return h.Bus.PreToolCall(h.ctx(), hooks.ToolCallRequest{SessionID: SessionID, CallID: h.callID(), Name: name, Arguments: args(argsJSON)})
}

// PreToolCallCanProvideResult fires pre_tool_call_can_provide_result; nil means the host
// would dispatch the tool natively.
func (h *Harness) PreToolCallCanProvideResult(name, argsJSON string) *hookbus.ProvidedResult {
	return h.Bus.PreToolCallCanProvideResult(h.ctx(), hooks.ToolCallRequest{SessionID: SessionID, CallID: h.callID(), Name: name, Arguments: args(argsJSON)})
}

// PostToolCall fires the post_tool_call observer; call Flush before
// asserting on what the plugin recorded.
func (h *Harness) PostToolCall(name, argsJSON string, result hooks.ToolResult, status hooks.CallStatus) {
	h.Bus.PostToolCall(hooks.ToolCallOutcome{
		SessionID: SessionID, CallID: h.callID(), Name: name, Arguments: args(argsJSON),
		Result: result, Status: status,
	})
}

// TransformToolResult fires transform_tool_result on a successful call's
// result content, returning the final result and who changed it.
func (h *Harness) TransformToolResult(name, argsJSON, content string) (hooks.ToolResult, []string) {
	return h.Bus.TransformToolResult(h.ctx(), hooks.ToolCallOutcome{
		SessionID: SessionID, CallID: h.callID(), Name: name, Arguments: args(argsJSON),
		Result: hooks.ToolResult{Content: content}, Status: hooks.StatusOK,
	})
}

// TransformLLMOutput fires transform_llm_output on the final answer text.
func (h *Harness) TransformLLMOutput(text string) (string, []string) {
	return h.Bus.TransformLLMOutput(h.ctx(), hooks.LLMOutput{SessionID: SessionID, Text: text})
}

// OnSessionEnd fires the on_session_end observer.
func (h *Harness) OnSessionEnd(model string, reason hooks.EndReason) {
	h.Bus.OnSessionEnd(hooks.SessionEnd{SessionID: SessionID, Model: model, Route: hooks.RouteGateway, Reason: reason})
}
