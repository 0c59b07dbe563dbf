package hookbus

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/hookstretch"
)

// PreCallOutcome is what the pre-call stage made of a model call.
type PreCallOutcome struct {
	// Request is the request as the plugins left it: tools replaced,
	// fields patched.
	Request hooks.ModelRequest
	// ToolList is set when a plugin replaced the tool list.
	ToolList *ToolListChange
	// Changes says which fields each plugin's patch set.
	Changes []RequestChange
	// Provided is the response a plugin gave instead of the model's; the
	// model is not called.
	Provided *ProvidedResponse
}

// PreCall fires the pre-call stage of one model call:
// pre_tool_list_finalized, pre_api_request_mutable and
// pre_llm_call_can_provide_response, with ev's request as it stands before
// the hooks.
//
// # Model-side stages
//
// The model-side hooks are asked plugin-major: in priority order, each
// plugin answers its hooks of the stage in catalogue order, and a later
// plugin sees what earlier ones changed. This holds for every plugin
// (in-process, protocol v1, protocol v2), so the outcome never depends on
// the transport. A plugin that implements hookstretch.ModelStager (a
// remote plugin speaking protocol v2 whose manifest sets model_stages)
// and has two or more hooks to answer in the stage gets them in one
// exchange: the host sends the model call once, with each hook's
// deadline, and the plugin answers each hook as soon as it knows it and
// goes on to the next by itself (hookstretch.RunModelStage is its side).
// Everyone else, and such a plugin with one hook in the stage, is asked
// hook by hook in the same order. The combine rules per hook:
//
//   - pre_tool_list_finalized: first non-nil wins. Once a plugin replaced
//     the tools, or a patch from a plugin above set "tools", later plugins
//     are not asked this hook.
//   - pre_api_request_mutable: merged, first write per field wins
//     (applyUnset). A plugin's patch sees the request as the plugins
//     above it left it (tools replaced, fields patched); its writes to
//     fields already set are ignored, not malformed. A tools patch
//     overrides an earlier tool-list replacement, since the tool list
//     comes first.
//   - pre_llm_call_can_provide_response: first non-nil wins and ends the
//     stage: later plugins are asked nothing, and the model is not called.
//
// Why one exchange keeps these rules: between a plugin's hooks of a stage
// no other plugin is asked, so every plugin sees what it would see hook by
// hook. The plugin applies its own answers as the host does (its tool
// list, then its patch without the fields in fields_set, which the host
// would ignore), so its later hooks see the request the host would send.
//
// Deadlines and failures are those of plain calls. Each hook's answer is
// read under that hook's own deadline (Options.Timeout), counted, its
// failure classified and logged, and checked by the same rules
// (hooks.CheckAnswer), as a plain call's is; sending the exchange is
// bounded by its first hook's deadline. After a failure, or an answer
// the host cannot take (malformed), the host closes the exchange, and asks
// that plugin's remaining hooks of the stage by plain calls, with the
// request as combined so far. A plugin that stops answering mid-stage
// thus costs the turn no more than that hook's plain call would, and
// loses nothing after it.
func (b *Bus) PreCall(ctx context.Context, ev hooks.LLMRequest) PreCallOutcome {
	out := PreCallOutcome{Request: ev.Request}
	if b == nil {
		return out
	}
	set := requestFields{}
	for _, m := range b.members {
		subs := m.model[hooks.PreCallStage]
		if len(subs) == 0 {
			continue
		}
		asked := subs
		if out.ToolList != nil || set["tools"] {
			// The tool list is settled: this plugin is not asked for it.
			asked = withoutHook(subs, hooks.PreToolListFinalized)
		}
		if len(asked) == 0 {
			continue
		}
		x := b.openStage(ctx, m, asked, func() hookstretch.ModelStageRequest {
			return hookstretch.ModelStageRequest{
				Call:      hooks.LLMCall{SessionID: ev.SessionID, Iteration: ev.Iteration, Route: ev.Route, Request: out.Request},
				FieldsSet: set.names(),
			}
		})
		for _, s := range asked {
			switch s.hook {
			case hooks.PreToolListFinalized:
				o, kind := stageAsk[*hooks.ToolListOverride](ctx, x, s, hooks.ToolListRequest{SessionID: ev.SessionID, Iteration: ev.Iteration, Tools: out.Request.Tools})
				if kind == KindNone && o != nil {
					out.Request.Tools = o.Tools
					out.ToolList = &ToolListChange{Plugin: m.name, Tools: o.Tools}
				}
			case hooks.PreAPIRequestMutable:
				patch, kind := stageAsk[*hooks.RequestPatch](ctx, x, s, hooks.APIRequest{SessionID: ev.SessionID, Iteration: ev.Iteration, Request: out.Request})
				if kind != KindNone || patch == nil {
					continue
				}
				var fields []string
				out.Request, fields = applyUnset(*patch, out.Request, set)
				if len(fields) > 0 {
					out.Changes = append(out.Changes, RequestChange{Plugin: m.name, Fields: fields})
				}
			case hooks.PreLLMCallCanProvideResponse:
				r, kind := stageAsk[*hooks.ModelResponse](ctx, x, s, hooks.LLMRequest{SessionID: ev.SessionID, Iteration: ev.Iteration, Route: ev.Route, Request: out.Request})
				if kind == KindNone && r != nil {
					x.close()
					out.Provided = &ProvidedResponse{Plugin: m.name, Response: r.Provided(out.Request)}
					return out
				}
			}
		}
		x.close()
	}
	return out
}

