package telemetry_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/hookhost/hookhost/conversation"
	"github.com/hookhost/hookhost/dispatch"
	"github.com/hookhost/hookhost/dispatch/builtin"
	"github.com/hookhost/hookhost/hookbus"
	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/telemetry"
	"github.com/hookhost/hookhost/llm"
)

// receiver is an OTLP/HTTP trace endpoint in process: it decodes every
// export request and keeps its spans.
type receiver struct {
	mu    sync.Mutex
	spans []*tracepb.Span
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	var req coltrace.ExportTraceServiceRequest
	if err != nil || r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" || proto.Unmarshal(body, &req) != nil {
		http.Error(w, "not an OTLP/HTTP protobuf trace export", http.StatusBadRequest)
		return
	}
	rc.mu.Lock()
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			rc.spans = append(rc.spans, ss.Spans...)
		}
	}
	rc.mu.Unlock()
	b, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.Write(b)
}

func (rc *receiver) named(t *testing.T, name string) *tracepb.Span {
	t.Helper()
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for _, s := range rc.spans {
		if s.Name == name {
			return s
		}
	}
	var names []string
	for _, s := range rc.spans {
		names = append(names, s.Name)
	}
	t.Fatalf("no span %q among %q", name, names)
	return nil
}

func attr(s *tracepb.Span, key string) (*commonpb.AnyValue, bool) {
	for _, kv := range s.Attributes {
		if kv.Key == key {
			return kv.Value, true
		}
	}
	return nil, false
}

func str(s *tracepb.Span, key string) string {
	v, _ := attr(s, key)
	return v.GetStringValue()
}

// oneTool is a model that calls now once, then answers.
type oneTool struct{ calls int }

func (*oneTool) Name() string { return "scripted" }

func (m *oneTool) Complete(_ context.Context, req llm.Request) (llm.Response, error) {
	m.calls++
	resp := hooks.ModelResponse{Model: req.Model, Usage: hooks.Usage{InputTokens: 11, OutputTokens: 3}}
	if m.calls == 1 {
		resp.StopReason = hooks.StopToolUse
		resp.Message = hooks.Message{Role: hooks.RoleAssistant, ToolCalls: []hooks.ToolCall{{ID: "call_1", Name: "now", Arguments: json.RawMessage(`{"timezone":"Asia/Tokyo"}`)}}}
	} else {
		resp.StopReason = hooks.StopEndTurn
		resp.Message = hooks.Message{Role: hooks.RoleAssistant, Content: "the clock is off limits"}
	}
	return resp, nil
}

