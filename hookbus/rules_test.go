package hookbus_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hookhost/hookhost/hookbus"
	"github.com/hookhost/hookhost/hooks"
)

// patcher answers pre_api_request_mutable and post_llm_call_can_reissue
// with the same patch.
func patcher(name string, patch hooks.RequestPatch) *hooks.Funcs {
	return &hooks.Funcs{
		Name: name,
		PreAPIRequestMutableFunc: func(context.Context, hooks.APIRequest) (*hooks.RequestPatch, error) {
			return &patch, nil
		},
		PostLLMCallCanReissueFunc: func(context.Context, hooks.LLMCall) (*hooks.Reissue, error) {
			return &hooks.Reissue{Patch: patch, Reason: "r"}, nil
		},
	}
}

// Every payload rule is one statement in package hooks and holds for every
// plugin, whichever way the host holds it: a patch with role "bogus" is
// malformed from an in-process plugin exactly as from a remote one.
func TestPatchRulesHoldForEveryPlugin(t *testing.T) {
	user := hooks.Message{Role: hooks.RoleUser, Content: "hi"}
	cases := []struct {
		name  string
		patch hooks.RequestPatch
		want  string // part of the problem; "" for a legal patch
	}{
		{"a message with an unknown role", hooks.RequestPatch{Messages: []hooks.Message{user, {Role: "bogus", Content: "x"}}}, `message 1 has role "bogus"`},
		{"a message with no role", hooks.RequestPatch{Messages: []hooks.Message{{Content: "x"}}}, `message 0 has role ""`},
		{"tool calls on a user message", hooks.RequestPatch{Messages: []hooks.Message{{Role: hooks.RoleUser, ToolCalls: []hooks.ToolCall{{ID: "c", Name: "now"}}}}}, "only assistant messages carry tool calls"},
		{"a tool call without id", hooks.RequestPatch{Messages: []hooks.Message{{Role: hooks.RoleAssistant, ToolCalls: []hooks.ToolCall{{Name: "now"}}}}}, "has no id"},
		{"a tool call without name", hooks.RequestPatch{Messages: []hooks.Message{{Role: hooks.RoleAssistant, ToolCalls: []hooks.ToolCall{{ID: "c"}}}}}, "has no tool name"},
		{"one tool call id twice", hooks.RequestPatch{Messages: []hooks.Message{{Role: hooks.RoleAssistant, ToolCalls: []hooks.ToolCall{{ID: "c", Name: "a"}, {ID: "c", Name: "b"}}}}}, "used twice"},
		{"a tool result answering no call", hooks.RequestPatch{Messages: []hooks.Message{{Role: hooks.RoleTool, Content: "r"}}}, "without tool_call_id"},
		{"an empty message list", hooks.RequestPatch{Messages: []hooks.Message{}}, "empty list"},
		{"a tool with an illegal name", hooks.RequestPatch{Tools: []hooks.ToolSpec{{Name: "has.dot"}}}, "must match"},
		{"a tool schema that is no object", hooks.RequestPatch{Tools: []hooks.ToolSpec{{Name: "t", InputSchema: json.RawMessage(`[]`)}}}, "not a JSON object"},
		{"a negative max_tokens", hooks.RequestPatch{MaxTokens: new(-1)}, "negative"},
		{"a legal conversation", hooks.RequestPatch{Messages: []hooks.Message{
			{Role: hooks.RoleSystem, Content: "s"}, user,
			{Role: hooks.RoleAssistant, ToolCalls: []hooks.ToolCall{{ID: "c1", Name: "now", Arguments: json.RawMessage(`{}`)}}},
			{Role: hooks.RoleTool, ToolCallID: "c1", ToolName: "now", Content: `"noon"`},
		}}, ""},
	}
	eachWay(t, func(t *testing.T, r rig) {
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				r := r.sub(t)
				var buf syncBuffer
				b := newBusConfig(t, hookbus.Config{Logger: testLogger(&buf)}, r.in(patcher("p", tc.patch)))
				orig := hooks.ModelRequest{Model: "m", Messages: []hooks.Message{user}}
				_, changes := b.PreAPIRequestMutable(context.Background(), hooks.APIRequest{Request: orig})
				reissue := b.PostLLMCallCanReissue(context.Background(), hooks.LLMCall{Request: orig})
				malformed := b.Stats().Failures("p", hooks.PreAPIRequestMutable, hookbus.KindMalformed) +
					b.Stats().Failures("p", hooks.PostLLMCallCanReissue, hookbus.KindMalformed)
				if tc.want == "" {
					if len(changes) != 1 || reissue == nil || malformed != 0 {
						t.Fatalf("legal patch refused: changes %+v, reissue %+v, log %s", changes, reissue, buf.String())
					}
					return
				}
				if changes != nil || reissue != nil || malformed != 2 {
					t.Fatalf("patch with %s accepted: changes %+v, reissue %+v, %d counted malformed", tc.name, changes, reissue, malformed)
				}
				for _, e := range loggedErrors(t, &buf) {
					if !strings.Contains(e, tc.want) || !strings.Contains(e, `plugin "p"`) {
						t.Fatalf("logged error %q does not name the plugin and say %q", e, tc.want)
					}
				}
			})
		}
	})
}

