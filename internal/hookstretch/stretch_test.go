package hookstretch_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/hookstretch"
)

// stageTimeout is each stage's deadline in runStretch, not cut too fine
// for a busy machine.
const stageTimeout = 500 * time.Millisecond

// emitted is one answer RunStretch handed to emit.
var call = hooks.ToolCallRequest{SessionID: "s1", CallID: "c1", Name: "now", Arguments: json.RawMessage(`{}`)}

type emitted struct {
	answer any
	err    error
}

// runStretch runs Run to its end (within a generous bound) and
// returns what it emitted.
func runStretch(t *testing.T, ctx context.Context, p hooks.Plugin, stages ...hooks.Name) []emitted {
	t.Helper()
	req := hookstretch.Request{Call: call}
	for _, h := range stages {
		req.Stages = append(req.Stages, hookstretch.Stage{Hook: h, Timeout: stageTimeout})
	}
	var out []emitted
	within(t, func() {
		hookstretch.Run(ctx, p, req, func(a any, err error) { out = append(out, emitted{a, err}) })
	})
	return out
}

var (
	preProvide          = []hooks.Name{hooks.PreToolCall, hooks.PreToolCallCanProvideResult}
	preProvideTransform = []hooks.Name{hooks.PreToolCall, hooks.PreToolCallCanProvideResult, hooks.TransformToolResult}
	provideTransform    = []hooks.Name{hooks.PreToolCallCanProvideResult, hooks.TransformToolResult}
)

// recorder counts which hooks a plugin was asked.
type recorder struct {
	mu    sync.Mutex
	asked []hooks.Name
}

func (r *recorder) saw(h hooks.Name) {
	r.mu.Lock()
	r.asked = append(r.asked, h)
	r.mu.Unlock()
}

func (r *recorder) count(h hooks.Name) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, a := range r.asked {
		if a == h {
			n++
		}
	}
	return n
}

func TestRunStretchFlowsModifiedArgumentsAndShowsTransformTheProvidedCall(t *testing.T) {
	var provideSaw hooks.ToolCallRequest
	var transformSaw hooks.ToolCallOutcome
	p := &hooks.Funcs{
		Name: "bridge",
		PreToolCallFunc: func(context.Context, hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
			return &hooks.PreToolCallDecision{ModifiedArgs: json.RawMessage(`{"city":"Oslo"}`)}, nil
		},
		PreToolCallCanProvideResultFunc: func(_ context.Context, req hooks.ToolCallRequest) (*hooks.ToolResult, error) {
			provideSaw = req
			return &hooks.ToolResult{Content: "sunny"}, nil
		},
		TransformToolResultFunc: func(_ context.Context, ev hooks.ToolCallOutcome) (*hooks.ToolResult, error) {
			transformSaw = ev
			return &hooks.ToolResult{Content: `"SUNNY"`}, nil
		},
	}
	out := runStretch(t, context.Background(), p, preProvideTransform...)
	if len(out) != 3 {
		t.Fatalf("emitted %d answers, want 3: %+v", len(out), out)
	}
	for i, e := range out {
		if e.err != nil {
			t.Fatalf("stage %d failed: %v", i, e.err)
		}
	}
	if d, ok := out[0].answer.(*hooks.PreToolCallDecision); !ok || string(d.ModifiedArgs) != `{"city":"Oslo"}` {
		t.Fatalf("pre stage answer %#v", out[0].answer)
	}
	if r, ok := out[1].answer.(*hooks.ToolResult); !ok || r.Content != "sunny" {
		t.Fatalf("provide stage answer %#v, want the plugin's own text", out[1].answer)
	}
	if r, ok := out[2].answer.(*hooks.ToolResult); !ok || r.Content != `"SUNNY"` {
		t.Fatalf("transform stage answer %#v", out[2].answer)
	}
	if string(provideSaw.Arguments) != `{"city":"Oslo"}` || provideSaw.CallID != call.CallID {
		t.Fatalf("provide saw %+v, want the modified arguments", provideSaw)
	}
	want := hooks.ToolCallOutcome{
		SessionID: call.SessionID, CallID: call.CallID, Name: call.Name, Arguments: json.RawMessage(`{"city":"Oslo"}`),
		Result: hooks.ToolResult{Content: `"sunny"`}, Status: hooks.ProvidedBy("bridge"),
	}
	got := transformSaw
	got.Duration = 0
	if string(got.Arguments) != string(want.Arguments) {
		t.Fatalf("transform saw arguments %s, want %s", got.Arguments, want.Arguments)
	}
	got.Arguments, want.Arguments = nil, nil
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("transform saw %+v, want %+v", got, want)
	}
	if transformSaw.Duration <= 0 {
		t.Fatalf("transform saw duration %v, want the time the stretch took", transformSaw.Duration)
	}
}

