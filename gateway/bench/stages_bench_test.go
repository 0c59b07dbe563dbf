package bench

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/hookhost/hookhost/hookbus"
	"github.com/hookhost/hookhost/hooks"
)

// BenchmarkModelStages is one round's two model-side stages, pre-call
// and post-call, asked of the remote plugin of BenchmarkGatewayLatency
// through the host's bus, with no HTTP and no upstream around them: what
// the stages themselves cost the host and the plugin, in CPU time per
// round (self-cpu-µs/op, plugin-cpu-µs/op), one round at a time and with
// sixteen rounds in flight. Read beside the gateway's plugin route, it
// tells the protocol's own cost from what the crossings cost inside a
// busy request path: there the same stages cost both processes more, as
// fewer of them share a write and each process is woken more often per
// stage (plugin-switches/op).
func BenchmarkModelStages(b *testing.B) {
	up := fakeUpstream(b)
	_, h := serveGateway(b, up.url, true, true)
	bus := h.Bus()
	req := hooks.ModelRequest{Model: model, Messages: []hooks.Message{{Role: hooks.RoleUser, Content: "ping"}}}
	resp := hooks.ModelResponse{Model: model, Message: hooks.Message{Role: hooks.RoleAssistant, Content: "pong"}, StopReason: hooks.StopEndTurn}
	round := func() {
		ctx := context.Background()
		pre := bus.PreCall(ctx, hooks.LLMRequest{SessionID: "bench", Route: hooks.RouteGateway, Request: req})
		bus.PostCall(ctx, hookbus.PostCallRequest{
			Call:    hooks.LLMCall{SessionID: "bench", Route: hooks.RouteGateway, Request: pre.Request, Response: resp},
			Reissue: true, Transform: true,
		})
	}
	for _, inFlight := range []int{1, 16} {
		b.Run(fmt.Sprintf("rounds=%d", inFlight), func(b *testing.B) {
			round()
			before := cpuOf(b, h)
			b.ResetTimer()
			var next atomic.Int64
			var wg sync.WaitGroup
			for range inFlight {
				wg.Go(func() {
					for next.Add(1) <= int64(b.N) {
						round()
					}
				})
			}
			wg.Wait()
			b.StopTimer()
			reportCPU(b, h, before)
			pluginAsked(b, h, b.N)
		})
	}
}
