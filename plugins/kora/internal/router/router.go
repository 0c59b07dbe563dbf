// Package router is Kora's model router: it decides, from one model
// response and the request behind it, whether the call should be reissued
// to the strong model.
//
// The rule is deliberately narrow. Only a response from a small-tier model
// is a candidate, and only when it looks low-confidence: an empty answer, a
// refusal, or text containing one of the hedge phrases. A response that
// calls tools is acting, not hedging, and is left alone. A strong-tier
// response, and any request that already carries the router's own note
// (so is itself an escalation), is never reissued: escalation happens at
// most once, whatever the host does.
//
// Decide is a pure function, so the decision is tested without a host.
package router

import (
	"fmt"
	"strings"

	"github.com/hookhost/hookhost/hooks"
)

// Config is the router's part of Kora's config.
type Config struct {
	// Enabled turns the router on; with it off Kora never reissues.
	Enabled bool `json:"enabled"`
	// SmallModels are the models whose low-confidence answers escalate.
	SmallModels []string `json:"small_models"`
	// StrongModel is where escalations go.
	StrongModel string `json:"strong_model"`
	// HedgePhrases are matched case-insensitively, with typographic
	// apostrophes folded to ASCII, anywhere in the answer text.
	HedgePhrases []string `json:"hedge_phrases"`
}

// DefaultHedgePhrases catch the usual ways a model says it does not know or
// will not answer.
var DefaultHedgePhrases = []string{
	"i'm not sure",
	"i am not sure",
	"not sure",
	"i don't know",
	"i do not know",
	"i'm unable to",
	"i am unable to",
	"i can't help",
	"i cannot help",
	"i can't answer",
	"i cannot answer",
	"i can't assist",
	"i cannot assist",
}

// Defaults returns the router config used when Kora's config leaves it out:
// off, and once turned on, offline-small escalates to offline-large. Off,
// because the router changes which model answers and costs every model
// call a round trip to Kora: an operator asks for it, naming their own
// tiers.
func Defaults() Config {
	return Config{
		Enabled:      false,
		SmallModels:  []string{"offline-small"},
		StrongModel:  "offline-large",
		HedgePhrases: append([]string(nil), DefaultHedgePhrases...),
	}
}

// Validate reports a config the router cannot act on; the error names the
// key under Kora's config table.
func (c Config) Validate() error {
	if !c.Enabled {
		return nil
	}
	if strings.TrimSpace(c.StrongModel) == "" {
		return fmt.Errorf("router.strong_model is empty (name the model escalations go to, or set router.enabled = false)")
	}
	for i, m := range c.SmallModels {
		if strings.TrimSpace(m) == "" {
			return fmt.Errorf("router.small_models[%d] is empty", i)
		}
		if m == c.StrongModel {
			return fmt.Errorf("router.small_models[%d] = %q is also router.strong_model; a model cannot escalate to itself", i, m)
		}
	}
	for i, p := range c.HedgePhrases {
		if strings.TrimSpace(p) == "" {
			return fmt.Errorf("router.hedge_phrases[%d] is empty; an empty phrase would match every answer", i)
		}
	}
	return nil
}

// ContextNote starts the text the router adds to the reissued request's
// system prompt. The phrase "model answered" is also what the offline model
// recognises as a context note rather than a question.
const ContextNote = "A smaller model answered"

// Decision is the router's verdict on one response.
type Decision struct {
	Reissue bool
	// Reason says why, for the ledger and the trace; set for both verdicts.
	Reason string
}

// Decide applies the routing rule to one model call.
func Decide(cfg Config, call hooks.LLMCall) Decision {
	if !cfg.Enabled {
		return Decision{Reason: "router disabled"}
	}
	model := answeredBy(call)
	switch {
	case model == cfg.StrongModel || call.Request.Model == cfg.StrongModel:
		return Decision{Reason: "strong-tier response"}
	case !contains(cfg.SmallModels, model):
		return Decision{Reason: fmt.Sprintf("model %q is not in the small tier", model)}
	case alreadyEscalated(call.Request):
		return Decision{Reason: "already escalated"}
	case len(call.Response.Message.ToolCalls) > 0:
		return Decision{Reason: "response calls tools"}
	}
	text := strings.TrimSpace(call.Response.Message.Content)
	switch {
	case text == "":
		return Decision{Reissue: true, Reason: "empty answer"}
	case call.Response.StopReason == hooks.StopRefusal:
		return Decision{Reissue: true, Reason: "refusal"}
	}
	if p, ok := hedge(cfg.HedgePhrases, text); ok {
		return Decision{Reissue: true, Reason: fmt.Sprintf("hedged: %q", p)}
	}
	return Decision{Reason: "confident answer"}
}

// Reissue builds the request patch for a positive decision: the strong
// model, and the original system prompt plus a note carrying the small
// model's answer. The note goes into the system prompt rather than the
// messages so the user's question stays the last user message and the
// conversation history is left as it was.
func Reissue(cfg Config, call hooks.LLMCall, d Decision) *hooks.Reissue {
	if !d.Reissue {
		return nil
	}
	model := cfg.StrongModel
	answer := strings.TrimSpace(call.Response.Message.Content)
	if answer == "" {
		answer = "(nothing)"
	}
	note := fmt.Sprintf("%s: %q. Kora judged it low-confidence (%s). Answer the user's last question directly, using the tools where they help.",
		ContextNote, answer, d.Reason)
	system := note
	if s := strings.TrimSpace(call.Request.System); s != "" {
		system = call.Request.System + "\n\n" + note
	}
	return &hooks.Reissue{
		Patch:  hooks.RequestPatch{Model: &model, System: &system},
		Reason: fmt.Sprintf("low-confidence answer from %s (%s)", answeredBy(call), d.Reason),
	}
}

// answeredBy is the model that produced the response; providers normally
// echo it, the request names it otherwise.
func answeredBy(call hooks.LLMCall) string {
	if call.Response.Model != "" {
		return call.Response.Model
	}
	return call.Request.Model
}

func alreadyEscalated(req hooks.ModelRequest) bool {
	if strings.Contains(req.System, ContextNote) {
		return true
	}
	for _, m := range req.Messages {
		if m.Role == hooks.RoleUser && strings.Contains(m.Content, ContextNote) {
			return true
		}
	}
	return false
}

func hedge(phrases []string, text string) (string, bool) {
	t := fold(text)
	for _, p := range phrases {
		if strings.Contains(t, fold(p)) {
			return p, true
		}
	}
	return "", false
}

// fold lowercases and straightens apostrophes, since models emit both ' and
// the typographic ’.
func fold(s string) string {
	return strings.ToLower(strings.NewReplacer("’", "'", "‘", "'").Replace(s))
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
