package plugintest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookhost/hookhost/dispatch"
	"github.com/hookhost/hookhost/hookbus"
	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/plugins/sdk"
	"github.com/hookhost/hookhost/plugins/sdk/plugintest"
)

// kitchen implements every hook, configured by JSON, and records what its
// observers see.
type kitchen struct {
	sdk.Base

	mu       sync.Mutex
	cfg      struct{ Denied []string }
	rawCfg   json.RawMessage
	observed []string
}

func (*kitchen) Info() sdk.Info {
	return sdk.Info{
		Name: "kitchen", Version: "0.0.1", Matchers: []string{"kitchen__*", "shell", "fail_*"},
		Tools: []hooks.ToolSpec{{Name: "kitchen__soup", Description: "makes soup"}},
	}
}

func (k *kitchen) Configure(_ context.Context, raw json.RawMessage) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.rawCfg = append(json.RawMessage{}, raw...)
	return json.Unmarshal(raw, &k.cfg)
}

func (k *kitchen) note(s string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.observed = append(k.observed, s)
}

func (k *kitchen) seen() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]string(nil), k.observed...)
}

func (k *kitchen) OnSessionStart(_ context.Context, ev hooks.SessionStart) error {
	k.note("start " + ev.Model)
	return nil
}

func (k *kitchen) OnSessionEnd(_ context.Context, ev hooks.SessionEnd) error {
	k.note("end " + string(ev.Reason))
	return nil
}

func (k *kitchen) PostLLMCall(_ context.Context, ev hooks.Inference) error {
	k.note("inference " + ev.Model)
	return nil
}

func (k *kitchen) PostToolCall(_ context.Context, ev hooks.ToolCallOutcome) error {
	k.note("tool " + ev.Name + " " + string(ev.Status))
	return nil
}

func (k *kitchen) PreToolListFinalized(_ context.Context, ev hooks.ToolListRequest) (*hooks.ToolListOverride, error) {
	var keep []hooks.ToolSpec
	for _, t := range ev.Tools {
		if !strings.HasPrefix(t.Name, "danger") {
			keep = append(keep, t)
		}
	}
	if len(keep) == len(ev.Tools) {
		return nil, nil
	}
	return &hooks.ToolListOverride{Tools: keep}, nil
}

func (k *kitchen) PreAPIRequestMutable(_ context.Context, ev hooks.APIRequest) (*hooks.RequestPatch, error) {
	if ev.Request.MaxTokens > 1000 {
		n := 1000
		return &hooks.RequestPatch{MaxTokens: &n}, nil
	}
	return nil, nil
}

// PreLLMCallCanProvideResponse answers "menu?" itself.
func (k *kitchen) PreLLMCallCanProvideResponse(_ context.Context, req hooks.LLMRequest) (*hooks.ModelResponse, error) {
	if n := len(req.Request.Messages); n > 0 && req.Request.Messages[n-1].Content == "menu?" {
		return &hooks.ModelResponse{Message: hooks.Message{Content: "soup"}}, nil
	}
	return nil, nil
}

func (k *kitchen) PostLLMCallCanReissue(_ context.Context, ev hooks.LLMCall) (*hooks.Reissue, error) {
	if strings.Contains(ev.Response.Message.Content, "not sure") {
		m := "offline-large"
		return &hooks.Reissue{Patch: hooks.RequestPatch{Model: &m}, Reason: "hedged"}, nil
	}
	return nil, nil
}

func (k *kitchen) TransformLLMOutput(_ context.Context, ev hooks.LLMOutput) (*hooks.TextReplacement, error) {
	return &hooks.TextReplacement{Text: strings.ToUpper(ev.Text)}, nil
}

