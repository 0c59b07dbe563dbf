package dispatch

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/hookhost/hookhost/hookbus"
	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/bustest"
	"github.com/hookhost/hookhost/internal/wiretest"
)

func upper() Tool {
	return Tool{
		Spec: hooks.ToolSpec{Name: "upper", Description: "uppercases text", InputSchema: json.RawMessage(
			`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}`)},
		Run: func(_ context.Context, args json.RawMessage) (any, error) {
			var a struct{ Text string }
			if err := json.Unmarshal(args, &a); err != nil {
				return nil, err
			}
			if a.Text == "fail" {
				return nil, errors.New("cannot uppercase fail")
			}
			if a.Text == "panic" {
				panic("tool bug")
			}
			return map[string]string{"text": strings.ToUpper(a.Text)}, nil
		},
	}
}

func pipeline(t testing.TB, plugins ...*hooks.Funcs) (*Pipeline, *hookbus.Bus) {
	return pipelineOver(t, wiretest.Ways[0], plugins...)
}

// pipelineOver builds a pipeline whose plugins are reached through way:
// in-process, or through the real protocol of that version.
func pipelineOver(t testing.TB, way wiretest.Way, plugins ...*hooks.Funcs) (*Pipeline, *hookbus.Bus) {
	t.Helper()
	ps := make([]hooks.Plugin, len(plugins))
	for i, p := range plugins {
		ps[i] = wiretest.Over(t, way, p)
	}
	return pipelineOf(t, ps...)
}

// pipelineOf builds a pipeline over plugins as given, with the upper tool.
func pipelineOf(t testing.TB, plugins ...hooks.Plugin) (*Pipeline, *hookbus.Bus) {
	t.Helper()
	reg, err := NewRegistry(upper())
	if err != nil {
		t.Fatal(err)
	}
	if len(plugins) == 0 {
		return &Pipeline{Registry: reg}, nil
	}
	bus := bustest.New(t, plugins...)
	return &Pipeline{Registry: reg, Bus: bus}, bus
}

// overEveryWay runs test once per way a plugin can be reached.
func overEveryWay(t *testing.T, test func(t *testing.T, way wiretest.Way)) {
	for _, way := range wiretest.Ways {
		t.Run(way.Name, func(t *testing.T) { test(t, way) })
	}
}

func run(p *Pipeline, name, args string) Outcome {
	return p.Run(context.Background(), "s", hooks.ToolCall{ID: "c1", Name: name, Arguments: json.RawMessage(args)})
}

func TestNativeDispatch(t *testing.T) {
	p, _ := pipeline(t)
	cases := []struct {
		name, tool, args string
		path             Path
		isError          bool
		contains         string
	}{
		{"ok", "upper", `{"text":"hi"}`, PathNative, false, `{"text":"HI"}`},
		{"empty args mean {}", "upper", ``, PathRejected, true, `missing required property`},
		{"invalid JSON", "upper", `{"text":`, PathRejected, true, "not a valid JSON object"},
		{"not an object", "upper", `["hi"]`, PathRejected, true, "not a valid JSON object"},
		{"null", "upper", `null`, PathRejected, true, "not a valid JSON object"},
		{"schema: wrong type", "upper", `{"text":3}`, PathRejected, true, "text"},
		{"schema: extra property", "upper", `{"text":"a","x":1}`, PathRejected, true, "x"},
		{"unknown tool", "nope", `{}`, PathRejected, true, `unknown tool \"nope\"`},
		{"tool error", "upper", `{"text":"fail"}`, PathNative, true, "cannot uppercase fail"},
		{"tool panic", "upper", `{"text":"panic"}`, PathNative, true, "crashed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := run(p, c.tool, c.args)
			if out.Path != c.path || out.Result.IsError != c.isError || !strings.Contains(out.Result.Content, c.contains) {
				t.Fatalf("got path %s error %v content %s", out.Path, out.Result.IsError, out.Result.Content)
			}
			if c.isError {
				var body map[string]string
				if err := json.Unmarshal([]byte(out.Result.Content), &body); err != nil || body["error"] == "" {
					t.Fatalf("error result is not {\"error\": ...}: %s", out.Result.Content)
				}
				if out.Status != hooks.StatusError {
					t.Fatalf("status %s", out.Status)
				}
			}
		})
	}
}

