// Command modelplugin is the remote plugin the gateway benchmarks run
// behind the gateway route. It subscribes to the hooks every upstream round
// fires (pre_tool_list_finalized, pre_api_request_mutable,
// post_llm_call_can_reissue and post_llm_call) and has no opinion on any,
// so a request pays each hook's round trip and nothing else.
package main

import (
	"context"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/plugins/sdk"
)

type observer struct{ sdk.Base }

var (
	_ sdk.ToolListFinalizer = (*observer)(nil)
	_ sdk.RequestMutator    = (*observer)(nil)
	_ sdk.Reissuer          = (*observer)(nil)
	_ sdk.LLMCallObserver   = (*observer)(nil)
)

func (*observer) Info() sdk.Info { return sdk.Info{Name: "modelplugin", Version: "1"} }

func (*observer) PreToolListFinalized(context.Context, hooks.ToolListRequest) (*hooks.ToolListOverride, error) {
	return nil, nil
}

func (*observer) PreAPIRequestMutable(context.Context, hooks.APIRequest) (*hooks.RequestPatch, error) {
	return nil, nil
}

func (*observer) PostLLMCallCanReissue(context.Context, hooks.LLMCall) (*hooks.Reissue, error) {
	return nil, nil
}

func (*observer) PostLLMCall(context.Context, hooks.Inference) error { return nil }

func main() { sdk.Serve(&observer{}) }
