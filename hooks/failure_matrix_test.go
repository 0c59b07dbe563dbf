package hooks

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"
)

// hookCase drives one synchronous hook: install sets the handler on a Funcs,
// good answers with a recognisable result, and fire returns a string that
// shows whose answer the Bus used ("" when nobody's).
type hookCase struct {
	hook    Name
	install func(f *Funcs, h func(context.Context) error)
	fire    func(b *Bus) string
}

var hookCases = []hookCase{
	{PreToolListFinalized, func(f *Funcs, h func(context.Context) error) {
		f.PreToolListFinalizedFunc = func(ctx context.Context, _ ToolListRequest) (*ToolListOverride, error) {
			if err := h(ctx); err != nil {
				return &ToolListOverride{Tools: []ToolSpec{{Name: "bad"}}}, err
			}
			return &ToolListOverride{Tools: []ToolSpec{{Name: "good"}}}, nil
		}
	}, func(b *Bus) string {
		if ch := b.ToolList(context.Background(), ToolListRequest{}); ch != nil {
			return ch.Tools[0].Name
		}
		return ""
	}},
	{PreAPIRequestMutable, func(f *Funcs, h func(context.Context) error) {
		f.PreAPIRequestMutableFunc = func(ctx context.Context, _ APIRequest) (*RequestPatch, error) {
			if err := h(ctx); err != nil {
				return &RequestPatch{Model: str("bad")}, err
			}
			return &RequestPatch{Model: str("good")}, nil
		}
	}, func(b *Bus) string {
		req, _ := b.MutateRequest(context.Background(), APIRequest{Request: ModelRequest{Model: ""}})
		return req.Model
	}},
	{PostLLMCallCanReissue, func(f *Funcs, h func(context.Context) error) {
		f.PostLLMCallCanReissueFunc = func(ctx context.Context, _ LLMCall) (*Reissue, error) {
			if err := h(ctx); err != nil {
				return &Reissue{Reason: "bad"}, err
			}
			return &Reissue{Reason: "good"}, nil
		}
	}, func(b *Bus) string {
		if r := b.Reissue(context.Background(), LLMCall{}); r != nil {
			return r.Reason
		}
		return ""
	}},
	{TransformLLMOutput, func(f *Funcs, h func(context.Context) error) {
		f.TransformLLMOutputFunc = func(ctx context.Context, _ LLMOutput) (*TextReplacement, error) {
			if err := h(ctx); err != nil {
				return &TextReplacement{Text: "bad"}, err
			}
			return &TextReplacement{Text: "good"}, nil
		}
	}, func(b *Bus) string {
		text, _ := b.TransformOutput(context.Background(), LLMOutput{Text: ""})
		return text
	}},
	{PreToolCall, func(f *Funcs, h func(context.Context) error) {
		f.PreToolCallFunc = func(ctx context.Context, _ ToolCallRequest) (*PreToolCallDecision, error) {
			if err := h(ctx); err != nil {
				return &PreToolCallDecision{Block: &Block{Message: "bad"}}, err
			}
			return &PreToolCallDecision{Block: &Block{Message: "good"}}, nil
		}
	}, func(b *Bus) string {
		return b.PreToolCall(context.Background(), call).Message
	}},
	{PreToolCallCanProvideResult, func(f *Funcs, h func(context.Context) error) {
		f.PreToolCallCanProvideResultFunc = func(ctx context.Context, _ ToolCallRequest) (*ToolResult, error) {
			if err := h(ctx); err != nil {
				return &ToolResult{Content: "bad"}, err
			}
			return &ToolResult{Content: "good"}, nil
		}
	}, func(b *Bus) string {
		if r := b.ProvideResult(context.Background(), call); r != nil {
			return r.Content
		}
		return ""
	}},
	{TransformToolResult, func(f *Funcs, h func(context.Context) error) {
		f.TransformToolResultFunc = func(ctx context.Context, _ ToolCallOutcome) (*ToolResult, error) {
			if err := h(ctx); err != nil {
				return &ToolResult{Content: "bad"}, err
			}
			return &ToolResult{Content: "good"}, nil
		}
	}, func(b *Bus) string {
		r, _ := b.TransformToolResult(context.Background(), ToolCallOutcome{Name: "now"})
		return r.Content
	}},
}

// TestFailureRuleOnEveryHook puts a failing plugin ahead of a good one on
// every synchronous hook, for every kind of failure, and checks that the
// failure counted as nil (the good plugin's answer is used, never the
// failing plugin's), and was counted under the right kind.
func TestFailureRuleOnEveryHook(t *testing.T) {
	for _, hc := range hookCases {
		for _, kind := range []FailureKind{KindError, KindPanic, KindTimeout, KindUnavailable} {
			t.Run(string(hc.hook)+"/"+kind.String(), func(t *testing.T) {
				wait := hang(t)
				fail := func(context.Context) error {
					switch kind {
					case KindPanic:
						panic("handler bug")
					case KindTimeout:
						wait()
						return errors.New("too late")
					case KindUnavailable:
						return ErrUnavailable
					}
					return errors.New("handler error")
				}
				broken, good := &Funcs{Name: "broken"}, &Funcs{Name: "good"}
				hc.install(broken, fail)
				hc.install(good, func(context.Context) error { return nil })
				short := Options{Timeout: 50 * time.Millisecond, ToolTimeout: 50 * time.Millisecond}
				b := newBus(t, Member{Plugin: broken, Options: short}, in(good))
				var got string
				within(t, func() { got = hc.fire(b) })
				if got != "good" {
					t.Fatalf("got %q, want the good plugin's answer", got)
				}
				if n := b.Stats().Failures("broken", hc.hook, kind); n != 1 {
					t.Fatalf("%s counted %d times", kind, n)
				}
			})
		}
	}
}

// TestObserverFailuresNeverReachTheCaller runs every observer hook against a
// plugin that fails each way and checks the caller returns and the failure
// is counted.
func TestObserverFailuresNeverReachTheCaller(t *testing.T) {
	for _, kind := range []FailureKind{KindError, KindPanic, KindTimeout} {
		t.Run(kind.String(), func(t *testing.T) {
			wait := hang(t)
			fail := func() error {
				switch kind {
				case KindPanic:
					panic("observer bug")
				case KindTimeout:
					wait()
				}
				return errors.New("observer error")
			}
			p := &Funcs{
				Name:               "obs",
				OnSessionStartFunc: func(context.Context, SessionStart) error { return fail() },
				OnSessionEndFunc:   func(context.Context, SessionEnd) error { return fail() },
				PostLLMCallFunc:    func(context.Context, Inference) error { return fail() },
				PostToolCallFunc:   func(context.Context, ToolCallOutcome) error { return fail() },
			}
			b := newBus(t, Member{Plugin: p, Options: Options{Timeout: 50 * time.Millisecond}})
			within(t, func() {
				b.SessionStart(SessionStart{})
				b.LLMCallDone(Inference{})
				b.ToolCallDone(ToolCallOutcome{Name: "x", Arguments: json.RawMessage(`{}`)})
				b.SessionEnd(SessionEnd{})
				if err := b.Flush(context.Background()); err != nil {
					t.Error(err)
				}
			})
			for _, h := range []Name{OnSessionStart, PostLLMCall, PostToolCall, OnSessionEnd} {
				if n := b.Stats().Failures("obs", h, kind); n != 1 {
					t.Errorf("%s: %s counted %d times", h, kind, n)
				}
			}
		})
	}
}
