package hookbus_test

import (
	"context"
	"strings"
	"testing"

	"github.com/hookhost/hookhost/hookbus"
	"github.com/hookhost/hookhost/hooks"
)

// on_user_message: any block wins (the first blocker's message), and
// contexts concatenate in priority order; a failing plugin and a malformed
// answer (block and context at once) count as no opinion.
func TestOnUserMessageBlockWinsContextsConcatenate(t *testing.T) {
	eachWay(t, func(t *testing.T, r rig) {
		adds := func(name, text string) *hooks.Funcs {
			return &hooks.Funcs{Name: name, OnUserMessageFunc: func(_ context.Context, m hooks.UserMessage) (*hooks.UserMessageDecision, error) {
				if m.Text == "block" && name == "b" {
					return &hooks.UserMessageDecision{Block: &hooks.Block{Message: "no, says " + name}}, nil
				}
				return &hooks.UserMessageDecision{AdditionalContext: text}, nil
			}}
		}
		f := fail(t, hookbus.KindPanic)
		panicky := &hooks.Funcs{Name: "panicky", OnUserMessageFunc: func(context.Context, hooks.UserMessage) (*hooks.UserMessageDecision, error) { return nil, f() }}
		both := &hooks.Funcs{Name: "both", OnUserMessageFunc: func(context.Context, hooks.UserMessage) (*hooks.UserMessageDecision, error) {
			return &hooks.UserMessageDecision{Block: &hooks.Block{Message: "x"}, AdditionalContext: "y"}, nil
		}}
		abstain := &hooks.Funcs{Name: "abstain", OnUserMessageFunc: func(context.Context, hooks.UserMessage) (*hooks.UserMessageDecision, error) { return nil, nil }}
		b := newBus(t, r.in(adds("a", "first")), r.in(abstain), r.quick(panicky), r.in(both), r.in(adds("b", "second")), r.in(adds("c", "third")))

		out := b.OnUserMessage(context.Background(), hooks.UserMessage{SessionID: "s", Text: "hello"})
		if out.Blocked || out.Context != "first\n\nsecond\n\nthird" || strings.Join(out.ContextBy, ",") != "a,b,c" {
			t.Fatalf("contexts: %+v", out)
		}
		out = b.OnUserMessage(context.Background(), hooks.UserMessage{SessionID: "s", Text: "block"})
		if !out.Blocked || out.BlockedBy != "b" || out.Message != "no, says b" || out.Context != "" {
			t.Fatalf("block: %+v, want b's block and no context", out)
		}
	})
}

// post_tool_call_can_add_context: per tool (matchers apply), contexts
// concatenate in priority order.
func TestToolContextsConcatenateForMatchingPlugins(t *testing.T) {
	eachWay(t, func(t *testing.T, r rig) {
		adds := func(name string, matchers ...string) *hooks.Funcs {
			return &hooks.Funcs{Name: name, Matchers: matchers, PostToolCallCanAddContextFunc: func(_ context.Context, ev hooks.ToolCallOutcome) (*hooks.AddedContext, error) {
				return &hooks.AddedContext{AdditionalContext: name + " saw " + ev.Result.Content}, nil
			}}
		}
		b := newBus(t, r.in(adds("a")), r.in(adds("b", "other_*")), r.in(adds("c", "n*")))
		added, by := b.PostToolCallCanAddContext(context.Background(), hooks.ToolCallOutcome{Name: "now", Result: hooks.ToolResult{Content: `"12:00"`}})
		if added != `a saw "12:00"`+"\n\n"+`c saw "12:00"` || strings.Join(by, ",") != "a,c" {
			t.Fatalf("context %q by %v", added, by)
		}
	})
}

func TestWithContextAppendsAMarkedBlock(t *testing.T) {
	if got := hookbus.WithContext(`{"ok":true}`, "note"); got != "{\"ok\":true}\n\n<additional_context>\nnote\n</additional_context>" {
		t.Fatalf("WithContext = %q", got)
	}
	if got := hookbus.WithContext(`{"ok":true}`, ""); got != `{"ok":true}` {
		t.Fatalf("WithContext with no context = %q, want the content as it was", got)
	}
}
