package kora

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hookhost/hookhost/conversation"
	"github.com/hookhost/hookhost/dispatch"
	"github.com/hookhost/hookhost/dispatch/builtin"
	"github.com/hookhost/hookhost/hookbus"
	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/wiretest"
	"github.com/hookhost/hookhost/llm/offline"
	"github.com/hookhost/hookhost/plugins/kora/internal/bridge"
	"github.com/hookhost/hookhost/plugins/kora/internal/ledger"
	"github.com/hookhost/hookhost/plugins/kora/internal/ledger/ledgertest"
	"github.com/hookhost/hookhost/plugins/sdk"
)

// inProcess configures Kora on a fresh state directory and puts it on a
// real Bus, the way the host would after starting the process.
func inProcess(t *testing.T, extra string) (*Plugin, *hookbus.Bus, string) {
	t.Helper()
	dir := t.TempDir()
	p := New()
	raw := fmt.Sprintf(`{"state_dir": %q%s}`, dir, extra)
	if err := p.Configure(context.Background(), json.RawMessage(raw)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	bus, err := hookbus.New([]hookbus.Member{{Plugin: sdk.Adapt(p)}}, hookbus.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bus.Close(context.Background()) })
	return p, bus, dir
}

// flushed waits for p's queued records to be committed.
func flushed(t *testing.T, p *Plugin) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := p.flushLedger(ctx); err != nil {
		t.Fatal(err)
	}
}

