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
