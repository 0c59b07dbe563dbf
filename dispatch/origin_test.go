package dispatch

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/bustest"
	"github.com/hookhost/hookhost/internal/wiretest"
)

// originLog is a plugin serving the four tool hooks that writes down the
// origin each one was told, as "hook tool origin".
type originLog struct {
	mu   sync.Mutex
	seen []string
}

func (l *originLog) add(hook hooks.Name, name string, origin hooks.Origin) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seen = append(l.seen, fmt.Sprintf("%s %s %s", hook, name, origin))
}

func (l *originLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.seen
	l.seen = nil
	return out
}

func (l *originLog) funcs(tools ...hooks.ToolSpec) *hooks.Funcs {
	return &hooks.Funcs{
		Name:  "origins",
		Tools: tools,
		PreToolCallFunc: func(_ context.Context, r hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
			l.add(hooks.PreToolCall, r.Name, r.Origin)
			return nil, nil
		},
		PreToolCallCanProvideResultFunc: func(_ context.Context, r hooks.ToolCallRequest) (*hooks.ToolResult, error) {
			l.add(hooks.PreToolCallCanProvideResult, r.Name, r.Origin)
			if r.Origin == hooks.OriginPlugin {
				return &hooks.ToolResult{Content: `"from the plugin"`}, nil
			}
			return nil, nil
		},
		PostToolCallFunc: func(_ context.Context, o hooks.ToolCallOutcome) error {
			l.add(hooks.PostToolCall, o.Name, o.Origin)
			return nil
		},
		TransformToolResultFunc: func(_ context.Context, o hooks.ToolCallOutcome) (*hooks.ToolResult, error) {
			l.add(hooks.TransformToolResult, o.Name, o.Origin)
			return nil, nil
		},
	}
}

// Every tool hook is told where the call goes: a Registry tool is native
// unless the tool says otherwise, a plugin's tool is the plugin's, a
// hosted MCP server's tool is that server's, and a name nobody offers is
// the host's to answer.
func TestToolHooksSeeTheCallsOrigin(t *testing.T) {
	overEveryWay(t, func(t *testing.T, way wiretest.Way) {
		log := &originLog{}
		plugin := wiretest.Over(t, way, log.funcs(hooks.ToolSpec{Name: "origins__tool", InputSchema: json.RawMessage(`{"type":"object"}`)}))
		fromServer := answering("gw__fetch", "fetched")
		fromServer.Origin = hooks.OriginMCP("gw")
		reg, err := NewRegistry(upper(), fromServer)
		if err != nil {
			t.Fatal(err)
		}
		hostedTool := answering("fs__read", "read")
		hostedTool.Origin = hooks.OriginMCP("fs")
		bus := bustest.New(t, plugin)
		p := &Pipeline{Registry: reg, Bus: bus, Hosted: &hostedTools{"fs__read": hostedTool}}

		for _, c := range []struct{ tool, args, origin string }{
			{"upper", `{"text":"a"}`, "native"},
			{"origins__tool", `{}`, "plugin"},
			{"gw__fetch", `{"n":1}`, "mcp:gw"},
			{"fs__read", `{"n":1}`, "mcp:fs"},
			{"nobody", `{}`, "native"},
		} {
			run(p, c.tool, c.args)
			bustest.Flush(t, bus)
			got := log.take()
			want := []string{
				"pre_tool_call " + c.tool + " " + c.origin,
				"pre_tool_call_can_provide_result " + c.tool + " " + c.origin,
				"post_tool_call " + c.tool + " " + c.origin,
				"transform_tool_result " + c.tool + " " + c.origin,
			}
			if !sameSet(got, want) {
				t.Errorf("%s: hooks saw %q, want %q", c.tool, got, want)
			}
		}
	})
}

// hostedTools is a fixed ToolSet beside the Registry.
type hostedTools map[string]Tool

func (h hostedTools) Specs() []hooks.ToolSpec {
	var out []hooks.ToolSpec
	for _, t := range h {
		out = append(out, t.Spec)
	}
	return out
}

func (h hostedTools) Lookup(name string) (Tool, bool) {
	t, ok := h[name]
	return t, ok
}

func answering(name, answer string) Tool {
	return Tool{
		Spec: hooks.ToolSpec{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)},
		Run:  func(context.Context, json.RawMessage) (any, error) { return answer, nil },
	}
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	count := map[string]int{}
	for _, s := range a {
		count[s]++
	}
	for _, s := range b {
		count[s]--
	}
	for _, n := range count {
		if n != 0 {
			return false
		}
	}
	return true
}
