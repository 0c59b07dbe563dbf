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
