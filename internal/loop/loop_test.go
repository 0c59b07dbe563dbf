package loop

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"sync"
	"testing"

	"github.com/hookhost/hookhost/dispatch"
	"github.com/hookhost/hookhost/hookbus"
	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/bustest"
)

// fake is a provider: it answers each call with answer(n, req), n counting
// from 0, records the calls and returns n as its W.
type fake struct {
	calls  []Call
	answer func(n int, c Call) (hooks.ModelResponse, error)
}

func (f *fake) upstream(_ context.Context, c Call) (hooks.ModelResponse, int, error) {
	n := len(f.calls)
	f.calls = append(f.calls, c)
	resp, err := f.answer(n, c)
	return resp, n, err
}

func text(s string) hooks.ModelResponse {
	return hooks.ModelResponse{
		StopReason: hooks.StopEndTurn,
		Message:    hooks.Message{Role: hooks.RoleAssistant, Content: s},
		Usage:      hooks.Usage{InputTokens: 10, OutputTokens: 2},
	}
}

func answers(texts ...string) *fake {
	return &fake{answer: func(n int, _ Call) (hooks.ModelResponse, error) {
		if n >= len(texts) {
			return hooks.ModelResponse{}, errors.New("fake: no more answers")
		}
		return text(texts[n]), nil
	}}
}

// counting counts the calls its plugin gets, by hook.
type counting struct {
	hooks.Plugin
	mu    sync.Mutex
	calls map[hooks.Name]int
}

func count(p hooks.Plugin) *counting { return &counting{Plugin: p, calls: map[hooks.Name]int{}} }

func (c *counting) Handle(ctx context.Context, hook hooks.Name, req any) (any, error) {
	c.mu.Lock()
	c.calls[hook]++
	c.mu.Unlock()
	return c.Plugin.Handle(ctx, hook, req)
}

func (c *counting) counts() map[hooks.Name]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[hooks.Name]int{}
	for k, v := range c.calls {
		out[k] = v
	}
	return out
}

// inferences records post_llm_call.
type inferences struct {
	mu  sync.Mutex
	got []hooks.Inference
}

func (r *inferences) plugin() *hooks.Funcs {
	return &hooks.Funcs{Name: "meter", PostLLMCallFunc: func(_ context.Context, ev hooks.Inference) error {
		r.mu.Lock()
		r.got = append(r.got, ev)
		r.mu.Unlock()
		return nil
	}}
}

func (r *inferences) all() []hooks.Inference {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]hooks.Inference(nil), r.got...)
}

func newBus(t *testing.T, plugins ...hooks.Plugin) *hookbus.Bus { return bustest.New(t, plugins...) }

func flush(t *testing.T, b *hookbus.Bus) { bustest.Flush(t, b) }

// journal is an Observer that writes down what it was told.
type journal struct {
	Quiet
	reissuing []string // plugin: reason
	failed    []error
	rewrote   []string
	called    []hooks.Inference
	tools     []string
}

func (j *journal) Reissuing(_ int, r *hookbus.ReissueRequest, _ hooks.ModelRequest, _ []string) {
	j.reissuing = append(j.reissuing, r.Plugin+": "+r.Reason)
}
func (j *journal) ReissueFailed(_ int, _ *hookbus.ReissueRequest, err error) {
	j.failed = append(j.failed, err)
}
func (j *journal) OutputTransformed(_ int, by []string) { j.rewrote = append(j.rewrote, by...) }
func (j *journal) ModelCalled(ev hooks.Inference, _ hooks.ModelResponse, _ error) {
	j.called = append(j.called, ev)
}
func (j *journal) ToolCalled(_ int, out dispatch.Outcome) { j.tools = append(j.tools, out.Call.ID) }

func escalate(model, reason string) *hooks.Funcs {
	return &hooks.Funcs{Name: "router", PostLLMCallCanReissueFunc: func(context.Context, hooks.LLMCall) (*hooks.Reissue, error) {
		return &hooks.Reissue{Patch: hooks.RequestPatch{Model: &model}, Reason: reason}, nil
	}}
}

func userAsks() hooks.ModelRequest {
	return hooks.ModelRequest{Model: "small", Messages: []hooks.Message{{Role: hooks.RoleUser, Content: "hi"}}}
}

