package bench

import (
	"context"
	"encoding/json"
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hookhost/hookhost/dispatch"
	"github.com/hookhost/hookhost/hookbus"
	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/mcpgate"
)

// echoArgs are the arguments of every benchmarked MCP call.
var echoArgs = json.RawMessage(`{"text":"hello"}`)

// BenchmarkMCPToolCall is one MCP tools/call of the same Go server over
// stdio (testdata/mcpfake's echo): straight from an MCP client; through
// hookhost's MCP gateway (the client on an in-memory transport, as `hookhost
// mcp serve` is reached, hookhost's upstream on stdio) with no plugin and
// with one remote plugin (protocol 2) asked all four tool hooks; and as a
// tool offered to the model (offer_to_model), run by the tool pipeline
// straight to the upstream, with no plugin and with the same plugin.
// rpcs/op counts the synchronous plugin calls per tool call; p50-µs and
// p99-µs are the median and the tail of one call.
func BenchmarkMCPToolCall(b *testing.B) {
	ctx := context.Background()
	b.Run("direct", func(b *testing.B) {
		client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
		sess, err := client.Connect(ctx, &mcp.CommandTransport{Command: exec.Command(binary(b, "mcpfake"))}, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { sess.Close() })
		var l latencies
		for b.Loop() {
			l.time(func() { callEcho(b, sess, "echo") })
		}
		l.report(b)
	})
	for _, plugin := range []bool{false, true} {
		suffix := ""
		if plugin {
			suffix = "-remote-v2"
		}
		b.Run("gateway"+suffix, func(b *testing.B) {
			u, bus := mcpUpstream(b, plugin)
			gw, err := mcpgate.NewGateway([]*mcpgate.Upstream{u}, mcpgate.GatewayOptions{Bus: bus})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(gw.Close)
			serverT, clientT := mcp.NewInMemoryTransports()
			ss, err := gw.Server().Connect(ctx, serverT, nil)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { ss.Close() })
			client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
			sess, err := client.Connect(ctx, clientT, nil)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { sess.Close() })
			before := bus.Stats().SyncCalls()
			var l latencies
			for b.Loop() {
				l.time(func() { callEcho(b, sess, "bench__echo") })
			}
			l.report(b)
			b.ReportMetric(float64(bus.Stats().SyncCalls()-before)/float64(b.N), "rpcs/op")
		})
		b.Run("model"+suffix, func(b *testing.B) {
			u, bus := mcpUpstream(b, plugin)
			p := &dispatch.Pipeline{Bus: bus, Hosted: mcpgate.NewModelTools([]*mcpgate.Upstream{u}, mcpgate.ModelToolsOptions{})}
			call := hooks.ToolCall{ID: "c", Name: "bench__echo", Arguments: echoArgs}
			before := bus.Stats().SyncCalls()
			var l latencies
			for b.Loop() {
				var out dispatch.Outcome
				l.time(func() { out = p.Run(ctx, "s", call) })
				if out.Path != dispatch.PathNative || out.Result.Content != `"echo: hello"` {
					b.Fatalf("path %s: %s", out.Path, out.Result.Content)
				}
			}
			l.report(b)
			b.ReportMetric(float64(bus.Stats().SyncCalls()-before)/float64(b.N), "rpcs/op")
		})
	}
}

// mcpUpstream starts the fake MCP server as hookhost's upstream "bench",
// offered to the model, and, when plugin is set, a Bus over one remote
// bench plugin speaking protocol 2 (nil otherwise).
func mcpUpstream(b *testing.B, plugin bool) (*mcpgate.Upstream, *hookbus.Bus) {
	u, err := mcpgate.New(mcpgate.ServerSpec{Name: "bench", Command: binary(b, "mcpfake"), OfferToModel: true}, mcpgate.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { u.Close(context.Background()) })
	if err := u.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	if !plugin {
		return u, nil
	}
	h := startHost(b, pluginCopies(b, 1, 2), 2)
	members := h.Members()
	if _, ok := members[0].Plugin.(remotePlugin); !ok {
		b.Fatalf("plugin %T is not a remote one", members[0].Plugin)
	}
	return u, newBus(b, members)
}

func callEcho(b *testing.B, sess *mcp.ClientSession, name string) {
	res, err := sess.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: echoArgs})
	if err != nil {
		b.Fatal(err)
	}
	if res.IsError || len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != "echo: hello" {
		b.Fatalf("result %+v", res)
	}
}

// latencies keeps how long each call took, for its median and its tail.
type latencies []time.Duration

func (l *latencies) time(call func()) {
	start := time.Now()
	call()
	*l = append(*l, time.Since(start))
}

func (l latencies) report(b *testing.B) {
	if len(l) == 0 {
		return
	}
	slices.Sort(l)
	at := func(q float64) float64 { return float64(l[int(q*float64(len(l)-1))].Nanoseconds()) / 1e3 }
	b.ReportMetric(at(0.50), "p50-µs")
	b.ReportMetric(at(0.99), "p99-µs")
}