func TestPipelineOrderAndStatuses(t *testing.T) {
	overEveryWay(t, testPipelineOrderAndStatuses)
}

func testPipelineOrderAndStatuses(t *testing.T, way wiretest.Way) {
	var mu sync.Mutex
	var order []string
	var observed []hooks.ToolCallOutcome
	note := func(s string) { mu.Lock(); order = append(order, s); mu.Unlock() }
	p, bus := pipelineOver(t, way, &hooks.Funcs{
		Name: "all",
		PreToolCallFunc: func(_ context.Context, r hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
			note("pre")
			if strings.Contains(string(r.Arguments), "blockme") {
				return &hooks.PreToolCallDecision{Block: &hooks.Block{Message: "not that"}}, nil
			}
			return &hooks.PreToolCallDecision{ModifiedArgs: json.RawMessage(strings.Replace(string(r.Arguments), "mod", "modified", 1))}, nil
		},
		PreToolCallCanProvideResultFunc: func(_ context.Context, r hooks.ToolCallRequest) (*hooks.ToolResult, error) {
			note("provide")
			if strings.Contains(string(r.Arguments), "cached") {
				return &hooks.ToolResult{Content: `"from cache"`}, nil
			}
			return nil, nil
		},
		PostToolCallFunc: func(_ context.Context, ev hooks.ToolCallOutcome) error {
			note("post")
			mu.Lock()
			observed = append(observed, ev)
			mu.Unlock()
			return nil
		},
		TransformToolResultFunc: func(_ context.Context, ev hooks.ToolCallOutcome) (*hooks.ToolResult, error) {
			note("transform")
			return &hooks.ToolResult{Content: "[" + ev.Result.Content + "]", IsError: ev.Result.IsError}, nil
		},
	})
	flush := func() { bus.Flush(context.Background()) }

	out := run(p, "upper", `{"text":"mod"}`)
	flush()
	if out.Path != PathNative || out.Result.Content != `[{"text":"MODIFIED"}]` || string(out.Call.Arguments) != `{"text":"modified"}` {
		t.Fatalf("native: %+v", out)
	}
	mu.Lock()
	got := strings.Join(order, ",")
	mu.Unlock()
	if got != "pre,provide,post,transform" && got != "pre,provide,transform,post" {
		t.Fatalf("order %s", got)
	}
	if observed[0].Status != hooks.StatusOK || observed[0].Result.Content != `{"text":"MODIFIED"}` {
		t.Fatalf("post_tool_call saw %+v (before transform)", observed[0])
	}

	out = run(p, "upper", `{"text":"cached"}`)
	flush()
	if out.Path != PathProvided || out.AnsweredBy != "all" || out.Status != hooks.ProvidedBy("all") || out.Result.Content != `["from cache"]` {
		t.Fatalf("provided: %+v", out)
	}

	mu.Lock()
	order = nil
	mu.Unlock()
	out = run(p, "upper", `{"text":"blockme"}`)
	flush()
	if out.Path != PathBlocked || out.Status != hooks.StatusBlocked || !out.Result.IsError || !strings.Contains(out.Result.Content, "not that") {
		t.Fatalf("blocked: %+v", out)
	}
	mu.Lock()
	got = strings.Join(order, ",")
	mu.Unlock()
	if strings.Contains(got, "provide") {
		t.Fatal("a blocked call still asked for a provided result")
	}
	if observed[2].Status != hooks.StatusBlocked {
		t.Fatalf("post_tool_call status %s", observed[2].Status)
	}
}

func TestPluginToolWithoutAnswerNamesThePlugin(t *testing.T) {
	overEveryWay(t, testPluginToolWithoutAnswerNamesThePlugin)
}

