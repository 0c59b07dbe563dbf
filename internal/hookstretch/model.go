package hookstretch

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/hookhost/hookhost/hooks"
)

// A model stage is one plugin's hooks of one model-side stage of one model
// call, asked in one exchange: the pre-call stage (pre_tool_list_finalized,
// pre_api_request_mutable, pre_llm_call_can_provide_response) or the
// post-call stage (post_llm_call_can_reissue, transform_llm_output). The
// design, and why it keeps the catalogue's rules, is written down on
// hookbus.Bus.PreCall.

// ModelStageRequest asks one plugin for its hooks of one model-side stage,
// two or more of them, in catalogue order.
type ModelStageRequest struct {
	Stages []Stage
	// Call is the model call: session, iteration, route and the request as
	// the plugins above this one left it; in the post-call stage, the
	// response too.
	Call hooks.LLMCall
	// FieldsSet are the request fields (RequestPatch names) a plugin above
	// this one set: the host ignores this plugin's writes to them, so its
	// later stages must not see those writes either.
	FieldsSet []string
	// Text is the answer's text as the plugins above this one left it,
	// which the transform_llm_output stage transforms.
	Text string
}

// ModelStager is implemented by plugins that can answer a model stage in
// one exchange (remote plugins speaking protocol v2 whose manifest sets
// model_stages). ModelStage answers ErrNoStretch when it cannot at the
// moment, and the Bus then asks hook by hook. Like Stretcher.Stretch, it
// returns within the first stage's timeout; any other error is the first
// stage's failure.
type ModelStager interface {
	ModelStage(ctx context.Context, req ModelStageRequest) (Stretch, error)
}

// legalModelStages are the runs of model-side hooks one plugin may be asked
// in one exchange, read from the catalogue.
var legalModelStages = LegalModelStages()

// LegalModelStages lists the hooks one plugin may be asked in one model
// stage: for each model-side stage (hooks.Facts.ModelStage), every choice
// of two or more of its hooks, in catalogue order. A plugin is asked only
// the hooks it serves, so a stage may skip one; none can skip the plugin's
// next hook, so any such choice has the outcome of asking hook by hook.
func LegalModelStages() [][]hooks.Name {
	var out [][]hooks.Name
	for _, stage := range []int{hooks.PreCallStage, hooks.PostCallStage} {
		var names []hooks.Name
		for _, f := range hooks.CatalogueFacts() {
			if f.ModelStage == stage {
				names = append(names, f.Name)
			}
		}
		// Every subset of two or more, in catalogue order, smaller subsets
		// first and, within a size, in order of their first hooks.
		n := len(names)
		for size := 2; size <= n; size++ {
			for mask := 0; mask < 1<<n; mask++ {
				if popcount(mask) != size {
					continue
				}
				var run []hooks.Name
				for i := range n {
					if mask&(1<<i) != 0 {
						run = append(run, names[i])
					}
				}
				out = append(out, run)
			}
		}
	}
	return out
}

func popcount(x int) int {
	n := 0
	for ; x != 0; x &= x - 1 {
		n++
	}
	return n
}

// IsModelStage reports whether stages are a legal model stage's hooks.
func IsModelStage(stages []hooks.Name) bool {
	for _, l := range legalModelStages {
		if slices.Equal(l, stages) {
			return true
		}
	}
	return false
}

func checkModelStage(req ModelStageRequest) error {
	names := make([]hooks.Name, len(req.Stages))
	for i, s := range req.Stages {
		names[i] = s.Hook
	}
	if !IsModelStage(names) {
		hs := make([]string, len(names))
		for i, n := range names {
			hs[i] = string(n)
		}
		return fmt.Errorf("%w: model stage [%s]", ErrBadStretch, strings.Join(hs, ", "))
	}
	for _, s := range req.Stages {
		if s.Timeout <= 0 {
			return fmt.Errorf("%w: stage %s has timeout %v, want a positive one", ErrBadStretch, s.Hook, s.Timeout)
		}
	}
	return nil
}

