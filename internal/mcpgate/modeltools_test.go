package mcpgate

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hookhost/hookhost/conversation"
	"github.com/hookhost/hookhost/dispatch"
	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/bustest"
)

// scriptedModel makes the calls it is given, one per model call, then
// answers with the last tool result; it keeps every request.
type scriptedModel struct {
	mu    sync.Mutex
	calls []hooks.ToolCall
	reqs  []hooks.ModelRequest
}

func (p *scriptedModel) Name() string { return "scripted" }

func (p *scriptedModel) Complete(ctx context.Context, req hooks.ModelRequest) (hooks.ModelResponse, error) {
	if err := ctx.Err(); err != nil {
		return hooks.ModelResponse{}, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	n := len(p.reqs)
	p.reqs = append(p.reqs, req)
	if n < len(p.calls) {
		return hooks.ModelResponse{Model: req.Model, StopReason: hooks.StopToolUse, Message: hooks.Message{
			Role: hooks.RoleAssistant, ToolCalls: []hooks.ToolCall{p.calls[n]},
		}}, nil
	}
	last := req.Messages[len(req.Messages)-1]
	return hooks.ModelResponse{Model: req.Model, StopReason: hooks.StopEndTurn, Message: hooks.Message{
		Role: hooks.RoleAssistant, Content: "the tool said " + last.Content,
	}}, nil
}

func (p *scriptedModel) requests() []hooks.ModelRequest {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]hooks.ModelRequest(nil), p.reqs...)
}

func offered(t *testing.T, spec ServerSpec, opts Options, taken func(string) string) (*Upstream, *ModelTools) {
	t.Helper()
	spec.OfferToModel = true
	u := startUpstream(t, spec, opts)
	m := NewModelTools([]*Upstream{u}, ModelToolsOptions{Taken: taken})
	if m == nil {
		t.Fatal("NewModelTools returned nil for a server with offer_to_model")
	}
	return u, m
}

func specNames(specs []hooks.ToolSpec) []string {
	var names []string
	for _, s := range specs {
		names = append(names, s.Name)
	}
	return names
}

// A server's allowlisted tools are offered to the model with the server's
// own schema; a call goes through the whole tool pipeline (pre_tool_call
// changes the arguments, post_tool_call sees the result,
// transform_tool_result rewrites it) to the server, and the model is
// called again with the result's text.
func TestModelCallsAnMCPToolThroughThePipeline(t *testing.T) {
	spec, log := fake(t, "fake", "default")
	spec.Tools = []string{"echo", "fails"}
	_, tools := offered(t, spec, Options{}, nil)
	if got := strings.Join(specNames(tools.Specs()), ","); got != "fake__echo,fake__fails" {
		t.Fatalf("offered %s, want fake__echo,fake__fails (the allowlist)", got)
	}
	if s := string(tools.Specs()[0].InputSchema); !strings.Contains(s, `"text"`) || !strings.Contains(s, `"object"`) {
		t.Errorf("fake__echo offered with schema %s, want the server's own", s)
	}

	var mu sync.Mutex
	var seen []string
	note := func(s string) { mu.Lock(); seen = append(seen, s); mu.Unlock() }
	bus := bustest.New(t, &hooks.Funcs{
		Name: "watch",
		PreToolCallFunc: func(_ context.Context, r hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
			note("pre " + r.Name + " " + string(r.Origin) + " " + string(r.Arguments))
			return &hooks.PreToolCallDecision{ModifiedArgs: json.RawMessage(`{"text":"changed"}`)}, nil
		},
		PreToolCallCanProvideResultFunc: func(_ context.Context, r hooks.ToolCallRequest) (*hooks.ToolResult, error) {
			note("provide? " + r.Name + " " + string(r.Origin))
			return nil, nil
		},
		PostToolCallFunc: func(_ context.Context, o hooks.ToolCallOutcome) error {
			note("post " + o.Name + " " + string(o.Origin) + " " + o.Result.Content)
			return nil
		},
		TransformToolResultFunc: func(_ context.Context, o hooks.ToolCallOutcome) (*hooks.ToolResult, error) {
			return &hooks.ToolResult{Content: strings.ToUpper(o.Result.Content)}, nil
		},
	})
	model := &scriptedModel{calls: []hooks.ToolCall{{ID: "c1", Name: "fake__echo", Arguments: json.RawMessage(`{"text":"hi"}`)}}}
	var trace []string
	s, err := conversation.New(conversation.Options{Provider: model, Model: "m", Route: hooks.RouteGateway, Bus: bus, Hosted: tools,
		Trace: func(e conversation.Event) { trace = append(trace, e.Text) }})
	if err != nil {
		t.Fatal(err)
	}
	turn, err := s.Send(context.Background(), "say hi")
	if err != nil {
		t.Fatal(err)
	}
	if turn.Answer != `the tool said "ECHO: CHANGED"` {
		t.Errorf("answer %q, want the transformed result of the changed call", turn.Answer)
	}
	if len(turn.ToolCalls) != 1 || turn.ToolCalls[0].Path != dispatch.PathNative || turn.ToolCalls[0].Result.IsError {
		t.Errorf("tool calls %+v, want one run on the server", turn.ToolCalls)
	}
	if !slices.ContainsFunc(trace, func(line string) bool {
		return strings.HasPrefix(line, `tool fake__echo({"text":"changed"}) [mcp:fake] → native, ok`)
	}) {
		t.Errorf("the trace %q lacks the call labelled with its server", trace)
	}
	if got := strings.Join(specNames(model.requests()[0].Tools), ","); got != "fake__echo,fake__fails" {
		t.Errorf("the model was offered %s", got)
	}
	if got := calls(t, log); len(got) != 1 || got[0] != `call echo {"text":"changed"}` {
		t.Errorf("the server got %q, want one call with the changed arguments", got)
	}
	bustest.Flush(t, bus)
	mu.Lock()
	defer mu.Unlock()
	want := []string{`pre fake__echo mcp:fake {"text":"hi"}`, "provide? fake__echo mcp:fake", `post fake__echo mcp:fake "echo: changed"`}
	if strings.Join(seen, "|") != strings.Join(want, "|") {
		t.Errorf("hooks saw %q, want %q", seen, want)
	}
}

