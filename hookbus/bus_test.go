package hookbus_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookhost/hookhost/hookbus"
	"github.com/hookhost/hookhost/hooks"
)

func provider(name string, content string) *hooks.Funcs {
	return &hooks.Funcs{Name: name, PreToolCallCanProvideResultFunc: func(context.Context, hooks.ToolCallRequest) (*hooks.ToolResult, error) {
		return &hooks.ToolResult{Content: content}, nil
	}}
}

func TestNilBusFiresNothing(t *testing.T) {
	var b *hookbus.Bus
	if r := b.PreToolCallCanProvideResult(context.Background(), call); r != nil {
		t.Fatalf("nil bus provided %v", r)
	}
	out := b.PreToolCall(context.Background(), call)
	if out.Blocked || string(out.Arguments) != "{}" {
		t.Fatalf("nil bus changed the call: %+v", out)
	}
	text, by := b.TransformLLMOutput(context.Background(), hooks.LLMOutput{Text: "x"})
	if text != "x" || by != nil {
		t.Fatalf("nil bus transformed output: %q %v", text, by)
	}
	run := b.StartToolCall(call)
	if out := run.PreToolCall(context.Background()); out.Blocked || string(out.Arguments) != "{}" {
		t.Fatalf("nil bus's run changed the call: %+v", out)
	}
	if r := run.ProvideResult(context.Background()); r != nil {
		t.Fatalf("nil bus's run provided %v", r)
	}
	run.Done(hooks.ToolCallOutcome{})
	if res, by := run.Transform(context.Background(), hooks.ToolCallOutcome{Result: hooks.ToolResult{Content: "r"}}); res.Content != "r" || by != nil {
		t.Fatalf("nil bus's run transformed: %+v %v", res, by)
	}
	run.Close()
	b.OnSessionStart(hooks.SessionStart{})
	b.PostToolCall(hooks.ToolCallOutcome{})
	if b.Stats().Calls() != 0 {
		t.Fatal("nil bus counted calls")
	}
}

func TestUnsubscribedHooksAndUnmatchedToolsCostNoCall(t *testing.T) {
	eachWay(t, func(t *testing.T, r rig) {
		p := &hooks.Funcs{
			Name:     "kora",
			Matchers: []string{"kora__*"},
			PreToolCallCanProvideResultFunc: func(context.Context, hooks.ToolCallRequest) (*hooks.ToolResult, error) {
				return &hooks.ToolResult{Content: "kora"}, nil
			},
		}
		b := newBus(t, r.in(p))
		ctx := context.Background()
		if res := b.PreToolCallCanProvideResult(ctx, call); res != nil {
			t.Fatalf("plugin answered a tool outside its matchers: %+v", res)
		}
		b.PreToolCall(ctx, call)
		b.TransformLLMOutput(ctx, hooks.LLMOutput{Text: "x"})
		if n := b.Stats().Calls(); n != 0 {
			t.Fatalf("made %d calls, want 0", n)
		}
		kc := call
		kc.Name = "kora__get_burn"
		if res := b.PreToolCallCanProvideResult(ctx, kc); res == nil || res.Plugin != "kora" {
			t.Fatalf("matching tool not provided: %+v", res)
		}
		if !b.Subscribed(hooks.PreToolCallCanProvideResult, "kora__x") || b.Subscribed(hooks.PreToolCallCanProvideResult, "now") || b.Subscribed(hooks.PreToolCall, "kora__x") {
			t.Fatal("Subscribed disagrees with matchers and manifest")
		}
	})
}

func TestProvideResultFirstNonNilWins(t *testing.T) {
	eachWay(t, func(t *testing.T, r rig) {
		var thirdCalled atomic.Bool
		third := provider("third", "C")
		inner := third.PreToolCallCanProvideResultFunc
		third.PreToolCallCanProvideResultFunc = func(ctx context.Context, req hooks.ToolCallRequest) (*hooks.ToolResult, error) {
			thirdCalled.Store(true)
			return inner(ctx, req)
		}
		b := newBus(t,
			r.in(&hooks.Funcs{Name: "abstains", PreToolCallCanProvideResultFunc: func(context.Context, hooks.ToolCallRequest) (*hooks.ToolResult, error) { return nil, nil }}),
			r.in(provider("second", "B")),
			r.in(third),
		)
		res := b.PreToolCallCanProvideResult(context.Background(), call)
		if res == nil || res.Plugin != "second" || res.Content != "B" {
			t.Fatalf("got %+v, want second's result B", res)
		}
		if thirdCalled.Load() {
			t.Fatal("a lower-priority plugin was asked after a result was found")
		}
	})
}

// failures are the ways a plugin call fails that a test can cause.
var failures = []hookbus.FailureKind{hookbus.KindError, hookbus.KindPanic, hookbus.KindTimeout, hookbus.KindUnavailable}

// fail returns a handler body failing the given way (unavailable is the
// host adapter's report: see rig.down).
func fail(t *testing.T, kind hookbus.FailureKind) func() error {
	wait := hang(t)
	return func() error {
		switch kind {
		case hookbus.KindPanic:
			panic("handler bug")
		case hookbus.KindTimeout:
			wait()
			return nil
		}
		return errors.New("handler error")
	}
}

// broken puts p on the Bus failing the given way. Its deadlines are short
// only when the failure is a timeout, for the test to wait it out; any
// other failure gets the default deadline, so that a quick failure on a
// busy machine is never taken for a timeout.
func (r rig) broken(p hooks.Plugin, kind hookbus.FailureKind, opts hookbus.Options) hookbus.Member {
	if kind == hookbus.KindTimeout {
		opts.Timeout, opts.ToolTimeout = short.Timeout, short.ToolTimeout
	} else {
		opts.Timeout, opts.ToolTimeout = 0, 0
	}
	if kind == hookbus.KindUnavailable {
		return r.down(p, opts)
	}
	return r.with(p, opts)
}