// RunModelStage answers a model stage on the plugin's side, calling p for
// each hook in order under the stage's own deadline and handing each
// answer (or failure) to emit as soon as it is known, as Run does. Each
// hook gets its own payload built from req: pre_tool_list_finalized a
// ToolListRequest with the request's tools, pre_api_request_mutable an
// APIRequest, pre_llm_call_can_provide_response an LLMRequest,
// post_llm_call_can_reissue the LLMCall, transform_llm_output an LLMOutput
// of req.Text. The plugin's own answers carry over: after its tool list,
// its later stages see those tools; after its patch, the patched request
// (the fields in req.FieldsSet excepted, which the host keeps as they
// were). It stops after a failed stage, a provided response, a reissue,
// and when ctx ends (a stage not started then is emitted as a failure
// wrapping ctx's error, so that the exchange always ends with a message).
// A request that is not a legal model stage is answered with one failure
// wrapping ErrBadStretch.
func RunModelStage(ctx context.Context, p hooks.Plugin, req ModelStageRequest, emit func(answer any, err error)) {
	if err := checkModelStage(req); err != nil {
		emit(nil, err)
		return
	}
	supervise(ctx, shortest(req.Stages), emit, func(run *stageRun) { runModelStage(run, p, req) })
}

// runModelStage is RunModelStage's hooks, on the goroutine supervise gives
// them.
func runModelStage(run *stageRun, p hooks.Plugin, req ModelStageRequest) {
	call := req.Call
	for _, st := range req.Stages {
		switch st.Hook {
		case hooks.PreToolListFinalized:
			o, err := runStage[*hooks.ToolListOverride](run, p, st, hooks.ToolListRequest{SessionID: call.SessionID, Iteration: call.Iteration, Tools: call.Request.Tools})
			if err != nil {
				run.emit(nil, err)
				return
			}
			run.emit(answerOf(o), nil)
			if o != nil {
				call.Request.Tools = o.Tools
			}
		case hooks.PreAPIRequestMutable:
			patch, err := runStage[*hooks.RequestPatch](run, p, st, hooks.APIRequest{SessionID: call.SessionID, Iteration: call.Iteration, Request: call.Request})
			if err != nil {
				run.emit(nil, err)
				return
			}
			run.emit(answerOf(patch), nil)
			if patch != nil {
				call.Request, _ = withoutFields(*patch, req.FieldsSet).Apply(call.Request)
			}
		case hooks.PreLLMCallCanProvideResponse:
			r, err := runStage[*hooks.ModelResponse](run, p, st, hooks.LLMRequest{SessionID: call.SessionID, Iteration: call.Iteration, Route: call.Route, Request: call.Request})
			if err != nil || r != nil {
				run.emit(answerOf(r), err)
				return
			}
			run.emit(nil, nil)
		case hooks.PostLLMCallCanReissue:
			r, err := runStage[*hooks.Reissue](run, p, st, call)
			if err != nil || r != nil {
				run.emit(answerOf(r), err)
				return
			}
			run.emit(nil, nil)
		case hooks.TransformLLMOutput:
			r, err := runStage[*hooks.TextReplacement](run, p, st, hooks.LLMOutput{SessionID: call.SessionID, Text: req.Text})
			run.emit(answerOf(r), err)
		}
	}
}

// withoutFields is p without its writes to fields.
func withoutFields(p hooks.RequestPatch, fields []string) hooks.RequestPatch {
	for _, f := range fields {
		switch f {
		case "model":
			p.Model = nil
		case "system":
			p.System = nil
		case "messages":
			p.Messages = nil
		case "tools":
			p.Tools = nil
		case "max_tokens":
			p.MaxTokens = nil
		case "temperature":
			p.Temperature = nil
		}
	}
	return p
}
