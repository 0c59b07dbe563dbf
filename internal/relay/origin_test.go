package relay

import (
	"context"
	"encoding/json"
	"sort"
	"testing"
	"time"

	"github.com/hookhost/hookhost/dispatch"
	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/llm"
)

// On the gateway route, tool hooks are told where each call goes: a
// plugin's tool, a configured MCP server's tool hookhost runs, and the
// client's own tool, before the client sees it and when its result comes.
func TestToolHooksOnTheGatewayRouteSeeTheCallsOrigin(t *testing.T) {
	rec := &recorder{}
	origins := map[string][]string{}
	note := func(hook hooks.Name, name string, origin hooks.Origin) {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		origins[name] = append(origins[name], string(hook)+"="+string(origin))
	}
	watch := &hooks.Funcs{
		Name: "origins",
		PreToolCallFunc: func(_ context.Context, r hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
			note(hooks.PreToolCall, r.Name, r.Origin)
			return nil, nil
		},
		PostToolCallFunc: func(_ context.Context, o hooks.ToolCallOutcome) error {
			note(hooks.PostToolCall, o.Name, o.Origin)
			return nil
		},
		TransformToolResultFunc: func(_ context.Context, o hooks.ToolCallOutcome) (*hooks.ToolResult, error) {
			note(hooks.TransformToolResult, o.Name, o.Origin)
			return nil, nil
		},
	}
	bus := newBus(t, kora("42"), watch)
	hosted, err := dispatch.NewRegistry(dispatch.Tool{
		Spec:   hooks.ToolSpec{Name: "srv__lookup", InputSchema: json.RawMessage(`{"type":"object"}`)},
		Run:    func(context.Context, json.RawMessage) (any, error) { return "found", nil },
		Origin: hooks.OriginMCP("srv"),
	})
	if err != nil {
		t.Fatal(err)
	}
	up := &scripted{steps: []step{
		calls("", 1, 1, tc("k1", "kora__burn", `{}`), tc("h1", "srv__lookup", `{"key":"a"}`), tc("c1", "read_file", `{"path":"a"}`)),
		text("done", 1, 1),
	}}
	r := New(Config{Provider: up, Bus: bus, Hosted: hosted, Store: NewStore(time.Minute, 10)})
	front := testFront{llm.ProtocolChat}
	res := runOK(t, r, front, userCall("go", readFile), nil)
	if len(res.ToolCalls) != 1 || res.ToolCalls[0].Name != "read_file" {
		t.Fatalf("client got %+v, want read_file only", res.ToolCalls)
	}
	next := userCall("go", readFile)
	next.Request.Messages = append(next.Request.Messages,
		hooks.Message{Role: hooks.RoleAssistant, ToolCalls: res.ToolCalls},
		hooks.Message{Role: hooks.RoleTool, ToolCallID: res.ToolCalls[0].ID, Content: "hi"})
	runOK(t, r, front, next, nil)
	flush(t, bus)

	want := map[string][]string{
		"kora__burn":  {"post_tool_call=plugin", "pre_tool_call=plugin", "transform_tool_result=plugin"},
		"srv__lookup": {"post_tool_call=mcp:srv", "pre_tool_call=mcp:srv", "transform_tool_result=mcp:srv"},
		"read_file":   {"post_tool_call=client", "pre_tool_call=client", "transform_tool_result=client"},
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for name, w := range want {
		got := append([]string(nil), origins[name]...)
		sort.Strings(got)
		if len(got) != len(w) {
			t.Errorf("%s: hooks saw %q, want %q", name, got, w)
			continue
		}
		for i := range w {
			if got[i] != w[i] {
				t.Errorf("%s: hooks saw %q, want %q", name, got, w)
				break
			}
		}
	}
}