func TestRunStretchStopsWhereTheCallCannotGoOn(t *testing.T) {
	errBoom := errors.New("boom")
	for _, tc := range []struct {
		name   string
		stages []hooks.Name
		pre    func() (*hooks.PreToolCallDecision, error)
		prov   func() (*hooks.ToolResult, error)
		// want: how many answers, whether the last is a failure, and which
		// hooks were asked how often.
		answers   int
		lastErr   error
		asked     map[hooks.Name]int
		lastCheck func(t *testing.T, a any)
	}{
		{name: "block", stages: preProvideTransform,
			pre: func() (*hooks.PreToolCallDecision, error) {
				return &hooks.PreToolCallDecision{Block: &hooks.Block{Message: "no"}}, nil
			},
			answers: 1, asked: map[hooks.Name]int{hooks.PreToolCall: 1},
			lastCheck: func(t *testing.T, a any) {
				if d, ok := a.(*hooks.PreToolCallDecision); !ok || d.Block == nil || d.Block.Message != "no" {
					t.Fatalf("block not emitted: %#v", a)
				}
			}},
		{name: "decision that breaks the rules", stages: preProvide,
			pre: func() (*hooks.PreToolCallDecision, error) {
				return &hooks.PreToolCallDecision{Block: &hooks.Block{}, ModifiedArgs: json.RawMessage(`{}`)}, nil
			},
			answers: 1, asked: map[hooks.Name]int{hooks.PreToolCall: 1}},
		{name: "modified args not an object", stages: preProvide,
			pre: func() (*hooks.PreToolCallDecision, error) {
				return &hooks.PreToolCallDecision{ModifiedArgs: json.RawMessage(`[]`)}, nil
			},
			answers: 1, asked: map[hooks.Name]int{hooks.PreToolCall: 1}},
		{name: "pre fails", stages: preProvideTransform,
			pre:     func() (*hooks.PreToolCallDecision, error) { return nil, errBoom },
			answers: 1, lastErr: errBoom, asked: map[hooks.Name]int{hooks.PreToolCall: 1}},
		{name: "pre panics", stages: preProvide,
			pre:     func() (*hooks.PreToolCallDecision, error) { panic("bug") },
			answers: 1, lastErr: hooks.ErrPanicked, asked: map[hooks.Name]int{hooks.PreToolCall: 1}},
		{name: "provide gives nothing", stages: preProvideTransform,
			prov:    func() (*hooks.ToolResult, error) { return nil, nil },
			answers: 2, asked: map[hooks.Name]int{hooks.PreToolCall: 1, hooks.PreToolCallCanProvideResult: 1},
			lastCheck: func(t *testing.T, a any) {
				if a != nil {
					t.Fatalf("no opinion emitted as %#v, want nil", a)
				}
			}},
		{name: "provide fails", stages: provideTransform,
			prov:    func() (*hooks.ToolResult, error) { return &hooks.ToolResult{Content: "x"}, errBoom },
			answers: 1, lastErr: errBoom, asked: map[hooks.Name]int{hooks.PreToolCallCanProvideResult: 1}},
		{name: "no opinion on pre goes on", stages: preProvideTransform,
			pre:     func() (*hooks.PreToolCallDecision, error) { return nil, nil },
			answers: 3, asked: map[hooks.Name]int{hooks.PreToolCall: 1, hooks.PreToolCallCanProvideResult: 1, hooks.TransformToolResult: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{}
			p := &hooks.Funcs{
				Name: "bridge",
				PreToolCallFunc: func(context.Context, hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
					rec.saw(hooks.PreToolCall)
					if tc.pre != nil {
						return tc.pre()
					}
					return nil, nil
				},
				PreToolCallCanProvideResultFunc: func(context.Context, hooks.ToolCallRequest) (*hooks.ToolResult, error) {
					rec.saw(hooks.PreToolCallCanProvideResult)
					if tc.prov != nil {
						return tc.prov()
					}
					return &hooks.ToolResult{Content: `"r"`}, nil
				},
				TransformToolResultFunc: func(context.Context, hooks.ToolCallOutcome) (*hooks.ToolResult, error) {
					rec.saw(hooks.TransformToolResult)
					return nil, nil
				},
			}
			out := runStretch(t, context.Background(), p, tc.stages...)
			if len(out) != tc.answers {
				t.Fatalf("emitted %d answers, want %d: %+v", len(out), tc.answers, out)
			}
			last := out[len(out)-1]
			switch {
			case tc.lastErr == nil && last.err != nil:
				t.Fatalf("last stage failed: %v", last.err)
			case tc.lastErr != nil && !errors.Is(last.err, tc.lastErr):
				t.Fatalf("last stage error %v, want one wrapping %v", last.err, tc.lastErr)
			case tc.lastErr != nil && last.answer != nil:
				t.Fatalf("a failed stage also emitted answer %#v", last.answer)
			}
			for _, h := range []hooks.Name{hooks.PreToolCall, hooks.PreToolCallCanProvideResult, hooks.TransformToolResult} {
				if n := rec.count(h); n != tc.asked[h] {
					t.Errorf("%s asked %d times, want %d", h, n, tc.asked[h])
				}
			}
			if tc.lastCheck != nil {
				tc.lastCheck(t, last.answer)
			}
		})
	}
}

