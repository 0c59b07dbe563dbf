package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
)

// hang blocks until the test ends, ignoring ctx, to prove the Bus enforces
// deadlines on plugins that do not.
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

func newBus(t *testing.T, members ...Member) *Bus {
	t.Helper()
	b, err := NewBus(members, Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close(context.Background()) })
	return b
}

func in(p *Funcs) Member { return Member{Plugin: p} }

func quick(p *Funcs) Member {
	return Member{Plugin: p, Options: Options{Timeout: 50 * time.Millisecond, ToolTimeout: 50 * time.Millisecond}}
}

var call = ToolCallRequest{SessionID: "s1", CallID: "c1", Name: "now", Arguments: json.RawMessage(`{}`)}

func provider(name string, content string) *Funcs {
	return &Funcs{Name: name, PreToolCallCanProvideResultFunc: func(context.Context, ToolCallRequest) (*ToolResult, error) {
		return &ToolResult{Content: content}, nil
	}}
}

func TestNilBusFiresNothing(t *testing.T) {
	var b *Bus
	if r := b.ProvideResult(context.Background(), call); r != nil {
		t.Fatalf("nil bus provided %v", r)
	}
	out := b.PreToolCall(context.Background(), call)
	if out.Blocked || string(out.Arguments) != "{}" {
		t.Fatalf("nil bus changed the call: %+v", out)
	}
	text, by := b.TransformOutput(context.Background(), LLMOutput{Text: "x"})
	if text != "x" || by != nil {
		t.Fatalf("nil bus transformed output: %q %v", text, by)
	}
	b.SessionStart(SessionStart{})
	b.ToolCallDone(ToolCallOutcome{})
	if b.Stats().Calls() != 0 {
		t.Fatal("nil bus counted calls")
	}
}

func TestUnsubscribedHooksAndUnmatchedToolsCostNoCall(t *testing.T) {
	p := &Funcs{
		Name:     "kora",
		Matchers: []string{"kora__*"},
		PreToolCallCanProvideResultFunc: func(context.Context, ToolCallRequest) (*ToolResult, error) {
			return &ToolResult{Content: "kora"}, nil
		},
	}
	b := newBus(t, in(p))
	ctx := context.Background()
	if r := b.ProvideResult(ctx, call); r != nil {
		t.Fatalf("plugin answered a tool outside its matchers: %+v", r)
	}
	b.PreToolCall(ctx, call)
	b.TransformOutput(ctx, LLMOutput{Text: "x"})
	if n := b.Stats().Calls(); n != 0 {
		t.Fatalf("made %d calls, want 0", n)
	}
	kc := call
	kc.Name = "kora__get_burn"
	if r := b.ProvideResult(ctx, kc); r == nil || r.Plugin != "kora" {
		t.Fatalf("matching tool not provided: %+v", r)
	}
	if !b.Subscribed(PreToolCallCanProvideResult, "kora__x") || b.Subscribed(PreToolCallCanProvideResult, "now") || b.Subscribed(PreToolCall, "kora__x") {
		t.Fatal("Subscribed disagrees with matchers and manifest")
	}
}

func TestProvideResultFirstNonNilWins(t *testing.T) {
	var thirdCalled bool
	third := provider("third", "C")
	inner := third.PreToolCallCanProvideResultFunc
	third.PreToolCallCanProvideResultFunc = func(ctx context.Context, r ToolCallRequest) (*ToolResult, error) {
		thirdCalled = true
		return inner(ctx, r)
	}
	b := newBus(t,
		in(&Funcs{Name: "abstains", PreToolCallCanProvideResultFunc: func(context.Context, ToolCallRequest) (*ToolResult, error) { return nil, nil }}),
		in(provider("second", "B")),
		in(third),
	)
	r := b.ProvideResult(context.Background(), call)
	if r == nil || r.Plugin != "second" || r.Content != "B" {
		t.Fatalf("got %+v, want second's result B", r)
	}
	if thirdCalled {
		t.Fatal("a lower-priority plugin was asked after a result was found")
	}
}