// A plugin that asks for a reissue of every response gets one per
// iteration: the reissued response is not offered to it again.
func TestOneReissuePerIteration(t *testing.T) {
	router := count(escalate("large", "too hard"))
	bus := newBus(t, router)
	j := &journal{}
	l := &Loop{Bus: bus, SessionID: "s1", Route: hooks.RouteGateway, Observer: j}
	up := answers("first", "second", "third")

	resp, w, err := Infer(context.Background(), l, 1, userAsks(), up.upstream)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Content != "second" || w != 1 {
		t.Errorf("answer %q from call %d, want the reissue's (\"second\", call 1)", resp.Message.Content, w)
	}
	if len(up.calls) != 2 {
		t.Fatalf("%d model calls, want 2 (the first and one reissue)", len(up.calls))
	}
	if got := up.calls[1].Request.Model; got != "large" {
		t.Errorf("reissued to model %q, want the patch's \"large\"", got)
	}
	if up.calls[0].Reason != "" || up.calls[1].Reason != "too hard" {
		t.Errorf("call reasons %q, %q; want \"\" then \"too hard\"", up.calls[0].Reason, up.calls[1].Reason)
	}
	if n := router.counts()[hooks.PostLLMCallCanReissue]; n != 1 {
		t.Errorf("post_llm_call_can_reissue fired %d times in one iteration, want 1", n)
	}
	if !reflect.DeepEqual(j.reissuing, []string{"router: too hard"}) {
		t.Errorf("observer told of reissues %q", j.reissuing)
	}

	// The next iteration may be reissued again.
	if _, _, err := Infer(context.Background(), l, 2, userAsks(), answers("a", "b").upstream); err != nil {
		t.Fatal(err)
	}
	if n := router.counts()[hooks.PostLLMCallCanReissue]; n != 2 {
		t.Errorf("post_llm_call_can_reissue fired %d times over two iterations, want 2", n)
	}
}

// A reissue that fails leaves the first answer standing, with its W, and
// the observer is told why.
func TestFailedReissueKeepsFirstAnswer(t *testing.T) {
	bus := newBus(t, escalate("large", "retry"))
	j := &journal{}
	l := &Loop{Bus: bus, SessionID: "s1", Route: hooks.RouteGateway, Observer: j}
	up := answers("first") // the reissue finds no answer: it fails

	resp, w, err := Infer(context.Background(), l, 1, userAsks(), up.upstream)
	if err != nil {
		t.Fatalf("a failed reissue failed the iteration: %v", err)
	}
	if resp.Message.Content != "first" || w != 0 {
		t.Errorf("answer %q from call %d, want the first (\"first\", call 0)", resp.Message.Content, w)
	}
	if len(j.failed) != 1 || j.failed[0].Error() != "fake: no more answers" {
		t.Errorf("observer told of failed reissues %v, want the upstream's error", j.failed)
	}
}