// loggedErrors returns the error of every line logged.
func loggedErrors(t *testing.T, buf *syncBuffer) []string {
	t.Helper()
	var errs []string
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if e, ok := rec["error"].(string); ok {
			errs = append(errs, e)
		}
	}
	if len(errs) == 0 {
		t.Fatal("no error was logged")
	}
	return errs
}

// Options.MaxResultSize bounds what one answer carries, for every hook and
// every plugin; 0 means the wire's default, so an in-process plugin cannot
// send what a remote one could not.
func TestMaxResultSizeBoundsEveryAnswer(t *testing.T) {
	const limit = 64
	big := strings.Repeat("x", limit+1)
	bigJSON := `"` + strings.Repeat("x", limit) + `"`
	fires := []struct {
		hook hooks.Name
		p    *hooks.Funcs
		fire func(b *hookbus.Bus) bool // reports whether the answer was used
	}{
		{hooks.PreToolListFinalized, &hooks.Funcs{Name: "p", PreToolListFinalizedFunc: func(context.Context, hooks.ToolListRequest) (*hooks.ToolListOverride, error) {
			return &hooks.ToolListOverride{Tools: []hooks.ToolSpec{{Name: "t", Description: big}}}, nil
		}}, func(b *hookbus.Bus) bool {
			return b.PreToolListFinalized(context.Background(), hooks.ToolListRequest{}) != nil
		}},
		{hooks.PreAPIRequestMutable, patcher("p", hooks.RequestPatch{Messages: []hooks.Message{{Role: hooks.RoleUser, Content: big}}}), func(b *hookbus.Bus) bool {
			_, ch := b.PreAPIRequestMutable(context.Background(), hooks.APIRequest{})
			return ch != nil
		}},
		{hooks.PostLLMCallCanReissue, patcher("p", hooks.RequestPatch{System: &big}), func(b *hookbus.Bus) bool {
			return b.PostLLMCallCanReissue(context.Background(), hooks.LLMCall{}) != nil
		}},
		{hooks.TransformLLMOutput, &hooks.Funcs{Name: "p", TransformLLMOutputFunc: func(context.Context, hooks.LLMOutput) (*hooks.TextReplacement, error) {
			return &hooks.TextReplacement{Text: big}, nil
		}}, func(b *hookbus.Bus) bool {
			_, by := b.TransformLLMOutput(context.Background(), hooks.LLMOutput{Text: "t"})
			return by != nil
		}},
		{hooks.PreToolCall, &hooks.Funcs{Name: "p", PreToolCallFunc: func(context.Context, hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
			return &hooks.PreToolCallDecision{Block: &hooks.Block{Message: big}}, nil
		}}, func(b *hookbus.Bus) bool { return b.PreToolCall(context.Background(), call).Blocked }},
		{hooks.PreToolCallCanProvideResult, provider("p", bigJSON), func(b *hookbus.Bus) bool {
			return b.PreToolCallCanProvideResult(context.Background(), call) != nil
		}},
		{hooks.TransformToolResult, &hooks.Funcs{Name: "p", TransformToolResultFunc: func(context.Context, hooks.ToolCallOutcome) (*hooks.ToolResult, error) {
			return &hooks.ToolResult{Content: bigJSON}, nil
		}}, func(b *hookbus.Bus) bool {
			_, by := b.TransformToolResult(context.Background(), hooks.ToolCallOutcome{Name: "now", Arguments: json.RawMessage(`{}`)})
			return by != nil
		}},
	}
	eachWay(t, func(t *testing.T, r rig) {
		for _, f := range fires {
			t.Run(string(f.hook), func(t *testing.T) {
				r := r.sub(t)
				var buf syncBuffer
				b := newBusConfig(t, hookbus.Config{Logger: testLogger(&buf)}, r.with(f.p, hookbus.Options{MaxResultSize: limit}))
				if f.fire(b) {
					t.Fatal("an answer over max_result_size was used")
				}
				if n := b.Stats().Failures("p", f.hook, hookbus.KindMalformed); n != 1 {
					t.Fatalf("counted %d malformed, want 1", n)
				}
				if !strings.Contains(buf.String(), "max_result_size") {
					t.Fatalf("the log does not name max_result_size:\n%s", buf.String())
				}
				roomy := newBus(t, r.with(f.p, hookbus.Options{MaxResultSize: 2 * limit}))
				if !f.fire(roomy) {
					t.Fatal("the same answer under max_result_size was not used")
				}
			})
		}
	})
}

