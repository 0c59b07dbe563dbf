package hookbus

import (
	"context"
	"fmt"
	"strings"

	"github.com/hookhost/hookhost/hooks"
)

// This file holds every hook's combine rule, one fire method per hook, in
// the order a turn meets them. Each method asks subscribers in priority
// order through askErr, which has already turned every failure, and every
// answer that breaks the hook's rules (checkAnswer), into "no result", so
// the rules below only ever see legal answers.

// OnSessionStart fires on_session_start. Observe: queued, never delays.
func (b *Bus) OnSessionStart(ev hooks.SessionStart) {
	b.emit(hooks.OnSessionStart, "", ev)
}

// ToolListChange says which plugin replaced the tool list.
type ToolListChange struct {
	Plugin string
	Tools  []hooks.ToolSpec
}

// PreToolListFinalized fires pre_tool_list_finalized. First non-nil wins; the override
// applies to this model call only. It returns nil when nobody overrode.
func (b *Bus) PreToolListFinalized(ctx context.Context, req hooks.ToolListRequest) *ToolListChange {
	if b == nil {
		return nil
	}
	for _, s := range b.subs[hooks.PreToolListFinalized] {
		o, kind := ask[*hooks.ToolListOverride](ctx, b, s, req)
		if kind != KindNone || o == nil {
			continue
		}
		return &ToolListChange{Plugin: s.m.name, Tools: o.Tools}
	}
	return nil
}

// RequestChange says which fields one plugin's patch set: only those it
// actually set, not those it wrote after a plugin above it had.
type RequestChange struct {
	Plugin string
	Fields []string
}

// PreAPIRequestMutable fires pre_api_request_mutable. Merge, first write per field
// wins: patches apply in priority order, each plugin seeing the request as
// patched so far, and a plugin may set only the fields nobody above it set;
// its writes to the others are ignored (they are not malformed). This is
// the rule of every other hook, where priority means precedence. It
// returns the final request and who changed what.
func (b *Bus) PreAPIRequestMutable(ctx context.Context, ev hooks.APIRequest) (hooks.ModelRequest, []RequestChange) {
	if b == nil {
		return ev.Request, nil
	}
	var changes []RequestChange
	set := requestFields{}
	for _, s := range b.subs[hooks.PreAPIRequestMutable] {
		patch, kind := ask[*hooks.RequestPatch](ctx, b, s, ev)
		if kind != KindNone || patch == nil {
			continue
		}
		var fields []string
		ev.Request, fields = applyUnset(*patch, ev.Request, set)
		if len(fields) > 0 {
			changes = append(changes, RequestChange{Plugin: s.m.name, Fields: fields})
		}
	}
	return ev.Request, changes
}

// requestFields are a ModelRequest's patchable fields, by the names
// RequestPatch.Apply gives them.
type requestFields map[string]bool

// applyUnset applies the fields of p that nobody has set yet, marks them
// set, and returns the names of those it applied: first write per field
// wins. A write to a field already set is ignored, not malformed: a
// lower-priority plugin cannot know what the ones above it chose.
func applyUnset(p hooks.RequestPatch, req hooks.ModelRequest, set requestFields) (hooks.ModelRequest, []string) {
	if set["model"] {
		p.Model = nil
	}
	if set["system"] {
		p.System = nil
	}
	if set["messages"] {
		p.Messages = nil
	}
	if set["tools"] {
		p.Tools = nil
	}
	if set["max_tokens"] {
		p.MaxTokens = nil
	}
	if set["temperature"] {
		p.Temperature = nil
	}
	req, fields := p.Apply(req)
	for _, f := range fields {
		set[f] = true
	}
	return req, fields
}

// ProvidedResponse is a model response a plugin supplied instead of the
// model's.
type ProvidedResponse struct {
	Plugin   string
	Response hooks.ModelResponse
}