// failing returns a plugin that fails provide-result in the given way.
func failing(t *testing.T, kind FailureKind) *Funcs {
	wait := hang(t)
	return &Funcs{Name: "broken", PreToolCallCanProvideResultFunc: func(ctx context.Context, _ ToolCallRequest) (*ToolResult, error) {
		switch kind {
		case KindError:
			return &ToolResult{Content: "ignored with the error"}, errors.New("boom")
		case KindPanic:
			panic("handler bug")
		case KindTimeout:
			wait()
			return &ToolResult{Content: "too late"}, nil
		case KindUnavailable:
			return nil, ErrUnavailable
		}
		t.Fatalf("no failure for kind %v", kind)
		return nil, nil
	}}
}

func TestEveryFailureFallsThroughToTheNextPlugin(t *testing.T) {
	for _, kind := range []FailureKind{KindError, KindPanic, KindTimeout, KindUnavailable} {
		t.Run(kind.String(), func(t *testing.T) {
			b := newBus(t, quick(failing(t, kind)), in(provider("backup", "B")))
			var r *ProvidedResult
			within(t, func() { r = b.ProvideResult(context.Background(), call) })
			if r == nil || r.Plugin != "backup" {
				t.Fatalf("got %+v, want backup's result", r)
			}
			if n := b.Stats().Failures("broken", PreToolCallCanProvideResult, kind); n != 1 {
				t.Fatalf("%s failures counted %d, want 1", kind, n)
			}
		})
	}
}

func TestEveryFailureAloneMeansNativeDispatch(t *testing.T) {
	for _, kind := range []FailureKind{KindError, KindPanic, KindTimeout, KindUnavailable} {
		t.Run(kind.String(), func(t *testing.T) {
			b := newBus(t, quick(failing(t, kind)))
			within(t, func() {
				if r := b.ProvideResult(context.Background(), call); r != nil {
					t.Errorf("failed plugin produced %+v", r)
				}
			})
		})
	}
}

