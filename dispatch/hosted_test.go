package dispatch_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/hookhost/hookhost/dispatch"
	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/bustest"
)

// hostedSet is a ToolSet whose tools a test may change between calls.
type hostedSet struct{ tools map[string]dispatch.Tool }

func (h *hostedSet) Specs() []hooks.ToolSpec {
	var out []hooks.ToolSpec
	for _, t := range h.tools {
		out = append(out, t.Spec)
	}
	return out
}

func (h *hostedSet) Lookup(name string) (dispatch.Tool, bool) {
	t, ok := h.tools[name]
	return t, ok
}

func answering(name, answer string) dispatch.Tool {
	return dispatch.Tool{
		Spec: hooks.ToolSpec{Name: name, InputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`)},
		Run:  func(context.Context, json.RawMessage) (any, error) { return answer, nil },
	}
}

// A hosted tool runs in the native step, read anew on every call, without
// the host checking its arguments; a registered tool of the same name wins,
// and a plugin's tool is never looked up among the hosted ones.
func TestHostedToolsRunInTheNativeStep(t *testing.T) {
	reg, err := dispatch.NewRegistry(answering("both", "registered"))
	if err != nil {
		t.Fatal(err)
	}
	hosted := &hostedSet{tools: map[string]dispatch.Tool{
		"both":          answering("both", "hosted"),
		"srv__one":      answering("srv__one", "one"),
		"plugin__owned": answering("plugin__owned", "hosted"),
	}}
	bus := bustest.New(t, &hooks.Funcs{Name: "plugin", Tools: []hooks.ToolSpec{{Name: "plugin__owned", InputSchema: json.RawMessage(`{"type":"object"}`)}}})
	p := &dispatch.Pipeline{Registry: reg, Bus: bus, Hosted: hosted}
	ctx := context.Background()
	run := func(name, args string) dispatch.Outcome {
		return p.Run(ctx, "s", hooks.ToolCall{ID: "c", Name: name, Arguments: json.RawMessage(args)})
	}
	if out := run("srv__one", `{"n":"not a number"}`); out.Path != dispatch.PathNative || out.Result.Content != `"one"` {
		t.Errorf("hosted call: %+v, want it run with the arguments as they are", out)
	}
	if out := run("both", `{"n":1}`); out.Result.Content != `"registered"` {
		t.Errorf("a name in both: %+v, want the registered tool", out)
	}
	if out := run("plugin__owned", `{}`); out.Path != dispatch.PathRejected || !strings.Contains(out.Result.Content, `plugin \"plugin\"`) {
		t.Errorf("a plugin's tool: %+v, want the plugin's no-result error", out)
	}
	delete(hosted.tools, "srv__one")
	if out := run("srv__one", `{}`); out.Path != dispatch.PathRejected || !strings.Contains(out.Result.Content, "unknown tool") {
		t.Errorf("a tool gone from the set: %+v, want unknown", out)
	}
}