// PreLLMCallCanProvideResponse fires pre_llm_call_can_provide_response with
// the request about to go upstream. First non-nil wins, and the model is
// not called: the response stands as the model's, completed for the
// request (see hooks.ModelResponse.Provided). nil means call the model.
func (b *Bus) PreLLMCallCanProvideResponse(ctx context.Context, ev hooks.LLMRequest) *ProvidedResponse {
	if b == nil {
		return nil
	}
	for _, s := range b.subs[hooks.PreLLMCallCanProvideResponse] {
		r, kind := ask[*hooks.ModelResponse](ctx, b, s, ev)
		if kind != KindNone || r == nil {
			continue
		}
		return &ProvidedResponse{Plugin: s.m.name, Response: r.Provided(ev.Request)}
	}
	return nil
}

// ReissueRequest is a plugin's accepted request to reissue a model call.
type ReissueRequest struct {
	Plugin string
	hooks.Reissue
}

// PostLLMCallCanReissue fires post_llm_call_can_reissue. First non-nil wins. Enforcing at
// most one reissue per iteration is the caller's job: only the loop knows
// whether this response is already a reissue.
func (b *Bus) PostLLMCallCanReissue(ctx context.Context, ev hooks.LLMCall) *ReissueRequest {
	if b == nil {
		return nil
	}
	for _, s := range b.subs[hooks.PostLLMCallCanReissue] {
		r, kind := ask[*hooks.Reissue](ctx, b, s, ev)
		if kind != KindNone || r == nil {
			continue
		}
		return &ReissueRequest{Plugin: s.m.name, Reissue: *r}
	}
	return nil
}

// PostLLMCall fires post_llm_call for every inference. Observe.
func (b *Bus) PostLLMCall(ev hooks.Inference) {
	b.emit(hooks.PostLLMCall, "", ev)
}

// PreToolCallOutcome is the combined pre_tool_call decision.
type PreToolCallOutcome struct {
	Arguments  []byte   // the arguments to use, after every modify
	ModifiedBy []string // plugins whose modify applied, in order
	Blocked    bool
	BlockedBy  string
	Message    string // the block message, for the error result
	// AskedBy names the plugins that answered ask, in order, when none
	// blocked: the call waits for a person's approval. AskReason is their
	// reasons, joined by "; " in the same order.
	AskedBy   []string
	AskReason string
	// Err is set when the block is a fail_closed guard's failure, not its
	// decision: a *GuardFailedError saying which guard failed and how.
	Err error
}

// GuardFailedError is why a fail_closed guard blocked a call it did not
// decide on: its pre_tool_call failed (Kind), with Err. It unwraps to Err,
// so errors.Is(err, ErrUnavailable) tells a guard that is down.
type GuardFailedError struct {
	Plugin string
	Kind   FailureKind
	Err    error
}

