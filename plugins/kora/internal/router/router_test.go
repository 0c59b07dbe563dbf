package router

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/llm/offline"
)

func call(model, system, answer string, stop hooks.StopReason, toolCalls ...hooks.ToolCall) hooks.LLMCall {
	return hooks.LLMCall{
		Iteration: 1,
		Request: hooks.ModelRequest{
			Model: model, System: system,
			Messages: []hooks.Message{{Role: hooks.RoleUser, Content: "show the tokens spent lately"}},
		},
		Response: hooks.ModelResponse{
			Model:      model,
			Message:    hooks.Message{Role: hooks.RoleAssistant, Content: answer, ToolCalls: toolCalls},
			StopReason: stop,
		},
	}
}

func TestDecide(t *testing.T) {
	cfg := onDefaults()
	escalatedSystem := "be brief\n\n" + ContextNote + `: "I'm not sure". Answer.`
	cases := []struct {
		name    string
		call    hooks.LLMCall
		reissue bool
		reason  string
	}{
		{"small tier hedges", call("offline-small", "", `I'm not sure I can answer "x" — kora__get_burn only loosely fits.`, hooks.StopEndTurn), true, `hedged: "i'm not sure"`},
		{"typographic apostrophe", call("offline-small", "", "I don’t know.", hooks.StopEndTurn), true, `hedged: "i don't know"`},
		{"upper case hedge", call("offline-small", "", "NOT SURE, SORRY", hooks.StopEndTurn), true, `hedged: "not sure"`},
		{"refusal phrase", call("offline-small", "", "I can't help with that.", hooks.StopEndTurn), true, `hedged: "i can't help"`},
		{"refusal stop reason", call("offline-small", "", "No.", hooks.StopRefusal), true, "refusal"},
		{"empty answer, no tool calls", call("offline-small", "", "  \n", hooks.StopEndTurn), true, "empty answer"},
		{"confident small answer", call("offline-small", "", "From now: time: 10:00.", hooks.StopEndTurn), false, "confident answer"},
		{"small tier calls a tool", call("offline-small", "", "", hooks.StopToolUse, hooks.ToolCall{ID: "c1", Name: "now", Arguments: json.RawMessage(`{}`)}), false, "response calls tools"},
		{"hedging text beside a tool call", call("offline-small", "", "I'm not sure, let me check.", hooks.StopToolUse, hooks.ToolCall{ID: "c1", Name: "now"}), false, "response calls tools"},
		{"strong tier hedges", call("offline-large", "", "I'm not sure.", hooks.StopEndTurn), false, "strong-tier response"},
		{"strong tier empty", call("offline-large", "", "", hooks.StopEndTurn), false, "strong-tier response"},
		{"unknown model hedges", call("gpt-x", "", "I'm not sure.", hooks.StopEndTurn), false, `model "gpt-x" is not in the small tier`},
		{"already escalated", call("offline-small", escalatedSystem, "I'm not sure.", hooks.StopEndTurn), false, "already escalated"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := Decide(cfg, tc.call)
			if d.Reissue != tc.reissue || d.Reason != tc.reason {
				t.Fatalf("Decide = %+v, want reissue=%v reason=%q", d, tc.reissue, tc.reason)
			}
			r := Reissue(cfg, tc.call, d)
			if (r != nil) != tc.reissue {
				t.Fatalf("Reissue = %+v for decision %+v", r, d)
			}
		})
	}
}

func TestDecideHonoursConfig(t *testing.T) {
	c := call("mini", "", "Perhaps, maybe.", hooks.StopEndTurn)
	cfg := Config{Enabled: true, SmallModels: []string{"mini"}, StrongModel: "maxi", HedgePhrases: []string{"perhaps"}}
	if d := Decide(cfg, c); !d.Reissue {
		t.Fatalf("a configured phrase on a configured small model did not escalate: %+v", d)
	}
	cfg.Enabled = false
	if d := Decide(cfg, c); d.Reissue {
		t.Fatalf("a disabled router escalated: %+v", d)
	}
	if d := Decide(onDefaults(), call("offline-small", "", "Perhaps, maybe.", hooks.StopEndTurn)); d.Reissue {
		t.Fatalf("a phrase outside the default list escalated: %+v", d)
	}
}