// A reissue that fails because the run was cancelled fails the iteration:
// nobody is waiting for the first answer.
func TestReissueCancelledFails(t *testing.T) {
	bus := newBus(t, escalate("large", "retry"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	j := &journal{}
	l := &Loop{Bus: bus, SessionID: "s1", Route: hooks.RouteGateway, Observer: j}
	up := &fake{answer: func(n int, _ Call) (hooks.ModelResponse, error) {
		if n == 0 {
			return text("first"), nil
		}
		cancel()
		return hooks.ModelResponse{}, context.Canceled
	}}
	_, w, err := Infer(ctx, l, 1, userAsks(), up.upstream)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	if w != 0 || len(j.failed) != 0 {
		t.Errorf("W %d and failed reissues %v, want zero and none", w, j.failed)
	}
}

// post_llm_call sees both calls of a reissued iteration, the second
// escalated with the plugin's reason, a failed one with its error.
func TestPostLLMCallForEveryCall(t *testing.T) {
	for _, fails := range []bool{false, true} {
		rec := &inferences{}
		bus := newBus(t, escalate("large", "needs depth"), rec.plugin())
		j := &journal{}
		l := &Loop{Bus: bus, SessionID: "s7", Route: hooks.RouteBypass, Observer: j}
		up := answers("first", "second")
		if fails {
			up = answers("first")
		}
		if _, _, err := Infer(context.Background(), l, 3, userAsks(), up.upstream); err != nil {
			t.Fatal(err)
		}
		flush(t, bus)
		got := rec.all()
		if len(got) != 2 {
			t.Fatalf("fails=%v: post_llm_call fired %d times, want 2: %+v", fails, len(got), got)
		}
		first, second := got[0], got[1]
		if first.Escalated || first.Reason != "" || first.Model != "small" || first.Error != "" {
			t.Errorf("fails=%v: first call's event %+v, want not escalated, model small, no error", fails, first)
		}
		if !second.Escalated || second.Reason != "needs depth" || second.Model != "large" {
			t.Errorf("fails=%v: reissue's event %+v, want escalated, reason \"needs depth\", model large", fails, second)
		}
		if fails != (second.Error == "fake: no more answers") {
			t.Errorf("fails=%v: reissue's event error %q", fails, second.Error)
		}
		for _, ev := range got {
			if ev.SessionID != "s7" || ev.Iteration != 3 || ev.Route != hooks.RouteBypass {
				t.Errorf("fails=%v: event %+v, want session s7, iteration 3, route bypass", fails, ev)
			}
		}
		if first.Usage.InputTokens != 10 || first.StopReason != hooks.StopEndTurn {
			t.Errorf("fails=%v: first call's usage %+v and stop %q, want the response's", fails, first.Usage, first.StopReason)
		}
		if !reflect.DeepEqual(j.called, got) {
			t.Errorf("fails=%v: observer told of %+v, plugins of %+v", fails, j.called, got)
		}
	}
}

// With nobody subscribed to the model hooks, the Bus is not asked: the
// history goes to the model as it is (capped, not copied), and a plugin
// subscribed to the other hooks is never called. With a subscriber, each
// hook is asked once per call and plugins get a copy of the history.
func TestBusAskedOnlyForSubscribedHooks(t *testing.T) {
	history := make([]hooks.Message, 1, 8)
	history[0] = hooks.Message{Role: hooks.RoleUser, Content: "hi"}
	req := hooks.ModelRequest{Model: "m", Messages: history, Tools: []hooks.ToolSpec{{Name: "t"}}}

	bystander := count(&hooks.Funcs{
		Name:             "bystander",
		OnSessionEndFunc: func(context.Context, hooks.SessionEnd) error { return nil },
		PreToolCallFunc: func(context.Context, hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
			return nil, nil
		},
	})
	for _, bus := range []*hookbus.Bus{nil, newBus(t, bystander)} {
		l := &Loop{Bus: bus, SessionID: "s", Route: hooks.RouteGateway}
		up := answers("ok")
		if _, _, err := Infer(context.Background(), l, 1, req, up.upstream); err != nil {
			t.Fatal(err)
		}
		if out, by := l.Output(context.Background(), 1, "ok"); out != "ok" || by != nil {
			t.Errorf("Output with no transformer: %q, %v", out, by)
		}
		sent := up.calls[0].Request.Messages
		if &sent[0] != &history[0] || cap(sent) != len(sent) {
			t.Errorf("bus %p: the history was copied or not capped for a model call no plugin sees", bus)
		}
		if !reflect.DeepEqual(up.calls[0].Request.Tools, req.Tools) {
			t.Errorf("bus %p: tools %v, want %v", bus, up.calls[0].Request.Tools, req.Tools)
		}
	}
	if got := bystander.counts(); len(got) != 0 {
		t.Errorf("a plugin subscribed to no model hook was called: %v", got)
	}

	listener := count(&hooks.Funcs{
		Name: "listener",
		PreToolListFinalizedFunc: func(context.Context, hooks.ToolListRequest) (*hooks.ToolListOverride, error) {
			return nil, nil
		},
		PreAPIRequestMutableFunc: func(_ context.Context, ev hooks.APIRequest) (*hooks.RequestPatch, error) {
			ev.Request.Messages[0].Content = "changed in place"
			return nil, nil
		},
		PostLLMCallCanReissueFunc: func(context.Context, hooks.LLMCall) (*hooks.Reissue, error) { return nil, nil },
		PostLLMCallFunc:           func(context.Context, hooks.Inference) error { return nil },
		TransformLLMOutputFunc: func(context.Context, hooks.LLMOutput) (*hooks.TextReplacement, error) {
			return nil, nil
		},
	})
	bus := newBus(t, listener)
	l := &Loop{Bus: bus, SessionID: "s", Route: hooks.RouteGateway}
	up := answers("ok")
	if _, _, err := Infer(context.Background(), l, 1, req, up.upstream); err != nil {
		t.Fatal(err)
	}
	l.Output(context.Background(), 1, "ok")
	flush(t, bus)
	want := map[hooks.Name]int{
		hooks.PreToolListFinalized: 1, hooks.PreAPIRequestMutable: 1, hooks.PostLLMCallCanReissue: 1,
		hooks.PostLLMCall: 1, hooks.TransformLLMOutput: 1,
	}
	if got := listener.counts(); !reflect.DeepEqual(got, want) {
		t.Errorf("hooks asked %v, want %v", got, want)
	}
	if history[0].Content != "hi" {
		t.Errorf("a plugin changing its request's messages in place changed the history: %q", history[0].Content)
	}
}

// A model call appending to its request's messages cannot write into the
// driver's history.
func TestRequestMessagesCapped(t *testing.T) {
	history := make([]hooks.Message, 1, 8)
	history[0] = hooks.Message{Role: hooks.RoleUser, Content: "hi"}
	l := &Loop{SessionID: "s"}
	up := &fake{answer: func(_ int, c Call) (hooks.ModelResponse, error) {
		_ = append(c.Request.Messages, hooks.Message{Role: hooks.RoleAssistant, Content: "sneaked in"})
		return text("ok"), nil
	}}
	if _, _, err := Infer(context.Background(), l, 1, hooks.ModelRequest{Model: "m", Messages: history}, up.upstream); err != nil {
		t.Fatal(err)
	}
	if spare := history[:2]; spare[1].Content != "" {
		t.Errorf("the model call wrote %q into the history's spare capacity", spare[1].Content)
	}
}

// The hooks before the call shape the request the model gets.
func TestToolListAndPatchShapeTheRequest(t *testing.T) {
	sys := "be brief"
	bus := newBus(t, &hooks.Funcs{
		Name: "shaper",
		PreToolListFinalizedFunc: func(_ context.Context, req hooks.ToolListRequest) (*hooks.ToolListOverride, error) {
			return &hooks.ToolListOverride{Tools: req.Tools[:1]}, nil
		},
		PreAPIRequestMutableFunc: func(context.Context, hooks.APIRequest) (*hooks.RequestPatch, error) {
			return &hooks.RequestPatch{System: &sys}, nil
		},
	})
	l := &Loop{Bus: bus, SessionID: "s", Route: hooks.RouteGateway}
	up := answers("ok")
	req := userAsks()
	req.Tools = []hooks.ToolSpec{{Name: "keep"}, {Name: "drop"}}
	if _, _, err := Infer(context.Background(), l, 1, req, up.upstream); err != nil {
		t.Fatal(err)
	}
	got := up.calls[0].Request
	if len(got.Tools) != 1 || got.Tools[0].Name != "keep" || got.System != "be brief" {
		t.Errorf("model got tools %v and system %q, want [keep] and \"be brief\"", got.Tools, got.System)
	}
}

// A first call that fails fails the iteration, with the upstream's error
// and no reissue asked.
func TestFirstCallFailure(t *testing.T) {
	router := count(escalate("large", "x"))
	bus := newBus(t, router)
	l := &Loop{Bus: bus, SessionID: "s"}
	boom := errors.New("upstream down")
	up := &fake{answer: func(int, Call) (hooks.ModelResponse, error) { return hooks.ModelResponse{}, boom }}
	if _, _, err := Infer(context.Background(), l, 1, userAsks(), up.upstream); !errors.Is(err, boom) {
		t.Fatalf("error %v, want the upstream's", err)
	}
	if n := router.counts()[hooks.PostLLMCallCanReissue]; n != 0 {
		t.Errorf("a failed call was offered for reissue %d times", n)
	}
}

// transform_llm_output rewrites the final text, in plugin order, and the
// observer hears who rewrote it.
func TestOutputTransformsFinalText(t *testing.T) {
	suffix := func(name, s string) *hooks.Funcs {
		return &hooks.Funcs{Name: name, TransformLLMOutputFunc: func(_ context.Context, ev hooks.LLMOutput) (*hooks.TextReplacement, error) {
			if ev.SessionID != "s9" {
				return nil, errors.New("wrong session " + ev.SessionID)
			}
			return &hooks.TextReplacement{Text: ev.Text + s}, nil
		}}
	}
	j := &journal{}
	l := &Loop{Bus: newBus(t, suffix("a", " [a]"), suffix("b", " [b]")), SessionID: "s9", Observer: j}
	out, by := l.Output(context.Background(), 1, "answer")
	if out != "answer [a] [b]" || !reflect.DeepEqual(by, []string{"a", "b"}) {
		t.Errorf("Output = %q by %v, want \"answer [a] [b]\" by [a b]", out, by)
	}
	if !reflect.DeepEqual(j.rewrote, []string{"a", "b"}) {
		t.Errorf("observer told %v rewrote the answer", j.rewrote)
	}
}

// RunTools answers every call, in order; once the run is cancelled the
// calls not run get the pipeline's error result saying so.
func TestRunToolsAnswersEveryCall(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	reg, err := dispatch.NewRegistry(dispatch.Tool{
		Spec: hooks.ToolSpec{Name: "stop", InputSchema: json.RawMessage(`{"type":"object"}`)},
		Run: func(context.Context, json.RawMessage) (any, error) {
			cancel()
			return map[string]bool{"stopped": true}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	j := &journal{}
	l := &Loop{Pipeline: &dispatch.Pipeline{Registry: reg}, SessionID: "s", Observer: j}
	calls := []hooks.ToolCall{
		{ID: "c1", Name: "stop", Arguments: json.RawMessage(`{}`)},
		{ID: "c2", Name: "stop", Arguments: json.RawMessage(`{}`)},
		{ID: "c3", Name: "stop"},
	}
	outs, msgs, err := l.RunTools(ctx, 1, calls)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	if len(outs) != 1 || outs[0].Result.Content != `{"stopped":true}` || !reflect.DeepEqual(j.tools, []string{"c1"}) {
		t.Errorf("outcomes %+v, observed %v; want c1's alone", outs, j.tools)
	}
	notRun := dispatch.ErrorResult("not run: the turn was cancelled")
	if len(msgs) != 3 {
		t.Fatalf("%d tool messages for 3 calls", len(msgs))
	}
	for i, m := range msgs {
		if m.Role != hooks.RoleTool || m.ToolCallID != calls[i].ID || m.ToolName != "stop" {
			t.Errorf("message %d answers %+v, want call %s", i, m, calls[i].ID)
		}
		if i > 0 && (m.Content != notRun.Content || !m.IsError) {
			t.Errorf("message %d: %q (error %v), want %q", i, m.Content, m.IsError, notRun.Content)
		}
	}
}

// With WholeOutput, a final answer's transform is asked in the post-call
// stage, beside the reissue hook, and Output answers from it without
// asking again; another text, or an answer with tool calls, is asked as
// before.
func TestOutputAnswersFromThePostCallStage(t *testing.T) {
	p := count(&hooks.Funcs{Name: "p",
		PostLLMCallCanReissueFunc: func(context.Context, hooks.LLMCall) (*hooks.Reissue, error) { return nil, nil },
		TransformLLMOutputFunc: func(_ context.Context, ev hooks.LLMOutput) (*hooks.TextReplacement, error) {
			return &hooks.TextReplacement{Text: ev.Text + " [p]"}, nil
		},
	})
	j := &journal{}
	l := &Loop{Bus: newBus(t, p), SessionID: "s", Observer: j, WholeOutput: true}
	if _, _, err := Infer(context.Background(), l, 1, userAsks(), answers("final").upstream); err != nil {
		t.Fatal(err)
	}
	if got := p.counts()[hooks.TransformLLMOutput]; got != 1 {
		t.Fatalf("transform_llm_output asked %d times in the post-call stage, want 1", got)
	}
	out, by := l.Output(context.Background(), 1, "final")
	if out != "final [p]" || !reflect.DeepEqual(by, []string{"p"}) || !reflect.DeepEqual(j.rewrote, []string{"p"}) {
		t.Errorf("Output = %q by %v (observer told %v), want \"final [p]\" by p", out, by, j.rewrote)
	}
	if got := p.counts()[hooks.TransformLLMOutput]; got != 1 {
		t.Errorf("transform_llm_output asked %d times, want 1: Output answers from the stage", got)
	}
	// Taken once: asking again on the same text asks the plugin.
	if out, _ := l.Output(context.Background(), 1, "final"); out != "final [p]" || p.counts()[hooks.TransformLLMOutput] != 2 {
		t.Errorf("second Output = %q after %d asks, want the plugin asked again", out, p.counts()[hooks.TransformLLMOutput])
	}

	// Another text than the stage's is asked plainly.
	if _, _, err := Infer(context.Background(), l, 2, userAsks(), answers("other").upstream); err != nil {
		t.Fatal(err)
	}
	if out, _ := l.Output(context.Background(), 2, "shown differently"); out != "shown differently [p]" || p.counts()[hooks.TransformLLMOutput] != 4 {
		t.Errorf("Output = %q after %d asks, want the new text transformed by a plain call", out, p.counts()[hooks.TransformLLMOutput])
	}

	// Without WholeOutput (a driver that streams the answer in windows),
	// the post-call stage asks reissue only.
	l.WholeOutput = false
	if _, _, err := Infer(context.Background(), l, 3, userAsks(), answers("streamed").upstream); err != nil {
		t.Fatal(err)
	}
	if got := p.counts()[hooks.TransformLLMOutput]; got != 4 {
		t.Errorf("transform_llm_output asked %d times, want 4: not in the stage without WholeOutput", got)
	}
}
