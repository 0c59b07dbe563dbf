package wire

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/hookhost/hookhost/hooks"
	pluginv1 "github.com/hookhost/hookhost/plugins/proto/v1"
)

// Conversions come in pairs, xToPB and xFromPB, one pair per type. They are
// total: they never fail, so they can serve both directions. What makes a
// message malformed is decided separately (checkManifest here, the hook
// rules in package hooks), by the side that received it and so knows whom
// to blame.

// --- shared building blocks ------------------------------------------------

// bytesFromPB normalises an absent or empty byte string to nil; proto3 cannot
// tell the two apart, so neither may the receiver.
func bytesFromPB(b []byte) json.RawMessage {
	if len(b) == 0 {
		return nil
	}
	return json.RawMessage(b)
}

// each converts a slice element by element. An empty slice becomes nil on
// both sides, as proto3 cannot tell them apart.
func each[A, B any](in []A, convert func(A) B) []B {
	if len(in) == 0 {
		return nil
	}
	out := make([]B, len(in))
	for i, v := range in {
		out[i] = convert(v)
	}
	return out
}

func specsToPB(specs []hooks.ToolSpec) []*pluginv1.ToolSpec {
	return each(specs, func(s hooks.ToolSpec) *pluginv1.ToolSpec {
		return &pluginv1.ToolSpec{Name: s.Name, Description: s.Description, InputSchema: s.InputSchema}
	})
}

func specsFromPB(specs []*pluginv1.ToolSpec) []hooks.ToolSpec {
	return each(specs, func(s *pluginv1.ToolSpec) hooks.ToolSpec {
		return hooks.ToolSpec{Name: s.GetName(), Description: s.GetDescription(), InputSchema: bytesFromPB(s.GetInputSchema())}
	})
}

func toolCallsToPB(calls []hooks.ToolCall) []*pluginv1.ToolCall {
	return each(calls, func(c hooks.ToolCall) *pluginv1.ToolCall {
		return &pluginv1.ToolCall{Id: c.ID, Name: c.Name, Arguments: c.Arguments}
	})
}

func toolCallsFromPB(calls []*pluginv1.ToolCall) []hooks.ToolCall {
	return each(calls, func(c *pluginv1.ToolCall) hooks.ToolCall {
		return hooks.ToolCall{ID: c.GetId(), Name: c.GetName(), Arguments: bytesFromPB(c.GetArguments())}
	})
}

func messageToPB(m hooks.Message) *pluginv1.Message {
	return &pluginv1.Message{
		Role:       string(m.Role),
		Content:    m.Content,
		ToolCalls:  toolCallsToPB(m.ToolCalls),
		ToolCallId: m.ToolCallID,
		ToolName:   m.ToolName,
		IsError:    m.IsError,
	}
}

func messageFromPB(m *pluginv1.Message) hooks.Message {
	return hooks.Message{
		Role:       hooks.Role(m.GetRole()),
		Content:    m.GetContent(),
		ToolCalls:  toolCallsFromPB(m.GetToolCalls()),
		ToolCallID: m.GetToolCallId(),
		ToolName:   m.GetToolName(),
		IsError:    m.GetIsError(),
	}
}

func messagesToPB(msgs []hooks.Message) []*pluginv1.Message {
	return each(msgs, messageToPB)
}

func messagesFromPB(msgs []*pluginv1.Message) []hooks.Message {
	return each(msgs, messageFromPB)
}

func usageToPB(u hooks.Usage) *pluginv1.Usage {
	return &pluginv1.Usage{InputTokens: int64(u.InputTokens), OutputTokens: int64(u.OutputTokens)}
}

func usageFromPB(u *pluginv1.Usage) hooks.Usage {
	return hooks.Usage{InputTokens: int(u.GetInputTokens()), OutputTokens: int(u.GetOutputTokens())}
}