func (k *kitchen) PreToolCall(ctx context.Context, call hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
	k.mu.Lock()
	denied := k.cfg.Denied
	k.mu.Unlock()
	for _, d := range denied {
		if strings.Contains(string(call.Arguments), d) {
			return &hooks.PreToolCallDecision{Block: &hooks.Block{Message: "denied: " + d}}, nil
		}
	}
	switch call.Name {
	case "fail_error":
		return nil, errors.New("policy store down")
	case "fail_panic":
		panic("nil map")
	case "fail_slow":
		// Well past every test's timeout: the timeout always comes first.
		select {
		case <-time.After(30 * time.Second):
		case <-ctx.Done():
		}
		return &hooks.PreToolCallDecision{Block: &hooks.Block{Message: "too late"}}, nil
	case "fail_malformed":
		return &hooks.PreToolCallDecision{Block: &hooks.Block{}, ModifiedArgs: json.RawMessage(`{}`)}, nil
	case "shell":
		return &hooks.PreToolCallDecision{ModifiedArgs: json.RawMessage(`{"cmd":"ls","safe":true}`)}, nil
	}
	return nil, nil
}

func (k *kitchen) PreToolCallCanProvideResult(_ context.Context, call hooks.ToolCallRequest) (*hooks.ToolResult, error) {
	if call.Name == "kitchen__soup" {
		return &hooks.ToolResult{Content: `{"soup":"tomato"}`}, nil
	}
	return nil, nil
}

func (k *kitchen) TransformToolResult(_ context.Context, ev hooks.ToolCallOutcome) (*hooks.ToolResult, error) {
	return &hooks.ToolResult{Content: strings.ReplaceAll(ev.Result.Content, "secret", "[redacted]")}, nil
}

func (k *kitchen) OnUserMessage(_ context.Context, m hooks.UserMessage) (*hooks.UserMessageDecision, error) {
	if strings.Contains(m.Text, "rm -rf") {
		return &hooks.UserMessageDecision{Block: &hooks.Block{Message: "the kitchen does not take that order"}}, nil
	}
	return &hooks.UserMessageDecision{AdditionalContext: "the kitchen is open"}, nil
}

func (k *kitchen) PostToolCallCanAddContext(_ context.Context, ev hooks.ToolCallOutcome) (*hooks.AddedContext, error) {
	return &hooks.AddedContext{AdditionalContext: "served by the kitchen: " + ev.Name}, nil
}

func TestConfigureAndToolHooks(t *testing.T) {
	k := &kitchen{}
	h := plugintest.New(t, k, plugintest.WithConfig(`{"Denied":["rm -rf"]}`))
	if string(k.rawCfg) != `{"Denied":["rm -rf"]}` {
		t.Fatalf("configure got %q", k.rawCfg)
	}

	if out := h.PreToolCall("kitchen__soup", `{"cmd":"rm -rf /"}`); !out.Blocked || out.BlockedBy != "kitchen" || out.Message != "denied: rm -rf" {
		t.Fatalf("deny: %+v", out)
	}
	out := h.PreToolCall("shell", `{"cmd":"ls"}`)
	if out.Blocked || string(out.Arguments) != `{"cmd":"ls","safe":true}` || !reflect.DeepEqual(out.ModifiedBy, []string{"kitchen"}) {
		t.Fatalf("modify: %+v", out)
	}
	// Outside the matchers the plugin is not asked, even with denied args.
	if out := h.PreToolCall("python", `{"cmd":"rm -rf /"}`); out.Blocked {
		t.Fatalf("unmatched tool was blocked: %+v", out)
	}

	if r := h.PreToolCallCanProvideResult("kitchen__soup", `{}`); r == nil || r.Plugin != "kitchen" || r.Content != `{"soup":"tomato"}` {
		t.Fatalf("provide: %+v", r)
	}
	if r := h.PreToolCallCanProvideResult("kitchen__stew", `{}`); r != nil {
		t.Fatalf("provide for an unknown tool: %+v", r)
	}

	res, by := h.TransformToolResult("shell", `{}`, `{"token":"secret"}`)
	if res.Content != `{"token":"[redacted]"}` || !reflect.DeepEqual(by, []string{"kitchen"}) {
		t.Fatalf("transform: %+v by %v", res, by)
	}
}

