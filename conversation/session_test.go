package conversation

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/hookhost/hookhost/dispatch"
	"github.com/hookhost/hookhost/hookbus"
	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/bustest"
)

// scripted is a provider that answers with fn and records every request.
type scripted struct {
	mu   sync.Mutex
	reqs []hooks.ModelRequest
	fn   func(n int, req hooks.ModelRequest) (hooks.ModelResponse, error)
}

func (p *scripted) Name() string { return "scripted" }

func (p *scripted) Complete(ctx context.Context, req hooks.ModelRequest) (hooks.ModelResponse, error) {
	if err := ctx.Err(); err != nil {
		return hooks.ModelResponse{}, err
	}
	p.mu.Lock()
	n := len(p.reqs)
	p.reqs = append(p.reqs, req)
	p.mu.Unlock()
	resp, err := p.fn(n, req)
	resp.Model = req.Model
	resp.Usage = hooks.Usage{InputTokens: 10, OutputTokens: 1}
	return resp, err
}

func toolCall(id, name, args string) hooks.ModelResponse {
	return hooks.ModelResponse{StopReason: hooks.StopToolUse, Message: hooks.Message{
		Role: hooks.RoleAssistant, ToolCalls: []hooks.ToolCall{{ID: id, Name: name, Arguments: json.RawMessage(args)}},
	}}
}

func answer(text string) hooks.ModelResponse {
	return hooks.ModelResponse{StopReason: hooks.StopEndTurn, Message: hooks.Message{Role: hooks.RoleAssistant, Content: text}}
}

// lastToolResult returns the content of the newest tool message, if any.
func lastToolResult(req hooks.ModelRequest) (string, bool) {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		m := req.Messages[i]
		if m.Role == hooks.RoleUser {
			return "", false
		}
		if m.Role == hooks.RoleTool {
			return m.Content, true
		}
	}
	return "", false
}

// callsThenAnswers calls tool once, then answers with the tool's result.
func callsThenAnswers(tool, args string) *scripted {
	return &scripted{fn: func(n int, req hooks.ModelRequest) (hooks.ModelResponse, error) {
		if res, ok := lastToolResult(req); ok {
			return answer("result: " + res), nil
		}
		return toolCall("call_1", tool, args), nil
	}}
}

func echoTool() dispatch.Tool {
	return dispatch.Tool{
		Spec: hooks.ToolSpec{Name: "echo", Description: "echoes", InputSchema: json.RawMessage(`{"type":"object","properties":{"say":{"type":"string"}},"required":["say"]}`)},
		Run: func(_ context.Context, args json.RawMessage) (any, error) {
			var a struct{ Say string }
			if err := json.Unmarshal(args, &a); err != nil {
				return nil, err
			}
			return map[string]string{"said": a.Say}, nil
		},
	}
}