// copyFloat keeps the two sides from sharing a pointer, so a plugin that
// edits a temperature it was given cannot reach back into the caller's value.
func copyFloat(p *float64) *float64 {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

func modelRequestToPB(r hooks.ModelRequest) *pluginv1.ModelRequest {
	return &pluginv1.ModelRequest{
		Model:       r.Model,
		System:      r.System,
		Messages:    messagesToPB(r.Messages),
		Tools:       specsToPB(r.Tools),
		MaxTokens:   int64(r.MaxTokens),
		Temperature: copyFloat(r.Temperature),
	}
}

func modelRequestFromPB(r *pluginv1.ModelRequest) hooks.ModelRequest {
	if r == nil {
		return hooks.ModelRequest{}
	}
	return hooks.ModelRequest{
		Model:       r.GetModel(),
		System:      r.GetSystem(),
		Messages:    messagesFromPB(r.GetMessages()),
		Tools:       specsFromPB(r.GetTools()),
		MaxTokens:   int(r.GetMaxTokens()),
		Temperature: copyFloat(r.Temperature),
	}
}

func modelResponseToPB(r hooks.ModelResponse) *pluginv1.ModelResponse {
	return &pluginv1.ModelResponse{
		Model:      r.Model,
		Message:    messageToPB(r.Message),
		Usage:      usageToPB(r.Usage),
		StopReason: string(r.StopReason),
	}
}

func modelResponseFromPB(r *pluginv1.ModelResponse) hooks.ModelResponse {
	if r == nil {
		return hooks.ModelResponse{}
	}
	var msg hooks.Message
	if r.GetMessage() != nil {
		msg = messageFromPB(r.GetMessage())
	}
	return hooks.ModelResponse{
		Model:      r.GetModel(),
		Message:    msg,
		Usage:      usageFromPB(r.GetUsage()),
		StopReason: hooks.StopReason(r.GetStopReason()),
	}
}

func toolResultToPB(r hooks.ToolResult) *pluginv1.ToolResult {
	return &pluginv1.ToolResult{Content: r.Content, IsError: r.IsError}
}

func toolResultFromPB(r *pluginv1.ToolResult) hooks.ToolResult {
	return hooks.ToolResult{Content: r.GetContent(), IsError: r.GetIsError()}
}

// patchToPB keeps the patch's presence rules: a nil pointer or slice is an
// absent field. Messages and Tools travel in wrapper messages because a
// repeated field alone cannot say "set to this list" apart from "leave
// alone".
func patchToPB(p hooks.RequestPatch) *pluginv1.RequestPatch {
	out := &pluginv1.RequestPatch{Temperature: copyFloat(p.Temperature)}
	if p.Model != nil {
		v := *p.Model
		out.Model = &v
	}
	if p.System != nil {
		v := *p.System
		out.System = &v
	}
	if p.Messages != nil {
		out.Messages = &pluginv1.MessageList{Messages: messagesToPB(p.Messages)}
	}
	if p.Tools != nil {
		out.Tools = &pluginv1.ToolList{Tools: specsToPB(p.Tools)}
	}
	if p.MaxTokens != nil {
		v := int64(*p.MaxTokens)
		out.MaxTokens = &v
	}
	return out
}

func patchFromPB(p *pluginv1.RequestPatch) hooks.RequestPatch {
	var out hooks.RequestPatch
	if p == nil {
		return out
	}
	if p.Model != nil {
		v := *p.Model
		out.Model = &v
	}
	if p.System != nil {
		v := *p.System
		out.System = &v
	}
	if p.Messages != nil {
		// Present but empty stays an empty, non-nil list: the Bus rejects
		// it as malformed, which it could not do if it arrived as nil.
		out.Messages = append([]hooks.Message{}, messagesFromPB(p.Messages.GetMessages())...)
	}
	if p.Tools != nil {
		out.Tools = append([]hooks.ToolSpec{}, specsFromPB(p.Tools.GetTools())...)
	}
	if p.MaxTokens != nil {
		v := int(*p.MaxTokens)
		out.MaxTokens = &v
	}
	out.Temperature = copyFloat(p.Temperature)
	return out
}

// --- describe and configure -------------------------------------------------

func manifestToPB(m hooks.Manifest) *pluginv1.Manifest {
	out := &pluginv1.Manifest{
		Name:     m.Name,
		Version:  m.Version,
		Matchers: m.Matchers,
		Tools:    specsToPB(m.Tools),
		Hooks:    each(m.Hooks, func(h hooks.Name) string { return string(h) }),
	}
	if len(out.Matchers) == 0 {
		out.Matchers = nil
	}
	if m.Config != nil {
		out.Config = &pluginv1.ConfigKeys{Keys: nilIfEmpty(m.Config.Keys)}
	}
	// In catalogue order, so that the same manifest always makes the same
	// bytes; a hook outside the catalogue follows, sorted, to be rejected
	// by the receiver.
	for _, h := range hooks.Catalogue {
		if ms, ok := m.HookMatchers[h]; ok {
			out.HookMatchers = append(out.HookMatchers, &pluginv1.HookMatchers{Hook: string(h), Matchers: nilIfEmpty(ms)})
		}
	}
	var unknown []string
	for h := range m.HookMatchers {
		if !h.Known() {
			unknown = append(unknown, string(h))
		}
	}
	slices.Sort(unknown)
	for _, h := range unknown {
		out.HookMatchers = append(out.HookMatchers, &pluginv1.HookMatchers{Hook: h, Matchers: nilIfEmpty(m.HookMatchers[hooks.Name(h)])})
	}
	optionsPB := func(h string, o hooks.HookOptions) *pluginv1.HookOptions {
		return &pluginv1.HookOptions{Hook: h, WindowBytes: o.WindowBytes, OverlapBytes: o.OverlapBytes, DecideAfterBytes: o.DecideAfterBytes}
	}
	for _, h := range hooks.Catalogue {
		if o, ok := m.HookOptions[h]; ok {
			out.HookOptions = append(out.HookOptions, optionsPB(string(h), o))
		}
	}
	unknown = unknown[:0]
	for h := range m.HookOptions {
		if !h.Known() {
			unknown = append(unknown, string(h))
		}
	}
	slices.Sort(unknown)
	for _, h := range unknown {
		out.HookOptions = append(out.HookOptions, optionsPB(h, m.HookOptions[hooks.Name(h)]))
	}
	return out
}

func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}