// failingProvider is a provider that fails provide-result the given way;
// what it would have said along with the failure must never be used.
func failingProvider(t *testing.T, kind hookbus.FailureKind) *hooks.Funcs {
	f := fail(t, kind)
	return &hooks.Funcs{Name: "broken", PreToolCallCanProvideResultFunc: func(context.Context, hooks.ToolCallRequest) (*hooks.ToolResult, error) {
		return &hooks.ToolResult{Content: "ignored with the failure"}, f()
	}}
}

func TestEveryFailureFallsThroughToTheNextPlugin(t *testing.T) {
	eachWay(t, func(t *testing.T, r rig) {
		for _, kind := range failures {
			t.Run(kind.String(), func(t *testing.T) {
				r := r.sub(t)
				b := newBus(t, r.broken(failingProvider(t, kind), kind, hookbus.Options{}), r.in(provider("backup", "B")))
				var res *hookbus.ProvidedResult
				within(t, func() { res = b.PreToolCallCanProvideResult(context.Background(), call) })
				if res == nil || res.Plugin != "backup" {
					t.Fatalf("got %+v, want backup's result", res)
				}
				if n := b.Stats().Failures("broken", hooks.PreToolCallCanProvideResult, kind); n != 1 {
					t.Fatalf("%s failures counted %d, want 1 (stats %+v)", kind, n, b.Stats().Hooks)
				}
			})
		}
	})
}

func TestEveryFailureAloneMeansNativeDispatch(t *testing.T) {
	eachWay(t, func(t *testing.T, r rig) {
		for _, kind := range failures {
			t.Run(kind.String(), func(t *testing.T) {
				r := r.sub(t)
				b := newBus(t, r.broken(failingProvider(t, kind), kind, hookbus.Options{}))
				within(t, func() {
					if res := b.PreToolCallCanProvideResult(context.Background(), call); res != nil {
						t.Errorf("failed plugin produced %+v", res)
					}
				})
			})
		}
	})
}

