package bridge

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hookhost/hookhost/dispatch"
	"github.com/hookhost/hookhost/dispatch/builtin"
	"github.com/hookhost/hookhost/dispatch/schema"
	"github.com/hookhost/hookhost/hookbus"
	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/llm/offline"
	"github.com/hookhost/hookhost/plugins/kora/internal/ledger"
	"github.com/hookhost/hookhost/plugins/sdk"
)

var now = time.Date(2026, 11, 22, 15, 30, 0, 0, time.UTC)

func settings() Settings {
	return Settings{Allowlist: ToolNames(), Budget: Budget{DailyUSD: 1, TotalUSD: 10}, PrimaryState: "nominal", ClaimsGranted: true}
}

// newStore opens a real SQLite ledger in a fresh directory, on the test's
// clock.
func newStore(t *testing.T) ledger.Store {
	t.Helper()
	st, err := ledger.Open(context.Background(), ledger.Options{StateDir: t.TempDir(), Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func newBridge(t *testing.T, s Settings, infs []ledger.Inference, calls []ledger.ToolCall) *Bridge {
	t.Helper()
	st := newStore(t)
	ctx := context.Background()
	for _, r := range infs {
		if err := st.AppendInference(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range calls {
		if err := st.AppendToolCall(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	b := New(st, s, nil)
	b.Now = func() time.Time { return now }
	return b
}

// toolsOf is an SDK plugin holding nothing but b's tools, as Kora does.
type toolsOf struct{ b *Bridge }

func (p toolsOf) Info() sdk.Info {
	return sdk.Info{Name: "kora", ToolFuncs: Tools(func() (*Bridge, error) { return p.b, nil })}
}

// provide asks b's tools for a result the way the host asks Kora, through
// the SDK's adapter (so the SDK decodes the arguments), without the host's
// own schema check: see viaHost for that.
func provide(t *testing.T, b *Bridge, name, args string) *hooks.ToolResult {
	t.Helper()
	r, err := hooks.Ask[*hooks.ToolResult](context.Background(), sdk.Adapt(toolsOf{b}), hooks.PreToolCallCanProvideResult,
		hooks.ToolCallRequest{SessionID: "s", CallID: "c", Name: name, Arguments: json.RawMessage(args)})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return r
}

// viaHost runs one call through a real Bus and the host's tool pipeline,
// with b's tools in-process, and reports whether they were asked.
func viaHost(t *testing.T, b *Bridge, name, args string) (out dispatch.Outcome, asked bool) {
	t.Helper()
	bus, err := hookbus.New([]hookbus.Member{{Plugin: sdk.Adapt(toolsOf{b})}}, hookbus.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer bus.Close(context.Background())
	p := &dispatch.Pipeline{Bus: bus}
	out = p.Run(context.Background(), "s", hooks.ToolCall{ID: "c", Name: name, Arguments: json.RawMessage(args)})
	return out, bus.Stats().Calls() > 0
}

// ok decodes a successful result into v.
func ok(t *testing.T, r *hooks.ToolResult, v any) {
	t.Helper()
	if r == nil {
		t.Fatal("no result: the bridge did not answer")
	}
	if r.IsError {
		t.Fatalf("error result: %s", r.Content)
	}
	if err := json.Unmarshal([]byte(r.Content), v); err != nil {
		t.Fatalf("result %s is not the expected JSON: %v", r.Content, err)
	}
}

// failed checks r is a Kora error result of kind containing msg.
func failed(t *testing.T, r *hooks.ToolResult, kind Kind, msg string) {
	t.Helper()
	if r == nil || !r.IsError {
		t.Fatalf("result %+v, want an error result", r)
	}
	var body map[string]string
	if err := json.Unmarshal([]byte(r.Content), &body); err != nil || len(body) != 1 {
		t.Fatalf("error result %s is not {\"error\": ...}", r.Content)
	}
	prefix := ErrorPrefix + ": " + string(kind) + ": "
	if !strings.HasPrefix(body["error"], prefix) || !strings.Contains(body["error"], msg) {
		t.Fatalf("error %q, want prefix %q and %q in it", body["error"], prefix, msg)
	}
}

func TestSpecs(t *testing.T) {
	specs := Specs()
	var names []string
	for _, s := range specs {
		names = append(names, s.Name)
		if len(s.Description) < 40 {
			t.Errorf("%s: description %q is too thin for a model to choose by", s.Name, s.Description)
		}
		var sch map[string]any
		if err := json.Unmarshal(s.InputSchema, &sch); err != nil {
			t.Fatalf("%s: schema: %v", s.Name, err)
		}
		if sch["type"] != "object" || sch["additionalProperties"] != false {
			t.Errorf("%s: schema %s must be a closed object", s.Name, s.InputSchema)
		}
		// The host checks arguments with this validator before Kora is
		// asked; Kora's schemas must be usable by it.
		if err := schema.Validate(s.InputSchema, json.RawMessage(`{}`)); err != nil {
			t.Errorf("%s: {} rejected by its own schema: %v", s.Name, err)
		}
		if err := schema.Validate(s.InputSchema, json.RawMessage(`{"bogus":1}`)); err == nil {
			t.Errorf("%s: schema accepts unknown arguments", s.Name)
		}
	}
	if !slices.Equal(names, ToolNames()) {
		t.Errorf("spec names %v, want %v", names, ToolNames())
	}
	m := hooks.Manifest{Name: "kora", Hooks: []hooks.Name{hooks.PreToolCallCanProvideResult}, Tools: specs}
	if err := hooks.ValidateManifest(m, false); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{`{"limit":0}`, `{"limit":1001}`, `{"limit":2.5}`} {
		if err := schema.Validate(Specs()[3].InputSchema, json.RawMessage(bad)); err == nil {
			t.Errorf("limit schema accepts %s", bad)
		}
	}
}

// The schemas derived from the argument types say what the hand-written
// ones said: the same types, bounds, defaults, enums and descriptions,
// which models read.
func TestSpecsKeepTheHandWrittenSchemas(t *testing.T) {
	burn := `{"type": "object", "additionalProperties": false, "properties": {"window": {
		"type": "string", "enum": ["today", "7d", "all"], "default": "today",
		"description": "Period to total: today (since 00:00 UTC), 7d (the last seven days) or all (everything in the ledger)."}}}`
	limit := `{"type": "object", "additionalProperties": false, "properties": {"limit": {
		"type": "integer", "minimum": 1, "maximum": 1000, "default": 20,
		"description": "How many entries to return, newest first (1 to 1000)."}}}`
	empty := `{"type": "object", "properties": {}, "additionalProperties": false}`
	want := map[string]string{
		ToolOperationalState: empty, ToolBurn: burn, ToolBudget: empty, ToolRecentInferences: limit, ToolAuditTail: limit,
	}
	// A default may be carried as the value or as its text; either reads
	// the same to a model.
	norm := func(raw []byte) any {
		var v map[string]any
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatal(err)
		}
		if r, ok := v["required"].([]any); ok && len(r) == 0 {
			delete(v, "required")
		}
		if v["properties"] == nil {
			v["properties"] = map[string]any{}
		}
		for _, p := range v["properties"].(map[string]any) {
			if d, ok := p.(map[string]any)["default"]; ok {
				p.(map[string]any)["default"] = fmt.Sprint(d)
			}
		}
		return v
	}
	for _, s := range Specs() {
		if got, w := norm(s.InputSchema), norm([]byte(want[s.Name])); !reflect.DeepEqual(got, w) {
			t.Errorf("%s: schema\n %v\nwant\n %v", s.Name, got, w)
		}
	}
}

func TestToolsOffTheAllowlistAnswerNotAllowed(t *testing.T) {
	s := settings()
	s.Allowlist = []string{ToolBurn}
	b := newBridge(t, s, nil, nil)
	for _, name := range []string{ToolBudget, ToolAuditTail, ToolOperationalState, ToolRecentInferences} {
		failed(t, provide(t, b, name, `{}`), KindNotAllowed, name+" is not on Kora's allowlist")
	}
	if r := provide(t, b, ToolBurn, `{}`); r == nil || r.IsError {
		t.Fatalf("allowlisted %s: %+v", ToolBurn, r)
	}
	// Another plugin's tool or a native one is none of Kora's business.
	for _, name := range []string{"now", "guard__check", "kora__unknown"} {
		if r := provide(t, b, name, `{}`); r != nil {
			t.Errorf("%s answered with %+v; it must fall through (nil)", name, r)
		}
	}
}

func inf(at time.Time, model string, in, out int, cost float64, escalated bool) ledger.Inference {
	r := ledger.Inference{Time: at, Model: model, Route: "gateway", InputTokens: in, OutputTokens: out, CostUSD: cost, Escalated: escalated}
	if escalated {
		r.Reason = "hedged"
	}
	return r
}

func sampleInferences() []ledger.Inference {
	return []ledger.Inference{
		inf(now.Add(-30*24*time.Hour), "offline-large", 1000, 100, 2.0, false), // outside 7d
		inf(now.Add(-3*24*time.Hour), "offline-small", 100, 10, 0.1, false),    // inside 7d, not today
		inf(now.Add(-2*time.Hour), "offline-small", 40, 4, 0.1, false),         // today
		inf(now.Add(-2*time.Hour), "offline-large", 60, 6, 0.2, true),          // today, escalated
		{Time: now.Add(-time.Hour), Model: "gpt-x", Route: "", InputTokens: 5, OutputTokens: 1, Unpriced: true},
	}
}

func TestBurnWindows(t *testing.T) {
	b := newBridge(t, settings(), sampleInferences(), nil)

	var today Burn
	ok(t, provide(t, b, ToolBurn, `{}`), &today)
	if today.Window != "today" || today.Since == nil || !today.Since.Equal(time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("default window = %q since %v, want today since UTC midnight", today.Window, today.Since)
	}
	if today.Inferences != 3 || today.Escalated != 1 || today.InputTokens != 105 || today.OutputTokens != 11 || today.CostUSD != 0.3 {
		t.Errorf("today totals = %+v", today.Totals)
	}
	if s := today.ByModel["offline-small"]; s.Inferences != 1 || s.CostUSD != 0.1 {
		t.Errorf("today offline-small = %+v", s)
	}
	if l := today.ByModel["offline-large"]; l.Escalated != 1 || l.CostUSD != 0.2 {
		t.Errorf("today offline-large = %+v", l)
	}
	if g := today.ByRoute["gateway"]; g.Inferences != 2 {
		t.Errorf("today by route gateway = %+v", g)
	}
	if u := today.ByRoute["unknown"]; u.Inferences != 1 {
		t.Errorf("a record without a route must count as unknown: %+v", today.ByRoute)
	}
	if !slices.Equal(today.UnpricedModels, []string{"gpt-x"}) {
		t.Errorf("unpriced models = %v", today.UnpricedModels)
	}

	var week, all Burn
	ok(t, provide(t, b, ToolBurn, `{"window":"7d"}`), &week)
	ok(t, provide(t, b, ToolBurn, `{"window":"all"}`), &all)
	if week.Inferences != 4 || week.CostUSD != 0.4 {
		t.Errorf("7d totals = %+v", week.Totals)
	}
	if all.Inferences != 5 || all.CostUSD != 2.4 || all.Since != nil {
		t.Errorf("all totals = %+v since %v", all.Totals, all.Since)
	}
}

func TestBudgetAndOperationalState(t *testing.T) {
	b := newBridge(t, settings(), sampleInferences(), nil)
	var br map[string]any
	ok(t, provide(t, b, ToolBudget, ``), &br)
	want := map[string]any{
		"daily_usd": 1.0, "spent_today_usd": 0.3, "remaining_today_usd": 0.7,
		"total_usd": 10.0, "spent_total_usd": 2.4, "remaining_total_usd": 7.6, "status": "within budget",
	}
	for k, v := range want {
		if br[k] != v {
			t.Errorf("budget %s = %v, want %v", k, br[k], v)
		}
	}
	var st OperationalState
	ok(t, provide(t, b, ToolOperationalState, `{}`), &st)
	if st.PrimaryState != "nominal" || st.ClaimPermission != "granted" || st.BurnTodayUSD != 0.3 || st.BudgetRemainingToday != 0.7 || st.AsOf != "2026-11-22T15:30:00Z" {
		t.Errorf("state = %+v", st)
	}

	// Over the daily limit: the state says so and claims are denied.
	s := settings()
	s.Budget.DailyUSD = 0.25
	b = newBridge(t, s, sampleInferences(), nil)
	ok(t, provide(t, b, ToolOperationalState, `{}`), &st)
	if st.PrimaryState != "over_budget" || st.ClaimPermission != "denied" || st.ClaimPermissionReason != "daily budget exhausted" || st.BudgetRemainingToday != 0.0 {
		t.Errorf("over the daily budget, state = %+v", st)
	}

	// No limits configured, and the operator withholds claims.
	s = settings()
	s.Budget, s.ClaimsGranted, s.PrimaryState = Budget{}, false, "maintenance"
	b = newBridge(t, s, sampleInferences(), nil)
	ok(t, provide(t, b, ToolBudget, `{}`), &br)
	if br["daily_usd"] != Unlimited || br["remaining_total_usd"] != Unlimited || br["status"] != "within budget" {
		t.Errorf("unlimited budget = %v", br)
	}
	ok(t, provide(t, b, ToolOperationalState, `{}`), &st)
	if st.PrimaryState != "maintenance" || st.ClaimPermission != "denied" || !strings.Contains(st.ClaimPermissionReason, "operator") {
		t.Errorf("operator-denied state = %+v", st)
	}
}

func TestRecentInferencesAndAuditTail(t *testing.T) {
	var calls []ledger.ToolCall
	for i, name := range []string{"now", ToolBurn, "calculate"} {
		calls = append(calls, ledger.ToolCall{Time: now.Add(time.Duration(i) * time.Second), Name: name, Status: "ok", AnsweredBy: "native"})
	}
	b := newBridge(t, settings(), sampleInferences(), calls)

	var infs Recent[InferenceView]
	ok(t, provide(t, b, ToolRecentInferences, `{"limit":2}`), &infs)
	if infs.Count != 2 || infs.Total != 5 || infs.Entries[0].Model != "gpt-x" || !infs.Entries[1].Escalated {
		t.Errorf("recent inferences = %+v", infs)
	}
	ok(t, provide(t, b, ToolRecentInferences, `{}`), &infs)
	if infs.Count != 5 {
		t.Errorf("default limit returned %d of 5", infs.Count)
	}
	var tail Recent[ToolCallView]
	ok(t, provide(t, b, ToolAuditTail, `{"limit": 2.0}`), &tail)
	if tail.Count != 2 || tail.Entries[0].Name != "calculate" || tail.Entries[1].Name != ToolBurn {
		t.Errorf("audit tail = %+v", tail)
	}
}

// Arguments a tool does not take are the host's to refuse, by the
// schema: the bridge is never asked.
func TestBadArgumentsAreRefusedByTheHost(t *testing.T) {
	b := newBridge(t, settings(), nil, nil)
	cases := []struct{ tool, args, msg string }{
		{ToolRecentInferences, `{"limit":-3}`, `tool "kora__recent_inferences": args.limit: must be >= 1, got -3`},
		{ToolRecentInferences, `{"limit":0}`, "args.limit: must be >= 1"},
		{ToolAuditTail, `{"limit":5000}`, "args.limit: must be <= 1000, got 5000"},
		{ToolAuditTail, `{"limit":2.5}`, "args.limit: must be an integer"},
		{ToolAuditTail, `{"limit":"ten"}`, `args.limit: must be an integer, got string`},
		{ToolBurn, `{"window":"month"}`, `args.window: must be one of "today", "7d", "all"`},
		{ToolBurn, `{"window":7}`, `args.window: must be a string`},
		{ToolBurn, `{"windw":"today"}`, `unexpected property "windw"`},
		{ToolBudget, `{"verbose":true}`, `unexpected property "verbose"`},
		{ToolOperationalState, `[1]`, "not a valid JSON object"},
		{ToolBudget, `{} {}`, "not a valid JSON object"},
	}
	for _, c := range cases {
		t.Run(c.tool+c.args, func(t *testing.T) {
			out, asked := viaHost(t, b, c.tool, c.args)
			var body struct{ Error string }
			if err := json.Unmarshal([]byte(out.Result.Content), &body); err != nil {
				t.Fatalf("result %s: %v", out.Result.Content, err)
			}
			if out.Path != dispatch.PathRejected || !out.Result.IsError || !strings.Contains(body.Error, c.msg) {
				t.Fatalf("got %s %s, want rejected with %s", out.Path, body.Error, c.msg)
			}
			if asked {
				t.Fatal("the host asked Kora despite the arguments")
			}
		})
	}
	if out, asked := viaHost(t, b, ToolAuditTail, `{"limit":2}`); out.Path != dispatch.PathProvided || out.Result.IsError || !asked {
		t.Fatalf("good arguments: %+v", out)
	}
}

// Arguments that reach Kora without the host's check (another host, a
// test harness) are still decoded strictly, by the SDK, and refused
// without running the tool.
func TestBadArgumentsPastTheHostAreRefusedByTheSDK(t *testing.T) {
	b := newBridge(t, settings(), nil, nil)
	b.Now = func() time.Time { panic("the tool ran") }
	for _, c := range []struct{ tool, args, field string }{
		{ToolAuditTail, `{"limit":"ten"}`, "limit"},
		{ToolAuditTail, `{"limit":5000}`, "limit"},
		{ToolBurn, `{"window":"month"}`, "window"},
		{ToolBurn, `{"windw":"today"}`, "windw"},
		{ToolBudget, `{"verbose":true}`, "verbose"},
	} {
		r := provide(t, b, c.tool, c.args)
		if r == nil || !r.IsError || !strings.Contains(r.Content, c.field) || strings.Contains(r.Content, "the tool ran") {
			t.Errorf("%s %s: %+v, want an error result naming %s", c.tool, c.args, r, c.field)
		}
	}
}

// A failing database answers with the ledger's own kind, the same the
// store reports, and the bridge keeps answering the tools that do not
// need it.
func TestLedgerFailureCarriesTheLedgerKind(t *testing.T) {
	b := newBridge(t, settings(), sampleInferences(), nil)
	if err := b.store.Close(); err != nil {
		t.Fatal(err)
	}
	_, storeErr := b.store.Burn(context.Background(), time.Time{})
	kind := Kind(ledger.KindOf(storeErr))
	if storeErr == nil || !strings.HasPrefix(string(kind), "ledger_") {
		t.Fatalf("a closed store's burn = %v (kind %q), want a ledger error", storeErr, kind)
	}
	for _, tool := range ToolNames() {
		failed(t, provide(t, b, tool, `{}`), kind, "kora: ledger (sqlite)")
	}
}

// Costs are summed in the ledger's integer nano-dollars, so many small
// ones add up exactly, and by_model and by_route regroup the same groups.
func TestBurnSumsExactly(t *testing.T) {
	var infs []ledger.Inference
	for i := range 1000 {
		route := "gateway"
		if i%2 == 1 {
			route = "bypass"
		}
		infs = append(infs, ledger.Inference{Time: now.Add(-time.Duration(i) * time.Second), Model: "m" + fmt.Sprint(i%3), Route: route, InputTokens: 1, OutputTokens: 2, CostUSD: 0.000001})
	}
	b := newBridge(t, settings(), infs, nil)
	var today Burn
	ok(t, provide(t, b, ToolBurn, `{}`), &today)
	if today.Inferences != 1000 || today.CostUSD != 0.001 || today.InputTokens != 1000 || today.OutputTokens != 2000 {
		t.Errorf("today = %+v, want 1000 inferences costing exactly 0.001", today.Totals)
	}
	if len(today.ByModel) != 3 || today.ByModel["m0"].Inferences != 334 || today.ByModel["m1"].Inferences != 333 {
		t.Errorf("by model = %+v", today.ByModel)
	}
	if len(today.ByRoute) != 2 || today.ByRoute["gateway"].Inferences != 500 || today.ByRoute["bypass"].CostUSD != 0.0005 {
		t.Errorf("by route = %+v", today.ByRoute)
	}
}

func TestPanicBecomesInternalError(t *testing.T) {
	b := newBridge(t, settings(), nil, nil)
	b.Now = func() time.Time { panic("clock gone") }
	failed(t, provide(t, b, ToolBurn, `{}`), KindInternal, "clock gone")
	// The bridge keeps serving afterwards.
	b.Now = func() time.Time { return now }
	if r := provide(t, b, ToolBurn, `{}`); r == nil || r.IsError {
		t.Fatalf("after a panic: %+v", r)
	}
}

func TestUnconfiguredBridge(t *testing.T) {
	tools := Tools(func() (*Bridge, error) { return nil, &Error{Kind: KindNotConfigured, Msg: "not yet"} })
	p := sdk.Adapt(toolsFunc(tools))
	r, err := hooks.Ask[*hooks.ToolResult](context.Background(), p, hooks.PreToolCallCanProvideResult, hooks.ToolCallRequest{Name: ToolBurn, Arguments: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	failed(t, r, KindNotConfigured, "not yet")
}

type toolsFunc []sdk.Tool

func (f toolsFunc) Info() sdk.Info { return sdk.Info{Name: "kora", ToolFuncs: f} }

// TestOfflineModelPicksKoraTools pins the wording of the descriptions
// against the offline model that `make run` uses: each demo question must
// reach the intended tool among the native ones, and the hedge question
// must be a weak match that only the strong tier acts on.
func TestOfflineModelPicksKoraTools(t *testing.T) {
	native, err := builtin.All(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var tools []hooks.ToolSpec
	for _, n := range native {
		tools = append(tools, n.Spec)
	}
	tools = append(tools, Specs()...)
	ask := func(model, q string) hooks.ModelResponse {
		resp, err := offline.New().Complete(context.Background(), hooks.ModelRequest{
			Model: model, Tools: tools, Messages: []hooks.Message{{Role: hooks.RoleUser, Content: q}},
		})
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	strong := map[string]string{
		"what's my burn?":                    ToolBurn,
		"what did I burn this week, 7d":      ToolBurn,
		"what's my budget":                   ToolBudget,
		"show the operational state":         ToolOperationalState,
		"show my recent inferences":          ToolRecentInferences,
		"show the audit tail":                ToolAuditTail,
		"what time is it":                    "now",
		"are claims permitted":               ToolOperationalState,
		"list the latest escalated calls":    ToolRecentInferences,
		"which tool calls did the audit see": ToolAuditTail,
	}
	for q, want := range strong {
		resp := ask(offline.SmallModel, q)
		if len(resp.Message.ToolCalls) != 1 || resp.Message.ToolCalls[0].Name != want {
			t.Errorf("offline-small on %q: %+v, want a %s call", q, resp.Message, want)
			continue
		}
		// Whatever arguments the model builds must be ones the host and
		// Kora accept.
		if strings.HasPrefix(want, Prefix) {
			b := newBridge(t, settings(), nil, nil)
			if out, _ := viaHost(t, b, want, string(resp.Message.ToolCalls[0].Arguments)); out.Path != dispatch.PathProvided || out.Result.IsError {
				t.Errorf("%s rejected the model's arguments %s: %+v", want, resp.Message.ToolCalls[0].Arguments, out)
			}
		}
	}
	const hedgeQ = "show the tokens spent lately"
	if resp := ask(offline.SmallModel, hedgeQ); len(resp.Message.ToolCalls) != 0 || !strings.Contains(resp.Message.Content, "not sure") {
		t.Errorf("offline-small on %q: %+v, want a hedge", hedgeQ, resp.Message)
	}
	if resp := ask(offline.LargeModel, hedgeQ); len(resp.Message.ToolCalls) != 1 || resp.Message.ToolCalls[0].Name != ToolBurn {
		t.Errorf("offline-large on %q: %+v, want a %s call", hedgeQ, resp.Message, ToolBurn)
	}
}