// manifestFromPB keeps an entry of hook_matchers with no globs as an entry
// (it means every tool for that hook), with a nil list. A hook named twice
// keeps its first entry; checkManifest rejects it.
func manifestFromPB(m *pluginv1.Manifest) hooks.Manifest {
	out := hooks.Manifest{
		Name:    m.GetName(),
		Version: m.GetVersion(),
		Tools:   specsFromPB(m.GetTools()),
		Hooks:   each(m.GetHooks(), func(h string) hooks.Name { return hooks.Name(h) }),
	}
	if ms := m.GetMatchers(); len(ms) > 0 {
		out.Matchers = ms
	}
	if c := m.GetConfig(); c != nil {
		out.Config = &hooks.ConfigKeys{Keys: nilIfEmpty(c.GetKeys())}
	}
	for _, hm := range m.GetHookMatchers() {
		if out.HookMatchers == nil {
			out.HookMatchers = map[hooks.Name][]string{}
		}
		if _, dup := out.HookMatchers[hooks.Name(hm.GetHook())]; !dup {
			out.HookMatchers[hooks.Name(hm.GetHook())] = nilIfEmpty(hm.GetMatchers())
		}
	}
	for _, ho := range m.GetHookOptions() {
		if out.HookOptions == nil {
			out.HookOptions = map[hooks.Name]hooks.HookOptions{}
		}
		if _, dup := out.HookOptions[hooks.Name(ho.GetHook())]; !dup {
			out.HookOptions[hooks.Name(ho.GetHook())] = hooks.HookOptions{
				WindowBytes: ho.GetWindowBytes(), OverlapBytes: ho.GetOverlapBytes(), DecideAfterBytes: ho.GetDecideAfterBytes(),
			}
		}
	}
	return out
}