// The default bound is the wire's default, 4 MiB, on every path; the
// error of a fail_closed guard over it says so, typed.
func TestDefaultMaxResultSizeIsTheWires(t *testing.T) {
	huge := json.RawMessage(`{"a":"` + strings.Repeat("x", hooks.DefaultMaxResultSize) + `"}`)
	eachWay(t, func(t *testing.T, r rig) {
		guard := &hooks.Funcs{Name: "guard", PreToolCallFunc: func(context.Context, hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
			return &hooks.PreToolCallDecision{ModifiedArgs: huge}, nil
		}}
		b := newBus(t, r.with(guard, hookbus.Options{FailClosed: true}))
		out := b.PreToolCall(context.Background(), call)
		if !out.Blocked || !errors.Is(out.Err, hooks.ErrMalformed) {
			t.Fatalf("a fail_closed guard's answer over 4 MiB: %+v", out)
		}
		if r.way.Version != 0 {
			return // the wire refuses it before it is decoded; its error is the wire's
		}
		var me *hooks.MalformedError
		if !errors.As(out.Err, &me) || me.Plugin != "guard" || me.Hook != hooks.PreToolCall || me.Limit != hooks.DefaultMaxResultSize || me.Size <= me.Limit {
			t.Fatalf("block's Err %#v does not say the answer was too large", out.Err)
		}
	})
}

// "No call to a plugin that cannot change the outcome": the demo
// configuration's plugin audits every tool in post_tool_call and provides
// results only for its own, so a native tool call makes no synchronous
// plugin call at all, on every path, while the audit is still delivered.
func TestANativeToolCallWithTheDemoConfigMakesNoSynchronousCall(t *testing.T) {
	for _, pa := range paths {
		t.Run(pa.name, func(t *testing.T) {
			var audited, asked atomic.Int64
			kora := &hooks.Funcs{
				Name:         "kora",
				HookMatchers: map[hooks.Name][]string{hooks.PreToolCallCanProvideResult: {"kora__*"}},
				Tools:        []hooks.ToolSpec{{Name: "kora__get_burn"}},
				PreToolCallCanProvideResultFunc: func(context.Context, hooks.ToolCallRequest) (*hooks.ToolResult, error) {
					asked.Add(1)
					return &hooks.ToolResult{Content: `{"burn":1}`}, nil
				},
				PostToolCallFunc: func(context.Context, hooks.ToolCallOutcome) error { audited.Add(1); return nil },
			}
			b := newBus(t, hookbus.Member{Plugin: pa.host(t, kora)})
			got := fire(context.Background(), b, pa.run, call)
			if !got.Native || got.Content != nativeResult {
				t.Fatalf("native call answered by %+v", got)
			}
			if err := b.Flush(context.Background()); err != nil {
				t.Fatal(err)
			}
			st := b.Stats()
			if n := st.SyncCalls(); n != 0 || asked.Load() != 0 {
				t.Fatalf("%d synchronous plugin calls for a native tool (provider asked %d times), want 0", n, asked.Load())
			}
			if audited.Load() != 1 || st.Calls() != 1 {
				t.Fatalf("audit delivered %d times, %d calls in all; want the one post_tool_call delivery", audited.Load(), st.Calls())
			}

			kc := call
			kc.Name = "kora__get_burn"
			got = fire(context.Background(), b, pa.run, kc)
			if got.ProvidedBy != "kora" || b.Stats().SyncCalls() != 1 {
				t.Fatalf("kora's own tool: %+v, %d synchronous calls; want one provide", got, b.Stats().SyncCalls())
			}
		})
	}
}

