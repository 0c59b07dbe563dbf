// Package loop is the model side of hookhost's agent loop, shared by every
// driver of it (package conversation for `hookhost chat` and the library,
// the gateway's relay for `hookhost serve`): one iteration's model call with
// its hooks, the final answer's transform, and the tool calls a driver runs
// itself. A driver keeps what is its own: its history, how it reaches the
// model (an Upstream), what it shows and to whom.
//
// One iteration (Infer) fires the pre-call stage (hookbus.Bus.PreCall:
// pre_tool_list_finalized, pre_api_request_mutable and
// pre_llm_call_can_provide_response, plugin-major), calls the model unless
// a plugin provided the response (which then stands as the model's for
// everything after it), fires post_llm_call and the post-call stage
// (hookbus.Bus.PostCall: post_llm_call_can_reissue, with
// transform_llm_output when the answer is final and the driver transforms
// it whole, Loop.WholeOutput), and honours at most one reissue: a reissued
// call is never offered for reissue again, its post_llm_call says
// Escalated with the plugin's reason, and when it fails (the run not being
// cancelled) the first answer stands. The final text goes through
// transform_llm_output (Output), which answers from the post-call stage
// when it already asked on that text.
//
// A hook nobody subscribes to is not fired at all, and the history is not
// copied for plugins that will not see it: a gateway request may carry a
// long history and many rounds.
package loop

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hookhost/hookhost/dispatch"
	"github.com/hookhost/hookhost/hookbus"
	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/telemetry"
)

// DefaultMaxIterations bounds the model calls of a run (reissues aside)
// when its driver is not told otherwise.
const DefaultMaxIterations = 8

// Loop is the model side of one session's runs.
type Loop struct {
	// Bus fires the hooks; nil fires none (the bypass route).
	Bus *hookbus.Bus
	// Pipeline runs the tool calls the driver runs itself.
	Pipeline  *dispatch.Pipeline
	SessionID string
	Route     hooks.Route
	// Observer, when set, is told what the hooks and the model did.
	Observer Observer
	// WholeOutput says the driver passes a final answer's text whole to
	// Output or TransformOutput (not in windows of a streamed answer).
	// Infer may then ask transform_llm_output in the post-call stage,
	// beside post_llm_call_can_reissue, and Output answers from what it
	// gave when asked for the same iteration and text.
	WholeOutput bool

	// transformed is the post-call stage's transform of the last final
	// answer, until Output takes it.
	transformed *transformed
}

// transformed is transform_llm_output's chain on iteration iter's text,
// asked in the post-call stage.
type transformed struct {
	iter int
	text string
	ch   hookbus.OutputChange
}

// Call is one model call.
type Call struct {
	Iteration int
	Request   hooks.ModelRequest
	// Reason is the reissuing plugin's reason; empty for a first call.
	Reason string
	// Provided is the response a pre_llm_call_can_provide_response plugin
	// gave instead of the model's; nil when the model is to be called.
	Provided *hookbus.ProvidedResponse
	// Decided is set on a first call for its Upstream to mark true when it
	// asked post_llm_call_can_reissue itself on the opening of a streamed
	// answer (hookbus.Bus.DecideAfter) and the answer stands: Infer then
	// does not ask again on the whole answer. To reissue instead, the
	// Upstream abandons the call and returns an *Early.
	Decided *bool
}

// Early is the error an Upstream returns when post_llm_call_can_reissue,
// asked on the opening of a streamed answer, asked for a reissue: the
// call was abandoned before any of its text was shown, and Infer makes the
// reissue.
type Early struct {
	Reissue *hookbus.ReissueRequest
}

func (e *Early) Error() string {
	return fmt.Sprintf("abandoned after its opening: plugin %q asked for a reissue", e.Reissue.Plugin)
}