// checkManifest rejects what the wire cannot carry into a hooks.Manifest
// with its meaning intact: a hook this host does not know (in hooks or in
// hook_matchers) and a hook given matchers twice. The full rules
// (namespaces, globs, duplicates) depend on the host's options and are
// hooks.ValidateManifest's to apply.
func checkManifest(m *pluginv1.Manifest) error {
	for _, h := range m.GetHooks() {
		if !hooks.Name(h).Known() {
			return fmt.Errorf("unknown hook %q in the manifest", h)
		}
	}
	seen := map[string]bool{}
	for _, hm := range m.GetHookMatchers() {
		switch h := hm.GetHook(); {
		case !hooks.Name(h).Known():
			return fmt.Errorf("unknown hook %q in the manifest's hook_matchers", h)
		case seen[h]:
			return fmt.Errorf("hook %q has two entries in the manifest's hook_matchers", h)
		default:
			seen[h] = true
		}
	}
	clear(seen)
	for _, ho := range m.GetHookOptions() {
		switch h := ho.GetHook(); {
		case !hooks.Name(h).Known():
			return fmt.Errorf("unknown hook %q in the manifest's hook_options", h)
		case seen[h]:
			return fmt.Errorf("hook %q has two entries in the manifest's hook_options", h)
		default:
			seen[h] = true
		}
	}
	return nil
}

// --- hook payloads ------------------------------------------------------------

func sessionStartToPB(ev hooks.SessionStart) *pluginv1.SessionStart {
	return &pluginv1.SessionStart{SessionId: ev.SessionID, Model: ev.Model, Route: string(ev.Route)}
}

func sessionStartFromPB(ev *pluginv1.SessionStart) hooks.SessionStart {
	return hooks.SessionStart{SessionID: ev.GetSessionId(), Model: ev.GetModel(), Route: hooks.Route(ev.GetRoute())}
}

func sessionEndToPB(ev hooks.SessionEnd) *pluginv1.SessionEnd {
	return &pluginv1.SessionEnd{
		SessionId:  ev.SessionID,
		Model:      ev.Model,
		Route:      string(ev.Route),
		Reason:     string(ev.Reason),
		Iterations: int64(ev.Iterations),
		Usage:      usageToPB(ev.Usage),
		Error:      ev.Error,
	}
}

func sessionEndFromPB(ev *pluginv1.SessionEnd) hooks.SessionEnd {
	return hooks.SessionEnd{
		SessionID:  ev.GetSessionId(),
		Model:      ev.GetModel(),
		Route:      hooks.Route(ev.GetRoute()),
		Reason:     hooks.EndReason(ev.GetReason()),
		Iterations: int(ev.GetIterations()),
		Usage:      usageFromPB(ev.GetUsage()),
		Error:      ev.GetError(),
	}
}

func toolListRequestToPB(ev hooks.ToolListRequest) *pluginv1.ToolListRequest {
	return &pluginv1.ToolListRequest{SessionId: ev.SessionID, Iteration: int64(ev.Iteration), Tools: specsToPB(ev.Tools)}
}

func toolListRequestFromPB(ev *pluginv1.ToolListRequest) hooks.ToolListRequest {
	return hooks.ToolListRequest{SessionID: ev.GetSessionId(), Iteration: int(ev.GetIteration()), Tools: specsFromPB(ev.GetTools())}
}

func apiRequestToPB(ev hooks.APIRequest) *pluginv1.ApiRequest {
	return &pluginv1.ApiRequest{SessionId: ev.SessionID, Iteration: int64(ev.Iteration), Request: modelRequestToPB(ev.Request)}
}

func apiRequestFromPB(ev *pluginv1.ApiRequest) hooks.APIRequest {
	return hooks.APIRequest{SessionID: ev.GetSessionId(), Iteration: int(ev.GetIteration()), Request: modelRequestFromPB(ev.GetRequest())}
}

func llmRequestToPB(ev hooks.LLMRequest) *pluginv1.LlmRequest {
	return &pluginv1.LlmRequest{SessionId: ev.SessionID, Iteration: int64(ev.Iteration), Route: string(ev.Route), Request: modelRequestToPB(ev.Request)}
}

func llmRequestFromPB(ev *pluginv1.LlmRequest) hooks.LLMRequest {
	return hooks.LLMRequest{SessionID: ev.GetSessionId(), Iteration: int(ev.GetIteration()), Route: hooks.Route(ev.GetRoute()), Request: modelRequestFromPB(ev.GetRequest())}
}