func TestToolTimeoutAppliesOnlyToProvideResult(t *testing.T) {
	eachWay(t, func(t *testing.T, r rig) {
		// A provider slower than timeout but within tool_timeout still
		// answers.
		slow := &hooks.Funcs{
			Name: "slow",
			PreToolCallCanProvideResultFunc: func(ctx context.Context, _ hooks.ToolCallRequest) (*hooks.ToolResult, error) {
				select {
				case <-time.After(100 * time.Millisecond):
					return &hooks.ToolResult{Content: "done"}, nil
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			},
			PreToolCallFunc: func(ctx context.Context, _ hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
				select {
				case <-time.After(100 * time.Millisecond):
					return &hooks.PreToolCallDecision{Block: &hooks.Block{Message: "late"}}, nil
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			},
		}
		b := newBus(t, r.with(slow, hookbus.Options{Timeout: 10 * time.Millisecond, ToolTimeout: 5 * time.Second}))
		if res := b.PreToolCallCanProvideResult(context.Background(), call); res == nil || res.Content != "done" {
			t.Fatalf("provide-result did not get tool_timeout: %+v", res)
		}
		if out := b.PreToolCall(context.Background(), call); out.Blocked {
			t.Fatal("pre_tool_call got tool_timeout instead of timeout")
		}
		if b.Stats().Failures("slow", hooks.PreToolCall, hookbus.KindTimeout) != 1 {
			t.Fatal("pre_tool_call timeout not counted")
		}
	})
}

// modifier adds key to the arguments, valued at how many keys were there
// before it, so the result shows the order modifies applied in.
func modifier(name string, key string) *hooks.Funcs {
	return &hooks.Funcs{Name: name, PreToolCallFunc: modify(key)}
}

func modify(key string) func(context.Context, hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
	return func(_ context.Context, req hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
		var m map[string]any
		if err := json.Unmarshal(req.Arguments, &m); err != nil {
			return nil, err
		}
		m[key] = len(m)
		args, _ := json.Marshal(m)
		return &hooks.PreToolCallDecision{ModifiedArgs: args}, nil
	}
}

func blocker(name, msg string) *hooks.Funcs {
	return &hooks.Funcs{Name: name, PreToolCallFunc: block(msg)}
}

func block(msg string) func(context.Context, hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
	return func(context.Context, hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
		return &hooks.PreToolCallDecision{Block: &hooks.Block{Message: msg}}, nil
	}
}

func TestPreToolCallModifiesApplyInOrder(t *testing.T) {
	eachWay(t, func(t *testing.T, r rig) {
		b := newBus(t, r.in(modifier("first", "a")), r.in(modifier("second", "b")))
		out := b.PreToolCall(context.Background(), call)
		if out.Blocked {
			t.Fatal("blocked")
		}
		// second saw first's change: b == 1 only if "a" was already there.
		if got := string(out.Arguments); got != `{"a":0,"b":1}` {
			t.Fatalf("args %s, want {\"a\":0,\"b\":1}", got)
		}
		if strings.Join(out.ModifiedBy, ",") != "first,second" {
			t.Fatalf("ModifiedBy %v", out.ModifiedBy)
		}
	})
}

func TestPreToolCallBlockBeatsModify(t *testing.T) {
	eachWay(t, func(t *testing.T, r rig) {
		t.Run("lower priority block beats higher priority modify", func(t *testing.T) {
			r := r.sub(t)
			b := newBus(t, r.in(modifier("mod", "a")), r.in(blocker("guard", "no")))
			out := b.PreToolCall(context.Background(), call)
			if !out.Blocked || out.BlockedBy != "guard" || out.Message != "no" {
				t.Fatalf("got %+v, want blocked by guard", out)
			}
		})
		t.Run("a block stops the round", func(t *testing.T) {
			r := r.sub(t)
			var asked atomic.Bool
			late := modifier("late", "a")
			inner := late.PreToolCallFunc
			late.PreToolCallFunc = func(ctx context.Context, req hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
				asked.Store(true)
				return inner(ctx, req)
			}
			b := newBus(t, r.in(blocker("guard", "")), r.in(late))
			out := b.PreToolCall(context.Background(), call)
			if !out.Blocked || asked.Load() {
				t.Fatalf("blocked=%v, later plugin asked=%v", out.Blocked, asked.Load())
			}
			if !strings.Contains(out.Message, `"guard"`) {
				t.Fatalf("empty block message not defaulted: %q", out.Message)
			}
		})
	})
}

func TestFailClosedGuard(t *testing.T) {
	eachWay(t, func(t *testing.T, r rig) {
		for _, kind := range failures {
			t.Run(kind.String(), func(t *testing.T) {
				r := r.sub(t)
				f := fail(t, kind)
				guard := &hooks.Funcs{Name: "guard", PreToolCallFunc: func(context.Context, hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
					return nil, f()
				}}
				opts := hookbus.Options{Timeout: 50 * time.Millisecond, FailClosed: true}
				b := newBus(t, r.broken(guard, kind, opts), r.in(modifier("after", "x")))
				var out hookbus.PreToolCallOutcome
				within(t, func() { out = b.PreToolCall(context.Background(), call) })
				if !out.Blocked || out.BlockedBy != "guard" || !strings.Contains(out.Message, "fail_closed") {
					t.Fatalf("fail_closed guard failure did not block: %+v", out)
				}
				var gf *hookbus.GuardFailedError
				if !errors.As(out.Err, &gf) || gf.Plugin != "guard" || gf.Kind != kind || out.Message != gf.Error() {
					t.Fatalf("block's Err %#v does not say which guard failed how", out.Err)
				}
				if kind == hookbus.KindUnavailable && (!errors.Is(out.Err, hooks.ErrUnavailable) || !strings.Contains(out.Message, hooks.ErrUnavailable.Error())) {
					t.Fatalf("a guard that is down does not say so: %v", out.Err)
				}

				opts.FailClosed = false
				open := newBus(t, r.broken(guard, kind, opts), r.in(modifier("after", "x")))
				within(t, func() { out = open.PreToolCall(context.Background(), call) })
				if out.Blocked || out.Err != nil {
					t.Fatalf("fail-open guard failure blocked: %+v", out)
				}
			})
		}
		t.Run("malformed decision of a fail_closed guard blocks", func(t *testing.T) {
			r := r.sub(t)
			guard := &hooks.Funcs{Name: "guard", PreToolCallFunc: func(context.Context, hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
				return &hooks.PreToolCallDecision{Block: &hooks.Block{}, ModifiedArgs: json.RawMessage(`{}`)}, nil
			}}
			b := newBus(t, r.with(guard, hookbus.Options{FailClosed: true}))
			out := b.PreToolCall(context.Background(), call)
			if !out.Blocked || !errors.Is(out.Err, hooks.ErrMalformed) {
				t.Fatalf("malformed answer from fail_closed guard did not block: %+v", out)
			}
		})
		t.Run("fail_closed does not extend to other hooks", func(t *testing.T) {
			r := r.sub(t)
			p := failingProvider(t, hookbus.KindError)
			p.Name = "guard"
			b := newBus(t, r.with(p, hookbus.Options{FailClosed: true}))
			if out := b.PreToolCall(context.Background(), call); out.Blocked {
				t.Fatal("a plugin without pre_tool_call blocked")
			}
			if res := b.PreToolCallCanProvideResult(context.Background(), call); res != nil {
				t.Fatalf("failed provider produced %+v", res)
			}
		})
	})
}

// A cancelled turn is not the guard's fault (no WARN), but a fail_closed
// guard that did not answer still blocks: no answer is no approval.
func TestCallerCancellationIsNotThePluginsFault(t *testing.T) {
	eachWay(t, func(t *testing.T, r rig) {
		wait := hang(t)
		entered := make(chan struct{}, 1)
		var buf syncBuffer
		guard := &hooks.Funcs{Name: "guard", PreToolCallFunc: func(context.Context, hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
			entered <- struct{}{}
			wait()
			return nil, nil
		}}
		b := newBusConfig(t, hookbus.Config{Logger: testLogger(&buf)}, r.with(guard, hookbus.Options{FailClosed: true}))
		ctx, cancel := context.WithCancel(context.Background())
		go func() { <-entered; cancel() }()
		var out hookbus.PreToolCallOutcome
		within(t, func() { out = b.PreToolCall(ctx, call) })
		if !out.Blocked {
			t.Fatal("a fail_closed guard cut short by cancellation let the call through")
		}
		if b.Stats().Failures("guard", hooks.PreToolCall, hookbus.KindCancelled) != 1 {
			t.Fatalf("cancellation not counted as cancelled: %+v", b.Stats().Hooks)
		}
		if log := buf.String(); strings.Contains(log, "WARN") || strings.Contains(log, "warn") {
			t.Fatalf("cancellation blamed on the plugin: %s", log)
		}
	})
}

func TestMalformedResultsCountAsNil(t *testing.T) {
	ctx := context.Background()
	eachWay(t, func(t *testing.T, r rig) {
		t.Run("pre_tool_call block and modify together", func(t *testing.T) {
			r := r.sub(t)
			bad := &hooks.Funcs{Name: "bad", PreToolCallFunc: func(context.Context, hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
				return &hooks.PreToolCallDecision{Block: &hooks.Block{Message: "x"}, ModifiedArgs: json.RawMessage(`{"a":1}`)}, nil
			}}
			b := newBus(t, r.in(bad))
			if out := b.PreToolCall(ctx, call); out.Blocked || string(out.Arguments) != "{}" {
				t.Fatalf("malformed decision applied: %+v", out)
			}
			if b.Stats().Failures("bad", hooks.PreToolCall, hookbus.KindMalformed) != 1 {
				t.Fatal("not counted malformed")
			}
		})
		t.Run("modified args not an object", func(t *testing.T) {
			r := r.sub(t)
			bad := &hooks.Funcs{Name: "bad", PreToolCallFunc: func(context.Context, hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
				return &hooks.PreToolCallDecision{ModifiedArgs: json.RawMessage(`[1,2]`)}, nil
			}}
			b := newBus(t, r.in(bad))
			if out := b.PreToolCall(ctx, call); string(out.Arguments) != "{}" {
				t.Fatalf("non-object args applied: %s", out.Arguments)
			}
		})
		t.Run("tool list with an illegal name falls to the next plugin", func(t *testing.T) {
			r := r.sub(t)
			bad := &hooks.Funcs{Name: "bad", PreToolListFinalizedFunc: func(context.Context, hooks.ToolListRequest) (*hooks.ToolListOverride, error) {
				return &hooks.ToolListOverride{Tools: []hooks.ToolSpec{{Name: "has.dot"}}}, nil
			}}
			good := &hooks.Funcs{Name: "good", PreToolListFinalizedFunc: func(context.Context, hooks.ToolListRequest) (*hooks.ToolListOverride, error) {
				return &hooks.ToolListOverride{Tools: []hooks.ToolSpec{{Name: "only"}}}, nil
			}}
			b := newBus(t, r.in(bad), r.in(good))
			ch := b.PreToolListFinalized(ctx, hooks.ToolListRequest{})
			if ch == nil || ch.Plugin != "good" || len(ch.Tools) != 1 {
				t.Fatalf("got %+v, want good's list", ch)
			}
		})
		t.Run("request patch with empty model", func(t *testing.T) {
			r := r.sub(t)
			bad := &hooks.Funcs{Name: "bad", PreAPIRequestMutableFunc: func(context.Context, hooks.APIRequest) (*hooks.RequestPatch, error) {
				return &hooks.RequestPatch{Model: str("")}, nil
			}}
			b := newBus(t, r.in(bad))
			req, changes := b.PreAPIRequestMutable(ctx, hooks.APIRequest{Request: hooks.ModelRequest{Model: "m"}})
			if req.Model != "m" || changes != nil {
				t.Fatalf("malformed patch applied: %+v %+v", req, changes)
			}
		})
		t.Run("reissue with temperature out of range", func(t *testing.T) {
			r := r.sub(t)
			hot := 9.0
			bad := &hooks.Funcs{Name: "bad", PostLLMCallCanReissueFunc: func(context.Context, hooks.LLMCall) (*hooks.Reissue, error) {
				return &hooks.Reissue{Patch: hooks.RequestPatch{Temperature: &hot}}, nil
			}}
			b := newBus(t, r.in(bad))
			if res := b.PostLLMCallCanReissue(ctx, hooks.LLMCall{}); res != nil {
				t.Fatalf("malformed reissue accepted: %+v", res)
			}
		})
	})
}

// pre_api_request_mutable merges in priority order and the first write to
// a field wins: a plugin sees the request as patched so far and sets only
// the fields nobody above it set.
func TestMutateRequestFirstWritePerFieldWins(t *testing.T) {
	eachWay(t, func(t *testing.T, r rig) {
		var secondSaw, thirdSaw atomic.Value
		first := &hooks.Funcs{Name: "first", PreAPIRequestMutableFunc: func(context.Context, hooks.APIRequest) (*hooks.RequestPatch, error) {
			return &hooks.RequestPatch{Model: str("from-first"), System: str("be brief")}, nil
		}}
		failingOne := &hooks.Funcs{Name: "broken", PreAPIRequestMutableFunc: func(context.Context, hooks.APIRequest) (*hooks.RequestPatch, error) {
			return &hooks.RequestPatch{Temperature: new(float64)}, errors.New("boom")
		}}
		second := &hooks.Funcs{Name: "second", PreAPIRequestMutableFunc: func(_ context.Context, ev hooks.APIRequest) (*hooks.RequestPatch, error) {
			secondSaw.Store(ev.Request.Model)
			// model is taken by first; max_tokens is nobody's yet.
			return &hooks.RequestPatch{Model: str("from-second"), MaxTokens: new(int(64))}, nil
		}}
		third := &hooks.Funcs{Name: "third", PreAPIRequestMutableFunc: func(_ context.Context, ev hooks.APIRequest) (*hooks.RequestPatch, error) {
			thirdSaw.Store(ev.Request.MaxTokens)
			// Every field it writes is already set: it changes nothing.
			return &hooks.RequestPatch{System: str("be verbose"), MaxTokens: new(int(1))}, nil
		}}
		b := newBus(t, r.in(first), r.in(failingOne), r.in(second), r.in(third))
		req, changes := b.PreAPIRequestMutable(context.Background(), hooks.APIRequest{Request: hooks.ModelRequest{Model: "orig", System: "orig", MaxTokens: 8}})
		if req.Model != "from-first" || req.System != "be brief" || req.MaxTokens != 64 || req.Temperature != nil {
			t.Fatalf("merged request %+v", req)
		}
		if secondSaw.Load() != "from-first" || thirdSaw.Load() != 64 {
			t.Fatalf("second saw model %v, third saw max_tokens %v: want the request as patched so far", secondSaw.Load(), thirdSaw.Load())
		}
		want := []hookbus.RequestChange{{Plugin: "first", Fields: []string{"model", "system"}}, {Plugin: "second", Fields: []string{"max_tokens"}}}
		if len(changes) != len(want) {
			t.Fatalf("changes %+v, want %+v", changes, want)
		}
		for i := range want {
			if changes[i].Plugin != want[i].Plugin || strings.Join(changes[i].Fields, ",") != strings.Join(want[i].Fields, ",") {
				t.Fatalf("changes %+v, want %+v", changes, want)
			}
		}
		if n := b.Stats().Failures("third", hooks.PreAPIRequestMutable, hookbus.KindMalformed); n != 0 {
			t.Fatal("a write to a field already set was counted malformed; it is only ignored")
		}
	})
}

func TestReissueFirstNonNilWins(t *testing.T) {
	eachWay(t, func(t *testing.T, r rig) {
		ask := func(name, model string) *hooks.Funcs {
			return &hooks.Funcs{Name: name, PostLLMCallCanReissueFunc: func(context.Context, hooks.LLMCall) (*hooks.Reissue, error) {
				return &hooks.Reissue{Patch: hooks.RequestPatch{Model: str(model)}, Reason: name}, nil
			}}
		}
		wait := hang(t)
		slow := &hooks.Funcs{Name: "slow", PostLLMCallCanReissueFunc: func(context.Context, hooks.LLMCall) (*hooks.Reissue, error) {
			wait()
			return &hooks.Reissue{Patch: hooks.RequestPatch{Model: str("never")}}, nil
		}}
		b := newBus(t, r.quick(slow), r.in(ask("router", "large")), r.in(ask("other", "huge")))
		res := b.PostLLMCallCanReissue(context.Background(), hooks.LLMCall{})
		if res == nil || res.Plugin != "router" || *res.Patch.Model != "large" || res.Reason != "router" {
			t.Fatalf("got %+v", res)
		}
	})
}

func TestTransformsChainInPriorityOrder(t *testing.T) {
	eachWay(t, func(t *testing.T, r rig) {
		suffix := func(name string) *hooks.Funcs {
			return &hooks.Funcs{
				Name: name,
				TransformToolResultFunc: func(_ context.Context, ev hooks.ToolCallOutcome) (*hooks.ToolResult, error) {
					return &hooks.ToolResult{Content: ev.Result.Content + "+" + name, IsError: ev.Result.IsError}, nil
				},
				TransformLLMOutputFunc: func(_ context.Context, ev hooks.LLMOutput) (*hooks.TextReplacement, error) {
					return &hooks.TextReplacement{Text: ev.Text + "+" + name}, nil
				},
			}
		}
		abstain := &hooks.Funcs{Name: "abstain", TransformToolResultFunc: func(context.Context, hooks.ToolCallOutcome) (*hooks.ToolResult, error) { return nil, nil }}
		f := fail(t, hookbus.KindPanic)
		panicky := &hooks.Funcs{Name: "panicky",
			TransformToolResultFunc: func(context.Context, hooks.ToolCallOutcome) (*hooks.ToolResult, error) { return nil, f() },
			TransformLLMOutputFunc:  func(context.Context, hooks.LLMOutput) (*hooks.TextReplacement, error) { return nil, f() },
		}
		b := newBus(t, r.in(suffix("a")), r.in(abstain), r.quick(panicky), r.in(suffix("b")))
		res, by := b.TransformToolResult(context.Background(), hooks.ToolCallOutcome{Name: "now", Result: hooks.ToolResult{Content: "r"}})
		if res.Content != "r+a+b" || strings.Join(by, ",") != "a,b" {
			t.Fatalf("tool result %q by %v", res.Content, by)
		}
		text, by := b.TransformLLMOutput(context.Background(), hooks.LLMOutput{Text: "t"})
		if text != "t+a+b" || strings.Join(by, ",") != "a,b" {
			t.Fatalf("output %q by %v", text, by)
		}
	})
}

func TestToolListFirstNonNilWins(t *testing.T) {
	eachWay(t, func(t *testing.T, r rig) {
		list := func(name string) *hooks.Funcs {
			return &hooks.Funcs{Name: name, PreToolListFinalizedFunc: func(context.Context, hooks.ToolListRequest) (*hooks.ToolListOverride, error) {
				return &hooks.ToolListOverride{Tools: []hooks.ToolSpec{{Name: name + "_tool"}}}, nil
			}}
		}
		none := &hooks.Funcs{Name: "none", PreToolListFinalizedFunc: func(context.Context, hooks.ToolListRequest) (*hooks.ToolListOverride, error) { return nil, nil }}
		b := newBus(t, r.in(none), r.in(list("x")), r.in(list("y")))
		ch := b.PreToolListFinalized(context.Background(), hooks.ToolListRequest{Tools: []hooks.ToolSpec{{Name: "now"}}})
		if ch == nil || ch.Plugin != "x" || ch.Tools[0].Name != "x_tool" {
			t.Fatalf("got %+v", ch)
		}
	})
}

func TestObserversDeliverInOrderAndFlush(t *testing.T) {
	eachWay(t, func(t *testing.T, r rig) {
		var mu sync.Mutex
		var seen []string
		rec := func(s string) { mu.Lock(); seen = append(seen, s); mu.Unlock() }
		p := &hooks.Funcs{
			Name:               "ledger",
			OnSessionStartFunc: func(_ context.Context, ev hooks.SessionStart) error { rec("start:" + ev.SessionID); return nil },
			PostLLMCallFunc:    func(_ context.Context, ev hooks.Inference) error { rec("llm:" + ev.Model); return nil },
			PostToolCallFunc:   func(_ context.Context, ev hooks.ToolCallOutcome) error { rec("tool:" + ev.Name); return nil },
			OnSessionEndFunc:   func(_ context.Context, ev hooks.SessionEnd) error { rec("end:" + string(ev.Reason)); return nil },
		}
		b := newBus(t, r.in(p))
		b.OnSessionStart(hooks.SessionStart{SessionID: "s"})
		b.PostLLMCall(hooks.Inference{Model: "m"})
		b.PostToolCall(hooks.ToolCallOutcome{Name: "now", Arguments: json.RawMessage(`{}`)})
		b.OnSessionEnd(hooks.SessionEnd{Reason: hooks.EndCompleted})
		if err := b.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		if got := strings.Join(seen, " "); got != "start:s llm:m tool:now end:completed" {
			t.Fatalf("delivered %q", got)
		}
	})
}

func TestObserversNeverBlockAndDropWhenFull(t *testing.T) {
	eachWay(t, func(t *testing.T, r rig) {
		release := make(chan struct{})
		var delivered atomic.Uint64
		p := &hooks.Funcs{Name: "slow", PostToolCallFunc: func(ctx context.Context, _ hooks.ToolCallOutcome) error {
			<-release
			delivered.Add(1)
			return nil
		}}
		b, err := hookbus.New([]hookbus.Member{r.with(p, hookbus.Options{Timeout: time.Minute})}, hookbus.Config{ObserverQueue: 2})
		if err != nil {
			t.Fatal(err)
		}
		ev := hooks.ToolCallOutcome{Name: "now", Arguments: json.RawMessage(`{}`)}
		within(t, func() {
			for i := 0; i < 10; i++ {
				b.PostToolCall(ev)
			}
		})
		close(release)
		if err := b.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		dropped := b.Stats().Dropped["slow"]
		if dropped < 7 || delivered.Load()+dropped != 10 {
			t.Fatalf("delivered %d, dropped %d; want >= 7 dropped and 10 in all", delivered.Load(), dropped)
		}
		b.PostToolCall(ev)
		if b.Stats().Dropped["slow"] != dropped+1 {
			t.Fatal("event after Close not counted as dropped")
		}
	})
}

func TestObserverFailuresAreCounted(t *testing.T) {
	eachWay(t, func(t *testing.T, r rig) {
		p := &hooks.Funcs{Name: "obs", PostToolCallFunc: func(context.Context, hooks.ToolCallOutcome) error { panic("observer bug") }}
		b := newBus(t, r.in(p))
		b.PostToolCall(hooks.ToolCallOutcome{Name: "now", Arguments: json.RawMessage(`{}`)})
		if err := b.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
		if b.Stats().Failures("obs", hooks.PostToolCall, hookbus.KindPanic) != 1 {
			t.Fatalf("observer panic not counted: %+v", b.Stats().Hooks)
		}
	})
}

func TestFailuresWarnOncePerPluginHookAndKind(t *testing.T) {
	eachWay(t, func(t *testing.T, r rig) {
		var buf syncBuffer
		var panicNow atomic.Bool
		p := &hooks.Funcs{Name: "flaky", PreToolCallCanProvideResultFunc: func(context.Context, hooks.ToolCallRequest) (*hooks.ToolResult, error) {
			if panicNow.Load() {
				panic("bug")
			}
			return nil, errors.New("backend down")
		}}
		b := newBusConfig(t, hookbus.Config{Logger: testLogger(&buf)}, r.in(p))
		for i := 0; i < 3; i++ {
			b.PreToolCallCanProvideResult(context.Background(), call)
		}
		panicNow.Store(true)
		b.PreToolCallCanProvideResult(context.Background(), call)

		levels := map[string]int{}
		for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
			var rec map[string]any
			if err := json.Unmarshal([]byte(line), &rec); err != nil {
				t.Fatalf("log line %q: %v", line, err)
			}
			if rec["plugin"] != "flaky" || rec["hook"] != string(hooks.PreToolCallCanProvideResult) {
				t.Fatalf("log line does not name plugin and hook: %s", line)
			}
			levels[rec["@level"].(string)+"/"+rec["kind"].(string)]++
		}
		want := map[string]int{"warn/error": 1, "debug/error": 2, "warn/panic": 1}
		for k, n := range want {
			if levels[k] != n {
				t.Fatalf("log levels %v, want %v", levels, want)
			}
		}
		if b.Stats().Failures("flaky", hooks.PreToolCallCanProvideResult, hookbus.KindError) != 3 {
			t.Fatal("errors not all counted")
		}
	})
}

func TestNewBusRejectsConflicts(t *testing.T) {
	a := &hooks.Funcs{Name: "a", Tools: []hooks.ToolSpec{{Name: "shared"}}}
	b := &hooks.Funcs{Name: "b", Tools: []hooks.ToolSpec{{Name: "shared"}}}
	_, err := hookbus.New([]hookbus.Member{{Plugin: a, Options: hookbus.Options{AllowToolOverride: true}}, {Plugin: b, Options: hookbus.Options{AllowToolOverride: true}}}, hookbus.Config{})
	var ce *hookbus.ConflictError
	if !errors.As(err, &ce) || ce.Plugin != "b" || ce.Other != "a" || ce.Tool != "shared" || !strings.Contains(err.Error(), `"a" and "b" both declare tool "shared"`) {
		t.Fatalf("duplicate tool: %v", err)
	}
	_, err = hookbus.New([]hookbus.Member{{Plugin: &hooks.Funcs{Name: "a"}}, {Plugin: &hooks.Funcs{Name: "a"}}}, hookbus.Config{})
	if !errors.As(err, &ce) || ce.Plugin != "a" || ce.Tool != "" || !strings.Contains(err.Error(), "twice") {
		t.Fatalf("duplicate plugin: %v", err)
	}
	_, err = hookbus.New([]hookbus.Member{{Plugin: &hooks.Funcs{Name: "kora", Tools: []hooks.ToolSpec{{Name: "read_file"}}}}}, hookbus.Config{})
	var me *hooks.ManifestError
	if !errors.As(err, &me) || !me.OutsideNamespace || me.Tool != "read_file" {
		t.Fatalf("tool outside the namespace: %v", err)
	}
}

func TestFuncsManifestListsOnlySetHooks(t *testing.T) {
	m := (&hooks.Funcs{Name: "x", PreToolCallFunc: func(context.Context, hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) { return nil, nil }, OnSessionEndFunc: func(context.Context, hooks.SessionEnd) error { return nil }}).Manifest()
	if len(m.Hooks) != 2 || m.Hooks[0] != hooks.PreToolCall || m.Hooks[1] != hooks.OnSessionEnd {
		t.Fatalf("hooks %v", m.Hooks)
	}
}

func TestConcurrentFiring(t *testing.T) {
	eachWay(t, func(t *testing.T, r rig) {
		var n atomic.Uint64
		p := &hooks.Funcs{
			Name: "p",
			PreToolCallCanProvideResultFunc: func(context.Context, hooks.ToolCallRequest) (*hooks.ToolResult, error) {
				return &hooks.ToolResult{Content: "x"}, nil
			},
			PostToolCallFunc: func(context.Context, hooks.ToolCallOutcome) error { n.Add(1); return nil },
		}
		b := newBus(t, r.in(p))
		var wg sync.WaitGroup
		for i := 0; i < 8; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j := 0; j < 20; j++ {
					if res := b.PreToolCallCanProvideResult(context.Background(), call); res == nil || res.Content != "x" {
						t.Errorf("concurrent provide got %+v", res)
					}
					b.PostToolCall(hooks.ToolCallOutcome{Name: "now", Arguments: json.RawMessage(`{}`)})
				}
			}()
		}
		wg.Wait()
		b.Flush(context.Background())
		if n.Load()+b.Stats().Dropped["p"] != 160 {
			t.Fatalf("observed %d + dropped %d != 160", n.Load(), b.Stats().Dropped["p"])
		}
	})
}

