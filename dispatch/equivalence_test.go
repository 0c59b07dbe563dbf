package dispatch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/hookhost/hookhost/hookbus"
	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/hookstretch"
	"github.com/hookhost/hookhost/internal/wiretest"
)

// noStretch hides a plugin's Stretcher, so the Bus asks it hook by hook.
type noStretch struct{ hooks.Plugin }

func (noStretch) HonoursContext() bool { return true }

// stretchCounter passes a plugin through, counting the stretches it
// accepted, so a test knows the stretched path really ran.
type stretchCounter struct {
	hooks.Plugin
	accepted *atomic.Int64
}

var _ hookstretch.Stretcher = stretchCounter{}

func (c stretchCounter) Stretch(ctx context.Context, req hookstretch.Request) (hookstretch.Stretch, error) {
	s, ok := c.Plugin.(hookstretch.Stretcher)
	if !ok {
		return nil, hookstretch.ErrNoStretch
	}
	st, err := s.Stretch(ctx, req)
	if err == nil {
		c.accepted.Add(1)
	}
	return st, err
}

func (stretchCounter) HonoursContext() bool { return true }

// trio is three plugins around one ("all") that serves pre_tool_call,
// pre_tool_call_can_provide_result and transform_tool_result: a guard asked
// before it and a transformer asked after it, so that "all" is the last
// pre_tool_call and the first provide and transform subscriber, the case a
// ToolRun may ask in one exchange. What each does depends on the words in
// the call's arguments.
func trio(observed *[]string, mu *sync.Mutex) []*hooks.Funcs {
	has := func(args []byte, word string) bool { return strings.Contains(string(args), word) }
	guard := &hooks.Funcs{
		Name: "guard",
		PreToolCallFunc: func(_ context.Context, r hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
			switch {
			case has(r.Arguments, "guard-blocks"):
				return &hooks.PreToolCallDecision{Block: &hooks.Block{Message: "guard says no"}}, nil
			case has(r.Arguments, "guard-breaks"):
				return &hooks.PreToolCallDecision{ModifiedArgs: json.RawMessage(`{"txt":"broken"}`)}, nil
			case has(r.Arguments, "guard-mods"):
				return &hooks.PreToolCallDecision{ModifiedArgs: json.RawMessage(strings.Replace(string(r.Arguments), "guard-mods", "guarded", 1))}, nil
			}
			return nil, nil
		},
	}
	all := &hooks.Funcs{
		Name: "all",
		// Its own tool it does not guard, so for all__echo it is asked
		// provide and transform only, the other shape of a stretch.
		HookMatchers: map[hooks.Name][]string{hooks.PreToolCall: {"upper", "nope"}},
		Tools:        []hooks.ToolSpec{{Name: "all__echo", Description: "echoes text", InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}`)}},
		PreToolCallFunc: func(_ context.Context, r hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
			switch {
			case has(r.Arguments, "blockme"):
				return &hooks.PreToolCallDecision{Block: &hooks.Block{Message: "not that"}}, nil
			case has(r.Arguments, "fail-pre"):
				return nil, errors.New("pre broke")
			case has(r.Arguments, "mod"):
				return &hooks.PreToolCallDecision{ModifiedArgs: json.RawMessage(strings.Replace(string(r.Arguments), "mod", "modified", 1))}, nil
			}
			return nil, nil
		},
		PreToolCallCanProvideResultFunc: func(_ context.Context, r hooks.ToolCallRequest) (*hooks.ToolResult, error) {
			switch {
			case has(r.Arguments, "fail-provide"):
				return nil, errors.New("provide broke")
			case has(r.Arguments, "cached"):
				return &hooks.ToolResult{Content: `"from cache"`}, nil
			case has(r.Arguments, "sunny"):
				return &hooks.ToolResult{Content: "sunny"}, nil
			case r.Name == "all__echo":
				return &hooks.ToolResult{Content: string(r.Arguments)}, nil
			}
			return nil, nil
		},
		TransformToolResultFunc: func(_ context.Context, ev hooks.ToolCallOutcome) (*hooks.ToolResult, error) {
			switch {
			case has(ev.Arguments, "keep"):
				return nil, nil
			case has(ev.Arguments, "fail-transform"):
				return nil, errors.New("transform broke")
			}
			return &hooks.ToolResult{Content: fmt.Sprintf("[%s %s]", ev.Status, ev.Result.Content), IsError: ev.Result.IsError}, nil
		},
		PostToolCallFunc: func(_ context.Context, ev hooks.ToolCallOutcome) error {
			mu.Lock()
			*observed = append(*observed, fmt.Sprintf("%s %s %s %s %v", ev.Name, ev.Arguments, ev.Status, ev.Result.Content, ev.Result.IsError))
			mu.Unlock()
			return nil
		},
	}
	after := &hooks.Funcs{
		Name: "after",
		TransformToolResultFunc: func(_ context.Context, ev hooks.ToolCallOutcome) (*hooks.ToolResult, error) {
			if has(ev.Arguments, "keep") {
				return nil, nil
			}
			return &hooks.ToolResult{Content: ev.Result.Content + "!", IsError: ev.Result.IsError}, nil
		},
	}
	return []*hooks.Funcs{guard, all, after}
}

// equivalenceCalls cover every rule of the tool pipeline: blocks before
// and at the stretched plugin, modifies before and at it, provided and
// native results, failures at each stage, a plain-text answer, transforms
// applied and declined, a plugin tool with good and bad arguments.
var equivalenceCalls = []hooks.ToolCall{
	{ID: "1", Name: "upper", Arguments: json.RawMessage(`{"text":"hi"}`)},
	{ID: "2", Name: "upper", Arguments: json.RawMessage(`{"text":"mod"}`)},
	{ID: "3", Name: "upper", Arguments: json.RawMessage(`{"text":"guard-mods mod"}`)},
	{ID: "4", Name: "upper", Arguments: json.RawMessage(`{"text":"guard-blocks"}`)},
	{ID: "5", Name: "upper", Arguments: json.RawMessage(`{"text":"blockme"}`)},
	{ID: "6", Name: "upper", Arguments: json.RawMessage(`{"text":"cached"}`)},
	{ID: "7", Name: "upper", Arguments: json.RawMessage(`{"text":"mod cached"}`)},
	{ID: "8", Name: "upper", Arguments: json.RawMessage(`{"text":"sunny"}`)},
	{ID: "9", Name: "upper", Arguments: json.RawMessage(`{"text":"fail-pre cached"}`)},
	{ID: "10", Name: "upper", Arguments: json.RawMessage(`{"text":"fail-provide"}`)},
	{ID: "11", Name: "upper", Arguments: json.RawMessage(`{"text":"cached fail-transform"}`)},
	{ID: "12", Name: "upper", Arguments: json.RawMessage(`{"text":"cached keep"}`)},
	{ID: "13", Name: "upper", Arguments: json.RawMessage(`{"text":"fail"}`)},
	{ID: "14", Name: "upper", Arguments: json.RawMessage(`{"text":3}`)},
	{ID: "15", Name: "all__echo", Arguments: json.RawMessage(`{"text":"echo"}`)},
	{ID: "16", Name: "all__echo", Arguments: json.RawMessage(`{"text":"guard-mods"}`)},
	{ID: "17", Name: "all__echo", Arguments: json.RawMessage(`{"txt":"typo"}`)},
	{ID: "18", Name: "all__echo", Arguments: json.RawMessage(`{"text":"guard-blocks"}`)},
	{ID: "19", Name: "all__echo", Arguments: json.RawMessage(`{"text":"guard-breaks"}`)},
	{ID: "20", Name: "all__echo", Arguments: json.RawMessage(`{"text":"echo keep"}`)},
	{ID: "21", Name: "all__echo", Arguments: json.RawMessage(`{"text":"fail-provide"}`)},
	{ID: "22", Name: "nope", Arguments: json.RawMessage(`{}`)},
}

// pipelineRecord is everything one run of equivalenceCalls shows.
type pipelineRecord struct {
	outcomes []Outcome
	observed []string
	stats    []hookbus.HookStats
	// stretches is how many stretches the plugins accepted: the one
	// thing allowed to differ.
	stretches int64
}

// runEquivalence runs equivalenceCalls through trio's plugins reached
// through way, each wrapped by wrap (nil: counted, stretches allowed).
func runEquivalence(t *testing.T, wrap func(hooks.Plugin) hooks.Plugin, way wiretest.Way) pipelineRecord {
	t.Helper()
	var mu sync.Mutex
	var rec pipelineRecord
	var accepted atomic.Int64
	if wrap == nil {
		wrap = func(p hooks.Plugin) hooks.Plugin { return stretchCounter{Plugin: p, accepted: &accepted} }
	}
	var plugins []hooks.Plugin
	for _, f := range trio(&rec.observed, &mu) {
		plugins = append(plugins, wrap(wiretest.Over(t, way, f)))
	}
	p, bus := pipelineOf(t, plugins...)
	for _, c := range equivalenceCalls {
		out := p.Run(context.Background(), "s", c)
		out.Duration = 0 // the one thing that differs between runs
		rec.outcomes = append(rec.outcomes, out)
	}
	bus.Flush(context.Background())
	mu.Lock()
	rec.observed = append([]string(nil), rec.observed...)
	mu.Unlock()
	rec.stats = bus.Stats().Hooks
	rec.stretches = accepted.Load()
	return rec
}

// The tool pipeline's rules give the same outcome whichever way the
// plugins are reached, and, over protocol v2, whether or not the host asks
// a plugin several stages of a call in one exchange: the same results,
// the same plugins blocking, providing, modifying and transforming, the
// same events observed, the same calls and failures counted per hook.
func TestPipelineRulesAgreeOverEveryWayAndStretch(t *testing.T) {
	want := runEquivalence(t, nil, wiretest.Ways[0])
	check := func(t *testing.T, got pipelineRecord) {
		t.Helper()
		for i := range want.outcomes {
			if !reflect.DeepEqual(got.outcomes[i], want.outcomes[i]) {
				t.Errorf("call %s %s:\n got  %+v\n want %+v", equivalenceCalls[i].Name, equivalenceCalls[i].Arguments, got.outcomes[i], want.outcomes[i])
			}
		}
		if !reflect.DeepEqual(got.observed, want.observed) {
			t.Errorf("post_tool_call saw\n %q\nwant\n %q", got.observed, want.observed)
		}
		if !reflect.DeepEqual(got.stats, want.stats) {
			t.Errorf("stats\n %+v\nwant\n %+v", got.stats, want.stats)
		}
	}
	// The in-process record must itself show every rule at work, or the
	// comparisons below would prove little.
	paths := map[Path]int{}
	for _, o := range want.outcomes {
		paths[o.Path]++
	}
	if paths[PathBlocked] < 3 || paths[PathProvided] < 5 || paths[PathNative] < 3 || paths[PathRejected] < 2 {
		t.Fatalf("the calls do not cover every path: %v", paths)
	}
	for _, way := range wiretest.Wire {
		t.Run(way.Name, func(t *testing.T) {
			got := runEquivalence(t, nil, way)
			check(t, got)
			// Over v2 the native calls that reach "all" after the guard,
			// and the calls of its own tool with valid arguments, go
			// through a stretch; v1 cannot stretch.
			if way.Version == 2 && got.stretches < 13 {
				t.Errorf("only %d stretches over v2: the stretched path was hardly taken", got.stretches)
			}
			if way.Version == 1 && got.stretches != 0 {
				t.Errorf("%d stretches over v1", got.stretches)
			}
		})
		t.Run(way.Name+"-unstretched", func(t *testing.T) {
			check(t, runEquivalence(t, func(p hooks.Plugin) hooks.Plugin { return noStretch{p} }, way))
		})
	}
}