func llmCallToPB(ev hooks.LLMCall) *pluginv1.LlmCall {
	return &pluginv1.LlmCall{
		SessionId: ev.SessionID,
		Iteration: int64(ev.Iteration),
		Route:     string(ev.Route),
		Request:   modelRequestToPB(ev.Request),
		Response:  modelResponseToPB(ev.Response),
		Partial:   ev.Partial,
	}
}

func llmCallFromPB(ev *pluginv1.LlmCall) hooks.LLMCall {
	return hooks.LLMCall{
		SessionID: ev.GetSessionId(),
		Iteration: int(ev.GetIteration()),
		Route:     hooks.Route(ev.GetRoute()),
		Request:   modelRequestFromPB(ev.GetRequest()),
		Response:  modelResponseFromPB(ev.GetResponse()),
		Partial:   ev.GetPartial(),
	}
}

func inferenceToPB(ev hooks.Inference) *pluginv1.Inference {
	return &pluginv1.Inference{
		SessionId:  ev.SessionID,
		Iteration:  int64(ev.Iteration),
		Route:      string(ev.Route),
		Model:      ev.Model,
		Usage:      usageToPB(ev.Usage),
		StopReason: string(ev.StopReason),
		Escalated:  ev.Escalated,
		Reason:     ev.Reason,
		DurationNs: int64(ev.Duration),
		Error:      ev.Error,
		ProvidedBy: ev.ProvidedBy,
	}
}

func inferenceFromPB(ev *pluginv1.Inference) hooks.Inference {
	return hooks.Inference{
		SessionID:  ev.GetSessionId(),
		Iteration:  int(ev.GetIteration()),
		Route:      hooks.Route(ev.GetRoute()),
		Model:      ev.GetModel(),
		Usage:      usageFromPB(ev.GetUsage()),
		StopReason: hooks.StopReason(ev.GetStopReason()),
		Escalated:  ev.GetEscalated(),
		Reason:     ev.GetReason(),
		Duration:   time.Duration(ev.GetDurationNs()),
		Error:      ev.GetError(),
		ProvidedBy: ev.GetProvidedBy(),
	}
}

func llmOutputToPB(ev hooks.LLMOutput) *pluginv1.LlmOutput {
	return &pluginv1.LlmOutput{SessionId: ev.SessionID, Text: ev.Text, Windowed: ev.Windowed, Offset: ev.Offset, Overlap: ev.Overlap, Last: ev.Last}
}

func llmOutputFromPB(ev *pluginv1.LlmOutput) hooks.LLMOutput {
	return hooks.LLMOutput{
		SessionID: ev.GetSessionId(), Text: ev.GetText(),
		Windowed: ev.GetWindowed(), Offset: ev.GetOffset(), Overlap: ev.GetOverlap(), Last: ev.GetLast(),
	}
}

func toolCallRequestToPB(ev hooks.ToolCallRequest) *pluginv1.ToolCallRequest {
	return &pluginv1.ToolCallRequest{SessionId: ev.SessionID, CallId: ev.CallID, Name: ev.Name, Arguments: ev.Arguments, Origin: string(ev.Origin)}
}

func toolCallRequestFromPB(ev *pluginv1.ToolCallRequest) hooks.ToolCallRequest {
	return hooks.ToolCallRequest{
		SessionID: ev.GetSessionId(),
		CallID:    ev.GetCallId(),
		Name:      ev.GetName(),
		Arguments: bytesFromPB(ev.GetArguments()),
		Origin:    hooks.Origin(ev.GetOrigin()),
	}
}

func toolCallOutcomeToPB(ev hooks.ToolCallOutcome) *pluginv1.ToolCallOutcome {
	return &pluginv1.ToolCallOutcome{
		SessionId:  ev.SessionID,
		CallId:     ev.CallID,
		Name:       ev.Name,
		Arguments:  ev.Arguments,
		Result:     toolResultToPB(ev.Result),
		Status:     string(ev.Status),
		DurationNs: int64(ev.Duration),
		Origin:     string(ev.Origin),
	}
}

