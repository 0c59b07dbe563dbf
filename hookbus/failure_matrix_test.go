package hookbus_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/hookhost/hookhost/hookbus"
	"github.com/hookhost/hookhost/hooks"
)

// hookCase drives one synchronous hook: install sets the handler on a Funcs,
// good answers with a recognisable result, and fire returns a string that
// shows whose answer the Bus used ("" when nobody's).
type hookCase struct {
	hook    hooks.Name
	install func(f *hooks.Funcs, h func(context.Context) error)
	fire    func(b *hookbus.Bus) string
}

var hookCases = []hookCase{
	{hooks.PreToolListFinalized, func(f *hooks.Funcs, h func(context.Context) error) {
		f.PreToolListFinalizedFunc = func(ctx context.Context, _ hooks.ToolListRequest) (*hooks.ToolListOverride, error) {
			if err := h(ctx); err != nil {
				return &hooks.ToolListOverride{Tools: []hooks.ToolSpec{{Name: "bad"}}}, err
			}
			return &hooks.ToolListOverride{Tools: []hooks.ToolSpec{{Name: "good"}}}, nil
		}
	}, func(b *hookbus.Bus) string {
		if ch := b.PreToolListFinalized(context.Background(), hooks.ToolListRequest{}); ch != nil {
			return ch.Tools[0].Name
		}
		return ""
	}},
	{hooks.PreAPIRequestMutable, func(f *hooks.Funcs, h func(context.Context) error) {
		f.PreAPIRequestMutableFunc = func(ctx context.Context, _ hooks.APIRequest) (*hooks.RequestPatch, error) {
			if err := h(ctx); err != nil {
				return &hooks.RequestPatch{Model: str("bad")}, err
			}
			return &hooks.RequestPatch{Model: str("good")}, nil
		}
	}, func(b *hookbus.Bus) string {
		req, _ := b.PreAPIRequestMutable(context.Background(), hooks.APIRequest{Request: hooks.ModelRequest{Model: ""}})
		return req.Model
	}},
	{hooks.PostLLMCallCanReissue, func(f *hooks.Funcs, h func(context.Context) error) {
		f.PostLLMCallCanReissueFunc = func(ctx context.Context, _ hooks.LLMCall) (*hooks.Reissue, error) {
			if err := h(ctx); err != nil {
				return &hooks.Reissue{Reason: "bad"}, err
			}
			return &hooks.Reissue{Reason: "good"}, nil
		}
	}, func(b *hookbus.Bus) string {
		if r := b.PostLLMCallCanReissue(context.Background(), hooks.LLMCall{}); r != nil {
			return r.Reason
		}
		return ""
	}},
	{hooks.TransformLLMOutput, func(f *hooks.Funcs, h func(context.Context) error) {
		f.TransformLLMOutputFunc = func(ctx context.Context, _ hooks.LLMOutput) (*hooks.TextReplacement, error) {
			if err := h(ctx); err != nil {
				return &hooks.TextReplacement{Text: "bad"}, err
			}
			return &hooks.TextReplacement{Text: "good"}, nil
		}
	}, func(b *hookbus.Bus) string {
		text, _ := b.TransformLLMOutput(context.Background(), hooks.LLMOutput{Text: ""})
		return text
	}},
	{hooks.PreToolCall, func(f *hooks.Funcs, h func(context.Context) error) {
		f.PreToolCallFunc = func(ctx context.Context, _ hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
			if err := h(ctx); err != nil {
				return &hooks.PreToolCallDecision{Block: &hooks.Block{Message: "bad"}}, err
			}
			return &hooks.PreToolCallDecision{Block: &hooks.Block{Message: "good"}}, nil
		}
	}, func(b *hookbus.Bus) string {
		return b.PreToolCall(context.Background(), call).Message
	}},
	{hooks.PreToolCallCanProvideResult, func(f *hooks.Funcs, h func(context.Context) error) {
		f.PreToolCallCanProvideResultFunc = func(ctx context.Context, _ hooks.ToolCallRequest) (*hooks.ToolResult, error) {
			if err := h(ctx); err != nil {
				return &hooks.ToolResult{Content: "bad"}, err
			}
			return &hooks.ToolResult{Content: "good"}, nil
		}
	}, func(b *hookbus.Bus) string {
		if r := b.PreToolCallCanProvideResult(context.Background(), call); r != nil {
			return r.Content
		}
		return ""
	}},
	{hooks.TransformToolResult, func(f *hooks.Funcs, h func(context.Context) error) {
		f.TransformToolResultFunc = func(ctx context.Context, _ hooks.ToolCallOutcome) (*hooks.ToolResult, error) {
			if err := h(ctx); err != nil {
				return &hooks.ToolResult{Content: "bad"}, err
			}
			return &hooks.ToolResult{Content: "good"}, nil
		}
	}, func(b *hookbus.Bus) string {
		r, _ := b.TransformToolResult(context.Background(), hooks.ToolCallOutcome{Name: "now", Arguments: json.RawMessage(`{}`)})
		return r.Content
	}},
}