func registry(t *testing.T) *dispatch.Registry {
	r, err := dispatch.NewRegistry(echoTool())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func bus(t *testing.T, ps ...*hooks.Funcs) *hookbus.Bus {
	plugins := make([]hooks.Plugin, len(ps))
	for i, p := range ps {
		plugins[i] = p
	}
	return bustest.New(t, plugins...)
}

func session(t *testing.T, p *scripted, route hooks.Route, b *hookbus.Bus, max int) *Session {
	s, err := New(Options{Provider: p, Model: "small", Route: route, Bus: b, Tools: registry(t), MaxIterations: max})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestNativeToolCallThenAnswer(t *testing.T) {
	p := callsThenAnswers("echo", `{"say":"hi"}`)
	s := session(t, p, hooks.RouteGateway, nil, 0)
	turn, err := s.Send(context.Background(), "say hi")
	if err != nil {
		t.Fatal(err)
	}
	if turn.Answer != `result: {"said":"hi"}` || turn.EndReason != hooks.EndCompleted || turn.Iterations != 2 {
		t.Fatalf("turn %+v", turn)
	}
	if turn.Usage != (hooks.Usage{InputTokens: 20, OutputTokens: 2}) {
		t.Fatalf("usage not summed over rounds: %+v", turn.Usage)
	}
	if len(turn.ToolCalls) != 1 || turn.ToolCalls[0].Path != dispatch.PathNative {
		t.Fatalf("tool calls %+v", turn.ToolCalls)
	}
	// The second request carries the assistant call and its result.
	h := p.reqs[1].Messages
	if len(h) != 3 || h[1].ToolCalls[0].ID != "call_1" || h[2].Role != hooks.RoleTool || h[2].ToolCallID != "call_1" {
		t.Fatalf("history sent to the model: %+v", h)
	}
}

// everything subscribes to every hook and counts calls.
func everything(name string, counts map[hooks.Name]int, mu *sync.Mutex) *hooks.Funcs {
	hit := func(h hooks.Name) { mu.Lock(); counts[h]++; mu.Unlock() }
	return &hooks.Funcs{
		Name:               name,
		Tools:              []hooks.ToolSpec{{Name: name + "__tool", Description: "plugin tool"}},
		OnSessionStartFunc: func(context.Context, hooks.SessionStart) error { hit(hooks.OnSessionStart); return nil },
		OnSessionEndFunc:   func(context.Context, hooks.SessionEnd) error { hit(hooks.OnSessionEnd); return nil },
		PreToolListFinalizedFunc: func(context.Context, hooks.ToolListRequest) (*hooks.ToolListOverride, error) {
			hit(hooks.PreToolListFinalized)
			return nil, nil
		},
		PreAPIRequestMutableFunc: func(context.Context, hooks.APIRequest) (*hooks.RequestPatch, error) {
			hit(hooks.PreAPIRequestMutable)
			return nil, nil
		},
		PostLLMCallCanReissueFunc: func(context.Context, hooks.LLMCall) (*hooks.Reissue, error) {
			hit(hooks.PostLLMCallCanReissue)
			return nil, nil
		},
		PostLLMCallFunc: func(context.Context, hooks.Inference) error { hit(hooks.PostLLMCall); return nil },
		TransformLLMOutputFunc: func(context.Context, hooks.LLMOutput) (*hooks.TextReplacement, error) {
			hit(hooks.TransformLLMOutput)
			return nil, nil
		},
		PreToolCallFunc: func(context.Context, hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
			hit(hooks.PreToolCall)
			return nil, nil
		},
		PreToolCallCanProvideResultFunc: func(context.Context, hooks.ToolCallRequest) (*hooks.ToolResult, error) {
			hit(hooks.PreToolCallCanProvideResult)
			return nil, nil
		},
		PostToolCallFunc: func(context.Context, hooks.ToolCallOutcome) error { hit(hooks.PostToolCall); return nil },
		TransformToolResultFunc: func(context.Context, hooks.ToolCallOutcome) (*hooks.ToolResult, error) {
			hit(hooks.TransformToolResult)
			return nil, nil
		},
	}
}

func TestBypassFiresNoHookAndOffersNoPluginTool(t *testing.T) {
	var mu sync.Mutex
	counts := map[hooks.Name]int{}
	b := bus(t, everything("p", counts, &mu))
	p := callsThenAnswers("echo", `{"say":"x"}`)
	s := session(t, p, hooks.RouteBypass, b, 0)
	if _, err := s.Send(context.Background(), "hi"); err != nil {
		t.Fatal(err)
	}
	b.Flush(context.Background())
	if n := b.Stats().Calls(); n != 0 || len(counts) != 0 {
		t.Fatalf("bypass route made %d plugin calls: %v", n, counts)
	}
	for _, tool := range p.reqs[0].Tools {
		if tool.Name == "p__tool" {
			t.Fatal("bypass route offered a plugin tool")
		}
	}
}

func TestGatewayFiresEveryHook(t *testing.T) {
	var mu sync.Mutex
	counts := map[hooks.Name]int{}
	b := bus(t, everything("p", counts, &mu))
	p := callsThenAnswers("echo", `{"say":"x"}`)
	s := session(t, p, hooks.RouteGateway, b, 0)
	if _, err := s.Send(context.Background(), "hi"); err != nil {
		t.Fatal(err)
	}
	b.Flush(context.Background())
	mu.Lock()
	defer mu.Unlock()
	want := map[hooks.Name]int{
		hooks.OnSessionStart: 1, hooks.PreToolListFinalized: 2, hooks.PreAPIRequestMutable: 2,
		hooks.PostLLMCallCanReissue: 2, hooks.PostLLMCall: 2, hooks.PreToolCall: 1,
		hooks.PreToolCallCanProvideResult: 1, hooks.PostToolCall: 1, hooks.TransformToolResult: 1,
		hooks.TransformLLMOutput: 1, hooks.OnSessionEnd: 1,
	}
	for h, n := range want {
		if counts[h] != n {
			t.Errorf("%s fired %d times, want %d", h, counts[h], n)
		}
	}
	found := false
	for _, tool := range p.reqs[0].Tools {
		found = found || tool.Name == "p__tool"
	}
	if !found {
		t.Fatal("gateway route did not offer the plugin tool")
	}
}

func TestProvidedResultSkipsNativeDispatch(t *testing.T) {
	ran := false
	tool := echoTool()
	run := tool.Run
	tool.Run = func(ctx context.Context, a json.RawMessage) (any, error) { ran = true; return run(ctx, a) }
	reg, _ := dispatch.NewRegistry(tool)
	b := bus(t, &hooks.Funcs{Name: "cache", PreToolCallCanProvideResultFunc: func(context.Context, hooks.ToolCallRequest) (*hooks.ToolResult, error) {
		return &hooks.ToolResult{Content: `"cached"`}, nil
	}})
	s, _ := New(Options{Provider: callsThenAnswers("echo", `{"say":"x"}`), Model: "m", Route: hooks.RouteGateway, Bus: b, Tools: reg})
	turn, err := s.Send(context.Background(), "hi")
	if err != nil {
		t.Fatal(err)
	}
	if ran || turn.Answer != `result: "cached"` || turn.ToolCalls[0].Status != hooks.ProvidedBy("cache") {
		t.Fatalf("ran=%v turn=%+v", ran, turn)
	}
}

func TestOneReissuePerIterationEvenWhenAskedEveryTime(t *testing.T) {
	var mu sync.Mutex
	var observed []hooks.Inference
	asks := 0
	router := &hooks.Funcs{
		Name: "router",
		PostLLMCallCanReissueFunc: func(_ context.Context, ev hooks.LLMCall) (*hooks.Reissue, error) {
			asks++
			return &hooks.Reissue{Patch: hooks.RequestPatch{Model: strp("large")}, Reason: "low confidence"}, nil
		},
		PostLLMCallFunc: func(_ context.Context, ev hooks.Inference) error {
			mu.Lock()
			observed = append(observed, ev)
			mu.Unlock()
			return nil
		},
	}
	b := bus(t, router)
	p := callsThenAnswers("echo", `{"say":"x"}`)
	// Budget 2: the reissues must not consume it, or the run would end on
	// max_iterations.
	s := session(t, p, hooks.RouteGateway, b, 2)
	turn, err := s.Send(context.Background(), "hi")
	if err != nil {
		t.Fatal(err)
	}
	if turn.EndReason != hooks.EndCompleted || turn.Iterations != 2 {
		t.Fatalf("turn ended %s after %d iterations", turn.EndReason, turn.Iterations)
	}
	if len(p.reqs) != 4 || asks != 2 {
		t.Fatalf("%d model calls and %d reissue asks; want 4 and 2", len(p.reqs), asks)
	}
	models := []string{p.reqs[0].Model, p.reqs[1].Model, p.reqs[2].Model, p.reqs[3].Model}
	if strings.Join(models, ",") != "small,large,small,large" {
		t.Fatalf("models %v: the reissue applies to its call only", models)
	}
	if turn.Usage.InputTokens != 40 {
		t.Fatalf("usage %+v does not include both inferences of each iteration", turn.Usage)
	}
	b.Flush(context.Background())
	mu.Lock()
	defer mu.Unlock()
	if len(observed) != 4 || observed[0].Escalated || !observed[1].Escalated || observed[1].Reason != "low confidence" || observed[1].Model != "large" {
		t.Fatalf("observers saw %+v", observed)
	}
	if !turn.Inferences[1].Escalated || turn.Inferences[0].Escalated {
		t.Fatalf("inferences %+v", turn.Inferences)
	}
}

func TestFailedReissueKeepsFirstAnswer(t *testing.T) {
	router := &hooks.Funcs{Name: "router", PostLLMCallCanReissueFunc: func(context.Context, hooks.LLMCall) (*hooks.Reissue, error) {
		return &hooks.Reissue{Patch: hooks.RequestPatch{Model: strp("large")}, Reason: "r"}, nil
	}}
	p := &scripted{fn: func(n int, req hooks.ModelRequest) (hooks.ModelResponse, error) {
		if req.Model == "large" {
			return hooks.ModelResponse{}, errors.New("large model overloaded")
		}
		return answer("small answer"), nil
	}}
	s := session(t, p, hooks.RouteGateway, bus(t, router), 0)
	turn, err := s.Send(context.Background(), "hi")
	if err != nil || turn.Answer != "small answer" {
		t.Fatalf("answer %q err %v", turn.Answer, err)
	}
	if len(turn.Inferences) != 2 || turn.Inferences[1].Err == nil {
		t.Fatalf("failed escalation not recorded: %+v", turn.Inferences)
	}
}

func strp(s string) *string { return &s }

func TestToolListAndRequestOverridesApplyToOneCallOnly(t *testing.T) {
	calls := 0
	p := &hooks.Funcs{
		Name: "shaper",
		PreToolListFinalizedFunc: func(_ context.Context, ev hooks.ToolListRequest) (*hooks.ToolListOverride, error) {
			if ev.Iteration == 1 {
				return &hooks.ToolListOverride{Tools: []hooks.ToolSpec{}}, nil
			}
			return nil, nil
		},
		PreAPIRequestMutableFunc: func(_ context.Context, ev hooks.APIRequest) (*hooks.RequestPatch, error) {
			calls++
			return &hooks.RequestPatch{System: strp("be brief"), Messages: append(ev.Request.Messages, hooks.Message{Role: hooks.RoleUser, Content: "injected"})}, nil
		},
	}
	prov := callsThenAnswers("echo", `{"say":"x"}`)
	s := session(t, prov, hooks.RouteGateway, bus(t, p), 0)
	if _, err := s.Send(context.Background(), "hi"); err != nil {
		t.Fatal(err)
	}
	if len(prov.reqs[0].Tools) != 0 || len(prov.reqs[1].Tools) != 1 {
		t.Fatalf("tool lists %d then %d, want 0 then 1", len(prov.reqs[0].Tools), len(prov.reqs[1].Tools))
	}
	if prov.reqs[0].System != "be brief" {
		t.Fatal("request patch not applied")
	}
	for _, m := range s.History() {
		if m.Content == "injected" {
			t.Fatal("a request patch leaked into the session history")
		}
	}
}

func TestTransformLLMOutput(t *testing.T) {
	p := &hooks.Funcs{Name: "upper", TransformLLMOutputFunc: func(_ context.Context, ev hooks.LLMOutput) (*hooks.TextReplacement, error) {
		return &hooks.TextReplacement{Text: strings.ToUpper(ev.Text)}, nil
	}}
	prov := &scripted{fn: func(int, hooks.ModelRequest) (hooks.ModelResponse, error) { return answer("done"), nil }}
	s := session(t, prov, hooks.RouteGateway, bus(t, p), 0)
	turn, _ := s.Send(context.Background(), "hi")
	if turn.Answer != "DONE" {
		t.Fatalf("answer %q", turn.Answer)
	}
}

func sessionEnds(t *testing.T) (*hooks.Funcs, func() []hooks.SessionEnd) {
	var mu sync.Mutex
	var ends []hooks.SessionEnd
	p := &hooks.Funcs{Name: "obs", OnSessionEndFunc: func(_ context.Context, ev hooks.SessionEnd) error {
		mu.Lock()
		ends = append(ends, ev)
		mu.Unlock()
		return nil
	}}
	return p, func() []hooks.SessionEnd {
		mu.Lock()
		defer mu.Unlock()
		return append([]hooks.SessionEnd(nil), ends...)
	}
}

func TestMaxIterations(t *testing.T) {
	obs, ends := sessionEnds(t)
	b := bus(t, obs)
	loops := &scripted{fn: func(n int, _ hooks.ModelRequest) (hooks.ModelResponse, error) {
		return toolCall("c", "echo", `{"say":"again"}`), nil
	}}
	s := session(t, loops, hooks.RouteGateway, b, 3)
	turn, err := s.Send(context.Background(), "loop")
	if err != nil {
		t.Fatal(err)
	}
	if turn.EndReason != hooks.EndMaxIterations || len(loops.reqs) != 3 || len(turn.ToolCalls) != 3 {
		t.Fatalf("turn %+v after %d model calls", turn, len(loops.reqs))
	}
	b.Flush(context.Background())
	if e := ends(); len(e) != 1 || e[0].Reason != hooks.EndMaxIterations || e[0].Iterations != 3 {
		t.Fatalf("session ends %+v", e)
	}
}

func TestModelErrorEndsRunWithError(t *testing.T) {
	obs, ends := sessionEnds(t)
	b := bus(t, obs)
	bad := &scripted{fn: func(int, hooks.ModelRequest) (hooks.ModelResponse, error) {
		return hooks.ModelResponse{}, errors.New("provider down")
	}}
	s := session(t, bad, hooks.RouteGateway, b, 0)
	turn, err := s.Send(context.Background(), "hi")
	if err == nil || turn.EndReason != hooks.EndError {
		t.Fatalf("err %v reason %s", err, turn.EndReason)
	}
	b.Flush(context.Background())
	if e := ends(); len(e) != 1 || e[0].Reason != hooks.EndError || !strings.Contains(e[0].Error, "provider down") {
		t.Fatalf("session ends %+v", e)
	}
}

func TestCancelledRun(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	p := &scripted{fn: func(int, hooks.ModelRequest) (hooks.ModelResponse, error) {
		cancel()
		return toolCall("c", "echo", `{"say":"x"}`), nil
	}}
	s := session(t, p, hooks.RouteGateway, nil, 0)
	turn, err := s.Send(ctx, "hi")
	if !errors.Is(err, context.Canceled) || turn.EndReason != hooks.EndCancelled {
		t.Fatalf("err %v reason %s", err, turn.EndReason)
	}
}

func TestBadToolCallsBecomeErrorResults(t *testing.T) {
	cases := map[string]hooks.ToolCall{
		"invalid JSON":   {ID: "c", Name: "echo", Arguments: json.RawMessage(`{"say":`)},
		"schema failure": {ID: "c", Name: "echo", Arguments: json.RawMessage(`{"say":3}`)},
		"unknown tool":   {ID: "c", Name: "nope", Arguments: json.RawMessage(`{}`)},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			p := &scripted{fn: func(n int, req hooks.ModelRequest) (hooks.ModelResponse, error) {
				if res, ok := lastToolResult(req); ok {
					return answer(res), nil
				}
				return hooks.ModelResponse{Message: hooks.Message{Role: hooks.RoleAssistant, ToolCalls: []hooks.ToolCall{c}}}, nil
			}}
			s := session(t, p, hooks.RouteGateway, nil, 0)
			turn, err := s.Send(context.Background(), "hi")
			if err != nil || turn.EndReason != hooks.EndCompleted {
				t.Fatalf("err %v turn %+v", err, turn)
			}
			if !turn.ToolCalls[0].Result.IsError || !strings.Contains(turn.Answer, `"error"`) {
				t.Fatalf("model did not see an error result: %+v", turn.ToolCalls[0])
			}
		})
	}
}