// A handler that ignores its context must not hold the stretch past the
// stage's deadline, and nothing after it runs.
func TestRunStretchEnforcesEachStagesDeadline(t *testing.T) {
	wait := hang(t)
	rec := &recorder{}
	p := &hooks.Funcs{
		Name: "slow",
		PreToolCallFunc: func(context.Context, hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
			rec.saw(hooks.PreToolCall)
			wait()
			return &hooks.PreToolCallDecision{ModifiedArgs: json.RawMessage(`{"late":true}`)}, nil
		},
		PreToolCallCanProvideResultFunc: func(context.Context, hooks.ToolCallRequest) (*hooks.ToolResult, error) {
			rec.saw(hooks.PreToolCallCanProvideResult)
			return &hooks.ToolResult{Content: "x"}, nil
		},
	}
	out := runStretch(t, context.Background(), p, preProvide...)
	if len(out) != 1 || !errors.Is(out[0].err, context.DeadlineExceeded) {
		t.Fatalf("emitted %+v, want one deadline failure", out)
	}
	if rec.count(hooks.PreToolCallCanProvideResult) != 0 {
		t.Fatal("provide ran after the pre stage timed out")
	}
}

// A cancelled turn must not run a tool: once ctx ends, no provide stage is
// started, and the stretch still ends with a message.
func TestRunStretchNeverStartsAProvideOnceCtxEnded(t *testing.T) {
	t.Run("cancelled before the stretch", func(t *testing.T) {
		rec := &recorder{}
		p := &hooks.Funcs{Name: "p",
			PreToolCallCanProvideResultFunc: func(context.Context, hooks.ToolCallRequest) (*hooks.ToolResult, error) {
				rec.saw(hooks.PreToolCallCanProvideResult)
				return &hooks.ToolResult{Content: "ran"}, nil
			}}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		out := runStretch(t, ctx, p, provideTransform...)
		if len(out) != 1 || !errors.Is(out[0].err, context.Canceled) {
			t.Fatalf("emitted %+v, want one cancellation", out)
		}
		if rec.count(hooks.PreToolCallCanProvideResult) != 0 {
			t.Fatal("a provide ran for a cancelled turn")
		}
	})
	t.Run("cancelled during the pre stage", func(t *testing.T) {
		rec := &recorder{}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		p := &hooks.Funcs{Name: "p",
			PreToolCallFunc: func(context.Context, hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
				cancel() // the host gives up while the guard decides
				return nil, nil
			},
			PreToolCallCanProvideResultFunc: func(context.Context, hooks.ToolCallRequest) (*hooks.ToolResult, error) {
				rec.saw(hooks.PreToolCallCanProvideResult)
				return &hooks.ToolResult{Content: "ran"}, nil
			}}
		out := runStretch(t, ctx, p, preProvide...)
		if rec.count(hooks.PreToolCallCanProvideResult) != 0 {
			t.Fatal("a provide ran for a cancelled turn")
		}
		if len(out) == 0 || !errors.Is(out[len(out)-1].err, context.Canceled) {
			t.Fatalf("emitted %+v, want it to end with a cancellation", out)
		}
	})
}