// runTurn exports one turn (a model call, a tool call the guard blocks,
// a second model call) to an in-process receiver and returns what it got.
func runTurn(t *testing.T, includeContent bool) *receiver {
	rc := &receiver{}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL)
	shutdown, err := telemetry.Setup(context.Background(), os.Getenv, "test", includeContent)
	if err != nil {
		t.Fatal(err)
	}
	if !telemetry.Enabled() {
		t.Fatal("OTEL_EXPORTER_OTLP_ENDPOINT is set, but telemetry is off")
	}
	guard := &hooks.Funcs{Name: "guard", PreToolCallFunc: func(context.Context, hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
		return &hooks.PreToolCallDecision{Block: &hooks.Block{Message: "no clocks"}}, nil
	}}
	bus, err := hookbus.New([]hookbus.Member{{Plugin: guard}}, hookbus.Config{OnCall: telemetry.HookCall})
	if err != nil {
		t.Fatal(err)
	}
	tools, err := builtin.All(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	reg, err := dispatch.NewRegistry(tools...)
	if err != nil {
		t.Fatal(err)
	}
	s, err := conversation.New(conversation.Options{Provider: &oneTool{}, Model: "m-small", MaxIterations: 3, Route: hooks.RouteGateway, Bus: bus, Tools: reg})
	if err != nil {
		t.Fatal(err)
	}
	turn, err := s.Send(context.Background(), "what time is it in Tokyo? my password is hunter2")
	if err != nil {
		t.Fatal(err)
	}
	if len(turn.ToolCalls) != 1 || turn.ToolCalls[0].Path != dispatch.PathBlocked {
		t.Fatalf("tool calls %+v, want now blocked by the guard", turn.ToolCalls)
	}
	bus.Close(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if telemetry.Enabled() {
		t.Error("still enabled after shutdown")
	}
	return rc
}

func TestSpansOfATurn(t *testing.T) {
	rc := runTurn(t, false)
	turn := rc.named(t, "hookhost.turn")
	model := rc.named(t, "chat m-small")
	tool := rc.named(t, "execute_tool now")
	hook := rc.named(t, "hook pre_tool_call")

	if len(turn.ParentSpanId) != 0 || str(turn, "hookhost.request_id") == "" {
		t.Errorf("turn span: parent %x, request id %q; want a root naming its request", turn.ParentSpanId, str(turn, "hookhost.request_id"))
	}
	for _, s := range []*tracepb.Span{model, tool} {
		if string(s.ParentSpanId) != string(turn.SpanId) || string(s.TraceId) != string(turn.TraceId) {
			t.Errorf("%s is not a child of the turn", s.Name)
		}
	}
	if string(hook.ParentSpanId) != string(tool.SpanId) {
		t.Errorf("the hook span is not a child of the tool call it decided")
	}
	if str(model, "gen_ai.operation.name") != "chat" || str(model, "gen_ai.request.model") != "m-small" {
		t.Errorf("model span attributes %v", model.Attributes)
	}
	if v, _ := attr(model, "gen_ai.usage.input_tokens"); v.GetIntValue() != 11 {
		t.Errorf("gen_ai.usage.input_tokens = %v", v)
	}
	if v, _ := attr(model, "gen_ai.usage.output_tokens"); v.GetIntValue() != 3 {
		t.Errorf("gen_ai.usage.output_tokens = %v", v)
	}
	if str(tool, "gen_ai.operation.name") != "execute_tool" || str(tool, "gen_ai.tool.name") != "now" || str(tool, "gen_ai.tool.call.id") != "call_1" || str(tool, "hookhost.tool.path") != "blocked" {
		t.Errorf("tool span attributes %v", tool.Attributes)
	}
	if str(hook, "hookhost.plugin") != "guard" || str(hook, "hookhost.hook") != "pre_tool_call" || str(hook, "hookhost.decision") != "answer" {
		t.Errorf("hook span attributes %v", hook.Attributes)
	}
	if _, ok := attr(hook, "hookhost.latency_ms"); !ok || hook.EndTimeUnixNano < hook.StartTimeUnixNano {
		t.Errorf("hook span latency: %v, %d..%d", hook.Attributes, hook.StartTimeUnixNano, hook.EndTimeUnixNano)
	}
	// No content unless asked for.
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for _, s := range rc.spans {
		for _, kv := range s.Attributes {
			if v := kv.Value.GetStringValue(); strings.Contains(v, "hunter2") || strings.Contains(v, "Asia/Tokyo") || strings.Contains(v, "no clocks") {
				t.Errorf("span %s carries content in %s: %q", s.Name, kv.Key, v)
			}
		}
	}
}

func TestSpansIncludeContentWhenAsked(t *testing.T) {
	rc := runTurn(t, true)
	model := rc.named(t, "chat m-small")
	if !strings.Contains(str(model, "gen_ai.input.messages"), "what time is it in Tokyo") {
		t.Errorf("gen_ai.input.messages = %q", str(model, "gen_ai.input.messages"))
	}
	if tool := rc.named(t, "execute_tool now"); str(tool, "gen_ai.tool.call.arguments") != `{"timezone":"Asia/Tokyo"}` {
		t.Errorf("gen_ai.tool.call.arguments = %q", str(tool, "gen_ai.tool.call.arguments"))
	}
	if hook := rc.named(t, "hook pre_tool_call"); !strings.Contains(str(hook, "hookhost.hook.answer"), "no clocks") {
		t.Errorf("hookhost.hook.answer = %q", str(hook, "hookhost.hook.answer"))
	}
}

func TestWanted(t *testing.T) {
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	for _, tc := range []struct {
		env  []string
		want bool
	}{
		{nil, false},
		{[]string{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318"}, true},
		{[]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://collector:4318/v1/traces"}, true},
		{[]string{"OTEL_TRACES_EXPORTER", "otlp"}, true},
		{[]string{"OTEL_TRACES_EXPORTER", "none", "OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318"}, false},
	} {
		if got := telemetry.Wanted(env(tc.env...)); got != tc.want {
			t.Errorf("Wanted(%v) = %v, want %v", tc.env, got, tc.want)
		}
	}
}