// Per-hook matchers decide who is asked for each tool hook, and Subscribed
// says the same.
func TestPerHookMatchersDecideWhoIsAsked(t *testing.T) {
	eachWay(t, func(t *testing.T, r rig) {
		var mu atomic.Int64
		count := func() { mu.Add(1) }
		p := &hooks.Funcs{
			Name:     "p",
			Matchers: []string{"p__*"},
			HookMatchers: map[hooks.Name][]string{
				hooks.PostToolCall:        {}, // every tool
				hooks.TransformToolResult: {"now", "p__*"},
			},
			PreToolCallFunc: func(context.Context, hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
				count()
				return nil, nil
			},
			PreToolCallCanProvideResultFunc: func(context.Context, hooks.ToolCallRequest) (*hooks.ToolResult, error) {
				count()
				return nil, nil
			},
			PostToolCallFunc: func(context.Context, hooks.ToolCallOutcome) error { return nil },
			TransformToolResultFunc: func(context.Context, hooks.ToolCallOutcome) (*hooks.ToolResult, error) {
				return &hooks.ToolResult{Content: `"t"`}, nil
			},
		}
		b := newBus(t, r.in(p))
		for _, c := range []struct {
			hook hooks.Name
			tool string
			want bool
		}{
			{hooks.PreToolCall, "now", false}, {hooks.PreToolCall, "p__x", true},
			{hooks.PreToolCallCanProvideResult, "now", false}, {hooks.PreToolCallCanProvideResult, "p__x", true},
			{hooks.PostToolCall, "now", true}, {hooks.PostToolCall, "other", true},
			{hooks.TransformToolResult, "now", true}, {hooks.TransformToolResult, "other", false}, {hooks.TransformToolResult, "p__x", true},
		} {
			if got := b.Subscribed(c.hook, c.tool); got != c.want {
				t.Errorf("Subscribed(%s, %s) = %v, want %v", c.hook, c.tool, got, c.want)
			}
		}
		run := b.StartToolCall(call)
		defer run.Close()
		run.PreToolCall(context.Background())
		if res := run.ProvideResult(context.Background()); res != nil || mu.Load() != 0 {
			t.Fatalf("pre or provide asked for a tool outside their matchers (%d calls)", mu.Load())
		}
		ev := hooks.ToolCallOutcome{Name: "now", Arguments: json.RawMessage(`{}`), Result: hooks.ToolResult{Content: "{}"}}
		run.Done(ev)
		if res, by := run.Transform(context.Background(), ev); res.Content != `"t"` || len(by) != 1 {
			t.Fatalf("transform, whose own matchers take the tool, was not asked: %+v %v", res, by)
		}
		if err := b.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
		st := b.Stats()
		if st.SyncCalls() != 1 || st.Calls() != 2 {
			t.Fatalf("%d synchronous calls and %d in all, want the transform and the post_tool_call delivery", st.SyncCalls(), st.Calls())
		}
	})
}

// Observers are queued and delivered by a worker: the caller never waits
// for one, and their calls are not synchronous ones.
func TestObserversAreNeverSynchronous(t *testing.T) {
	eachWay(t, func(t *testing.T, r rig) {
		release := make(chan struct{})
		delivered := make(chan struct{}, 4)
		p := &hooks.Funcs{
			Name:               "obs",
			OnSessionStartFunc: func(context.Context, hooks.SessionStart) error { <-release; delivered <- struct{}{}; return nil },
			PostToolCallFunc:   func(context.Context, hooks.ToolCallOutcome) error { <-release; delivered <- struct{}{}; return nil },
		}
		b := newBus(t, r.in(p))
		within(t, func() {
			b.OnSessionStart(hooks.SessionStart{})
			b.PostToolCall(hooks.ToolCallOutcome{Name: "now", Arguments: json.RawMessage(`{}`)})
		})
		close(release)
		for range 2 {
			within(t, func() { <-delivered })
		}
		if err := b.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
		st := b.Stats()
		if st.SyncCalls() != 0 || st.Calls() != 2 {
			t.Fatalf("%d synchronous calls, %d in all; want 0 and the 2 deliveries", st.SyncCalls(), st.Calls())
		}
		for _, h := range st.Hooks {
			if !h.Observer {
				t.Fatalf("%s not marked as an observer hook in Stats", h.Hook)
			}
		}
	})
}