func toolCallOutcomeFromPB(ev *pluginv1.ToolCallOutcome) hooks.ToolCallOutcome {
	return hooks.ToolCallOutcome{
		SessionID: ev.GetSessionId(),
		CallID:    ev.GetCallId(),
		Name:      ev.GetName(),
		Arguments: bytesFromPB(ev.GetArguments()),
		Result:    toolResultFromPB(ev.GetResult()),
		Status:    hooks.CallStatus(ev.GetStatus()),
		Duration:  time.Duration(ev.GetDurationNs()),
		Origin:    hooks.Origin(ev.GetOrigin()),
	}
}

func userMessageToPB(ev hooks.UserMessage) *pluginv1.UserMessage {
	return &pluginv1.UserMessage{SessionId: ev.SessionID, Route: string(ev.Route), Index: int64(ev.Index), Text: ev.Text}
}

func userMessageFromPB(ev *pluginv1.UserMessage) hooks.UserMessage {
	return hooks.UserMessage{SessionID: ev.GetSessionId(), Route: hooks.Route(ev.GetRoute()), Index: int(ev.GetIndex()), Text: ev.GetText()}
}

// --- hook results -------------------------------------------------------------
//
// A nil result is "no opinion" and travels as an unset response field.

func overrideToPB(o *hooks.ToolListOverride) *pluginv1.ToolListResponse {
	if o == nil {
		return &pluginv1.ToolListResponse{}
	}
	return &pluginv1.ToolListResponse{Override: &pluginv1.ToolList{Tools: specsToPB(o.Tools)}}
}

// overrideFromPB returns an override whose Tools is never nil: an override
// to no tools at all is an empty list, not an absent one.
func overrideFromPB(r *pluginv1.ToolListResponse) *hooks.ToolListOverride {
	if r.GetOverride() == nil {
		return nil
	}
	return &hooks.ToolListOverride{Tools: append([]hooks.ToolSpec{}, specsFromPB(r.GetOverride().GetTools())...)}
}

func patchResponseToPB(p *hooks.RequestPatch) *pluginv1.RequestPatchResponse {
	if p == nil {
		return &pluginv1.RequestPatchResponse{}
	}
	return &pluginv1.RequestPatchResponse{Patch: patchToPB(*p)}
}

func patchResponseFromPB(r *pluginv1.RequestPatchResponse) *hooks.RequestPatch {
	if r.GetPatch() == nil {
		return nil
	}
	p := patchFromPB(r.GetPatch())
	return &p
}

func reissueToPB(r *hooks.Reissue) *pluginv1.ReissueResponse {
	if r == nil {
		return &pluginv1.ReissueResponse{}
	}
	return &pluginv1.ReissueResponse{Reissue: &pluginv1.Reissue{Patch: patchToPB(r.Patch), Reason: r.Reason}}
}

func reissueFromPB(r *pluginv1.ReissueResponse) *hooks.Reissue {
	if r.GetReissue() == nil {
		return nil
	}
	return &hooks.Reissue{Patch: patchFromPB(r.GetReissue().GetPatch()), Reason: r.GetReissue().GetReason()}
}

func textToPB(t *hooks.TextReplacement) *pluginv1.TextResponse {
	if t == nil {
		return &pluginv1.TextResponse{}
	}
	if t.Stop != nil {
		return &pluginv1.TextResponse{Stop: &pluginv1.OutputStop{Message: t.Stop.Message}}
	}
	text := t.Text
	return &pluginv1.TextResponse{Text: &text}
}

// textFromPB keeps text beside stop, for hooks.CheckAnswer to call that
// malformed.
func textFromPB(r *pluginv1.TextResponse) *hooks.TextReplacement {
	switch {
	case r == nil:
		return nil
	case r.Stop != nil:
		return &hooks.TextReplacement{Text: r.GetText(), Stop: &hooks.OutputStop{Message: r.Stop.GetMessage()}}
	case r.Text == nil:
		return nil
	}
	return &hooks.TextReplacement{Text: *r.Text}
}