func TestTraceNamesWhoAnswered(t *testing.T) {
	var lines []string
	guard := &hooks.Funcs{Name: "guard", PreToolCallFunc: func(context.Context, hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
		return &hooks.PreToolCallDecision{Block: &hooks.Block{Message: "echo is not allowed"}}, nil
	}}
	s, _ := New(Options{
		Provider: callsThenAnswers("echo", `{"say":"x"}`), Model: "m", Route: hooks.RouteGateway,
		Bus: bus(t, guard), Tools: registry(t), Trace: func(e Event) { lines = append(lines, e.Text) },
	})
	turn, _ := s.Send(context.Background(), "hi")
	all := strings.Join(lines, "\n")
	if !strings.Contains(all, "route: gateway") || !strings.Contains(all, "blocked by guard") {
		t.Fatalf("trace:\n%s", all)
	}
	if turn.ToolCalls[0].Status != hooks.StatusBlocked || !strings.Contains(turn.ToolCalls[0].Result.Content, "echo is not allowed") {
		t.Fatalf("blocked call %+v", turn.ToolCalls[0])
	}
}

func TestCancelBetweenToolCallsKeepsHistoryValid(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	tool := echoTool()
	run := tool.Run
	tool.Run = func(c context.Context, a json.RawMessage) (any, error) { cancel(); return run(c, a) }
	reg, _ := dispatch.NewRegistry(tool)
	p := &scripted{fn: func(n int, req hooks.ModelRequest) (hooks.ModelResponse, error) {
		if n > 0 {
			return answer("ok"), nil
		}
		return hooks.ModelResponse{Message: hooks.Message{Role: hooks.RoleAssistant, ToolCalls: []hooks.ToolCall{
			{ID: "a", Name: "echo", Arguments: json.RawMessage(`{"say":"1"}`)},
			{ID: "b", Name: "echo", Arguments: json.RawMessage(`{"say":"2"}`)},
		}}}, nil
	}}
	s, _ := New(Options{Provider: p, Model: "m", Route: hooks.RouteBypass, Tools: reg})
	if _, err := s.Send(ctx, "two calls"); !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want cancelled", err)
	}
	answered := map[string]bool{}
	for _, m := range s.History() {
		if m.Role == hooks.RoleTool {
			answered[m.ToolCallID] = true
		}
	}
	if !answered["a"] || !answered["b"] {
		t.Fatalf("tool calls without results in history: %+v", s.History())
	}
	if turn, err := s.Send(context.Background(), "again"); err != nil || turn.Answer != "ok" {
		t.Fatalf("session unusable after a cancel: %v", err)
	}
}