// Upstream makes one model call the driver's way (complete, stream or
// forward). W is what else the driver needs back from the call it keeps,
// such as the response's wire form. When the Call's Provided is set, the
// Upstream must not call the model: it delivers the provided response the
// way it delivers a model's (a streaming driver streams its text) and
// returns it; the Loop keeps the provided response whatever it returns.
type Upstream[W any] func(ctx context.Context, c Call) (hooks.ModelResponse, W, error)

// Observer is told what an iteration did, for a driver's trace or log. Its
// methods are called on the goroutine that called the Loop.
type Observer interface {
	// ToolListReplaced: a pre_tool_list_finalized plugin replaced the tools.
	ToolListReplaced(iter int, change *hookbus.ToolListChange)
	// RequestChanged: pre_api_request_mutable plugins set fields.
	RequestChanged(iter int, changes []hookbus.RequestChange)
	// ResponseProvided: a pre_llm_call_can_provide_response plugin
	// answered instead of the model, which is not called.
	ResponseProvided(iter int, p *hookbus.ProvidedResponse)
	// ModelCalled: one model call ended and post_llm_call was fired with
	// ev (whose ProvidedBy is set when a plugin answered); err is the
	// Upstream's own.
	ModelCalled(ev hooks.Inference, resp hooks.ModelResponse, err error)
	// Reissuing: a plugin asked to reissue; req is the request reissued,
	// fields what its patch changed.
	Reissuing(iter int, r *hookbus.ReissueRequest, req hooks.ModelRequest, fields []string)
	// ReissueFailed: the reissued call failed; the first answer stands.
	ReissueFailed(iter int, r *hookbus.ReissueRequest, err error)
	// OutputTransformed: transform_llm_output plugins rewrote the answer.
	OutputTransformed(iter int, by []string)
	// ToolCalled: RunTools ran one call.
	ToolCalled(iter int, out dispatch.Outcome)
}

// Quiet observes nothing. Embed it to implement only part of Observer.
type Quiet struct{}

func (Quiet) ToolListReplaced(int, *hookbus.ToolListChange)                        {}
func (Quiet) RequestChanged(int, []hookbus.RequestChange)                          {}
func (Quiet) ResponseProvided(int, *hookbus.ProvidedResponse)                      {}
func (Quiet) ModelCalled(hooks.Inference, hooks.ModelResponse, error)              {}
func (Quiet) Reissuing(int, *hookbus.ReissueRequest, hooks.ModelRequest, []string) {}
func (Quiet) ReissueFailed(int, *hookbus.ReissueRequest, error)                    {}
func (Quiet) OutputTransformed(int, []string)                                      {}
func (Quiet) ToolCalled(int, dispatch.Outcome)                                     {}

var _ Observer = Quiet{}

func (l *Loop) observer() Observer {
	if l.Observer == nil {
		return Quiet{}
	}
	return l.Observer
}

func (l *Loop) subscribed(hook hooks.Name) bool { return l.Bus.Subscribed(hook, "") }