// PostCallRequest is what the post-call stage is asked about.
type PostCallRequest struct {
	// Call is the model call and its response.
	Call hooks.LLMCall
	// Reissue asks post_llm_call_can_reissue.
	Reissue bool
	// Transform asks transform_llm_output on the response's text: set it
	// only for a final answer whose text the caller transforms whole.
	Transform bool
}

// PostCallOutcome is what the post-call stage answered.
type PostCallOutcome struct {
	// Reissue is set when a plugin asked to reissue the call.
	Reissue *ReissueRequest
	// Output is transform_llm_output's chain on the response's text, as
	// TransformOutput would give it; nil when it was not asked, or when a
	// reissue made its answers moot.
	Output *OutputChange
}

// PostCall fires the post-call stage of one model call, plugin-major as
// PreCall is (read its comment): post_llm_call_can_reissue and, when
// req.Transform is set, transform_llm_output on the response's text.
//
//   - post_llm_call_can_reissue: first non-nil wins and ends the stage:
//     later plugins are not asked, and the transform answers already
//     given are discarded (the reissued answer's text is transformed
//     later, by TransformOutput).
//   - transform_llm_output: a chain, each plugin seeing the text as those
//     above it left it; a stop ends the chain, and later plugins are then
//     asked post_llm_call_can_reissue only.
//
// Enforcing at most one reissue per iteration is the caller's job, as for
// PostLLMCallCanReissue.
func (b *Bus) PostCall(ctx context.Context, req PostCallRequest) PostCallOutcome {
	var out PostCallOutcome
	if b == nil || (!req.Reissue && !req.Transform) {
		return out
	}
	ch := OutputChange{Text: req.Call.Response.Message.Content}
	for _, m := range b.members {
		var asked []*subscriber
		for _, s := range m.model[hooks.PostCallStage] {
			if (s.hook == hooks.PostLLMCallCanReissue && req.Reissue) || (s.hook == hooks.TransformLLMOutput && req.Transform && ch.Stop == nil) {
				asked = append(asked, s)
			}
		}
		if len(asked) == 0 {
			continue
		}
		x := b.openStage(ctx, m, asked, func() hookstretch.ModelStageRequest {
			return hookstretch.ModelStageRequest{Call: req.Call, Text: ch.Text}
		})
		for _, s := range asked {
			switch s.hook {
			case hooks.PostLLMCallCanReissue:
				r, kind := stageAsk[*hooks.Reissue](ctx, x, s, req.Call)
				if kind == KindNone && r != nil {
					x.close()
					out.Reissue = &ReissueRequest{Plugin: m.name, Reissue: *r}
					return out
				}
			case hooks.TransformLLMOutput:
				r, kind := stageAsk[*hooks.TextReplacement](ctx, x, s, hooks.LLMOutput{SessionID: req.Call.SessionID, Text: ch.Text})
				if kind != KindNone || r == nil {
					continue
				}
				ch = chained(ch, m.name, r)
			}
		}
		x.close()
	}
	if req.Transform {
		out.Output = &ch
	}
	return out
}

// chained is ch after plugin's answer r to transform_llm_output.
func chained(ch OutputChange, plugin string, r *hooks.TextReplacement) OutputChange {
	if r.Stop != nil {
		msg := r.Stop.Message
		if msg == "" {
			msg = fmt.Sprintf("answer stopped by plugin %q", plugin)
		}
		ch.Stop = &OutputStop{Plugin: plugin, Message: msg}
		return ch
	}
	ch.Text = r.Text
	ch.By = append(ch.By, plugin)
	return ch
}