func TestRunStretchRefusesIllegalStretches(t *testing.T) {
	for _, tc := range []struct {
		name   string
		stages []hookstretch.Stage
	}{
		{"none", nil},
		{"one stage", []hookstretch.Stage{{hooks.PreToolCall, time.Second}}},
		{"out of order", []hookstretch.Stage{{hooks.PreToolCallCanProvideResult, time.Second}, {hooks.PreToolCall, time.Second}}},
		{"a gap", []hookstretch.Stage{{hooks.PreToolCall, time.Second}, {hooks.TransformToolResult, time.Second}}},
		{"not a tool pipeline hook", []hookstretch.Stage{{hooks.PreToolCall, time.Second}, {hooks.PostToolCall, time.Second}}},
		{"stage twice", []hookstretch.Stage{{hooks.PreToolCall, time.Second}, {hooks.PreToolCall, time.Second}, {hooks.PreToolCallCanProvideResult, time.Second}}},
		{"no timeout", []hookstretch.Stage{{hooks.PreToolCall, time.Second}, {hooks.PreToolCallCanProvideResult, 0}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{}
			p := &hooks.Funcs{Name: "p",
				PreToolCallFunc: func(context.Context, hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
					rec.saw(hooks.PreToolCall)
					return nil, nil
				},
				PreToolCallCanProvideResultFunc: func(context.Context, hooks.ToolCallRequest) (*hooks.ToolResult, error) {
					rec.saw(hooks.PreToolCallCanProvideResult)
					return nil, nil
				}}
			var out []emitted
			within(t, func() {
				hookstretch.Run(context.Background(), p, hookstretch.Request{Call: call, Stages: tc.stages},
					func(a any, err error) { out = append(out, emitted{a, err}) })
			})
			if len(out) != 1 || !errors.Is(out[0].err, hookstretch.ErrBadStretch) {
				t.Fatalf("emitted %+v, want one ErrBadStretch failure", out)
			}
			if len(rec.asked) != 0 {
				t.Fatalf("asked %v for an illegal stretch", rec.asked)
			}
		})
	}
}

// An answer of another type than the hook's is malformed, as in Ask.
func TestRunStretchAnswerOfTheWrongTypeIsMalformed(t *testing.T) {
	p := wrongType{}
	out := runStretch(t, context.Background(), p, preProvide...)
	if len(out) != 1 || !errors.Is(out[0].err, hooks.ErrMalformed) {
		t.Fatalf("emitted %+v, want one malformed failure", out)
	}
}

type wrongType struct{}

func (wrongType) Manifest() hooks.Manifest {
	return hooks.Manifest{Name: "wrong", Hooks: []hooks.Name{hooks.PreToolCall}}
}

func (wrongType) Handle(context.Context, hooks.Name, any) (any, error) {
	return &hooks.ToolResult{Content: "not a decision"}, nil
}

// hang blocks until the test ends, ignoring ctx, to prove deadlines are
// enforced on plugins that do not honour them.
func hang(t *testing.T) func() {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	return func() { <-release }
}

// within fails the test if fn does not return in a generous bound: it checks
// that a call returns at all, not how fast.
func within(t *testing.T, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { fn(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("call did not return: the deadline was not enforced")
	}
}

// panickyManifest is a plugin whose Manifest panics: Run reads it outside
// any handler, to check a pre_tool_call decision.
type panickyManifest struct{ *hooks.Funcs }

func (panickyManifest) Manifest() hooks.Manifest { panic("manifest") }

// A panic of the runner itself, not of a handler, reaches Run's caller, on
// its own goroutine, as it did when the stages ran there: the caller's
// recover decides what the host is told.
func TestRunRaisesARunnersPanicOnTheCallersGoroutine(t *testing.T) {
	p := panickyManifest{&hooks.Funcs{Name: "p",
		PreToolCallFunc: func(context.Context, hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
			return &hooks.PreToolCallDecision{ModifiedArgs: json.RawMessage(`{"x":1}`)}, nil
		},
	}}
	req := hookstretch.Request{Call: call}
	for _, h := range preProvide {
		req.Stages = append(req.Stages, hookstretch.Stage{Hook: h, Timeout: stageTimeout})
	}
	var recovered any
	within(t, func() {
		defer func() { recovered = recover() }()
		hookstretch.Run(context.Background(), p, req, func(any, error) {})
	})
	if recovered != "manifest" {
		t.Fatalf("recovered %v, want the runner's panic", recovered)
	}
}