func TestModelHooks(t *testing.T) {
	h := plugintest.New(t, &kitchen{})

	change := h.PreToolListFinalized(hooks.ToolSpec{Name: "search"}, hooks.ToolSpec{Name: "danger_rm"})
	if change == nil || change.Plugin != "kitchen" || len(change.Tools) != 1 || change.Tools[0].Name != "search" {
		t.Fatalf("tool list: %+v", change)
	}
	if change := h.PreToolListFinalized(hooks.ToolSpec{Name: "search"}); change != nil {
		t.Fatalf("tool list without changes: %+v", change)
	}

	req, changes := h.PreAPIRequestMutable(hooks.ModelRequest{Model: "m", MaxTokens: 5000})
	if req.MaxTokens != 1000 || len(changes) != 1 || !reflect.DeepEqual(changes[0].Fields, []string{"max_tokens"}) {
		t.Fatalf("mutate: %+v %+v", req, changes)
	}

	r := h.PostLLMCallCanReissue(hooks.ModelRequest{Model: "offline-small"}, hooks.ModelResponse{Message: hooks.Message{Role: hooks.RoleAssistant, Content: "I'm not sure"}})
	if r == nil || r.Plugin != "kitchen" || *r.Patch.Model != "offline-large" || r.Reason != "hedged" {
		t.Fatalf("reissue: %+v", r)
	}
	if r := h.PostLLMCallCanReissue(hooks.ModelRequest{}, hooks.ModelResponse{Message: hooks.Message{Role: hooks.RoleAssistant, Content: "It is 12."}}); r != nil {
		t.Fatalf("reissue on a plain answer: %+v", r)
	}

	if text, by := h.TransformLLMOutput("done"); text != "DONE" || !reflect.DeepEqual(by, []string{"kitchen"}) {
		t.Fatalf("output: %q by %v", text, by)
	}
}

func TestObserversAndFlush(t *testing.T) {
	k := &kitchen{}
	h := plugintest.New(t, k)
	h.OnSessionStart("offline-small")
	h.PostLLMCall(hooks.Inference{Model: "offline-small"})
	h.PostToolCall("kitchen__soup", `{}`, hooks.ToolResult{Content: "x"}, hooks.ProvidedBy("kitchen"))
	h.PostToolCall("python", `{}`, hooks.ToolResult{}, hooks.StatusOK) // outside the matchers
	h.OnSessionEnd("offline-small", hooks.EndCompleted)
	h.Flush()
	want := []string{"start offline-small", "inference offline-small", "tool kitchen__soup provided_by:kitchen", "end completed"}
	if got := k.seen(); !reflect.DeepEqual(got, want) {
		t.Fatalf("observed %q, want %q", got, want)
	}
}

func TestFailuresCountAsNoOpinion(t *testing.T) {
	// Long enough that a panic, stack and all, is reported in time on a
	// loaded machine; only fail_slow reaches it.
	h := plugintest.New(t, &kitchen{}, plugintest.WithOptions(hookbus.Options{Timeout: time.Second}))
	for name, kind := range map[string]hookbus.FailureKind{
		"fail_error":     hookbus.KindError,
		"fail_panic":     hookbus.KindPanic,
		"fail_slow":      hookbus.KindTimeout,
		"fail_malformed": hookbus.KindMalformed,
	} {
		if out := h.PreToolCall(name, `{}`); out.Blocked {
			t.Errorf("%s: a failing guard blocked the call: %+v", name, out)
		}
		if n := h.Failures(hooks.PreToolCall, kind); n != 1 {
			t.Errorf("%s: %d %s failures, want 1", name, n, kind)
		}
	}
}

func TestFailClosed(t *testing.T) {
	h := plugintest.New(t, &kitchen{}, plugintest.WithOptions(hookbus.Options{FailClosed: true}))
	if out := h.PreToolCall("fail_error", `{}`); !out.Blocked || !strings.Contains(out.Message, "fail_closed") {
		t.Fatalf("fail_closed guard did not block: %+v", out)
	}
}

// outlaw declares a tool outside its namespace.
type outlaw struct{ sdk.Base }

func (outlaw) Info() sdk.Info {
	return sdk.Info{Name: "outlaw", Tools: []hooks.ToolSpec{{Name: "search"}}}
}

// bare has no Configure method.
type bare struct{}

func (bare) Info() sdk.Info { return sdk.Info{Name: "bare"} }

// declaring declares its one config key, deny.
type declaring struct{ kitchen }

type declaringConfig struct {
	Deny []string `json:"deny"`
}

func (*declaring) Info() sdk.Info { return sdk.Info{Name: "declaring", Config: declaringConfig{}} }

