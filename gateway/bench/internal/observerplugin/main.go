// Command observerplugin is the remote plugin of the gateway benchmark's
// observer target: it answers pre_api_request_mutable, on every request's
// path, and observes post_llm_call, off it, as a ledger does, with no
// opinion and nothing to do, so that a request pays for the observer's
// deliveries and nothing else.
package main

import (
	"context"
	"sync/atomic"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/plugins/sdk"
)

type ledger struct {
	sdk.Base
	seen atomic.Uint64
}

var (
	_ sdk.RequestMutator  = (*ledger)(nil)
	_ sdk.LLMCallObserver = (*ledger)(nil)
)

func (*ledger) Info() sdk.Info { return sdk.Info{Name: "observerplugin", Version: "1"} }

func (*ledger) PreAPIRequestMutable(context.Context, hooks.APIRequest) (*hooks.RequestPatch, error) {
	return nil, nil
}

func (l *ledger) PostLLMCall(context.Context, hooks.Inference) error {
	l.seen.Add(1)
	return nil
}

func main() { sdk.Serve(&ledger{}) }