func TestToolTimeoutAppliesOnlyToProvideResult(t *testing.T) {
	// A provider slower than timeout but within tool_timeout still answers.
	slow := &Funcs{
		Name: "slow",
		PreToolCallCanProvideResultFunc: func(ctx context.Context, _ ToolCallRequest) (*ToolResult, error) {
			select {
			case <-time.After(100 * time.Millisecond):
				return &ToolResult{Content: "done"}, nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		},
		PreToolCallFunc: func(ctx context.Context, _ ToolCallRequest) (*PreToolCallDecision, error) {
			select {
			case <-time.After(100 * time.Millisecond):
				return &PreToolCallDecision{Block: &Block{Message: "late"}}, nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		},
	}
	b := newBus(t, Member{Plugin: slow, Options: Options{Timeout: 10 * time.Millisecond, ToolTimeout: 5 * time.Second}})
	if r := b.ProvideResult(context.Background(), call); r == nil || r.Content != "done" {
		t.Fatalf("provide-result did not get tool_timeout: %+v", r)
	}
	if out := b.PreToolCall(context.Background(), call); out.Blocked {
		t.Fatal("pre_tool_call got tool_timeout instead of timeout")
	}
	if b.Stats().Failures("slow", PreToolCall, KindTimeout) != 1 {
		t.Fatal("pre_tool_call timeout not counted")
	}
}

func modifier(name string, add string) *Funcs {
	return &Funcs{Name: name, PreToolCallFunc: func(_ context.Context, r ToolCallRequest) (*PreToolCallDecision, error) {
		var m map[string]any
		if err := json.Unmarshal(r.Arguments, &m); err != nil {
			return nil, err
		}
		m[add] = len(m)
		args, _ := json.Marshal(m)
		return &PreToolCallDecision{ModifiedArgs: args}, nil
	}}
}

func blocker(name, msg string) *Funcs {
	return &Funcs{Name: name, PreToolCallFunc: func(context.Context, ToolCallRequest) (*PreToolCallDecision, error) {
		return &PreToolCallDecision{Block: &Block{Message: msg}}, nil
	}}
}

func TestPreToolCallModifiesApplyInOrder(t *testing.T) {
	b := newBus(t, in(modifier("first", "a")), in(modifier("second", "b")))
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
}

func TestPreToolCallBlockBeatsModify(t *testing.T) {
	t.Run("lower priority block beats higher priority modify", func(t *testing.T) {
		b := newBus(t, in(modifier("mod", "a")), in(blocker("guard", "no")))
		out := b.PreToolCall(context.Background(), call)
		if !out.Blocked || out.BlockedBy != "guard" || out.Message != "no" {
			t.Fatalf("got %+v, want blocked by guard", out)
		}
	})
	t.Run("a block stops the round", func(t *testing.T) {
		asked := false
		late := modifier("late", "a")
		inner := late.PreToolCallFunc
		late.PreToolCallFunc = func(ctx context.Context, r ToolCallRequest) (*PreToolCallDecision, error) {
			asked = true
			return inner(ctx, r)
		}
		b := newBus(t, in(blocker("guard", "")), in(late))
		out := b.PreToolCall(context.Background(), call)
		if !out.Blocked || asked {
			t.Fatalf("blocked=%v, later plugin asked=%v", out.Blocked, asked)
		}
		if !strings.Contains(out.Message, `"guard"`) {
			t.Fatalf("empty block message not defaulted: %q", out.Message)
		}
	})
}

func TestFailClosedGuard(t *testing.T) {
	for _, kind := range []FailureKind{KindError, KindPanic, KindTimeout, KindUnavailable} {
		t.Run(kind.String(), func(t *testing.T) {
			wait := hang(t)
			guard := &Funcs{Name: "guard", PreToolCallFunc: func(context.Context, ToolCallRequest) (*PreToolCallDecision, error) {
				switch kind {
				case KindPanic:
					panic("bug")
				case KindTimeout:
					wait()
				case KindUnavailable:
					return nil, ErrUnavailable
				}
				return nil, errors.New("rules file unreadable")
			}}
			opts := Options{Timeout: 50 * time.Millisecond, FailClosed: true}
			b := newBus(t, Member{Plugin: guard, Options: opts}, in(modifier("after", "x")))
			var out PreToolCallOutcome
			within(t, func() { out = b.PreToolCall(context.Background(), call) })
			if !out.Blocked || out.BlockedBy != "guard" || !strings.Contains(out.Message, "fail_closed") {
				t.Fatalf("fail_closed guard failure did not block: %+v", out)
			}

			opts.FailClosed = false
			open := newBus(t, Member{Plugin: guard, Options: opts}, in(modifier("after", "x")))
			within(t, func() { out = open.PreToolCall(context.Background(), call) })
			if out.Blocked {
				t.Fatalf("fail-open guard failure blocked: %+v", out)
			}
		})
	}
	t.Run("malformed decision of a fail_closed guard blocks", func(t *testing.T) {
		guard := &Funcs{Name: "guard", PreToolCallFunc: func(context.Context, ToolCallRequest) (*PreToolCallDecision, error) {
			return &PreToolCallDecision{Block: &Block{}, ModifiedArgs: json.RawMessage(`{}`)}, nil
		}}
		b := newBus(t, Member{Plugin: guard, Options: Options{FailClosed: true}})
		if out := b.PreToolCall(context.Background(), call); !out.Blocked {
			t.Fatal("malformed answer from fail_closed guard did not block")
		}
	})
	t.Run("fail_closed does not extend to other hooks", func(t *testing.T) {
		p := failing(t, KindError)
		p.Name = "guard"
		b := newBus(t, Member{Plugin: p, Options: Options{FailClosed: true}})
		if out := b.PreToolCall(context.Background(), call); out.Blocked {
			t.Fatal("a plugin without pre_tool_call blocked")
		}
		if r := b.ProvideResult(context.Background(), call); r != nil {
			t.Fatalf("failed provider produced %+v", r)
		}
	})
}

// A cancelled turn is not the guard's fault (no WARN), but a fail_closed
// guard that did not answer still blocks: no answer is no approval.
func TestCallerCancellationIsNotThePluginsFault(t *testing.T) {
	wait := hang(t)
	var buf bytes.Buffer
	guard := &Funcs{Name: "guard", PreToolCallFunc: func(context.Context, ToolCallRequest) (*PreToolCallDecision, error) {
		wait()
		return nil, nil
	}}
	b, err := NewBus([]Member{{Plugin: guard, Options: Options{FailClosed: true}}}, Config{Logger: testLogger(&buf)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(20 * time.Millisecond); cancel() }()
	var out PreToolCallOutcome
	within(t, func() { out = b.PreToolCall(ctx, call) })
	if !out.Blocked {
		t.Fatal("a fail_closed guard cut short by cancellation let the call through")
	}
	if b.Stats().Failures("guard", PreToolCall, KindCancelled) != 1 {
		t.Fatal("cancellation not counted as cancelled")
	}
	if strings.Contains(buf.String(), "WARN") || strings.Contains(buf.String(), "warn") {
		t.Fatalf("cancellation blamed on the plugin: %s", buf.String())
	}
}

func TestMalformedResultsCountAsNil(t *testing.T) {
	ctx := context.Background()
	t.Run("pre_tool_call block and modify together", func(t *testing.T) {
		bad := &Funcs{Name: "bad", PreToolCallFunc: func(context.Context, ToolCallRequest) (*PreToolCallDecision, error) {
			return &PreToolCallDecision{Block: &Block{Message: "x"}, ModifiedArgs: json.RawMessage(`{"a":1}`)}, nil
		}}
		b := newBus(t, in(bad))
		if out := b.PreToolCall(ctx, call); out.Blocked || string(out.Arguments) != "{}" {
			t.Fatalf("malformed decision applied: %+v", out)
		}
		if b.Stats().Failures("bad", PreToolCall, KindMalformed) != 1 {
			t.Fatal("not counted malformed")
		}
	})
	t.Run("modified args not an object", func(t *testing.T) {
		bad := &Funcs{Name: "bad", PreToolCallFunc: func(context.Context, ToolCallRequest) (*PreToolCallDecision, error) {
			return &PreToolCallDecision{ModifiedArgs: json.RawMessage(`[1,2]`)}, nil
		}}
		b := newBus(t, in(bad))
		if out := b.PreToolCall(ctx, call); string(out.Arguments) != "{}" {
			t.Fatalf("non-object args applied: %s", out.Arguments)
		}
	})
	t.Run("tool list with an illegal name falls to the next plugin", func(t *testing.T) {
		bad := &Funcs{Name: "bad", PreToolListFinalizedFunc: func(context.Context, ToolListRequest) (*ToolListOverride, error) {
			return &ToolListOverride{Tools: []ToolSpec{{Name: "has.dot"}}}, nil
		}}
		good := &Funcs{Name: "good", PreToolListFinalizedFunc: func(context.Context, ToolListRequest) (*ToolListOverride, error) {
			return &ToolListOverride{Tools: []ToolSpec{{Name: "only"}}}, nil
		}}
		b := newBus(t, in(bad), in(good))
		ch := b.ToolList(ctx, ToolListRequest{})
		if ch == nil || ch.Plugin != "good" || len(ch.Tools) != 1 {
			t.Fatalf("got %+v, want good's list", ch)
		}
	})
	t.Run("request patch with empty model", func(t *testing.T) {
		empty := ""
		bad := &Funcs{Name: "bad", PreAPIRequestMutableFunc: func(context.Context, APIRequest) (*RequestPatch, error) {
			return &RequestPatch{Model: &empty}, nil
		}}
		b := newBus(t, in(bad))
		req, changes := b.MutateRequest(ctx, APIRequest{Request: ModelRequest{Model: "m"}})
		if req.Model != "m" || changes != nil {
			t.Fatalf("malformed patch applied: %+v %+v", req, changes)
		}
	})
	t.Run("reissue with temperature out of range", func(t *testing.T) {
		hot := 9.0
		bad := &Funcs{Name: "bad", PostLLMCallCanReissueFunc: func(context.Context, LLMCall) (*Reissue, error) {
			return &Reissue{Patch: RequestPatch{Temperature: &hot}}, nil
		}}
		b := newBus(t, in(bad))
		if r := b.Reissue(ctx, LLMCall{}); r != nil {
			t.Fatalf("malformed reissue accepted: %+v", r)
		}
	})
}

func str(s string) *string { return &s }

func TestMutateRequestMergesLastWriteWins(t *testing.T) {
	var secondSaw string
	first := &Funcs{Name: "first", PreAPIRequestMutableFunc: func(context.Context, APIRequest) (*RequestPatch, error) {
		return &RequestPatch{Model: str("from-first"), System: str("be brief")}, nil
	}}
	second := &Funcs{Name: "second", PreAPIRequestMutableFunc: func(_ context.Context, ev APIRequest) (*RequestPatch, error) {
		secondSaw = ev.Request.Model
		return &RequestPatch{Model: str("from-second")}, nil
	}}
	failingOne := &Funcs{Name: "broken", PreAPIRequestMutableFunc: func(context.Context, APIRequest) (*RequestPatch, error) {
		return &RequestPatch{Model: str("never")}, errors.New("boom")
	}}
	b := newBus(t, in(first), in(failingOne), in(second))
	req, changes := b.MutateRequest(context.Background(), APIRequest{Request: ModelRequest{Model: "orig", System: "orig"}})
	if req.Model != "from-second" || req.System != "be brief" {
		t.Fatalf("merged request %+v", req)
	}
	if secondSaw != "from-first" {
		t.Fatalf("second plugin saw model %q, want the request as patched so far", secondSaw)
	}
	if len(changes) != 2 || changes[0].Plugin != "first" || strings.Join(changes[0].Fields, ",") != "model,system" || changes[1].Plugin != "second" {
		t.Fatalf("changes %+v", changes)
	}
}

func TestReissueFirstNonNilWins(t *testing.T) {
	ask := func(name, model string) *Funcs {
		return &Funcs{Name: name, PostLLMCallCanReissueFunc: func(context.Context, LLMCall) (*Reissue, error) {
			return &Reissue{Patch: RequestPatch{Model: str(model)}, Reason: name}, nil
		}}
	}
	b := newBus(t, quick(failing(t, KindTimeout)), in(ask("router", "large")), in(ask("other", "huge")))
	r := b.Reissue(context.Background(), LLMCall{})
	if r == nil || r.Plugin != "router" || *r.Patch.Model != "large" || r.Reason != "router" {
		t.Fatalf("got %+v", r)
	}
}

func TestTransformsChainInPriorityOrder(t *testing.T) {
	suffix := func(name string) *Funcs {
		return &Funcs{
			Name: name,
			TransformToolResultFunc: func(_ context.Context, ev ToolCallOutcome) (*ToolResult, error) {
				return &ToolResult{Content: ev.Result.Content + "+" + name, IsError: ev.Result.IsError}, nil
			},
			TransformLLMOutputFunc: func(_ context.Context, ev LLMOutput) (*TextReplacement, error) {
				return &TextReplacement{Text: ev.Text + "+" + name}, nil
			},
		}
	}
	abstain := &Funcs{Name: "abstain", TransformToolResultFunc: func(context.Context, ToolCallOutcome) (*ToolResult, error) { return nil, nil }}
	b := newBus(t, in(suffix("a")), in(abstain), quick(failing(t, KindPanic)), in(suffix("b")))
	res, by := b.TransformToolResult(context.Background(), ToolCallOutcome{Name: "now", Result: ToolResult{Content: "r"}})
	if res.Content != "r+a+b" || strings.Join(by, ",") != "a,b" {
		t.Fatalf("tool result %q by %v", res.Content, by)
	}
	text, by := b.TransformOutput(context.Background(), LLMOutput{Text: "t"})
	if text != "t+a+b" || strings.Join(by, ",") != "a,b" {
		t.Fatalf("output %q by %v", text, by)
	}
}

func TestToolListFirstNonNilWins(t *testing.T) {
	list := func(name string) *Funcs {
		return &Funcs{Name: name, PreToolListFinalizedFunc: func(context.Context, ToolListRequest) (*ToolListOverride, error) {
			return &ToolListOverride{Tools: []ToolSpec{{Name: name + "_tool"}}}, nil
		}}
	}
	b := newBus(t, in(&Funcs{Name: "none", PreToolListFinalizedFunc: func(context.Context, ToolListRequest) (*ToolListOverride, error) { return nil, nil }}), in(list("x")), in(list("y")))
	ch := b.ToolList(context.Background(), ToolListRequest{Tools: []ToolSpec{{Name: "now"}}})
	if ch == nil || ch.Plugin != "x" || ch.Tools[0].Name != "x_tool" {
		t.Fatalf("got %+v", ch)
	}
}

func TestObserversDeliverInOrderAndFlush(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	rec := func(s string) { mu.Lock(); seen = append(seen, s); mu.Unlock() }
	p := &Funcs{
		Name:               "ledger",
		OnSessionStartFunc: func(_ context.Context, ev SessionStart) error { rec("start:" + ev.SessionID); return nil },
		PostLLMCallFunc:    func(_ context.Context, ev Inference) error { rec("llm:" + ev.Model); return nil },
		PostToolCallFunc:   func(_ context.Context, ev ToolCallOutcome) error { rec("tool:" + ev.Name); return nil },
		OnSessionEndFunc:   func(_ context.Context, ev SessionEnd) error { rec("end:" + string(ev.Reason)); return nil },
	}
	b := newBus(t, in(p))
	b.SessionStart(SessionStart{SessionID: "s"})
	b.LLMCallDone(Inference{Model: "m"})
	b.ToolCallDone(ToolCallOutcome{Name: "now"})
	b.SessionEnd(SessionEnd{Reason: EndCompleted})
	if err := b.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if got := strings.Join(seen, " "); got != "start:s llm:m tool:now end:completed" {
		t.Fatalf("delivered %q", got)
	}
}

func TestObserversNeverBlockAndDropWhenFull(t *testing.T) {
	release := make(chan struct{})
	var mu sync.Mutex
	delivered := 0
	p := &Funcs{Name: "slow", PostToolCallFunc: func(ctx context.Context, _ ToolCallOutcome) error {
		<-release
		mu.Lock()
		delivered++
		mu.Unlock()
		return nil
	}}
	b, err := NewBus([]Member{{Plugin: p, Options: Options{Timeout: time.Minute}}}, Config{ObserverQueue: 2})
	if err != nil {
		t.Fatal(err)
	}
	within(t, func() {
		for i := 0; i < 10; i++ {
			b.ToolCallDone(ToolCallOutcome{Name: "now"})
		}
	})
	close(release)
	if err := b.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	dropped := b.Stats().Dropped["slow"]
	if dropped < 7 || uint64(delivered)+dropped != 10 {
		t.Fatalf("delivered %d, dropped %d; want >= 7 dropped and 10 in all", delivered, dropped)
	}
	b.ToolCallDone(ToolCallOutcome{Name: "now"})
	if b.Stats().Dropped["slow"] != dropped+1 {
		t.Fatal("event after Close not counted as dropped")
	}
}

func TestObserverFailuresAreCounted(t *testing.T) {
	p := &Funcs{Name: "obs", PostToolCallFunc: func(context.Context, ToolCallOutcome) error { panic("observer bug") }}
	b := newBus(t, in(p))
	b.ToolCallDone(ToolCallOutcome{Name: "now"})
	if err := b.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if b.Stats().Failures("obs", PostToolCall, KindPanic) != 1 {
		t.Fatal("observer panic not counted")
	}
}

func testLogger(buf *bytes.Buffer) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{Output: buf, Level: hclog.Debug, JSONFormat: true})
}

func TestFailuresWarnOncePerPluginHookAndKind(t *testing.T) {
	var buf bytes.Buffer
	var panicNow bool
	p := &Funcs{Name: "flaky", PreToolCallCanProvideResultFunc: func(context.Context, ToolCallRequest) (*ToolResult, error) {
		if panicNow {
			panic("bug")
		}
		return nil, errors.New("backend down")
	}}
	b, err := NewBus([]Member{in(p)}, Config{Logger: testLogger(&buf)})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		b.ProvideResult(context.Background(), call)
	}
	panicNow = true
	b.ProvideResult(context.Background(), call)

	levels := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if rec["plugin"] != "flaky" || rec["hook"] != string(PreToolCallCanProvideResult) {
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
	if b.Stats().Failures("flaky", PreToolCallCanProvideResult, KindError) != 3 {
		t.Fatal("errors not all counted")
	}
}

func TestValidateManifest(t *testing.T) {
	cases := []struct {
		name string
		m    Manifest
		opts Options
		want string // substring of the error; "" means valid
	}{
		{"ok", Manifest{Name: "kora", Hooks: []Name{PreToolCall}, Matchers: []string{"kora__*"}, Tools: []ToolSpec{{Name: "kora__get_burn", InputSchema: json.RawMessage(`{"type":"object"}`)}}}, Options{}, ""},
		{"no name", Manifest{}, Options{}, "no name"},
		{"unknown hook", Manifest{Name: "p", Hooks: []Name{"pre_everything"}}, Options{}, `unknown hook "pre_everything"`},
		{"hook twice", Manifest{Name: "p", Hooks: []Name{PreToolCall, PreToolCall}}, Options{}, "listed twice"},
		{"bad glob", Manifest{Name: "p", Matchers: []string{"kora__["}}, Options{}, "not a valid glob"},
		{"outside namespace", Manifest{Name: "kora", Tools: []ToolSpec{{Name: "read_file"}}}, Options{}, "outside the plugin's namespace"},
		{"override allowed", Manifest{Name: "kora", Tools: []ToolSpec{{Name: "read_file"}}}, Options{AllowToolOverride: true}, ""},
		{"illegal tool name", Manifest{Name: "kora", Tools: []ToolSpec{{Name: "kora__a.b"}}}, Options{}, "must match"},
		{"tool twice", Manifest{Name: "kora", Tools: []ToolSpec{{Name: "kora__a"}, {Name: "kora__a"}}}, Options{}, "declared twice"},
		{"schema not object", Manifest{Name: "kora", Tools: []ToolSpec{{Name: "kora__a", InputSchema: json.RawMessage(`[]`)}}}, Options{}, "not a JSON object"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := ValidateManifest(c.m, c.opts)
			if c.want == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want it to contain %q", err, c.want)
			}
			if c.m.Name != "" && !strings.Contains(err.Error(), `plugin "`+c.m.Name+`"`) {
				t.Fatalf("error %q does not name the plugin", err)
			}
		})
	}
}