func (d *declaring) Configure(_ context.Context, raw json.RawMessage) error {
	return sdk.DecodeConfig(raw, &declaringConfig{})
}

func TestNewFailsTheTest(t *testing.T) {
	cases := []struct {
		name string
		p    sdk.Plugin
		opts []plugintest.Option
		want string
	}{
		{"tool outside namespace", outlaw{}, nil, `plugin "outlaw": manifest: tool "search" is outside the plugin's namespace`},
		{"config without Configure", bare{}, []plugintest.Option{plugintest.WithConfig(`{}`)}, "has no Configure method"},
		{"config not JSON", &kitchen{}, []plugintest.Option{plugintest.WithConfig(`{`)}, "is not valid JSON"},
		{"configure error", &kitchen{}, []plugintest.Option{plugintest.WithConfig(`{"Denied":7}`)}, `plugin "kitchen": configure: json: cannot unmarshal`},
		{"undeclared key", &declaring{}, []plugintest.Option{plugintest.WithConfig(`{"deny":[],"denny":[]}`)}, `plugin "declaring": config key "denny" is not one it declares (it takes ["deny"]); the host refuses it before Configure`},
		{"undeclared key over v2", &declaring{}, []plugintest.Option{plugintest.WithProtocol(2), plugintest.WithConfig(`{"denny":[]}`)}, `config key "denny" is not one it declares`},
	}
	for _, c := range cases {
		ft := &fakeTB{}
		ft.run(func() { plugintest.New(ft, c.p, c.opts...) })
		if !strings.Contains(ft.fatal, c.want) {
			t.Errorf("%s: fatal %q, want it to contain %q", c.name, ft.fatal, c.want)
		}
	}

	// The host option that permits it makes the outlaw acceptable.
	plugintest.New(t, outlaw{}, plugintest.WithOptions(hookbus.Options{AllowToolOverride: true}))
}

func TestHarnessExposesTheAdaptedPlugin(t *testing.T) {
	h := plugintest.New(t, &kitchen{})
	m := h.Plugin.Manifest()
	if m.Name != "kitchen" || len(m.Hooks) != len(hooks.Catalogue) {
		t.Fatalf("manifest %+v", m)
	}
	if got := h.Bus.Plugins(); !reflect.DeepEqual(got, []string{"kitchen"}) {
		t.Fatalf("bus plugins %v", got)
	}
}

// fakeTB records a fatal failure instead of failing the real test.
type fakeTB struct {
	testing.TB
	mu       sync.Mutex
	fatal    string
	cleanups []func()
}

func (*fakeTB) Helper()    {}
func (*fakeTB) Log(...any) {}
func (f *fakeTB) Cleanup(fn func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cleanups = append(f.cleanups, fn)
}
func (f *fakeTB) Errorf(format string, a ...any) { f.Fatalf(format, a...) }
func (f *fakeTB) Fatalf(format string, a ...any) {
	f.mu.Lock()
	f.fatal = fmt.Sprintf(format, a...)
	f.mu.Unlock()
	runtime.Goexit()
}

// run calls fn as a test body would run, then the cleanups.
func (f *fakeTB) run(fn func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	<-done
	for i := len(f.cleanups) - 1; i >= 0; i-- {
		f.cleanups[i]()
	}
}

// auditor audits every tool call, guards only shell and fs_* tools, rewrites
// only its own tools' results, and answers one typed tool.
type auditor struct {
	sdk.Base

	mu      sync.Mutex
	guarded []string
	audited []string
	changed []string
}

type countArgs struct {
	Status *string `json:"status" enum:"ok,blocked"`
}

func (a *auditor) Info() sdk.Info {
	return sdk.Info{
		Name:     "audit",
		Version:  "1.0.0",
		Matchers: []string{"audit__*"},
		HookMatchers: map[hooks.Name][]string{
			hooks.PostToolCall: {},
			hooks.PreToolCall:  {"shell", "fs_*"},
		},
		ToolFuncs: []sdk.Tool{sdk.NewTool("audit__count", "counts audited tool calls", a.count)},
	}
}