// A Flush waiting on a full queue must not hold up emits (observers never
// delay the conversation) nor Close, which is bounded by its own context.
func TestFlushOnAFullQueueBlocksNobody(t *testing.T) {
	eachWay(t, func(t *testing.T, r rig) {
		wait := hang(t)
		p := &hooks.Funcs{Name: "stuck", PostToolCallFunc: func(context.Context, hooks.ToolCallOutcome) error { wait(); return nil }}
		b, err := hookbus.New([]hookbus.Member{r.with(p, hookbus.Options{Timeout: time.Hour})}, hookbus.Config{ObserverQueue: 1})
		if err != nil {
			t.Fatal(err)
		}
		ev := hooks.ToolCallOutcome{Name: "x", Arguments: json.RawMessage(`{}`)}
		b.PostToolCall(ev) // taken by the worker, which hangs
		b.PostToolCall(ev) // fills the queue

		flushCtx, stopFlush := context.WithCancel(context.Background())
		defer stopFlush()
		flushed := make(chan error, 1)
		go func() { flushed <- b.Flush(flushCtx) }()

		within(t, func() {
			for i := 0; i < 5; i++ {
				b.PostToolCall(ev)
			}
		})
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		var closeErr error
		within(t, func() { closeErr = b.Close(ctx) })
		if closeErr == nil {
			t.Fatal("Close reported a drain that cannot have happened: the observer is hung")
		}
		within(t, func() {
			if err := <-flushed; err != nil && err != context.Canceled {
				t.Errorf("Flush: %v", err)
			}
		})
	})
}