// TestFailureRuleOnEveryHook puts a failing plugin ahead of a good one on
// every synchronous hook, for every kind of failure and every way of
// holding a plugin, and checks that the failure counted as nil (the good
// plugin's answer is used, never the failing plugin's), and was counted
// under the right kind.
func TestFailureRuleOnEveryHook(t *testing.T) {
	eachWay(t, func(t *testing.T, r rig) {
		for _, hc := range hookCases {
			for _, kind := range failures {
				t.Run(string(hc.hook)+"/"+kind.String(), func(t *testing.T) {
					r := r.sub(t)
					f := fail(t, kind)
					broken, good := &hooks.Funcs{Name: "broken"}, &hooks.Funcs{Name: "good"}
					hc.install(broken, func(context.Context) error { return f() })
					hc.install(good, func(context.Context) error { return nil })
					b := newBus(t, r.broken(broken, kind, hookbus.Options{}), r.in(good))
					var got string
					within(t, func() { got = hc.fire(b) })
					if got != "good" {
						t.Fatalf("got %q, want the good plugin's answer", got)
					}
					if n := b.Stats().Failures("broken", hc.hook, kind); n != 1 {
						t.Fatalf("%s counted %d times (stats %+v)", kind, n, b.Stats().Hooks)
					}
				})
			}
		}
	})
}

// TestObserverFailuresNeverReachTheCaller runs every observer hook against a
// plugin that fails each way and checks the caller returns and the failure
// is counted.
func TestObserverFailuresNeverReachTheCaller(t *testing.T) {
	eachWay(t, func(t *testing.T, r rig) {
		for _, kind := range failures {
			t.Run(kind.String(), func(t *testing.T) {
				r := r.sub(t)
				f := fail(t, kind)
				p := &hooks.Funcs{
					Name:               "obs",
					OnSessionStartFunc: func(context.Context, hooks.SessionStart) error { return f() },
					OnSessionEndFunc:   func(context.Context, hooks.SessionEnd) error { return f() },
					PostLLMCallFunc:    func(context.Context, hooks.Inference) error { return f() },
					PostToolCallFunc:   func(context.Context, hooks.ToolCallOutcome) error { return f() },
				}
				b := newBus(t, r.broken(p, kind, hookbus.Options{Timeout: 50 * time.Millisecond}))
				within(t, func() {
					b.OnSessionStart(hooks.SessionStart{})
					b.PostLLMCall(hooks.Inference{})
					b.PostToolCall(hooks.ToolCallOutcome{Name: "x", Arguments: json.RawMessage(`{}`)})
					b.OnSessionEnd(hooks.SessionEnd{})
					if err := b.Flush(context.Background()); err != nil {
						t.Error(err)
					}
				})
				for _, h := range []hooks.Name{hooks.OnSessionStart, hooks.PostLLMCall, hooks.PostToolCall, hooks.OnSessionEnd} {
					if n := b.Stats().Failures("obs", h, kind); n != 1 {
						t.Errorf("%s: %s counted %d times", h, kind, n)
					}
				}
			})
		}
	})
}