func (e *GuardFailedError) Error() string {
	msg := fmt.Sprintf("tool call blocked: guard plugin %q failed (%s) and is configured fail_closed", e.Plugin, e.Kind)
	if e.Kind == KindUnavailable && e.Err != nil {
		// The operator reading the tool result should not have to find the
		// log line that says why the guard is down.
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *GuardFailedError) Unwrap() error { return e.Err }

// The tool pipeline's hooks are written once, each as a loop over its
// subscribers that takes the way to ask one of them as a parameter: a
// plain call (askErr) for the Bus methods, or a stage of a stretch for a
// ToolRun. Whoever answers, the loop applies the same combine rule.

type (
	preAsker       func(ctx context.Context, s *subscriber, req hooks.ToolCallRequest) (*hooks.PreToolCallDecision, FailureKind, error)
	provideAsker   func(ctx context.Context, s *subscriber, req hooks.ToolCallRequest) (*hooks.ToolResult, FailureKind, error)
	transformAsker func(ctx context.Context, s *subscriber, ev hooks.ToolCallOutcome) (*hooks.ToolResult, FailureKind, error)
)

func (b *Bus) askPre(ctx context.Context, s *subscriber, req hooks.ToolCallRequest) (*hooks.PreToolCallDecision, FailureKind, error) {
	return askErr[*hooks.PreToolCallDecision](ctx, b, s, req)
}

func (b *Bus) askProvide(ctx context.Context, s *subscriber, req hooks.ToolCallRequest) (*hooks.ToolResult, FailureKind, error) {
	return askErr[*hooks.ToolResult](ctx, b, s, req)
}

func (b *Bus) askTransform(ctx context.Context, s *subscriber, ev hooks.ToolCallOutcome) (*hooks.ToolResult, FailureKind, error) {
	return askErr[*hooks.ToolResult](ctx, b, s, ev)
}

// Asked says the call needs a person's approval before it goes ahead.
func (o PreToolCallOutcome) Asked() bool { return !o.Blocked && len(o.AskedBy) > 0 }

// PreToolCall fires pre_tool_call. Any block wins and stops the round;
// else any ask holds the call for a person's approval, every asker's
// reason joined in priority order (later plugins are still asked, since
// one of them may block); modifies apply in priority order, each plugin
// seeing the arguments as modified so far, and are what an approved call
// runs with. A FailClosed plugin that fails blocks the call.
func (b *Bus) PreToolCall(ctx context.Context, req hooks.ToolCallRequest) PreToolCallOutcome {
	if b == nil {
		return PreToolCallOutcome{Arguments: req.Arguments}
	}
	return b.preToolCall(ctx, req, b.askPre)
}

func (b *Bus) preToolCall(ctx context.Context, req hooks.ToolCallRequest, ask preAsker) PreToolCallOutcome {
	out := PreToolCallOutcome{Arguments: req.Arguments}
	for _, s := range b.subs[hooks.PreToolCall] {
		if !s.matches(req.Name) {
			continue
		}
		d, kind, err := ask(ctx, s, req)
		if kind != KindNone {
			// A guard that must not fail open must not be skipped by a
			// cancelled turn either: no answer is no approval.
			if s.m.opts.FailClosed {
				out.Err = &GuardFailedError{Plugin: s.m.name, Kind: kind, Err: err}
				out.Blocked, out.BlockedBy, out.Message = true, s.m.name, out.Err.Error()
				return out
			}
			continue
		}
		if d == nil {
			continue
		}
		if d.Block != nil {
			out.Blocked, out.BlockedBy, out.Message = true, s.m.name, d.Block.Message
			if out.Message == "" {
				out.Message = fmt.Sprintf("tool call blocked by plugin %q", s.m.name)
			}
			out.AskedBy, out.AskReason = nil, ""
			return out
		}
		if d.Ask != nil {
			reason := d.Ask.Reason
			if reason == "" {
				reason = fmt.Sprintf("plugin %q asks for approval", s.m.name)
			}
			if out.AskReason != "" {
				out.AskReason += "; "
			}
			out.AskReason += reason
			out.AskedBy = append(out.AskedBy, s.m.name)
			continue
		}
		if d.ModifiedArgs != nil {
			req.Arguments = d.ModifiedArgs
			out.Arguments = d.ModifiedArgs
			out.ModifiedBy = append(out.ModifiedBy, s.m.name)
		}
	}
	return out
}

// ProvidedResult is a tool result a plugin supplied instead of native dispatch.
type ProvidedResult struct {
	Plugin string
	hooks.ToolResult
}

// PreToolCallCanProvideResult fires pre_tool_call_can_provide_result. First non-nil wins
// and skips native dispatch; nil means dispatch natively.
func (b *Bus) PreToolCallCanProvideResult(ctx context.Context, req hooks.ToolCallRequest) *ProvidedResult {
	if b == nil {
		return nil
	}
	return b.provideResult(ctx, req, b.askProvide)
}

func (b *Bus) provideResult(ctx context.Context, req hooks.ToolCallRequest, ask provideAsker) *ProvidedResult {
	for _, s := range b.subs[hooks.PreToolCallCanProvideResult] {
		if !s.matches(req.Name) {
			continue
		}
		r, kind, _ := ask(ctx, s, req)
		if kind != KindNone || r == nil {
			continue
		}
		return &ProvidedResult{Plugin: s.m.name, ToolResult: *r}
	}
	return nil
}

// PostToolCall fires post_tool_call. Observe.
func (b *Bus) PostToolCall(ev hooks.ToolCallOutcome) {
	b.emit(hooks.PostToolCall, ev.Name, ev)
}

// TransformToolResult fires transform_tool_result. Chain: each plugin in
// priority order sees the result as transformed so far.
func (b *Bus) TransformToolResult(ctx context.Context, ev hooks.ToolCallOutcome) (hooks.ToolResult, []string) {
	if b == nil {
		return ev.Result, nil
	}
	return b.transformToolResult(ctx, ev, b.askTransform)
}

func (b *Bus) transformToolResult(ctx context.Context, ev hooks.ToolCallOutcome, ask transformAsker) (hooks.ToolResult, []string) {
	var changedBy []string
	for _, s := range b.subs[hooks.TransformToolResult] {
		if !s.matches(ev.Name) {
			continue
		}
		r, kind, _ := ask(ctx, s, ev)
		if kind != KindNone || r == nil {
			continue
		}
		ev.Result = *r
		changedBy = append(changedBy, s.m.name)
	}
	return ev.Result, changedBy
}

// TransformLLMOutput fires transform_llm_output on the final answer. Chain.
// A plugin's stop answer ends the chain; its message becomes the text
// (TransformOutput tells a stop apart, for callers that can end an answer
// with the protocol's refusal form).
func (b *Bus) TransformLLMOutput(ctx context.Context, ev hooks.LLMOutput) (string, []string) {
	ch := b.TransformOutput(ctx, ev)
	if ch.Stop != nil {
		return ch.Stop.Message, append(ch.By, ch.Stop.Plugin)
	}
	return ch.Text, ch.By
}

// OutputChange is what transform_llm_output's chain made of a text.
type OutputChange struct {
	Text string
	// By are the plugins that replaced the text, in order.
	By []string
	// Stop is set when a plugin ended the answer; the chain stopped there.
	Stop *OutputStop
}

// OutputStop is a plugin's answer that ends the answer (hooks.OutputStop),
// its message filled in when the plugin gave none.
type OutputStop struct {
	Plugin  string
	Message string
}

// TransformOutput fires transform_llm_output on ev (the final answer, or
// one window of a streamed one), chaining the plugins in priority order,
// each seeing the text as those before it left it. A failing plugin
// counts as passing.
func (b *Bus) TransformOutput(ctx context.Context, ev hooks.LLMOutput) OutputChange {
	ch := OutputChange{Text: ev.Text}
	if b == nil {
		return ch
	}
	for _, s := range b.subs[hooks.TransformLLMOutput] {
		r, kind := ask[*hooks.TextReplacement](ctx, b, s, ev)
		if kind != KindNone || r == nil {
			continue
		}
		if r.Stop != nil {
			msg := r.Stop.Message
			if msg == "" {
				msg = fmt.Sprintf("answer stopped by plugin %q", s.m.name)
			}
			ch.Stop = &OutputStop{Plugin: s.m.name, Message: msg}
			return ch
		}
		ev.Text = r.Text
		ch.Text = r.Text
		ch.By = append(ch.By, s.m.name)
	}
	return ch
}

// OutputWindow reports whether every plugin serving transform_llm_output
// declared windows (hooks.HookOptions), and if so the window a streamed
// answer is guarded in: the largest window and the largest overlap any of
// them declared, so that each sees at least what it asked for.
func (b *Bus) OutputWindow() (window, overlap int, ok bool) {
	if b == nil || len(b.subs[hooks.TransformLLMOutput]) == 0 {
		return 0, 0, false
	}
	for _, s := range b.subs[hooks.TransformLLMOutput] {
		w, o := s.options.Window()
		if w == 0 {
			return 0, 0, false
		}
		window, overlap = max(window, int(w)), max(overlap, int(o))
	}
	return window, overlap, true
}

// DecideAfter returns how many bytes of a streamed answer
// post_llm_call_can_reissue decides on: the largest decide_after_bytes its
// plugins declared, when every one of them declared it; 0 otherwise (the
// hook decides on the whole answer).
func (b *Bus) DecideAfter() int {
	if b == nil {
		return 0
	}
	n := 0
	for _, s := range b.subs[hooks.PostLLMCallCanReissue] {
		if s.options.DecideAfterBytes <= 0 {
			return 0
		}
		n = max(n, int(s.options.DecideAfterBytes))
	}
	return n
}

// OnSessionEnd fires on_session_end. Observe.
func (b *Bus) OnSessionEnd(ev hooks.SessionEnd) {
	b.emit(hooks.OnSessionEnd, "", ev)
}

// UserMessageOutcome is the combined on_user_message decision.
type UserMessageOutcome struct {
	Blocked   bool
	BlockedBy string
	// Message is the block's message, the turn's answer.
	Message string
	// Context is the additional context of every plugin that gave one,
	// in priority order, joined by blank lines; ContextBy names them.
	Context   string
	ContextBy []string
}

// OnUserMessage fires on_user_message. Any block wins and stops the round:
// the first blocker's message is the turn's answer. Contexts concatenate in
// priority order, blank-line separated.
func (b *Bus) OnUserMessage(ctx context.Context, ev hooks.UserMessage) UserMessageOutcome {
	var out UserMessageOutcome
	if b == nil {
		return out
	}
	var parts []string
	for _, s := range b.subs[hooks.OnUserMessage] {
		d, kind := ask[*hooks.UserMessageDecision](ctx, b, s, ev)
		if kind != KindNone || d == nil {
			continue
		}
		if d.Block != nil {
			out = UserMessageOutcome{Blocked: true, BlockedBy: s.m.name, Message: d.Block.Message}
			if out.Message == "" {
				out.Message = fmt.Sprintf("message blocked by plugin %q", s.m.name)
			}
			return out
		}
		if d.AdditionalContext != "" {
			parts = append(parts, d.AdditionalContext)
			out.ContextBy = append(out.ContextBy, s.m.name)
		}
	}
	out.Context = strings.Join(parts, "\n\n")
	return out
}

// PostToolCallCanAddContext fires post_tool_call_can_add_context, on the
// call's final result (after transform_tool_result). Contexts of the
// plugins matching the tool concatenate in priority order, blank-line
// separated; it returns them ("" for none) and who gave them.
func (b *Bus) PostToolCallCanAddContext(ctx context.Context, ev hooks.ToolCallOutcome) (string, []string) {
	if b == nil {
		return "", nil
	}
	var parts, by []string
	for _, s := range b.subs[hooks.PostToolCallCanAddContext] {
		if !s.matches(ev.Name) {
			continue
		}
		a, kind := ask[*hooks.AddedContext](ctx, b, s, ev)
		if kind != KindNone || a == nil || a.AdditionalContext == "" {
			continue
		}
		parts = append(parts, a.AdditionalContext)
		by = append(by, s.m.name)
	}
	return strings.Join(parts, "\n\n"), by
}

// ContextOpen and ContextClose mark the text plugins add beside what the
// model would see anyway (on_user_message, post_tool_call_can_add_context),
// so that the model, and whoever reads a transcript, can tell it from the
// user's words and the tool's output.
const (
	ContextOpen  = "<additional_context>"
	ContextClose = "</additional_context>"
)

// ContextBlock is text wrapped in the context markers, on lines of their own.
func ContextBlock(text string) string {
	return ContextOpen + "\n" + text + "\n" + ContextClose
}

// WithContext appends a context block to a tool result's content, after a
// blank line: tool results are strings in every provider's shape, so the
// model gets the result as it was, then the context.
func WithContext(content, context string) string {
	if context == "" {
		return content
	}
	return content + "\n\n" + ContextBlock(context)
}

// ContextMessage is the user message that carries on_user_message's
// context to the model, placed right after the user's own message.
func ContextMessage(context string) hooks.Message {
	return hooks.Message{Role: hooks.RoleUser, Content: ContextBlock(context)}
}
