package hooks_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/hookhost/hookhost/hooks"
)

func TestValidateManifest(t *testing.T) {
	cases := []struct {
		name              string
		m                 hooks.Manifest
		allowToolOverride bool
		want              string // substring of the error; "" means valid
	}{
		{"ok", hooks.Manifest{Name: "kora", Hooks: []hooks.Name{hooks.PreToolCall}, Matchers: []string{"kora__*"}, Tools: []hooks.ToolSpec{{Name: "kora__get_burn", InputSchema: json.RawMessage(`{"type":"object"}`)}}}, false, ""},
		{"no name", hooks.Manifest{}, false, "no name"},
		{"unknown hook", hooks.Manifest{Name: "p", Hooks: []hooks.Name{"pre_everything"}}, false, `unknown hook "pre_everything"`},
		{"hook twice", hooks.Manifest{Name: "p", Hooks: []hooks.Name{hooks.PreToolCall, hooks.PreToolCall}}, false, "listed twice"},
		{"bad glob", hooks.Manifest{Name: "p", Matchers: []string{"kora__["}}, false, "not a valid glob"},
		{"outside namespace", hooks.Manifest{Name: "kora", Tools: []hooks.ToolSpec{{Name: "read_file"}}}, false, "outside the plugin's namespace"},
		{"override allowed", hooks.Manifest{Name: "kora", Tools: []hooks.ToolSpec{{Name: "read_file"}}}, true, ""},
		{"illegal tool name", hooks.Manifest{Name: "kora", Tools: []hooks.ToolSpec{{Name: "kora__a.b"}}}, false, "must match"},
		{"tool twice", hooks.Manifest{Name: "kora", Tools: []hooks.ToolSpec{{Name: "kora__a"}, {Name: "kora__a"}}}, false, "declared twice"},
		{"schema not object", hooks.Manifest{Name: "kora", Tools: []hooks.ToolSpec{{Name: "kora__a", InputSchema: json.RawMessage(`[]`)}}}, false, "not a JSON object"},
		{"hook matchers of a hook not served", hooks.Manifest{Name: "p", Hooks: []hooks.Name{hooks.PreToolCall}, HookMatchers: map[hooks.Name][]string{hooks.PostToolCall: {"*"}}}, false, "does not serve"},
		{"hook matchers of a hook not per tool", hooks.Manifest{Name: "p", Hooks: []hooks.Name{hooks.PostLLMCall}, HookMatchers: map[hooks.Name][]string{hooks.PostLLMCall: {"*"}}}, false, "not a tool hook"},
		{"bad per-hook glob", hooks.Manifest{Name: "p", Hooks: []hooks.Name{hooks.PreToolCall}, HookMatchers: map[hooks.Name][]string{hooks.PreToolCall: {"["}}}, false, "not a valid glob"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := hooks.ValidateManifest(c.m, c.allowToolOverride)
			if c.want == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			var me *hooks.ManifestError
			if !errors.As(err, &me) || me.Plugin != c.m.Name || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want a ManifestError for %q containing %q", err, c.m.Name, c.want)
			}
			if c.m.Name != "" && !strings.Contains(err.Error(), `plugin "`+c.m.Name+`"`) {
				t.Fatalf("error %q does not name the plugin", err)
			}
		})
	}
}

func TestPreToolCallDecisionHoldsOneAnswer(t *testing.T) {
	ask := &hooks.ApprovalRequest{Reason: "why"}
	for _, d := range []*hooks.PreToolCallDecision{
		{Block: &hooks.Block{Message: "no"}, Ask: ask},
		{Ask: ask, ModifiedArgs: json.RawMessage(`{}`)},
		{Block: &hooks.Block{Message: "no"}, Ask: ask, ModifiedArgs: json.RawMessage(`{}`)},
	} {
		if err := hooks.CheckAnswer("p", hooks.PreToolCall, d, 1<<20, 0); err == nil || !strings.Contains(err.Error(), "more than one of block, ask and modified_args") {
			t.Errorf("CheckAnswer(%+v) = %v, want more than one answer refused", d, err)
		}
	}
	if err := hooks.CheckAnswer("p", hooks.PreToolCall, &hooks.PreToolCallDecision{Ask: ask}, 1<<20, 0); err != nil {
		t.Errorf("an ask alone: %v", err)
	}
	if err := hooks.CheckAnswer("p", hooks.PreToolCall, &hooks.PreToolCallDecision{Ask: &hooks.ApprovalRequest{Reason: strings.Repeat("x", 100)}}, 10, 0); err == nil {
		t.Error("an ask whose reason is over the size limit was accepted")
	}
}