func (a *auditor) count(_ context.Context, args countArgs) (any, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for _, s := range a.audited {
		if args.Status == nil || strings.HasSuffix(s, " "+*args.Status) {
			n++
		}
	}
	return map[string]int{"count": n}, nil
}

func (a *auditor) PreToolCall(_ context.Context, call hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.guarded = append(a.guarded, call.Name)
	if strings.Contains(string(call.Arguments), "rm -rf") {
		return &hooks.PreToolCallDecision{Block: &hooks.Block{Message: "no"}}, nil
	}
	return nil, nil
}

func (a *auditor) PostToolCall(_ context.Context, ev hooks.ToolCallOutcome) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.audited = append(a.audited, ev.Name+" "+string(ev.Status))
	return nil
}

func (a *auditor) TransformToolResult(_ context.Context, ev hooks.ToolCallOutcome) (*hooks.ToolResult, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.changed = append(a.changed, ev.Name)
	return nil, nil
}

func (a *auditor) seen() (guarded, audited, changed []string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.guarded), slices.Clone(a.audited), slices.Clone(a.changed)
}

func TestHookMatchersAndTypedTools(t *testing.T) {
	for _, v := range protocols {
		t.Run(fmt.Sprintf("protocol %d", v), func(t *testing.T) {
			a := &auditor{}
			h := plugintest.New(t, a, plugintest.WithProtocol(v))
			m := h.Plugin.Manifest()
			if got := m.MatchersFor(hooks.PreToolCallCanProvideResult); !reflect.DeepEqual(got, []string{"audit__count"}) {
				t.Fatalf("provide matchers %q", got)
			}
			if len(m.Tools) != 1 || m.Tools[0].Name != "audit__count" {
				t.Fatalf("tools %+v", m.Tools)
			}

			for _, tool := range []string{"python", "shell", "fs_read", "audit__count"} {
				if out := h.PreToolCall(tool, `{"cmd":"rm -rf /"}`); out.Blocked != (tool == "shell" || tool == "fs_read") {
					t.Errorf("pre_tool_call %s: %+v", tool, out)
				}
			}
			h.PostToolCall("python", `{}`, hooks.ToolResult{Content: "1"}, hooks.StatusOK)
			h.PostToolCall("shell", `{}`, hooks.ToolResult{Content: "no"}, hooks.StatusBlocked)
			h.Flush()
			for _, tool := range []string{"python", "audit__count"} {
				h.TransformToolResult(tool, `{}`, `{}`)
			}

			guarded, audited, changed := a.seen()
			if !reflect.DeepEqual(guarded, []string{"shell", "fs_read"}) {
				t.Errorf("pre_tool_call asked for %q", guarded)
			}
			if !reflect.DeepEqual(audited, []string{"python ok", "shell blocked"}) {
				t.Errorf("post_tool_call saw %q", audited)
			}
			if !reflect.DeepEqual(changed, []string{"audit__count"}) {
				t.Errorf("transform_tool_result asked for %q", changed)
			}

			// The typed tool is answered; other tools never reach the
			// plugin's provide hook.
			if r := h.PreToolCallCanProvideResult("audit__count", `{"status":"ok"}`); r == nil || r.Plugin != "audit" || r.Content != `{"count":1}` || r.IsError {
				t.Fatalf("typed tool: %+v", r)
			}
			if r := h.PreToolCallCanProvideResult("audit__count", `{"status":"maybe"}`); r == nil || !r.IsError || !strings.Contains(r.Content, `args.status: must be one of \"ok\", \"blocked\"`) {
				t.Fatalf("typed tool, bad arguments: %+v", r)
			}
			if r := h.PreToolCallCanProvideResult("python", `{}`); r != nil {
				t.Fatalf("provided for python: %+v", r)
			}
			if n := h.Calls(hooks.PreToolCallCanProvideResult); n != 2 {
				t.Fatalf("provide was called %d times, want 2 (the typed tool's calls only)", n)
			}
			if n := h.Calls(hooks.PreToolCall); n != 2 {
				t.Fatalf("pre_tool_call was called %d times, want 2", n)
			}
		})
	}
}

