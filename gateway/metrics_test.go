package gateway

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hookhost/hookhost/hookbus"
	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/host"
	"github.com/hookhost/hookhost/internal/dialect"
	"github.com/hookhost/hookhost/internal/relay"
	"github.com/hookhost/hookhost/llm"
)

func TestMetricsExposeEveryFamily(t *testing.T) {
	bus, err := hookbus.New([]hookbus.Member{
		{Plugin: &hooks.Funcs{Name: "guard", PreToolCallFunc: func(context.Context, hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
			return nil, errors.New("guard broke")
		}}},
		{Plugin: &hooks.Funcs{Name: "slow", PreToolCallFunc: func(ctx context.Context, _ hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		}}, Options: hookbus.Options{Timeout: 10 * time.Millisecond}},
	}, hookbus.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bus.Close(context.Background()) })
	bus.PreToolCall(context.Background(), hooks.ToolCallRequest{CallID: "c1", Name: "search", Arguments: []byte(`{}`)})

	p := testParts()
	p.bus = bus
	p.plugins = func() []host.Status {
		return []host.Status{
			{Name: "guard", State: host.StateCircuitOpen, Restarts: 3},
			{Name: "slow", State: host.StateRunning},
		}
	}
	p.decisionsDropped = func() uint64 { return 7 }
	var obs relay.Observer
	p.hooked = runFunc(func(ctx context.Context, f dialect.Front, call *dialect.Call, sink dialect.Sink) (*dialect.Result, error) {
		obs.Round(llm.ProtocolMessages)
		obs.Round(llm.ProtocolMessages)
		obs.ToolCall("plugin")
		obs.ToolCall("client")
		obs.(relay.StoreObserver).StoreEvicted(2)
		return echo(ctx, f, call, sink)
	})
	s := newTest(t, p)
	obs = s.metrics
	readAll(t, post(t, s.url, "/v1/messages", chatBody))
	readAll(t, post(t, s.url, "/v1/messages", `{`))

	wantMetrics(t, metricsOf(t, s.url),
		`hookhost_gateway_requests_total{code="200",endpoint="/v1/messages",route="gateway"} 1`,
		`hookhost_gateway_requests_total{code="400",endpoint="/v1/messages",route="gateway"} 1`,
		`hookhost_gateway_request_duration_seconds_count{endpoint="/v1/messages",route="gateway"} 2`,
		`hookhost_gateway_in_flight 0`,
		`hookhost_gateway_rejected_total{reason="bad_request"} 1`,
		`hookhost_gateway_upstream_rounds_total{protocol="anthropic-messages"} 2`,
		`hookhost_gateway_tool_calls_total{how="plugin"} 1`,
		`hookhost_gateway_tool_calls_total{how="client"} 1`,
		`hookhost_gateway_store_evicted_total 2`,
		`hookhost_decision_log_dropped_total 7`,
		`hookhost_hook_calls_total{hook="pre_tool_call",plugin="guard"} 1`,
		`hookhost_hook_calls_total{hook="pre_tool_call",plugin="slow"} 1`,
		`hookhost_hook_failures_total{hook="pre_tool_call",kind="error",plugin="guard"} 1`,
		`hookhost_hook_failures_total{hook="pre_tool_call",kind="timeout",plugin="slow"} 1`,
		`hookhost_plugin_restarts_total{plugin="guard"} 3`,
		`hookhost_plugin_state{plugin="guard",state="circuit_open"} 1`,
		`hookhost_plugin_state{plugin="guard",state="running"} 0`,
		`hookhost_plugin_state{plugin="slow",state="running"} 1`,
		`hookhost_plugin_state{plugin="slow",state="down"} 0`,
	)

	// /readyz reports the same states.
	resp, err := http.Get(s.url + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	body := string(readAll(t, resp))
	if !strings.Contains(body, `{"name":"guard","state":"circuit_open","restarts":3}`) {
		t.Errorf("readyz %s", body)
	}
}