// Close that gives up cancels the deliveries in flight, so a hung observer
// does not keep a worker busy after the Bus is closed.
func TestCloseCancelsDeliveriesWhenItGivesUp(t *testing.T) {
	eachWay(t, func(t *testing.T, r rig) {
		cancelled := make(chan struct{})
		p := &hooks.Funcs{Name: "slow", PostToolCallFunc: func(ctx context.Context, _ hooks.ToolCallOutcome) error {
			<-ctx.Done()
			close(cancelled)
			return ctx.Err()
		}}
		b, err := hookbus.New([]hookbus.Member{r.with(p, hookbus.Options{Timeout: time.Hour})}, hookbus.Config{})
		if err != nil {
			t.Fatal(err)
		}
		b.PostToolCall(hooks.ToolCallOutcome{Name: "x", Arguments: json.RawMessage(`{}`)})
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		within(t, func() {
			if err := b.Close(ctx); err == nil {
				t.Error("Close returned nil with a delivery still running")
			}
			<-cancelled
		})
	})
}

func TestContextHonouringPluginsAreCalledInlineUnderTheirDeadline(t *testing.T) {
	var sawDeadline atomic.Bool
	p := honouring{&hooks.Funcs{Name: "remote", PreToolCallCanProvideResultFunc: func(ctx context.Context, _ hooks.ToolCallRequest) (*hooks.ToolResult, error) {
		_, ok := ctx.Deadline()
		sawDeadline.Store(ok)
		<-ctx.Done()
		return nil, ctx.Err()
	}}}
	b := newBus(t, hookbus.Member{Plugin: p, Options: hookbus.Options{ToolTimeout: 20 * time.Millisecond}})
	within(t, func() {
		if res := b.PreToolCallCanProvideResult(context.Background(), call); res != nil {
			t.Errorf("got %+v", res)
		}
	})
	if !sawDeadline.Load() || b.Stats().Failures("remote", hooks.PreToolCallCanProvideResult, hookbus.KindTimeout) != 1 {
		t.Fatalf("deadline seen %v, timeouts %d", sawDeadline.Load(), b.Stats().Failures("remote", hooks.PreToolCallCanProvideResult, hookbus.KindTimeout))
	}
}

