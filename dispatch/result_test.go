package dispatch

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/wiretest"
)

// A plugin that answers in plain text, providing or transforming, has its
// text reach the model and post_tool_call as a JSON string.
func TestPluginTextResultsBecomeJSONStrings(t *testing.T) {
	overEveryWay(t, testPluginTextResultsBecomeJSONStrings)
}

func testPluginTextResultsBecomeJSONStrings(t *testing.T, way wiretest.Way) {
	var mu sync.Mutex
	var observed hooks.ToolCallOutcome
	p, bus := pipelineOver(t, way, &hooks.Funcs{
		Name: "texty",
		PreToolCallCanProvideResultFunc: func(_ context.Context, r hooks.ToolCallRequest) (*hooks.ToolResult, error) {
			if r.Name == "upper" {
				return nil, nil
			}
			return &hooks.ToolResult{Content: "sunny, 21 °C"}, nil
		},
		PostToolCallFunc: func(_ context.Context, ev hooks.ToolCallOutcome) error {
			mu.Lock()
			observed = ev
			mu.Unlock()
			return nil
		},
		TransformToolResultFunc: func(_ context.Context, ev hooks.ToolCallOutcome) (*hooks.ToolResult, error) {
			if ev.Name != "upper" {
				return nil, nil
			}
			return &hooks.ToolResult{Content: "shouted: " + ev.Result.Content}, nil
		},
	})

	out := run(p, "weather", `{}`)
	bus.Flush(context.Background())
	if out.Path != PathProvided || out.Result.Content != `"sunny, 21 °C"` {
		t.Fatalf("provided text: %+v", out)
	}
	mu.Lock()
	seen := observed.Result.Content
	mu.Unlock()
	if seen != `"sunny, 21 °C"` {
		t.Fatalf("post_tool_call saw %q, want the JSON string", seen)
	}

	out = run(p, "upper", `{"text":"hi"}`)
	if want, _ := json.Marshal(`shouted: {"text":"HI"}`); out.Result.Content != string(want) {
		t.Fatalf("transformed text: %+v, want content %s", out.Result, want)
	}
}