// decisionToPB maps a decision that neither blocks, asks nor modifies to the
// empty response: it changes nothing, exactly like no opinion.
func decisionToPB(d *hooks.PreToolCallDecision) *pluginv1.PreToolCallResponse {
	out := &pluginv1.PreToolCallResponse{}
	if d == nil {
		return out
	}
	if d.Block != nil {
		out.Block = &pluginv1.Block{Message: d.Block.Message}
	}
	if d.Ask != nil {
		out.Ask = &pluginv1.Ask{Reason: d.Ask.Reason}
	}
	if d.ModifiedArgs != nil {
		// Non-nil marks the optional field present, even when empty.
		out.ModifiedArgs = append([]byte{}, d.ModifiedArgs...)
	}
	return out
}

func decisionFromPB(r *pluginv1.PreToolCallResponse) *hooks.PreToolCallDecision {
	if r == nil || (r.Block == nil && r.Ask == nil && r.ModifiedArgs == nil) {
		return nil
	}
	d := &hooks.PreToolCallDecision{}
	if r.GetBlock() != nil {
		d.Block = &hooks.Block{Message: r.GetBlock().GetMessage()}
	}
	if r.GetAsk() != nil {
		d.Ask = &hooks.ApprovalRequest{Reason: r.GetAsk().GetReason()}
	}
	if r.ModifiedArgs != nil {
		d.ModifiedArgs = append(json.RawMessage{}, r.ModifiedArgs...)
	}
	return d
}

func toolResultResponseToPB(r *hooks.ToolResult) *pluginv1.ToolResultResponse {
	if r == nil {
		return &pluginv1.ToolResultResponse{}
	}
	return &pluginv1.ToolResultResponse{Result: toolResultToPB(*r)}
}

func toolResultResponseFromPB(r *pluginv1.ToolResultResponse) *hooks.ToolResult {
	if r.GetResult() == nil {
		return nil
	}
	res := toolResultFromPB(r.GetResult())
	return &res
}

func modelResponseResponseToPB(r *hooks.ModelResponse) *pluginv1.ModelResponseResponse {
	if r == nil {
		return &pluginv1.ModelResponseResponse{}
	}
	return &pluginv1.ModelResponseResponse{Response: modelResponseToPB(*r)}
}

func modelResponseResponseFromPB(r *pluginv1.ModelResponseResponse) *hooks.ModelResponse {
	if r.GetResponse() == nil {
		return nil
	}
	res := modelResponseFromPB(r.GetResponse())
	return &res
}

// userMessageDecisionToPB maps a decision that neither blocks nor adds
// context to the empty response: it changes nothing, exactly like no
// opinion.
func userMessageDecisionToPB(d *hooks.UserMessageDecision) *pluginv1.UserMessageResponse {
	out := &pluginv1.UserMessageResponse{}
	if d == nil {
		return out
	}
	if d.Block != nil {
		out.Block = &pluginv1.Block{Message: d.Block.Message}
	}
	if d.AdditionalContext != "" {
		text := d.AdditionalContext
		out.AdditionalContext = &text
	}
	return out
}

func userMessageDecisionFromPB(r *pluginv1.UserMessageResponse) *hooks.UserMessageDecision {
	if r == nil || (r.Block == nil && r.GetAdditionalContext() == "") {
		return nil
	}
	d := &hooks.UserMessageDecision{AdditionalContext: r.GetAdditionalContext()}
	if r.GetBlock() != nil {
		d.Block = &hooks.Block{Message: r.GetBlock().GetMessage()}
	}
	return d
}

func addedContextToPB(a *hooks.AddedContext) *pluginv1.AddedContextResponse {
	if a == nil {
		return &pluginv1.AddedContextResponse{}
	}
	text := a.AdditionalContext
	return &pluginv1.AddedContextResponse{AdditionalContext: &text}
}

func addedContextFromPB(r *pluginv1.AddedContextResponse) *hooks.AddedContext {
	if r == nil || r.AdditionalContext == nil {
		return nil
	}
	return &hooks.AddedContext{AdditionalContext: *r.AdditionalContext}
}