// Infer makes iteration iter's model call for req, the request before
// hooks: the tools offered and the history, which Infer neither changes
// nor lets a call append to (plugins get a copy). It returns the answer
// that stands, with the W its call returned. On failure the error is the
// Upstream's own.
func Infer[W any](ctx context.Context, l *Loop, iter int, req hooks.ModelRequest, up Upstream[W]) (hooks.ModelResponse, W, error) {
	var none W
	obs := l.observer()
	n := len(req.Messages)
	// Capped: a provider appending to it cannot write into the history.
	req.Messages = req.Messages[:n:n]
	if l.subscribed(hooks.PreAPIRequestMutable) || l.subscribed(hooks.PreLLMCallCanProvideResponse) || l.subscribed(hooks.PostLLMCallCanReissue) {
		// Plugins get the request, and an in-process one may change the
		// messages in place: they get a copy. Without them the history
		// goes as it is, not copied for every round of a long request.
		req.Messages = append([]hooks.Message(nil), req.Messages...)
	}
	decided := false
	first := Call{Iteration: iter, Request: req, Decided: &decided}
	if l.subscribed(hooks.PreToolListFinalized) || l.subscribed(hooks.PreAPIRequestMutable) || l.subscribed(hooks.PreLLMCallCanProvideResponse) {
		pre := l.Bus.PreCall(ctx, hooks.LLMRequest{SessionID: l.SessionID, Iteration: iter, Route: l.Route, Request: req})
		req, first.Request, first.Provided = pre.Request, pre.Request, pre.Provided
		if pre.ToolList != nil {
			obs.ToolListReplaced(iter, pre.ToolList)
		}
		if len(pre.Changes) > 0 {
			obs.RequestChanged(iter, pre.Changes)
		}
		if pre.Provided != nil {
			obs.ResponseProvided(iter, pre.Provided)
		}
	}
	resp, w, err := call(ctx, l, up, first)
	var early *Early
	var r *hookbus.ReissueRequest
	switch {
	case errors.As(err, &early) && ctx.Err() == nil:
		r = early.Reissue
	case err != nil:
		return resp, none, err
	case decided || !l.subscribed(hooks.PostLLMCallCanReissue):
		return resp, w, nil
	default:
		post := l.Bus.PostCall(ctx, hookbus.PostCallRequest{
			Call:    hooks.LLMCall{SessionID: l.SessionID, Iteration: iter, Route: l.Route, Request: req, Response: resp},
			Reissue: true,
			// The final answer's transform goes in the same stage when the
			// driver will transform its text whole: Output then answers
			// from it.
			Transform: l.WholeOutput && len(resp.Message.ToolCalls) == 0 && l.subscribed(hooks.TransformLLMOutput),
		})
		if post.Output != nil {
			l.transformed = &transformed{iter: iter, text: resp.Message.Content, ch: *post.Output}
		}
		r = post.Reissue
		if r == nil {
			return resp, w, nil
		}
	}
	req2, fields := r.Patch.Apply(req)
	obs.Reissuing(iter, r, req2, fields)
	resp2, w2, err := call(ctx, l, up, Call{Iteration: iter, Request: req2, Reason: r.Reason})
	if err != nil {
		if ctx.Err() != nil {
			return resp2, none, err
		}
		if early != nil {
			// The first answer was abandoned: there is none to keep.
			return resp2, none, err
		}
		// The first answer is still good; a failed escalation must not
		// cost the user the answer.
		obs.ReissueFailed(iter, r, err)
		return resp, w, nil
	}
	return resp2, w2, nil
}

// call makes one model call and fires post_llm_call for it.
func call[W any](ctx context.Context, l *Loop, up Upstream[W], c Call) (hooks.ModelResponse, W, error) {
	start := time.Now()
	sctx, span := telemetry.StartModelCall(ctx, l.SessionID, c.Iteration, c.Request)
	resp, w, err := up(sctx, c)
	model := c.Request.Model
	if c.Provided != nil && err == nil {
		resp = c.Provided.Response
		model = resp.Model
	}
	telemetry.EndModelCall(span, resp, err)
	ev := hooks.Inference{
		SessionID: l.SessionID, Iteration: c.Iteration, Route: l.Route, Model: model, Usage: resp.Usage,
		StopReason: resp.StopReason, Escalated: c.Reason != "", Reason: c.Reason, Duration: time.Since(start),
	}
	if c.Provided != nil {
		ev.ProvidedBy = c.Provided.Plugin
	}
	if err != nil {
		ev.Error = err.Error()
	}
	l.Bus.PostLLMCall(ev)
	l.observer().ModelCalled(ev, resp, err)
	return resp, w, err
}

// Output passes iteration iter's final answer through
// transform_llm_output, returning the text to show and the plugins that
// rewrote it (a plugin's stop makes its message the text).
func (l *Loop) Output(ctx context.Context, iter int, text string) (string, []string) {
	ch := l.TransformOutput(ctx, iter, hooks.LLMOutput{SessionID: l.SessionID, Text: text})
	if ch.Stop != nil {
		return ch.Stop.Message, append(ch.By, ch.Stop.Plugin)
	}
	return ch.Text, ch.By
}