// A temperature no upstream takes (NaN, ±Inf, or outside the provider's
// range) is a malformed answer: the patch, or the reissue, applies nothing
// and is counted, where it used to reach the provider and fail the turn
// with an encode error.
func TestTemperatureNoUpstreamTakesIsMalformed(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name string
		temp float64
		max  float64 // Config.MaxTemperature; 0: the default
	}{
		{"NaN", math.NaN(), 0},
		{"+Inf", math.Inf(1), 0},
		{"-Inf", math.Inf(-1), 0},
		{"negative", -0.5, 0},
		{"over 2", 2.5, 0},
		{"over the provider's 1", 1.5, 1},
	}
	eachWay(t, func(t *testing.T, r rig) {
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				r := r.sub(t)
				temp := c.temp
				bad := &hooks.Funcs{Name: "bad",
					PreAPIRequestMutableFunc: func(context.Context, hooks.APIRequest) (*hooks.RequestPatch, error) {
						return &hooks.RequestPatch{Temperature: &temp, System: str("from bad")}, nil
					},
					PostLLMCallCanReissueFunc: func(context.Context, hooks.LLMCall) (*hooks.Reissue, error) {
						return &hooks.Reissue{Patch: hooks.RequestPatch{Temperature: &temp}, Reason: "hotter"}, nil
					},
				}
				good := 0.25
				next := &hooks.Funcs{Name: "next",
					PreAPIRequestMutableFunc: func(context.Context, hooks.APIRequest) (*hooks.RequestPatch, error) {
						return &hooks.RequestPatch{Temperature: &good}, nil
					},
				}
				b := newBusConfig(t, hookbus.Config{MaxTemperature: c.max}, r.in(bad), r.in(next))
				req, changes := b.PreAPIRequestMutable(ctx, hooks.APIRequest{Request: hooks.ModelRequest{Model: "m", System: "s"}})
				if req.System != "s" || req.Temperature == nil || *req.Temperature != good ||
					len(changes) != 1 || changes[0].Plugin != "next" {
					t.Fatalf("patch with temperature %v applied: %+v %+v", c.temp, req, changes)
				}
				if n := b.Stats().Failures("bad", hooks.PreAPIRequestMutable, hookbus.KindMalformed); n != 1 {
					t.Fatalf("patch counted malformed %d times, want 1", n)
				}
				if res := b.PostLLMCallCanReissue(ctx, hooks.LLMCall{}); res != nil {
					t.Fatalf("reissue with temperature %v accepted: %+v", c.temp, res)
				}
				if n := b.Stats().Failures("bad", hooks.PostLLMCallCanReissue, hookbus.KindMalformed); n != 1 {
					t.Fatalf("reissue counted malformed %d times, want 1", n)
				}
			})
		}
	})
}