// A model that calls a plugin's tool with arguments its schema refuses
// reads the host's error, corrects itself, and only the corrected call
// reaches the plugin.
func TestPluginToolSchemaErrorLetsTheModelCorrectItself(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	weather := &hooks.Funcs{
		Name: "weather",
		Tools: []hooks.ToolSpec{{Name: "weather__now", Description: "weather in a city", InputSchema: json.RawMessage(
			`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false}`)}},
		HookMatchers: map[hooks.Name][]string{hooks.PreToolCallCanProvideResult: {"weather__*"}},
		PreToolCallCanProvideResultFunc: func(_ context.Context, r hooks.ToolCallRequest) (*hooks.ToolResult, error) {
			mu.Lock()
			seen = append(seen, string(r.Arguments))
			mu.Unlock()
			return &hooks.ToolResult{Content: `"sunny"`}, nil
		},
	}
	p := &scripted{fn: func(n int, req hooks.ModelRequest) (hooks.ModelResponse, error) {
		res, ok := lastToolResult(req)
		switch {
		case !ok:
			return toolCall("c1", "weather__now", `{"town":"Oslo"}`), nil
		case strings.Contains(res, `missing required property \"city\"`):
			return toolCall("c2", "weather__now", `{"city":"Oslo"}`), nil
		}
		return answer("it is " + res), nil
	}}
	s := session(t, p, hooks.RouteGateway, bus(t, weather), 0)
	turn, err := s.Send(context.Background(), "weather in Oslo?")
	if err != nil || turn.EndReason != hooks.EndCompleted {
		t.Fatalf("err %v turn %+v", err, turn)
	}
	if len(turn.ToolCalls) != 2 || turn.ToolCalls[0].Path != dispatch.PathRejected || turn.ToolCalls[1].Path != dispatch.PathProvided {
		t.Fatalf("tool calls = %+v", turn.ToolCalls)
	}
	if turn.Answer != `it is "sunny"` {
		t.Errorf("answer %q", turn.Answer)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 1 || seen[0] != `{"city":"Oslo"}` {
		t.Fatalf("the plugin saw %v, want only the corrected call", seen)
	}
}
