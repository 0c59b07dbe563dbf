// Command modelplugin is the remote plugin the gateway benchmarks run
// behind the gateway route. It subscribes to the five model-side hooks
// that answer (pre_tool_list_finalized, pre_api_request_mutable and
// pre_llm_call_can_provide_response before each upstream round,
// post_llm_call_can_reissue and transform_llm_output after it) and has no
// opinion on any, so a request pays the model-side stages' round trips and
// nothing else. It observes nothing: post_llm_call's cost is an observer's,
// queued off the request's path.
package main

import (
	"context"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/plugins/sdk"
)

type modelHooks struct{ sdk.Base }

var (
	_ sdk.ToolListFinalizer                   = (*modelHooks)(nil)
	_ sdk.RequestMutator                      = (*modelHooks)(nil)
	_ sdk.PreLLMCallCanProvideResponseHandler = (*modelHooks)(nil)
	_ sdk.Reissuer                            = (*modelHooks)(nil)
	_ sdk.OutputTransformer                   = (*modelHooks)(nil)
)

func (*modelHooks) Info() sdk.Info { return sdk.Info{Name: "modelplugin", Version: "1"} }

func (*modelHooks) PreToolListFinalized(context.Context, hooks.ToolListRequest) (*hooks.ToolListOverride, error) {
	return nil, nil
}

func (*modelHooks) PreAPIRequestMutable(context.Context, hooks.APIRequest) (*hooks.RequestPatch, error) {
	return nil, nil
}

func (*modelHooks) PreLLMCallCanProvideResponse(context.Context, hooks.LLMRequest) (*hooks.ModelResponse, error) {
	return nil, nil
}

func (*modelHooks) PostLLMCallCanReissue(context.Context, hooks.LLMCall) (*hooks.Reissue, error) {
	return nil, nil
}

func (*modelHooks) TransformLLMOutput(context.Context, hooks.LLMOutput) (*hooks.TextReplacement, error) {
	return nil, nil
}

func main() { sdk.Serve(&modelHooks{}) }