func testPluginToolWithoutAnswerNamesThePlugin(t *testing.T, way wiretest.Way) {
	p, _ := pipelineOver(t, way, &hooks.Funcs{
		Name:  "kora",
		Tools: []hooks.ToolSpec{{Name: "kora__get_burn"}},
		PreToolCallCanProvideResultFunc: func(context.Context, hooks.ToolCallRequest) (*hooks.ToolResult, error) {
			return nil, hooks.ErrUnavailable
		},
	})
	out := run(p, "kora__get_burn", `{}`)
	if !out.Result.IsError || !strings.Contains(out.Result.Content, `plugin \"kora\"`) {
		t.Fatalf("got %+v", out.Result)
	}
}

func TestNewRegistryRejectsBadTools(t *testing.T) {
	noop := func(context.Context, json.RawMessage) (any, error) { return nil, nil }
	cases := map[string][]Tool{
		"dotted name":   {{Spec: hooks.ToolSpec{Name: "a.b"}, Run: noop}},
		"duplicate":     {{Spec: hooks.ToolSpec{Name: "a"}, Run: noop}, {Spec: hooks.ToolSpec{Name: "a"}, Run: noop}},
		"no run":        {{Spec: hooks.ToolSpec{Name: "a"}}},
		"broken schema": {{Spec: hooks.ToolSpec{Name: "a", InputSchema: json.RawMessage(`{"type":"nonsense"}`)}, Run: noop}},
	}
	for name, tools := range cases {
		if _, err := NewRegistry(tools...); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// BenchmarkToolCallPipeline measures the whole pipeline for one native call:
// with no plugins, and with one in-process plugin on every tool hook that
// abstains, so every stage runs.
func BenchmarkToolCallPipeline(b *testing.B) {
	nop := &hooks.Funcs{
		Name:                            "nop",
		PreToolCallFunc:                 func(context.Context, hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) { return nil, nil },
		PreToolCallCanProvideResultFunc: func(context.Context, hooks.ToolCallRequest) (*hooks.ToolResult, error) { return nil, nil },
		PostToolCallFunc:                func(context.Context, hooks.ToolCallOutcome) error { return nil },
		TransformToolResultFunc:         func(context.Context, hooks.ToolCallOutcome) (*hooks.ToolResult, error) { return nil, nil },
	}
	for _, c := range []struct {
		name    string
		plugins []*hooks.Funcs
	}{{"plugins=0", nil}, {"plugins=1", []*hooks.Funcs{nop}}} {
		b.Run(c.name, func(b *testing.B) {
			p, _ := pipeline(b, c.plugins...)
			call := hooks.ToolCall{ID: "c", Name: "upper", Arguments: json.RawMessage(`{"text":"hi"}`)}
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				p.Run(ctx, "s", call)
			}
		})
	}
}

// A turn cancelled while the guards are asked must not dispatch the call.
func TestCancelledTurnDoesNotDispatch(t *testing.T) {
	overEveryWay(t, testCancelledTurnDoesNotDispatch)
}

func testCancelledTurnDoesNotDispatch(t *testing.T, way wiretest.Way) {
	var ran atomic.Bool
	tool := upper()
	tool.Run = func(context.Context, json.RawMessage) (any, error) { ran.Store(true); return "ran", nil }
	reg, _ := NewRegistry(tool)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	bus, err := hookbus.New([]hookbus.Member{{Plugin: wiretest.Over(t, way, &hooks.Funcs{
		Name: "guard",
		PreToolCallFunc: func(context.Context, hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
			cancel() // the user pressed Ctrl-C while the guard was thinking
			return nil, nil
		},
	})}}, hookbus.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer bus.Close(context.Background())
	p := &Pipeline{Registry: reg, Bus: bus}
	out := p.Run(ctx, "s", hooks.ToolCall{ID: "c", Name: "upper", Arguments: json.RawMessage(`{"text":"x"}`)})
	if ran.Load() || !out.Result.IsError || !strings.Contains(out.Result.Content, "cancelled") {
		t.Fatalf("ran=%v result=%+v", ran.Load(), out.Result)
	}
}