func asker(name, reason string) *hooks.Funcs {
	return &hooks.Funcs{Name: name, PreToolCallFunc: func(context.Context, hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
		return &hooks.PreToolCallDecision{Ask: &hooks.ApprovalRequest{Reason: reason}}, nil
	}}
}

func TestPreToolCallAskCombine(t *testing.T) {
	eachWay(t, func(t *testing.T, r rig) {
		t.Run("a later block beats an ask", func(t *testing.T) {
			r := r.sub(t)
			b := newBus(t, r.in(asker("ask", "why")), r.in(blocker("guard", "no")))
			out := b.PreToolCall(context.Background(), call)
			if !out.Blocked || out.BlockedBy != "guard" || out.Asked() || len(out.AskedBy) != 0 {
				t.Fatalf("got %+v, want blocked by guard, not asked", out)
			}
		})
		t.Run("an ask beats modifies, which still apply", func(t *testing.T) {
			r := r.sub(t)
			b := newBus(t, r.in(modifier("first", "a")), r.in(asker("ask", "why")), r.in(modifier("second", "b")))
			out := b.PreToolCall(context.Background(), call)
			if out.Blocked || !out.Asked() || strings.Join(out.AskedBy, ",") != "ask" || out.AskReason != "why" {
				t.Fatalf("got %+v, want asked by ask for why", out)
			}
			if got := string(out.Arguments); got != `{"a":0,"b":1}` || strings.Join(out.ModifiedBy, ",") != "first,second" {
				t.Fatalf("args %s modified by %v, want both modifies applied", got, out.ModifiedBy)
			}
		})
		t.Run("every asker's reason, joined in order", func(t *testing.T) {
			r := r.sub(t)
			b := newBus(t, r.in(asker("one", "first reason")), r.in(asker("two", "")))
			out := b.PreToolCall(context.Background(), call)
			if want := `first reason; plugin "two" asks for approval`; !out.Asked() || out.AskReason != want || strings.Join(out.AskedBy, ",") != "one,two" {
				t.Fatalf("got %+v, want asked by one,two for %q", out, want)
			}
		})
	})
}