func TestNewBusRejectsConflicts(t *testing.T) {
	a := &Funcs{Name: "a", Tools: []ToolSpec{{Name: "shared"}}}
	b := &Funcs{Name: "b", Tools: []ToolSpec{{Name: "shared"}}}
	_, err := NewBus([]Member{{Plugin: a, Options: Options{AllowToolOverride: true}}, {Plugin: b, Options: Options{AllowToolOverride: true}}}, Config{})
	if err == nil || !strings.Contains(err.Error(), `"a" and "b" both declare tool "shared"`) {
		t.Fatalf("duplicate tool: %v", err)
	}
	_, err = NewBus([]Member{in(&Funcs{Name: "a"}), in(&Funcs{Name: "a"})}, Config{})
	if err == nil || !strings.Contains(err.Error(), "twice") {
		t.Fatalf("duplicate plugin: %v", err)
	}
}

func TestFuncsManifestListsOnlySetHooks(t *testing.T) {
	m := (&Funcs{Name: "x", PreToolCallFunc: func(context.Context, ToolCallRequest) (*PreToolCallDecision, error) { return nil, nil }, OnSessionEndFunc: func(context.Context, SessionEnd) error { return nil }}).Manifest()
	if len(m.Hooks) != 2 || m.Hooks[0] != PreToolCall || m.Hooks[1] != OnSessionEnd {
		t.Fatalf("hooks %v", m.Hooks)
	}
}