func TestCheckProvidedResponse(t *testing.T) {
	call := func(id, name, args string) hooks.ToolCall {
		return hooks.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(args)}
	}
	text := hooks.Message{Content: "hello"}
	cases := []struct {
		name string
		r    hooks.ModelResponse
		want string // substring of the error; "" means legal
	}{
		{"text, role left empty", hooks.ModelResponse{Message: text}, ""},
		{"assistant with a call", hooks.ModelResponse{Message: hooks.Message{Role: hooks.RoleAssistant, ToolCalls: []hooks.ToolCall{call("c1", "notify", `{"a":1}`)}}, StopReason: hooks.StopToolUse}, ""},
		{"call without arguments", hooks.ModelResponse{Message: hooks.Message{ToolCalls: []hooks.ToolCall{call("c1", "notify", "")}}}, ""},
		{"user role", hooks.ModelResponse{Message: hooks.Message{Role: hooks.RoleUser, Content: "x"}}, `role "user"`},
		{"tool-result fields", hooks.ModelResponse{Message: hooks.Message{Content: "x", ToolCallID: "c"}}, "tool-result fields"},
		{"empty", hooks.ModelResponse{}, "neither text nor tool calls"},
		{"call without id", hooks.ModelResponse{Message: hooks.Message{ToolCalls: []hooks.ToolCall{call("", "notify", "{}")}}}, "no id"},
		{"bad tool name", hooks.ModelResponse{Message: hooks.Message{ToolCalls: []hooks.ToolCall{call("c1", "no good", "{}")}}}, "must match"},
		{"id twice", hooks.ModelResponse{Message: hooks.Message{ToolCalls: []hooks.ToolCall{call("c1", "a", "{}"), call("c1", "b", "{}")}}}, "used twice"},
		{"arguments not an object", hooks.ModelResponse{Message: hooks.Message{ToolCalls: []hooks.ToolCall{call("c1", "a", "[1]")}}}, "not a JSON object"},
		{"unknown stop reason", hooks.ModelResponse{Message: text, StopReason: "bored"}, `stop reason "bored"`},
		{"tool_use without calls", hooks.ModelResponse{Message: text, StopReason: hooks.StopToolUse}, "tool_use without tool calls"},
		{"negative usage", hooks.ModelResponse{Message: text, Usage: hooks.Usage{OutputTokens: -1}}, "negative"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := hooks.CheckAnswer("p", hooks.PreLLMCallCanProvideResponse, &c.r, 0, 0)
			if c.want == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if !errors.Is(err, hooks.ErrMalformed) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want a malformed answer saying %q", err, c.want)
			}
		})
	}
	big := hooks.ModelResponse{Message: hooks.Message{Content: strings.Repeat("x", 100)}}
	if err := hooks.CheckAnswer("p", hooks.PreLLMCallCanProvideResponse, &big, 50, 0); err == nil {
		t.Error("a provided response over max_result_size is legal")
	}
}

func TestCheckUserMessageAndContextAnswers(t *testing.T) {
	both := &hooks.UserMessageDecision{Block: &hooks.Block{Message: "no"}, AdditionalContext: "ctx"}
	if err := hooks.CheckAnswer("p", hooks.OnUserMessage, both, 0, 0); !errors.Is(err, hooks.ErrMalformed) || !strings.Contains(err.Error(), "both block and additional_context") {
		t.Fatalf("block and context at once: %v, want malformed", err)
	}
	for _, ok := range []any{&hooks.UserMessageDecision{Block: &hooks.Block{Message: "no"}}, &hooks.UserMessageDecision{AdditionalContext: "ctx"}, &hooks.AddedContext{AdditionalContext: "ctx"}} {
		if err := hooks.CheckAnswer("p", hooks.OnUserMessage, ok, 0, 0); err != nil {
			t.Fatalf("%+v: %v", ok, err)
		}
	}
	big := &hooks.AddedContext{AdditionalContext: strings.Repeat("x", 11)}
	var me *hooks.MalformedError
	if err := hooks.CheckAnswer("p", hooks.PostToolCallCanAddContext, big, 10, 0); !errors.As(err, &me) || me.Size != 11 || me.Limit != 10 {
		t.Fatalf("an 11-byte context under a 10-byte limit: %v", err)
	}
}
