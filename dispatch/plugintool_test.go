package dispatch

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/hookhost/hookhost/hookbus"
	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/wiretest"
)

const addSchema = `{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"],"additionalProperties":false}`

// calc is a plugin owning calc__add, answered in
// pre_tool_call_can_provide_result; it records the arguments it was given.
type calc struct {
	mu   sync.Mutex
	seen []string
}

func (c *calc) funcs(schema string) *hooks.Funcs {
	return &hooks.Funcs{
		Name:     "calc",
		Matchers: []string{"calc__*"},
		Tools:    []hooks.ToolSpec{{Name: "calc__add", Description: "adds two integers", InputSchema: json.RawMessage(schema)}},
		PreToolCallCanProvideResultFunc: func(_ context.Context, r hooks.ToolCallRequest) (*hooks.ToolResult, error) {
			c.mu.Lock()
			c.seen = append(c.seen, string(r.Arguments))
			c.mu.Unlock()
			var a struct{ A, B int }
			if err := json.Unmarshal(r.Arguments, &a); err != nil {
				return nil, err
			}
			b, _ := json.Marshal(a.A + a.B)
			return &hooks.ToolResult{Content: string(b)}, nil
		},
	}
}

func (c *calc) calls() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.seen...)
}

// provideCalls is how many times the Bus asked plugin for a result.
func provideCalls(bus *hookbus.Bus, plugin string) uint64 {
	for _, h := range bus.Stats().Hooks {
		if h.Plugin == plugin && h.Hook == hooks.PreToolCallCanProvideResult {
			return h.Calls
		}
	}
	return 0
}

// A plugin tool's arguments are checked against its declared schema before
// its owner is asked for a result, with the error text native tools give.
func TestPluginToolArgumentsAreValidated(t *testing.T) {
	overEveryWay(t, func(t *testing.T, way wiretest.Way) {
		c := &calc{}
		p, bus := pipelineOver(t, way, c.funcs(addSchema))

		for _, bad := range []struct{ args, want string }{
			{`{"a":1}`, `tool \"calc__add\": args: missing required property \"b\"`},
			{`{"a":"one","b":2}`, `tool \"calc__add\": args.a: must be an integer`},
			{`{"a":1,"b":2,"c":3}`, `\"c\"`},
			{``, `missing required property`},
		} {
			out := run(p, "calc__add", bad.args)
			if out.Path != PathRejected || out.Status != hooks.StatusError || !out.Result.IsError || !strings.Contains(out.Result.Content, bad.want) {
				t.Errorf("args %s: got path %s status %s result %s; want rejected with %s", bad.args, out.Path, out.Status, out.Result.Content, bad.want)
			}
		}
		if seen := c.calls(); len(seen) != 0 || provideCalls(bus, "calc") != 0 {
			t.Fatalf("invalid arguments reached the plugin: %v (%d calls)", seen, provideCalls(bus, "calc"))
		}

		out := run(p, "calc__add", `{"a":2,"b":3}`)
		if out.Path != PathProvided || out.AnsweredBy != "calc" || out.Result.Content != "5" {
			t.Fatalf("valid arguments: %+v", out)
		}
		if seen := c.calls(); len(seen) != 1 || seen[0] != `{"a":2,"b":3}` {
			t.Fatalf("the plugin saw %v", seen)
		}
	})
}

// The same arguments fail a native tool and a plugin tool with one schema
// in the same words.
func TestPluginAndNativeToolsRejectAlike(t *testing.T) {
	overEveryWay(t, testPluginAndNativeToolsRejectAlike)
}

func testPluginAndNativeToolsRejectAlike(t *testing.T, way wiretest.Way) {
	c := &calc{}
	p, _ := pipelineOver(t, way, c.funcs(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}`))
	for _, args := range []string{`{}`, `{"text":3}`, `{"text":"a","x":1}`} {
		native, plugin := run(p, "upper", args), run(p, "calc__add", args)
		want := strings.Replace(native.Result.Content, `\"upper\"`, `\"calc__add\"`, 1)
		if native.Path != PathRejected || plugin.Path != PathRejected || plugin.Result.Content != want {
			t.Errorf("args %s: native %s %s, plugin %s %s", args, native.Path, native.Result.Content, plugin.Path, plugin.Result.Content)
		}
	}
	if len(c.calls()) != 0 {
		t.Fatalf("the plugin was asked: %v", c.calls())
	}
}

// The check comes after pre_tool_call, as for native tools: a guard's
// block wins, a modify may repair the arguments, and a modify that breaks
// them keeps them from the owner.
func TestPluginToolArgumentsAreValidatedAfterModify(t *testing.T) {
	overEveryWay(t, func(t *testing.T, way wiretest.Way) {
		c := &calc{}
		fixer := &hooks.Funcs{
			Name: "fixer",
			PreToolCallFunc: func(_ context.Context, r hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
				switch string(r.Arguments) {
				case `{"a":2}`:
					return &hooks.PreToolCallDecision{ModifiedArgs: json.RawMessage(`{"a":2,"b":0}`)}, nil
				case `{"a":2,"b":2}`:
					return &hooks.PreToolCallDecision{ModifiedArgs: json.RawMessage(`{"a":"two","b":2}`)}, nil
				case `{"block":true}`:
					return &hooks.PreToolCallDecision{Block: &hooks.Block{Message: "no"}}, nil
				}
				return nil, nil
			},
		}
		p, bus := pipelineOver(t, way, fixer, c.funcs(addSchema))

		if out := run(p, "calc__add", `{"a":2}`); out.Path != PathProvided || out.Result.Content != "2" || out.ModifiedBy[0] != "fixer" {
			t.Fatalf("repaired arguments: %+v", out)
		}
		if out := run(p, "calc__add", `{"a":2,"b":2}`); out.Path != PathRejected || !strings.Contains(out.Result.Content, "args.a") || string(out.Call.Arguments) != `{"a":"two","b":2}` {
			t.Fatalf("broken by a modify: %+v", out)
		}
		if out := run(p, "calc__add", `{"block":true}`); out.Path != PathBlocked || out.AnsweredBy != "fixer" {
			t.Fatalf("blocked: %+v", out)
		}
		if seen := c.calls(); len(seen) != 1 || seen[0] != `{"a":2,"b":0}` || provideCalls(bus, "calc") != 1 {
			t.Fatalf("the owner saw %v", seen)
		}
	})
}

// A schema the host cannot check against makes the tool's calls fail with
// an error that names the plugin, rather than reach the plugin unchecked.
func TestPluginToolWithUnusableSchema(t *testing.T) {
	overEveryWay(t, testPluginToolWithUnusableSchema)
}

func testPluginToolWithUnusableSchema(t *testing.T, way wiretest.Way) {
	c := &calc{}
	p, bus := pipelineOver(t, way, c.funcs(`{"type":"object","anyOf":[{"required":["a"]},{"required":["b"]}]}`))
	out := run(p, "calc__add", `{"a":1,"b":2}`)
	if out.Path != PathRejected || !strings.Contains(out.Result.Content, `plugin \"calc\"`) || !strings.Contains(out.Result.Content, "anyOf") {
		t.Fatalf("got %+v", out)
	}
	if provideCalls(bus, "calc") != 0 {
		t.Fatal("the plugin was asked")
	}
}