func TestConcurrentFiring(t *testing.T) {
	var mu sync.Mutex
	n := 0
	p := &Funcs{
		Name:                            "p",
		PreToolCallCanProvideResultFunc: func(context.Context, ToolCallRequest) (*ToolResult, error) { return &ToolResult{Content: "x"}, nil },
		PostToolCallFunc:                func(context.Context, ToolCallOutcome) error { mu.Lock(); n++; mu.Unlock(); return nil },
	}
	b := newBus(t, in(p))
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 20; j++ {
				b.ProvideResult(context.Background(), call)
				b.ToolCallDone(ToolCallOutcome{Name: "now"})
			}
		}()
	}
	wg.Wait()
	b.Flush(context.Background())
	mu.Lock()
	defer mu.Unlock()
	if uint64(n)+b.Stats().Dropped["p"] != 160 {
		t.Fatalf("observed %d + dropped %d != 160", n, b.Stats().Dropped["p"])
	}
}

// A Flush waiting on a full queue must not hold up emits (observers never
// delay the conversation) nor Close, which is bounded by its own context.
func TestFlushOnAFullQueueBlocksNobody(t *testing.T) {
	wait := hang(t)
	p := &Funcs{Name: "stuck", PostToolCallFunc: func(context.Context, ToolCallOutcome) error { wait(); return nil }}
	b, err := NewBus([]Member{{Plugin: p, Options: Options{Timeout: time.Hour}}}, Config{ObserverQueue: 1})
	if err != nil {
		t.Fatal(err)
	}
	b.ToolCallDone(ToolCallOutcome{Name: "x"}) // taken by the worker, which hangs
	b.ToolCallDone(ToolCallOutcome{Name: "x"}) // fills the queue

	flushCtx, stopFlush := context.WithCancel(context.Background())
	defer stopFlush()
	flushed := make(chan error, 1)
	go func() { flushed <- b.Flush(flushCtx) }()

	within(t, func() {
		for i := 0; i < 5; i++ {
			b.ToolCallDone(ToolCallOutcome{Name: "x"})
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
}

// Close that gives up cancels the deliveries in flight, so a hung observer
// does not keep a worker busy after the Bus is closed.
func TestCloseCancelsDeliveriesWhenItGivesUp(t *testing.T) {
	cancelled := make(chan struct{})
	p := &Funcs{Name: "slow", PostToolCallFunc: func(ctx context.Context, _ ToolCallOutcome) error {
		<-ctx.Done()
		close(cancelled)
		return ctx.Err()
	}}
	b, err := NewBus([]Member{{Plugin: p, Options: Options{Timeout: time.Hour}}}, Config{})
	if err != nil {
		t.Fatal(err)
	}
	b.ToolCallDone(ToolCallOutcome{Name: "x"})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	within(t, func() {
		if err := b.Close(ctx); err == nil {
			t.Error("Close returned nil with a delivery still running")
		}
		<-cancelled
	})
}

// honouring is an in-process plugin that declares it returns when its
// context ends, as the remote adapters do, so the Bus calls it inline.
type honouring struct{ *Funcs }

func (honouring) HonoursContext() bool { return true }

func TestContextHonouringPluginsAreCalledInlineUnderTheirDeadline(t *testing.T) {
	var sawDeadline bool
	p := honouring{&Funcs{Name: "remote", PreToolCallCanProvideResultFunc: func(ctx context.Context, _ ToolCallRequest) (*ToolResult, error) {
		_, sawDeadline = ctx.Deadline()
		<-ctx.Done()
		return nil, ctx.Err()
	}}}
	b := newBus(t, Member{Plugin: p, Options: Options{ToolTimeout: 20 * time.Millisecond}})
	within(t, func() {
		if r := b.ProvideResult(context.Background(), call); r != nil {
			t.Errorf("got %+v", r)
		}
	})
	if !sawDeadline || b.Stats().Failures("remote", PreToolCallCanProvideResult, KindTimeout) != 1 {
		t.Fatalf("deadline seen %v, timeouts %d", sawDeadline, b.Stats().Failures("remote", PreToolCallCanProvideResult, KindTimeout))
	}
}