// readLedger reads every record of the ledger in dir, oldest first, through
// a store of its own, as another process would.
func readLedger(t *testing.T, dir string) ([]ledger.Inference, []ledger.ToolCall) {
	t.Helper()
	st, err := ledger.Open(context.Background(), ledger.Options{StateDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	return ledgertest.ExportAll(t, st, time.Time{})
}

func TestManifest(t *testing.T) {
	m := sdk.Adapt(New()).Manifest()
	want := []hooks.Name{hooks.PreLLMCallCanProvideResponse, hooks.PostLLMCallCanReissue, hooks.PostLLMCall, hooks.PreToolCallCanProvideResult, hooks.PostToolCall}
	if m.Name != Name || m.Version != Version || !slices.Equal(m.Hooks, want) {
		t.Errorf("manifest = %s %s %v, want hooks %v", m.Name, m.Version, m.Hooks, want)
	}
	// Kora is asked for results only for its own tools, and audits every
	// tool call.
	if got := m.MatchersFor(hooks.PreToolCallCanProvideResult); !slices.Equal(got, []string{"kora__*"}) {
		t.Errorf("pre_tool_call_can_provide_result matchers %v, want kora__*", got)
	}
	if got := m.MatchersFor(hooks.PostToolCall); len(got) != 0 {
		t.Errorf("post_tool_call matchers %v: the audit must see every tool call", got)
	}
	if err := hooks.ValidateManifest(m, false); err != nil {
		t.Fatal(err)
	}
	if len(m.Tools) != 5 {
		t.Errorf("%d tools, want 5", len(m.Tools))
	}
}

func TestUnconfigured(t *testing.T) {
	p := New()
	ctx := context.Background()
	provide := func(name string) (*hooks.ToolResult, error) {
		return hooks.Ask[*hooks.ToolResult](ctx, sdk.Adapt(p), hooks.PreToolCallCanProvideResult,
			hooks.ToolCallRequest{Name: name, Arguments: json.RawMessage(`{}`)})
	}
	r, err := provide(bridge.ToolBurn)
	if err != nil || r == nil || !r.IsError || !strings.Contains(r.Content, "kora_tool_dispatch_error: not_configured") {
		t.Errorf("kora tool before Configure: %+v, %v", r, err)
	}
	if r, err := provide("now"); r != nil || err != nil {
		t.Errorf("native tool before Configure: %+v, %v; want nil so it falls through", r, err)
	}
	if err := p.PostLLMCall(ctx, hooks.Inference{}); err == nil {
		t.Error("PostLLMCall before Configure must report it cannot record")
	}
	if err := p.Configure(ctx, json.RawMessage(`{}`)); err == nil || !strings.Contains(err.Error(), "state_dir") {
		t.Errorf("Configure({}) = %v, want the missing state_dir named", err)
	}
}

func TestRecordsArePricedAndAttributed(t *testing.T) {
	p, _, dir := inProcess(t, `, "prices": {"priced": {"input_per_mtok": 1, "output_per_mtok": 2}}`)
	ctx := context.Background()
	for _, inf := range []hooks.Inference{
		{SessionID: "s", Iteration: 1, Route: hooks.RouteGateway, Model: "priced", Usage: hooks.Usage{InputTokens: 1_000_000, OutputTokens: 500_000}, Duration: 1500 * time.Microsecond},
		{SessionID: "s", Iteration: 1, Route: hooks.RouteGateway, Model: "mystery", Usage: hooks.Usage{InputTokens: 10}, Escalated: true, Reason: "hedged"},
	} {
		if err := p.PostLLMCall(ctx, inf); err != nil {
			t.Fatal(err)
		}
	}
	outcomes := []hooks.ToolCallOutcome{
		{Name: "now", Status: hooks.StatusOK, Arguments: json.RawMessage(`{}`), Result: hooks.ToolResult{Content: `{"time":"x"}`}},
		{Name: bridge.ToolBurn, Status: hooks.ProvidedBy("kora"), Arguments: json.RawMessage(`{"window":"7d"}`)},
		{Name: "rm", Status: hooks.StatusBlocked, Result: hooks.ToolResult{Content: `{"error":"not here"}`, IsError: true}},
		{Name: "read_file", Status: hooks.StatusError, Arguments: json.RawMessage(`{"path":"` + strings.Repeat("x", 3000) + `"}`), Result: hooks.ToolResult{Content: `{"error":"no such file"}`, IsError: true}},
	}
	for _, o := range outcomes {
		if err := p.PostToolCall(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	flushed(t, p)
	infs, calls := readLedger(t, dir)
	if len(infs) != 2 || infs[0].CostUSD != 2.0 || infs[0].Unpriced || infs[0].DurationMS != 1.5 {
		t.Errorf("priced inference recorded as %+v", infs[0])
	}
	if !infs[1].Unpriced || infs[1].CostUSD != 0 || !infs[1].Escalated || infs[1].Reason != "hedged" {
		t.Errorf("unpriced escalated inference recorded as %+v", infs[1])
	}
	by := []string{}
	for _, c := range calls {
		by = append(by, c.AnsweredBy)
	}
	if !slices.Equal(by, []string{"native", "kora", "blocked", "native"}) {
		t.Errorf("answered_by = %v", by)
	}
	if calls[2].Error != "not here" || calls[3].Error != "no such file" || calls[3].Arguments != nil {
		t.Errorf("audit of failures = %+v / %+v (oversized arguments must be left out)", calls[2], calls[3])
	}
	if string(calls[1].Arguments) != `{"window":"7d"}` {
		t.Errorf("arguments recorded as %s", calls[1].Arguments)
	}
}

// TestDemoTurnsInProcess runs the three demo behaviours through a real Bus
// and conversation loop, with Kora in-process.
func TestDemoTurnsInProcess(t *testing.T) {
	p, bus, dir := inProcess(t, `, "router": {"enabled": true}`)
	native, err := builtin.All(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	reg, err := dispatch.NewRegistry(native...)
	if err != nil {
		t.Fatal(err)
	}
	sess, err := conversation.New(conversation.Options{
		Provider: offline.New(), Model: offline.SmallModel, Route: hooks.RouteGateway, Bus: bus, Tools: reg,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	send := func(q string) *conversation.Turn {
		t.Helper()
		turn, err := sess.Send(ctx, q)
		if err != nil {
			t.Fatalf("%q: %v", q, err)
		}
		return turn
	}

	burn := send("what's my burn?")
	if len(burn.ToolCalls) != 1 || burn.ToolCalls[0].Path != dispatch.PathProvided || burn.ToolCalls[0].AnsweredBy != "kora" || burn.ToolCalls[0].Call.Name != bridge.ToolBurn {
		t.Fatalf("burn turn tool calls = %+v", burn.ToolCalls)
	}
	if !strings.HasPrefix(burn.Answer, "From kora__get_burn: ") {
		t.Errorf("burn answer = %q", burn.Answer)
	}

	hedge := send("show the tokens spent lately")
	if len(hedge.Inferences) != 3 || !hedge.Inferences[1].Escalated || hedge.Inferences[1].Model != offline.LargeModel {
		t.Fatalf("hedge turn inferences = %+v, want small, escalated large, small", hedge.Inferences)
	}
	if len(hedge.ToolCalls) != 1 || hedge.ToolCalls[0].AnsweredBy != "kora" {
		t.Errorf("after escalation the strong model's call = %+v", hedge.ToolCalls)
	}

	clock := send("what time is it")
	if len(clock.ToolCalls) != 1 || clock.ToolCalls[0].Path != dispatch.PathNative || clock.ToolCalls[0].Call.Name != "now" {
		t.Fatalf("clock turn = %+v", clock.ToolCalls)
	}
	for _, inf := range clock.Inferences {
		if inf.Escalated {
			t.Errorf("a confident answer was escalated: %+v", inf)
		}
	}

	if err := bus.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	flushed(t, p)
	infs, calls := readLedger(t, dir)
	if want := len(burn.Inferences) + len(hedge.Inferences) + len(clock.Inferences); len(infs) != want {
		t.Fatalf("ledger has %d inferences, the transcript %d", len(infs), want)
	}
	var escalated []ledger.Inference
	for _, r := range infs {
		if r.Escalated {
			escalated = append(escalated, r)
		}
	}
	if len(escalated) != 1 || escalated[0].Model != offline.LargeModel || !strings.Contains(escalated[0].Reason, "hedged") || escalated[0].CostUSD <= 0 {
		t.Errorf("escalated ledger records = %+v", escalated)
	}
	var got []string
	for _, c := range calls {
		got = append(got, c.Name+"/"+c.AnsweredBy)
	}
	if want := []string{"kora__get_burn/kora", "kora__get_burn/kora", "now/native"}; !slices.Equal(got, want) {
		t.Errorf("audit = %v, want %v", got, want)
	}
}

// A native tool call costs no synchronous call to Kora, whichever way Kora
// is reached: its manifest asks for results only for kora__* tools, and
// the audit sees the call through post_tool_call, which is queued.
func TestNativeToolCallMakesNoSynchronousCallToKora(t *testing.T) {
	for _, way := range wiretest.Ways {
		t.Run(way.Name, func(t *testing.T) {
			p := New()
			if err := p.Configure(context.Background(), json.RawMessage(fmt.Sprintf(`{"state_dir": %q}`, t.TempDir()))); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { p.Close() })
			bus, err := hookbus.New([]hookbus.Member{{Plugin: wiretest.Over(t, way, sdk.Adapt(p))}}, hookbus.Config{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { bus.Close(context.Background()) })
			native, err := builtin.All(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			reg, err := dispatch.NewRegistry(native...)
			if err != nil {
				t.Fatal(err)
			}
			pipe := &dispatch.Pipeline{Registry: reg, Bus: bus}
			ctx := context.Background()
			calls := func() map[hooks.Name]uint64 {
				t.Helper()
				if err := bus.Flush(ctx); err != nil {
					t.Fatal(err)
				}
				n := map[hooks.Name]uint64{}
				for _, h := range bus.Stats().Hooks {
					n[h.Hook] += h.Calls
				}
				return n
			}

			if out := pipe.Run(ctx, "s", hooks.ToolCall{ID: "c1", Name: "now", Arguments: json.RawMessage(`{}`)}); out.Path != dispatch.PathNative {
				t.Fatalf("native call: %+v", out)
			}
			got := calls()
			for hook, n := range got {
				if n > 0 && !hook.Observer() {
					t.Errorf("a native tool call made %d synchronous %s call(s) to Kora", n, hook)
				}
			}
			if n := bus.Stats().SyncCalls(); n != 0 {
				t.Errorf("Stats.SyncCalls = %d after a native tool call, want 0", n)
			}
			if got[hooks.PostToolCall] != 1 {
				t.Errorf("post_tool_call delivered %d times, want 1: the audit must see native calls", got[hooks.PostToolCall])
			}
			if out := pipe.Run(ctx, "s", hooks.ToolCall{ID: "c2", Name: bridge.ToolBurn, Arguments: json.RawMessage(`{"window":"all"}`)}); out.Path != dispatch.PathProvided || out.Result.IsError {
				t.Fatalf("kora call: %+v", out)
			}
			if n := calls()[hooks.PreToolCallCanProvideResult]; n != 1 {
				t.Fatalf("Kora was asked %d times for its own tool, want 1", n)
			}
		})
	}
}

// TestDailyBudget: with budget_usd_per_day set for the gateway route, Kora
// answers a model call itself once today's spend on that route in its
// ledger is at or past the budget, and gives no opinion below it, on a
// route without a budget, or without budget_usd_per_day at all.
func TestDailyBudget(t *testing.T) {
	p, bus, _ := inProcess(t, `, "budget_usd_per_day": {"gateway": 1}, "prices": {"priced": {"input_per_mtok": 1, "output_per_mtok": 0}}`)
	ctx := context.Background()
	spend := func(route hooks.Route, usd float64) {
		t.Helper()
		if err := p.PostLLMCall(ctx, hooks.Inference{SessionID: "s", Iteration: 1, Route: route, Model: "priced", Usage: hooks.Usage{InputTokens: int(usd * 1e6)}}); err != nil {
			t.Fatal(err)
		}
	}
	ask := func(route hooks.Route) *hookbus.ProvidedResponse {
		return bus.PreLLMCallCanProvideResponse(ctx, hooks.LLMRequest{SessionID: "s", Iteration: 1, Route: route,
			Request: hooks.ModelRequest{Model: "priced", Messages: []hooks.Message{{Role: hooks.RoleUser, Content: "hi"}}}})
	}
	spend(hooks.RouteGateway, 0.4)
	spend(hooks.RouteBypass, 5) // another route's spend does not count
	if r := ask(hooks.RouteGateway); r != nil {
		t.Fatalf("below the budget ($0.40 of $1): %+v, want no opinion", r)
	}
	spend(hooks.RouteGateway, 0.6)
	r := ask(hooks.RouteGateway)
	if r == nil {
		t.Fatal("at the budget ($1.00 of $1): no opinion, want Kora's answer")
	}
	want := "Daily budget of $1.00 reached ($1.00 spent today); not calling the model."
	if r.Plugin != "kora" || !strings.HasPrefix(r.Response.Message.Content, want) || r.Response.Message.Content != BudgetMessage(1, 1) ||
		r.Response.Message.Role != hooks.RoleAssistant || r.Response.StopReason != hooks.StopEndTurn || r.Response.Model != "priced" || r.Response.Usage != (hooks.Usage{}) {
		t.Errorf("provided response %+v, want Kora's message %q", r, want)
	}
	if r := ask(hooks.RouteBypass); r != nil {
		t.Errorf("bypass route, which has no budget: %+v, want no opinion", r)
	}

	if !bus.Subscribed(hooks.PreLLMCallCanProvideResponse, "") {
		t.Error("with a budget, Kora is not subscribed to pre_llm_call_can_provide_response")
	}

	// Without budget_usd_per_day Kora is not even asked, whatever it spent.
	p2, bus2, _ := inProcess(t, `, "prices": {"priced": {"input_per_mtok": 1, "output_per_mtok": 0}}`)
	if bus2.Subscribed(hooks.PreLLMCallCanProvideResponse, "") || !slices.Equal(p2.Unserved(), []hooks.Name{hooks.PreLLMCallCanProvideResponse, hooks.PostLLMCallCanReissue}) {
		t.Errorf("without a budget, Kora is subscribed to pre_llm_call_can_provide_response (unserved %v)", p2.Unserved())
	}
	if err := p2.PostLLMCall(ctx, hooks.Inference{Route: hooks.RouteGateway, Model: "priced", Usage: hooks.Usage{InputTokens: 50_000_000}}); err != nil {
		t.Fatal(err)
	}
	if r := bus2.PreLLMCallCanProvideResponse(ctx, hooks.LLMRequest{Route: hooks.RouteGateway, Request: hooks.ModelRequest{Model: "priced"}}); r != nil {
		t.Errorf("no budget configured: %+v, want no opinion", r)
	}
}

// TestDailyBudgetConfig: one number for every route, a table by route,
// and the mistakes named by key.
func TestDailyBudgetConfig(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		table, wantErr string
		gateway        float64
		set            bool
	}{
		{`5`, "", 5, true},
		{`{"gateway": 2.5}`, "", 2.5, true},
		{`{"bypass": 1}`, "", 0, false},
		{`-1`, "budget_usd_per_day = -1 must be zero or more", 0, false},
		{`{"gateway": -2}`, "budget_usd_per_day.gateway = -2 must be zero or more", 0, false},
		{`{"chat": 1}`, "budget_usd_per_day.chat: unknown route", 0, false},
		{`"lots"`, "budget_usd_per_day: expected a number, or a table of numbers by route", 0, false},
	} {
		cfg, err := ParseConfig(json.RawMessage(fmt.Sprintf(`{"state_dir": %q, "budget_usd_per_day": %s}`, dir, tc.table)))
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("budget_usd_per_day = %s: error %v, want %q", tc.table, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("budget_usd_per_day = %s: %v", tc.table, err)
			continue
		}
		got, ok := cfg.BudgetPerDay.For("gateway")
		if ok != tc.set || got != tc.gateway || !cfg.BudgetPerDay.Set() {
			t.Errorf("budget_usd_per_day = %s: gateway budget %v (%v), want %v (%v)", tc.table, got, ok, tc.gateway, tc.set)
		}
	}
}

// On the README's config (no daily budget, the router off) a model call
// asks Kora nothing: the hooks on a model call's path are unserved, and
// only the observers see it. Turning the router on subscribes Kora to
// post_llm_call_can_reissue, and it then decides on every answer.
func TestModelCallAsksKoraOnlyWhatItsConfigUses(t *testing.T) {
	_, bus, _ := inProcess(t, `, "budget": {"daily_usd": 5}`)
	for _, h := range []hooks.Name{hooks.PreLLMCallCanProvideResponse, hooks.PostLLMCallCanReissue} {
		if bus.Subscribed(h, "") {
			t.Errorf("on the README's config Kora is subscribed to %s", h)
		}
	}
	if !bus.Subscribed(hooks.PostLLMCall, "") {
		t.Error("Kora no longer observes post_llm_call: the ledger would miss inferences")
	}

	_, routed, _ := inProcess(t, `, "router": {"enabled": true}`)
	if !routed.Subscribed(hooks.PostLLMCallCanReissue, "") || routed.Subscribed(hooks.PreLLMCallCanProvideResponse, "") {
		t.Error("with the router on, Kora must be asked post_llm_call_can_reissue, and still not pre_llm_call_can_provide_response")
	}
}