func TestReissuePatch(t *testing.T) {
	cfg := onDefaults()
	c := call("offline-small", "You are terse.", "I'm not sure.", hooks.StopEndTurn)
	r := Reissue(cfg, c, Decide(cfg, c))
	if r == nil || r.Patch.Model == nil || *r.Patch.Model != "offline-large" {
		t.Fatalf("patch does not move the call to the strong model: %+v", r)
	}
	sys := *r.Patch.System
	if !strings.HasPrefix(sys, "You are terse.\n\n") || !strings.Contains(sys, ContextNote+`: "I'm not sure."`) {
		t.Errorf("system prompt %q must keep the original and carry the small answer", sys)
	}
	if r.Patch.Messages != nil {
		t.Errorf("patch rewrites the messages; the history must stay as it was")
	}
	if want := `low-confidence answer from offline-small (hedged: "i'm not sure")`; r.Reason != want {
		t.Errorf("reason = %q, want %q", r.Reason, want)
	}
	// The escalated request carries the note, so the router will never
	// escalate it again, even if asked.
	c.Request, _ = r.Patch.Apply(c.Request)
	c.Response.Model = "offline-small"
	if d := Decide(cfg, c); d.Reissue {
		t.Fatalf("the patched request escalated again: %+v", d)
	}
}

// TestEscalationWithTheOfflineModel runs the decision against the real
// offline model: its small tier hedges on a weak match, and the patched
// request makes the strong tier act on the same question.
func TestEscalationWithTheOfflineModel(t *testing.T) {
	ctx := context.Background()
	p := offline.New()
	req := hooks.ModelRequest{
		Model:    offline.SmallModel,
		System:   "You are an operator's assistant.",
		Messages: []hooks.Message{{Role: hooks.RoleUser, Content: "show the tokens spent lately"}},
		Tools: []hooks.ToolSpec{{
			Name:        "kora__get_burn",
			Description: "Cost and tokens spent per model and per route over a window.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`),
		}},
	}
	resp, err := p.Complete(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	c := hooks.LLMCall{Iteration: 1, Request: req, Response: resp}
	d := Decide(onDefaults(), c)
	if !d.Reissue {
		t.Fatalf("offline-small answered %q and the router let it through (%s)", resp.Message.Content, d.Reason)
	}
	req2, _ := Reissue(onDefaults(), c, d).Patch.Apply(req)
	resp2, err := p.Complete(ctx, req2)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp2.Message.ToolCalls) != 1 || resp2.Message.ToolCalls[0].Name != "kora__get_burn" {
		t.Fatalf("offline-large after escalation answered %+v, want a kora__get_burn call", resp2.Message)
	}
}

func TestValidate(t *testing.T) {
	if err := onDefaults().Validate(); err != nil {
		t.Fatalf("defaults invalid: %v", err)
	}
	bad := []struct {
		mut  func(*Config)
		want string
	}{
		{func(c *Config) { c.StrongModel = "" }, "router.strong_model"},
		{func(c *Config) { c.SmallModels = []string{"offline-large"} }, "router.small_models[0]"},
		{func(c *Config) { c.SmallModels = []string{" "} }, "router.small_models[0] is empty"},
		{func(c *Config) { c.HedgePhrases = []string{"ok", ""} }, "router.hedge_phrases[1]"},
	}
	for _, b := range bad {
		c := onDefaults()
		b.mut(&c)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("Validate() = %v, want an error naming %s", err, b.want)
		}
	}
	off := Config{Enabled: false}
	if err := off.Validate(); err != nil {
		t.Errorf("a disabled router needs no models: %v", err)
	}
}

// onDefaults is the default config with the router turned on.
func onDefaults() Config {
	c := Defaults()
	c.Enabled = true
	return c
}

// The router is off unless the operator turns it on: it changes which
// model answers, and costs every model call a round trip to Kora.
func TestRouterIsOffByDefault(t *testing.T) {
	c := Defaults()
	if c.Enabled {
		t.Fatal("router enabled by default")
	}
	d := Decide(c, call("offline-small", "", "I'm not sure.", hooks.StopEndTurn))
	if d.Reissue || Reissue(c, call("offline-small", "", "I'm not sure.", hooks.StopEndTurn), d) != nil {
		t.Errorf("the default router decided %+v on a hedge, want no reissue", d)
	}
}
