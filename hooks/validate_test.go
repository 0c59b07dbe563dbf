package hooks_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/hookhost/hookhost/hooks"
)

func windowed(o hooks.HookOptions) hooks.Manifest {
	return hooks.Manifest{Name: "p", Hooks: []hooks.Name{hooks.TransformLLMOutput}, HookOptions: map[hooks.Name]hooks.HookOptions{hooks.TransformLLMOutput: o}}
}

// Window fills in the defaults of whichever size is left out.
func TestHookOptionsWindow(t *testing.T) {
	for _, c := range []struct {
		o               hooks.HookOptions
		window, overlap int64
	}{
		{hooks.HookOptions{}, 0, 0},
		{hooks.HookOptions{DecideAfterBytes: 512}, 0, 0},
		{hooks.HookOptions{WindowBytes: 4096}, 4096, 256},
		{hooks.HookOptions{WindowBytes: 64}, 64, 16},
		{hooks.HookOptions{OverlapBytes: 100}, 1024, 100},
		{hooks.HookOptions{OverlapBytes: 1000}, 4000, 1000},
		{hooks.HookOptions{WindowBytes: 100, OverlapBytes: 10}, 100, 10},
	} {
		if w, o := c.o.Window(); w != c.window || o != c.overlap {
			t.Errorf("%+v: window %d, overlap %d; want %d, %d", c.o, w, o, c.window, c.overlap)
		}
	}
}

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
		{"windows", windowed(hooks.HookOptions{WindowBytes: 4096, OverlapBytes: 256}), false, ""},
		{"window with the default overlap", windowed(hooks.HookOptions{WindowBytes: 64}), false, ""},
		{"overlap with the default window", windowed(hooks.HookOptions{OverlapBytes: 300}), false, ""},
		{"overlap not less than the window", windowed(hooks.HookOptions{WindowBytes: 256, OverlapBytes: 256}), false, "must be less than window_bytes"},
		{"window too small", windowed(hooks.HookOptions{WindowBytes: 8, OverlapBytes: 2}), false, "outside 16..4194304"},
		{"window too large", windowed(hooks.HookOptions{WindowBytes: 8 << 20}), false, "outside"},
		{"negative overlap", windowed(hooks.HookOptions{WindowBytes: 64, OverlapBytes: -1}), false, "may not be negative"},
		{"decide_after on the transform", windowed(hooks.HookOptions{DecideAfterBytes: 512}), false, "option of post_llm_call_can_reissue only"},
		{"decide_after", hooks.Manifest{Name: "p", Hooks: []hooks.Name{hooks.PostLLMCallCanReissue}, HookOptions: map[hooks.Name]hooks.HookOptions{hooks.PostLLMCallCanReissue: {DecideAfterBytes: 512}}}, false, ""},
		{"windows on the reissue hook", hooks.Manifest{Name: "p", Hooks: []hooks.Name{hooks.PostLLMCallCanReissue}, HookOptions: map[hooks.Name]hooks.HookOptions{hooks.PostLLMCallCanReissue: {WindowBytes: 512}}}, false, "options of transform_llm_output only"},
		{"options of a hook not served", hooks.Manifest{Name: "p", Hooks: []hooks.Name{hooks.PreToolCall}, HookOptions: map[hooks.Name]hooks.HookOptions{hooks.TransformLLMOutput: {WindowBytes: 512}}}, false, "does not serve"},
		{"options of a hook that takes none", hooks.Manifest{Name: "p", Hooks: []hooks.Name{hooks.PreToolCall}, HookOptions: map[hooks.Name]hooks.HookOptions{hooks.PreToolCall: {WindowBytes: 512}}}, false, "takes none"},
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
