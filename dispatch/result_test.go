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

// Text that is not valid UTF-8 in a provided result reaches a transform as
// the same text whichever way the plugin is reached: U+FFFD in place of the
// bad byte, as the protocol's repair leaves it, never the escape text
// \ufffd (which a v2 plugin asked to provide and transform in one
// exchange used to see).
func TestInvalidUTF8ReachesATransformAsTheSameTextEveryWay(t *testing.T) {
	want, _ := json.Marshal(map[string]string{"saw": "\"bad \uFFFD byte\"", "json": "{\"a\":\"\uFFFD\"}"})
	overEveryWay(t, func(t *testing.T, way wiretest.Way) {
		var mu sync.Mutex
		var saw []string
		p, _ := pipelineOver(t, way, &hooks.Funcs{
			Name: "bad",
			PreToolCallCanProvideResultFunc: func(_ context.Context, r hooks.ToolCallRequest) (*hooks.ToolResult, error) {
				if r.Name == "weather" {
					return &hooks.ToolResult{Content: "bad \xff byte"}, nil
				}
				return &hooks.ToolResult{Content: "{\"a\":\"\xff\"}"}, nil
			},
			TransformToolResultFunc: func(_ context.Context, ev hooks.ToolCallOutcome) (*hooks.ToolResult, error) {
				mu.Lock()
				saw = append(saw, ev.Result.Content)
				mu.Unlock()
				return nil, nil
			},
		})
		run(p, "weather", `{}`)
		run(p, "upper", `{"text":"hi"}`)
		mu.Lock()
		defer mu.Unlock()
		if len(saw) != 2 {
			t.Fatalf("the transform saw %d results, want 2", len(saw))
		}
		got, _ := json.Marshal(map[string]string{"saw": saw[0], "json": saw[1]})
		if string(got) != string(want) {
			t.Fatalf("the transform saw %s, want %s", got, want)
		}
	})
}