func TestWithProtocolConfiguresThroughTheWire(t *testing.T) {
	for _, v := range protocols {
		t.Run(fmt.Sprintf("protocol %d", v), func(t *testing.T) {
			k := &kitchen{}
			h := plugintest.New(t, k, plugintest.WithProtocol(v), plugintest.WithConfig(`{"Denied":["rm -rf"]}`))
			if string(k.rawCfg) != `{"Denied":["rm -rf"]}` {
				t.Fatalf("configure got %q", k.rawCfg)
			}
			if out := h.PreToolCall("shell", `{"cmd":"rm -rf /"}`); !out.Blocked || out.Message != "denied: rm -rf" {
				t.Fatalf("deny: %+v", out)
			}
			if r := h.PreToolCallCanProvideResult("kitchen__soup", `{}`); r == nil || r.Content != `{"soup":"tomato"}` {
				t.Fatalf("provide: %+v", r)
			}
			if text, _ := h.TransformLLMOutput("done"); text != "DONE" {
				t.Fatalf("output: %q", text)
			}
		})
	}
	ft := &fakeTB{}
	ft.run(func() { plugintest.New(ft, &kitchen{}, plugintest.WithProtocol(3)) })
	if !strings.Contains(ft.fatal, "WithProtocol(3): there are protocol versions 1 and 2") {
		t.Fatalf("fatal %q", ft.fatal)
	}
}

func TestFailuresOverTheWire(t *testing.T) {
	for _, v := range protocols[1:] {
		t.Run(fmt.Sprintf("protocol %d", v), func(t *testing.T) {
			h := plugintest.New(t, &kitchen{}, plugintest.WithProtocol(v), plugintest.WithOptions(hookbus.Options{Timeout: time.Second}))
			panicKind := hookbus.KindPanic
			for _, c := range []struct {
				name string
				kind hookbus.FailureKind
			}{
				{"fail_error", hookbus.KindError},
				{"fail_panic", panicKind},
				{"fail_slow", hookbus.KindTimeout},
			} {
				before := h.Failures(hooks.PreToolCall, c.kind)
				if out := h.PreToolCall(c.name, `{}`); out.Blocked {
					t.Errorf("%s: a failing guard blocked the call: %+v", c.name, out)
				}
				if n := h.Failures(hooks.PreToolCall, c.kind) - before; n != 1 {
					t.Errorf("%s: %d more %s failures, want 1", c.name, n, c.kind)
				}
			}
		})
	}
}

// A tool call through the whole pipeline, as the host runs it, with the
// plugin in-process and over each protocol version.
func TestToolCallRunsThePipeline(t *testing.T) {
	calc := dispatch.Tool{
		Spec: hooks.ToolSpec{Name: "calc", Description: "adds", InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]}`)},
		Run: func(_ context.Context, args json.RawMessage) (any, error) {
			var a struct{ A int }
			if err := json.Unmarshal(args, &a); err != nil {
				return nil, err
			}
			return map[string]int{"sum": a.A + 1}, nil
		},
	}
	for _, v := range protocols {
		t.Run(fmt.Sprintf("protocol %d", v), func(t *testing.T) {
			a := &auditor{}
			h := plugintest.New(t, a, plugintest.WithProtocol(v))

			out := h.ToolCall("calc", `{"a":1}`, calc)
			if out.Path != dispatch.PathNative || out.Result.Content != `{"sum":2}` {
				t.Fatalf("native: %+v", out)
			}
			// The typed tool's schema is checked by the host, before the
			// plugin is asked.
			out = h.ToolCall("audit__count", `{"status":"maybe"}`)
			if out.Path != dispatch.PathRejected || !out.Result.IsError || !strings.Contains(out.Result.Content, `args.status: must be one of \"ok\", \"blocked\"`) {
				t.Fatalf("bad arguments: %+v", out)
			}
			if n := h.Calls(hooks.PreToolCallCanProvideResult); n != 0 {
				t.Fatalf("the plugin was asked for a result %d times on arguments its schema refuses", n)
			}
			h.Flush()
			out = h.ToolCall("audit__count", `{"status":"ok"}`)
			if out.Path != dispatch.PathProvided || out.AnsweredBy != "audit" || out.Result.Content != `{"count":1}` {
				t.Fatalf("typed tool: %+v", out)
			}
			if out := h.ToolCall("shell", `{"cmd":"rm -rf /"}`); out.Path != dispatch.PathBlocked || out.AnsweredBy != "audit" {
				t.Fatalf("guarded: %+v", out)
			}
			h.Flush()
			_, audited, _ := a.seen()
			if want := []string{"calc ok", "audit__count error", "audit__count provided_by:audit", "shell blocked"}; !reflect.DeepEqual(audited, want) {
				t.Fatalf("audited %q, want %q", audited, want)
			}
		})
	}
}