// TransformOutput passes ev (iteration iter's final answer, or a window of
// its streamed text) through transform_llm_output.
func (l *Loop) TransformOutput(ctx context.Context, iter int, ev hooks.LLMOutput) hookbus.OutputChange {
	if !l.subscribed(hooks.TransformLLMOutput) {
		return hookbus.OutputChange{Text: ev.Text}
	}
	ev.SessionID = l.SessionID
	var ch hookbus.OutputChange
	if t := l.transformed; t != nil && !ev.Windowed && t.iter == iter && t.text == ev.Text {
		// Asked already, in the post-call stage, on this very text.
		ch = t.ch
	} else {
		ch = l.Bus.TransformOutput(ctx, ev)
	}
	l.transformed = nil
	if by := ch.By; len(by) > 0 || ch.Stop != nil {
		if ch.Stop != nil {
			by = append(by[:len(by):len(by)], ch.Stop.Plugin)
		}
		l.observer().OutputTransformed(iter, by)
	}
	return ch
}

// RunTool runs one tool call through the pipeline and its hooks.
func (l *Loop) RunTool(ctx context.Context, c hooks.ToolCall) dispatch.Outcome {
	ctx, span := telemetry.StartToolCall(ctx, c)
	out := l.Pipeline.Run(ctx, l.SessionID, c)
	telemetry.EndToolCall(span, out)
	return out
}

// RunTools runs a response's tool calls in order, telling the Observer of
// each, and returns what happened to the calls that ran and one tool
// message per call, answering it. When ctx ends before every call ran, it
// returns ctx's error, and the calls not run get an error result saying
// so: providers reject a history where an assistant's tool call has no
// result, and the session must stay usable for the next message.
func (l *Loop) RunTools(ctx context.Context, iter int, calls []hooks.ToolCall) ([]dispatch.Outcome, []hooks.Message, error) {
	var outs []dispatch.Outcome
	msgs := make([]hooks.Message, 0, len(calls))
	for i, c := range calls {
		if err := ctx.Err(); err != nil {
			notRun := dispatch.ErrorResult("not run: the turn was cancelled")
			for _, skipped := range calls[i:] {
				msgs = append(msgs, hooks.Message{
					Role: hooks.RoleTool, ToolCallID: skipped.ID, ToolName: skipped.Name,
					Content: notRun.Content, IsError: notRun.IsError,
				})
			}
			return outs, msgs, err
		}
		out := l.RunTool(ctx, c)
		outs = append(outs, out)
		l.observer().ToolCalled(iter, out)
		msgs = append(msgs, hooks.Message{
			Role: hooks.RoleTool, ToolCallID: c.ID, ToolName: c.Name,
			Content: out.Result.Content, IsError: out.Result.IsError,
		})
	}
	return outs, msgs, nil
}

// UserMessage fires on_user_message for a new user message, the one at
// index of the conversation's messages, before the first model call of
// its turn. A block's message is the turn's answer; context goes to the
// model as ContextMessage, right after the user's message (see
// WithUserContext).
func (l *Loop) UserMessage(ctx context.Context, index int, text string) hookbus.UserMessageOutcome {
	if !l.subscribed(hooks.OnUserMessage) {
		return hookbus.UserMessageOutcome{}
	}
	return l.Bus.OnUserMessage(ctx, hooks.UserMessage{SessionID: l.SessionID, Route: l.Route, Index: index, Text: text})
}

// WithUserContext returns msgs with on_user_message's context inserted
// right after the user message at index, as a user message of its own
// (hookbus.ContextMessage). The user's message itself is left as it came,
// so what a wire form of it carries beside its text (images, files) still
// reaches the model; every provider takes two user messages in a row. msgs
// is not changed.
func WithUserContext(msgs []hooks.Message, index int, context string) []hooks.Message {
	out := make([]hooks.Message, 0, len(msgs)+1)
	out = append(out, msgs[:index+1]...)
	out = append(out, hookbus.ContextMessage(context))
	return append(out, msgs[index+1:]...)
}