func withoutHook(subs []*subscriber, h hooks.Name) []*subscriber {
	out := make([]*subscriber, 0, len(subs))
	for _, s := range subs {
		if s.hook != h {
			out = append(out, s)
		}
	}
	return out
}

// names are the fields set, in RequestPatch order.
func (f requestFields) names() []string {
	var out []string
	for _, n := range []string{"model", "system", "messages", "tools", "max_tokens", "temperature"} {
		if f[n] {
			out = append(out, n)
		}
	}
	return out
}

// modelExchange is one plugin's hooks of one model-side stage: asked in
// one exchange while st is open, by plain calls otherwise.
type modelExchange struct {
	b    *Bus
	subs []*subscriber
	// next indexes subs: the hook whose answer st gives next.
	next   int
	st     hookstretch.Stretch
	cancel context.CancelFunc
	// sendErr is why the exchange could not be sent: its first hook's
	// failure.
	sendErr error
}

// openStage sends plugin m's hooks subs of a stage in one exchange when m
// can take one and there are two or more; the request is built only then.
// The result asks every hook of subs, through the exchange or plainly.
func (b *Bus) openStage(ctx context.Context, m *member, subs []*subscriber, build func() hookstretch.ModelStageRequest) *modelExchange {
	x := &modelExchange{b: b, subs: subs}
	stager, ok := m.plugin.(hookstretch.ModelStager)
	if !ok || len(subs) < 2 {
		return x
	}
	req := build()
	for _, s := range subs {
		req.Stages = append(req.Stages, hookstretch.Stage{Hook: s.hook, Timeout: s.timeout})
	}
	if m.inline {
		// A plugin that honours contexts bounds the sending by the first
		// hook's deadline itself (a remote plugin's connection does), and
		// its exchange ends when it is closed.
		st, err := stager.ModelStage(ctx, req)
		x.took(st, err, func() {})
		return x
	}
	// The exchange lives as long as ctx allows, but sending it may take
	// no longer than its first hook's deadline.
	sctx, cancel := context.WithCancel(ctx)
	first := subs[0].timeout
	bound := time.AfterFunc(first, cancel)
	st, err := stager.ModelStage(sctx, req)
	if !bound.Stop() && ctx.Err() == nil {
		if st != nil {
			st.Close()
		}
		cancel()
		x.sendErr = fmt.Errorf("the plugin did not take the model stage within the deadline of its first hook: %w", context.DeadlineExceeded)
		return x
	}
	x.took(st, err, cancel)
	return x
}

// took keeps the exchange the plugin's stager opened, or why it did not
// open one; cancel ends the exchange's context.
func (x *modelExchange) took(st hookstretch.Stretch, err error, cancel context.CancelFunc) {
	switch {
	case err != nil && !errors.Is(err, hookstretch.ErrNoStretch):
		// The first hook failed as a plain call would have; asking it
		// again plainly would make the turn wait for it twice.
		cancel()
		x.sendErr = err
	case err != nil || st == nil:
		// Hook by hook: nothing is counted, every hook is asked plainly.
		cancel()
	default:
		x.st, x.cancel = st, cancel
	}
}

// close ends the exchange, if one is under way: every hook still to ask
// is asked by a plain call.
func (x *modelExchange) close() {
	if x.st != nil {
		x.st.Close()
		x.cancel()
		x.st, x.cancel = nil, nil
	}
	x.sendErr = nil
	x.next = len(x.subs)
}

// stageAsk asks s, the plugin's next hook of the stage, for its answer to
// payload: the exchange's next answer while it is open, a plain call
// otherwise. Either way the answer is read under s's deadline, counted,
// classified and checked as a plain call's is; a failure or an answer the
// host cannot take closes the exchange.
func stageAsk[T any](ctx context.Context, x *modelExchange, s *subscriber, payload any) (T, FailureKind) {
	b := x.b
	if x.next >= len(x.subs) || x.subs[x.next] != s || (x.st == nil && x.sendErr == nil) {
		x.close()
		v, kind := ask[T](ctx, b, s, payload)
		return v, kind
	}
	x.next++
	v, kind, _ := readAnswer[T](ctx, b, s, payload, x.st, x.sendErr)
	if kind != KindNone || x.next == len(x.subs) {
		x.close()
	}
	return v, kind
}
