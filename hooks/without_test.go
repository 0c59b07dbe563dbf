package hooks

import (
	"slices"
	"testing"
)

// A manifest without its unserved hooks is still valid: the matchers and
// options of those hooks go with them, and the original is left as it was.
func TestWithoutDropsTheUnservedHooksOptions(t *testing.T) {
	m := Manifest{
		Name: "p", Version: "1",
		Hooks:        []Name{PostLLMCallCanReissue, PostLLMCall, PreToolCallCanProvideResult},
		HookMatchers: map[Name][]string{PreToolCallCanProvideResult: {"p__*"}},
		HookOptions:  map[Name]HookOptions{PostLLMCallCanReissue: {DecideAfterBytes: 512}},
	}
	if err := ValidateManifest(m, false); err != nil {
		t.Fatal(err)
	}
	got := m.Without([]Name{PostLLMCallCanReissue})
	if !slices.Equal(got.Hooks, []Name{PostLLMCall, PreToolCallCanProvideResult}) || len(got.HookOptions) != 0 ||
		!slices.Equal(got.MatchersFor(PreToolCallCanProvideResult), []string{"p__*"}) {
		t.Fatalf("without post_llm_call_can_reissue: %+v", got)
	}
	if err := ValidateManifest(got, false); err != nil {
		t.Fatalf("the manifest without an unserved hook is invalid: %v", err)
	}
	if _, ok := m.HookOptions[PostLLMCallCanReissue]; !ok {
		t.Fatal("Without changed the original manifest's options")
	}
	if got := m.Without([]Name{PreToolCallCanProvideResult}); len(got.HookMatchers) != 0 || got.HookOptions[PostLLMCallCanReissue].DecideAfterBytes != 512 {
		t.Fatalf("without pre_tool_call_can_provide_result: %+v", got)
	}
}