// A result the server marks isError is an error result; a plugin that
// provides the result keeps the server from being called; a blocked call
// never reaches it.
func TestModelToolErrorsBlocksAndProvidedResults(t *testing.T) {
	spec, log := fake(t, "fake", "default")
	spec.Tools = []string{"echo", "fails", "secret"}
	_, tools := offered(t, spec, Options{}, nil)
	bus := bustest.New(t, &hooks.Funcs{
		Name: "guard",
		PreToolCallFunc: func(_ context.Context, r hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
			if r.Name == "fake__secret" {
				return &hooks.PreToolCallDecision{Block: &hooks.Block{Message: "no secrets"}}, nil
			}
			return nil, nil
		},
		PreToolCallCanProvideResultFunc: func(_ context.Context, r hooks.ToolCallRequest) (*hooks.ToolResult, error) {
			if strings.Contains(string(r.Arguments), "cached") {
				return &hooks.ToolResult{Content: `"from the cache"`}, nil
			}
			return nil, nil
		},
	})
	p := &dispatch.Pipeline{Bus: bus, Hosted: tools}
	ctx := context.Background()
	out := p.Run(ctx, "s", hooks.ToolCall{ID: "1", Name: "fake__fails", Arguments: json.RawMessage(`{}`)})
	if !out.Result.IsError || out.Result.Content != `{"error":"disk full"}` {
		t.Errorf("isError result became %+v, want the error result \"disk full\"", out.Result)
	}
	out = p.Run(ctx, "s", hooks.ToolCall{ID: "2", Name: "fake__secret", Arguments: json.RawMessage(`{}`)})
	if out.Path != dispatch.PathBlocked || !strings.Contains(out.Result.Content, "no secrets") {
		t.Errorf("blocked call: %+v", out)
	}
	out = p.Run(ctx, "s", hooks.ToolCall{ID: "3", Name: "fake__echo", Arguments: json.RawMessage(`{"text":"cached"}`)})
	if out.Path != dispatch.PathProvided || out.Result.Content != `"from the cache"` {
		t.Errorf("provided call: %+v", out)
	}
	out = p.Run(ctx, "s", hooks.ToolCall{ID: "4", Name: "fake__rich", Arguments: json.RawMessage(`{}`)})
	if out.Path != dispatch.PathRejected || !strings.Contains(out.Result.Content, "unknown tool") {
		t.Errorf("a tool the allowlist leaves out: %+v", out)
	}
	if got := calls(t, log); len(got) != 1 || got[0] != "call fails {}" {
		t.Errorf("the server got %q, want only the fails call", got)
	}
}

