package bench

import (
	"context"
	"slices"
	"testing"

	"github.com/hookhost/hookhost/hookbus"
	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/loop"
)

// withoutProvide is a remote plugin whose manifest leaves out
// pre_llm_call_can_provide_response, as a plugin that does not implement
// it would: the Bus never asks it.
type withoutProvide struct{ remotePlugin }

func (w withoutProvide) Manifest() hooks.Manifest {
	m := w.remotePlugin.Manifest()
	m.Hooks = slices.DeleteFunc(slices.Clone(m.Hooks), func(h hooks.Name) bool { return h == hooks.PreLLMCallCanProvideResponse })
	return m
}

// BenchmarkProvideResponse is one model turn of the loop (loop.Infer)
// against an in-memory model, with one remote plugin over protocol 1 and
// 2: not subscribed to pre_llm_call_can_provide_response (no RPC), subscribed
// and answering nil (the hook's cost on every turn), and answering itself
// (no model call). models/op counts the calls that reached the model.
func BenchmarkProvideResponse(b *testing.B) {
	ctx := context.Background()
	for _, rp := range remoteProtocols {
		h := startHost(b, pluginCopies(b, 1, rp.protocol), rp.protocol)
		member := h.Members()[0]
		for _, tc := range []struct {
			name, model string
			subscribed  bool
			wantModel   bool
		}{
			{"unsubscribed", "m", false, true},
			{"nil", "m", true, true},
			{"provided", "provide", true, false},
		} {
			b.Run(rp.name+"/"+tc.name, func(b *testing.B) {
				m := member
				if !tc.subscribed {
					m.Plugin = withoutProvide{member.Plugin.(remotePlugin)}
				}
				bus := newBus(b, []hookbus.Member{m})
				l := &loop.Loop{Bus: bus, SessionID: "s", Route: hooks.RouteGateway}
				req := hooks.ModelRequest{Model: tc.model, Messages: []hooks.Message{{Role: hooks.RoleUser, Content: "hi"}}}
				var models int
				model := func(_ context.Context, c loop.Call) (hooks.ModelResponse, struct{}, error) {
					if c.Provided != nil {
						return c.Provided.Response, struct{}{}, nil
					}
					models++
					return hooks.ModelResponse{Model: c.Request.Model, Message: hooks.Message{Role: hooks.RoleAssistant, Content: "from the model"}, StopReason: hooks.StopEndTurn}, struct{}{}, nil
				}
				before := bus.Stats().SyncCalls()
				for b.Loop() {
					resp, _, err := loop.Infer(ctx, l, 1, req, model)
					if err != nil || (resp.Message.Content == "provided") == tc.wantModel {
						b.Fatalf("turn answered %q, %v", resp.Message.Content, err)
					}
				}
				b.ReportMetric(float64(bus.Stats().SyncCalls()-before)/float64(b.N), "rpcs/op")
				b.ReportMetric(float64(models)/float64(b.N), "models/op")
			})
		}
	}
}