func TestHarnessProvidedResponse(t *testing.T) {
	h := plugintest.New(t, &kitchen{})
	p := h.PreLLMCallCanProvideResponse(hooks.LLMRequest{Request: hooks.ModelRequest{Model: "m", Messages: []hooks.Message{{Role: hooks.RoleUser, Content: "menu?"}}}})
	if p == nil || p.Plugin != "kitchen" || p.Response.Message.Content != "soup" || p.Response.Model != "m" || p.Response.StopReason != hooks.StopEndTurn {
		t.Fatalf("provided %+v, want kitchen's soup as the model m's answer", p)
	}
	if p := h.PreLLMCallCanProvideResponse(hooks.LLMRequest{Request: hooks.ModelRequest{Messages: []hooks.Message{{Role: hooks.RoleUser, Content: "hi"}}}}); p != nil {
		t.Fatalf("provided %+v for hi, want nothing", p)
	}
}

// optional serves pre_llm_call_can_provide_response only when its config
// turns it on.
type optional struct {
	sdk.Base
	on bool
}

func (*optional) Info() sdk.Info { return sdk.Info{Name: "optional", Version: "1"} }

func (o *optional) Configure(_ context.Context, raw json.RawMessage) error {
	var c struct {
		On bool `json:"on"`
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		return err
	}
	o.on = c.On
	return nil
}

func (o *optional) Unserved() []hooks.Name {
	if o.on {
		return nil
	}
	return []hooks.Name{hooks.PreLLMCallCanProvideResponse}
}

func (*optional) PreLLMCallCanProvideResponse(context.Context, hooks.LLMRequest) (*hooks.ModelResponse, error) {
	return &hooks.ModelResponse{Message: hooks.Message{Content: "here"}}, nil
}

// A hook the plugin does not serve as configured is not asked, in process
// and over both protocols (where Configure's answer says so).
func TestUnservedHooksAreNotAsked(t *testing.T) {
	for _, protocol := range []int{0, 1, 2} {
		for _, on := range []bool{false, true} {
			h := plugintest.New(t, &optional{}, plugintest.WithProtocol(protocol), plugintest.WithConfig(fmt.Sprintf(`{"on": %v}`, on)))
			if got := h.Bus.Subscribed(hooks.PreLLMCallCanProvideResponse, ""); got != on {
				t.Errorf("protocol %d, on %v: subscribed %v", protocol, on, got)
			}
			p := h.PreLLMCallCanProvideResponse(hooks.LLMRequest{Request: hooks.ModelRequest{Model: "m"}})
			if (p != nil) != on {
				t.Errorf("protocol %d, on %v: provided %+v", protocol, on, p)
			}
		}
	}
}

func TestHarnessAsksUserMessageAndToolContext(t *testing.T) {
	h := plugintest.New(t, &kitchen{})
	if um := h.OnUserMessage(hooks.UserMessage{Text: "rm -rf the pantry"}); !um.Blocked || um.BlockedBy != "kitchen" || um.Message != "the kitchen does not take that order" {
		t.Fatalf("on_user_message: %+v, want the kitchen's block", um)
	}
	if um := h.OnUserMessage(hooks.UserMessage{Text: "soup?"}); um.Blocked || um.Context != "the kitchen is open" {
		t.Fatalf("on_user_message: %+v, want the kitchen's context", um)
	}
	if added, by := h.PostToolCallCanAddContext(hooks.ToolCallOutcome{Name: "kitchen__soup", Result: hooks.ToolResult{Content: `"hot"`}}); added != "served by the kitchen: kitchen__soup" || !reflect.DeepEqual(by, []string{"kitchen"}) {
		t.Fatalf("post_tool_call_can_add_context: %q by %v", added, by)
	}
}