// A hung server's call ends with an error result naming the server within
// its timeout (the conversation goes on); a server that is down gets an
// error result at once, naming it.
func TestModelToolOnAHungOrDownServer(t *testing.T) {
	spec, _ := fake(t, "slow", "default")
	spec.Tools = []string{"hang", "echo"}
	spec.Timeout = 300 * time.Millisecond
	u, tools := offered(t, spec, Options{BackoffInitial: time.Hour, BackoffMax: time.Hour}, nil)
	model := &scriptedModel{calls: []hooks.ToolCall{{ID: "c1", Name: "slow__hang", Arguments: json.RawMessage(`{}`)}}}
	s, err := conversation.New(conversation.Options{Provider: model, Model: "m", Hosted: tools})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	turn, err := s.Send(ctx, "hang")
	if err != nil {
		t.Fatal(err)
	}
	if len(turn.ToolCalls) != 1 || !turn.ToolCalls[0].Result.IsError ||
		!strings.Contains(turn.ToolCalls[0].Result.Content, `mcp server \"slow\": tool \"hang\" did not answer within 300ms`) {
		t.Fatalf("hung call: %+v", turn.ToolCalls)
	}
	if !strings.Contains(turn.Answer, "did not answer") {
		t.Errorf("the model did not get the error: %q", turn.Answer)
	}

	// Down: its process killed, and not brought back for an hour.
	if err := syscall.Kill(u.Status().PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the server is seen down", func() bool { return u.Status().State != StateRunning })
	if got := strings.Join(specNames(tools.Specs()), ","); got != "slow__echo,slow__hang" {
		t.Errorf("while down the server's tools are %s, want them still offered", got)
	}
	out := (&dispatch.Pipeline{Hosted: tools}).Run(ctx, "s", hooks.ToolCall{ID: "2", Name: "slow__echo", Arguments: json.RawMessage(`{"text":"x"}`)})
	if !out.Result.IsError || !strings.Contains(out.Result.Content, `mcp server \"slow\" is restarting`) {
		t.Errorf("call to a down server: %+v", out.Result)
	}
}

// The offered set follows the server's tools/list changes, and a name the
// host already offers stays the host's.
func TestModelToolsFollowTheServerAndYieldTakenNames(t *testing.T) {
	spec, _ := fake(t, "fake", "default")
	spec.Tools = []string{"grow", "grown", "echo"}
	_, tools := offered(t, spec, Options{}, func(name string) string {
		if name == "fake__echo" {
			return `plugin "mine"`
		}
		return ""
	})
	if got := strings.Join(specNames(tools.Specs()), ","); got != "fake__grow" {
		t.Fatalf("offered %s, want fake__grow alone (fake__echo is taken)", got)
	}
	out := (&dispatch.Pipeline{Hosted: tools}).Run(context.Background(), "s", hooks.ToolCall{ID: "1", Name: "fake__grow", Arguments: json.RawMessage(`{}`)})
	if out.Result.IsError {
		t.Fatal(out.Result.Content)
	}
	eventually(t, "fake__grown is offered", func() bool { _, ok := tools.Lookup("fake__grown"); return ok })
}

// Servers without offer_to_model offer nothing to the model.
func TestNoModelToolsWithoutOfferToModel(t *testing.T) {
	spec, _ := fake(t, "fake", "default")
	u := startUpstream(t, spec, Options{})
	if m := NewModelTools([]*Upstream{u}, ModelToolsOptions{}); m != nil {
		t.Errorf("NewModelTools = %v, want nil", m)
	}
}

// The text a model gets of a result: its texts, notes for what is not
// text, the structured content when nothing else.
func TestModelText(t *testing.T) {
	if got := ModelText(richResult()); got != "{\"n\":42}\n[image, image/png, 8 bytes]\n[resource file:///tmp/report.txt]" {
		t.Errorf("rich result: %q", got)
	}
	if got := ModelText(&mcp.CallToolResult{Content: []mcp.Content{}, StructuredContent: map[string]any{"a": 1}}); got != `{"a":1}` {
		t.Errorf("structured only: %q", got)
	}
}

// Calls are counted per tool by outcome, with their latency.
func TestCallStatsCountOutcomes(t *testing.T) {
	spec, _ := fake(t, "fake", "default")
	spec.Timeout = 200 * time.Millisecond
	u := startUpstream(t, spec, Options{})
	ctx := context.Background()
	for _, tool := range []string{"echo", "echo", "fails", "hang"} {
		_, _ = u.CallTool(ctx, tool, json.RawMessage(`{}`), nil)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, _ = u.CallTool(cctx, "echo", json.RawMessage(`{}`), nil)
	got := map[string]ToolStats{}
	for _, s := range u.CallStats() {
		got[s.Tool] = s
	}
	if e := got["echo"]; e.Server != "fake" || e.Outcomes[OutcomeOK] != 2 || e.Outcomes[OutcomeCancelled] != 1 || e.Count != 3 ||
		e.Buckets[len(e.Buckets)-1] != 3 || e.Sum <= 0 {
		t.Errorf("echo stats %+v", e)
	}
	if f := got["fails"]; f.Outcomes[OutcomeToolError] != 1 || f.Count != 1 {
		t.Errorf("fails stats %+v", f)
	}
	if h := got["hang"]; h.Outcomes[OutcomeTimeout] != 1 || h.Count != 1 {
		t.Errorf("hang stats %+v", h)
	}
}
