package conformance

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/hookhost/hookhost/config"
	"github.com/hookhost/hookhost/dispatch"
	"github.com/hookhost/hookhost/hookbus"
	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/host"
	"github.com/hookhost/hookhost/internal/hookstretch"
	"github.com/hookhost/hookhost/internal/syncbuf"
)

// Plugin is one language's conform plugin.
type Plugin struct {
	Language string // for messages: "go", "python", "typescript", ...
	// Path is the absolute path of the executable the host starts: a
	// binary, or a script with an absolute interpreter in its #! line.
	Path string
	// Protocols are the plugin protocol versions it speaks; each is
	// checked with the plugin pinned to it. Nil means 1 and 2.
	Protocols []int
	// ModelStages says its manifest sets model_stages under protocol 2:
	// it answers each model-side stage in one exchange, and the check
	// counts exchanges per round accordingly (hook by hook without it).
	ModelStages bool
	// Lane says it serves the lane under protocol 2, and logs, the first
	// time a hook call comes by each carrier, "conform hook calls arrive"
	// with carrier=lane or carrier=grpc (as goconform does): the check
	// asserts that over protocol 2 every call came on the lane, and over
	// protocol 1 on gRPC. A plugin without it is held to no carrier: the
	// host sends its calls on the Hooks stream.
	Lane bool
}

func (p Plugin) protocols() []int {
	if p.Protocols == nil {
		return []int{1, 2}
	}
	return p.Protocols
}

// childHostEnv turns a test binary into a host of its own, for the check
// that SIGKILLs a host: it starts the plugin at the path it holds, prints
// the plugin's pid and waits to be killed.
const childHostEnv = "HOOKHOST_CONFORMANCE_CHILD_HOST"

// Main is TestMain for a package that calls Run: it plays the child host
// of the host-death check when asked to, and runs the tests otherwise.
func Main(m *testing.M) {
	if path := os.Getenv(childHostEnv); path != "" {
		os.Exit(childHost(path))
	}
	os.Exit(m.Run())
}

func childHost(path string) int {
	cfg, err := config.Parse([]byte(configFor(path, 0, `tag = "child"`)), "child.toml", "")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	h, errs := host.Start(context.Background(), host.Specs(cfg), host.Options{})
	if len(errs) > 0 {
		fmt.Fprintln(os.Stderr, errs[0])
		return 1
	}
	fmt.Println(h.Plugins()[0].PID)
	time.Sleep(time.Minute)
	return 0
}

// The timeouts the checks run under: long enough for a slow interpreter
// on a loaded machine, short enough that the deadline check is quick.
const (
	hookTimeout = "5s"
	toolTimeout = "1500ms"
)

func configFor(path string, protocol int, pluginConfig string) string {
	pin := ""
	if protocol != 0 {
		pin = fmt.Sprintf("protocol = %d\n", protocol)
	}
	return fmt.Sprintf(`
[plugins]
enabled = ["conform"]
[plugins.entries.conform]
path = %q
timeout = %q
tool_timeout = %q
%s
[plugins.entries.conform.config]
%s
`, path, hookTimeout, toolTimeout, pin, pluginConfig)
}

func parse(t *testing.T, toml string) *config.Config {
	t.Helper()
	cfg, err := config.Parse([]byte(toml), "conform.toml", "")
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// Run checks p against the spec in the package comment, as a tree of
// subtests.
func Run(t *testing.T, p Plugin) {
	if fi, err := os.Stat(p.Path); err != nil || fi.Mode().Perm()&0o111 == 0 {
		t.Fatalf("%s conform plugin %s is missing or not executable (%v)", p.Language, p.Path, err)
	}
	t.Run("check", func(t *testing.T) { checkCheck(t, p) })
	for _, v := range p.protocols() {
		t.Run(fmt.Sprintf("v%d", v), func(t *testing.T) { checkHooks(t, p, v) })
	}
	if slices.Contains(p.protocols(), 2) {
		t.Run("stretches", func(t *testing.T) { checkStretches(t, p) })
	}
	t.Run("config", func(t *testing.T) { checkConfigErrors(t, p) })
	t.Run("restart", func(t *testing.T) { checkRestart(t, p) })
	t.Run("host-killed", func(t *testing.T) { checkHostKilled(t, p) })
}

// log captures the host's log, for the checks on what the plugin logged
// and on how it left.
type log struct{ syncbuf.Buffer }

func (l *log) logger() hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{Name: "host", Level: hclog.Debug, Output: l})
}

var allHooks = hooks.Catalogue

// fullStretch is the longest legal stretch: the whole tool pipeline.
func fullStretch() []hooks.Name {
	var longest []hooks.Name
	for _, s := range hookstretch.Legal() {
		if len(s) > len(longest) {
			longest = s
		}
	}
	return longest
}

var toolNames = []string{"conform__echo", "conform__raise", "conform__seen", "conform__sleep"}

func checkManifest(t *testing.T, version string, hooksServed []hooks.Name, matchers []string, hookMatchers map[hooks.Name][]string, tools []string) {
	t.Helper()
	if version != "1.0.0" {
		t.Errorf("version %q, want 1.0.0", version)
	}
	if got := slices.Sorted(slices.Values(hooksServed)); !slices.Equal(got, slices.Sorted(slices.Values(allHooks))) {
		t.Errorf("hooks %v, want all of %v", hooksServed, allHooks)
	}
	if len(matchers) != 0 {
		t.Errorf("matchers %v, want none", matchers)
	}
	want := map[hooks.Name][]string{hooks.PreToolCallCanProvideResult: {"conform__*"}}
	if len(hookMatchers) != 1 || !slices.Equal(hookMatchers[hooks.PreToolCallCanProvideResult], want[hooks.PreToolCallCanProvideResult]) {
		t.Errorf("hook matchers %v, want %v", hookMatchers, want)
	}
	if got := slices.Sorted(slices.Values(tools)); !slices.Equal(got, toolNames) {
		t.Errorf("tools %v, want %v", tools, toolNames)
	}
}

func checkCheck(t *testing.T, p Plugin) {
	l := &log{}
	results := host.Check(context.Background(), host.Specs(parse(t, configFor(p.Path, 0, ""))), host.Options{Logger: l.logger()})
	if len(results) != 1 {
		t.Fatalf("check: %d results", len(results))
	}
	r := results[0]
	if !r.OK {
		t.Fatalf("plugins check fails: %v\nhost log:\n%s", r.Err, l)
	}
	checkManifest(t, r.Version, r.Hooks, r.Matchers, r.HookMatchers, r.Tools)
	// Every SDK declares the config keys of the same config type alike.
	if r.Config == nil || !slices.Equal(r.Config.Keys, []string{"tag"}) {
		t.Errorf("config declaration %+v, want the keys [tag]", r.Config)
	}
	// A conforming plugin leaves plugins check nothing to warn of: it
	// serves the controller, checks the cookie, requires a client
	// certificate and logs with levels.
	for _, w := range r.Warnings {
		t.Errorf("plugins check warns: %s", w)
	}
	if want := slices.Max(p.protocols()); r.Protocol != want {
		t.Errorf("negotiated protocol %d, want %d", r.Protocol, want)
	}
	checkGraceful(t, l)
}

// checkGraceful fails the test if the plugin had to be killed because it
// did not exit when the host asked it to (GRPCController.Shutdown).
func checkGraceful(t *testing.T, l *log) {
	t.Helper()
	if strings.Contains(l.String(), "failed to exit gracefully") {
		t.Errorf("the plugin did not exit when the host asked it to shut down and was killed\nhost log:\n%s", l)
	}
}

func start(t *testing.T, p Plugin, protocol int, pluginConfig string, l *log) (*host.Host, []hookbus.Member) {
	t.Helper()
	h, errs := host.Start(context.Background(), host.Specs(parse(t, configFor(p.Path, protocol, pluginConfig))), host.Options{Logger: l.logger()})
	if len(errs) > 0 {
		h.Close(context.Background())
		t.Fatalf("start: %v\nhost log:\n%s", errs[0], l)
	}
	t.Cleanup(func() { h.Close(context.Background()) })
	return h, h.Members()
}

// remotePlugin is what the Bus uses of a plugin the host runs: calls,
// stretches of the tool pipeline, and the promise to honour contexts.
type remotePlugin interface {
	hooks.Plugin
	hookstretch.Stretcher
	hookstretch.ModelStager
	hookbus.ContextHonouring
}

// exchanges counts the synchronous exchanges with the plugin: a plain call
// of a hook that is not an observer, or a stretch.
type exchanges struct {
	remotePlugin
	n atomic.Int64
}

func (e *exchanges) Handle(ctx context.Context, hook hooks.Name, req any) (any, error) {
	if !hook.Observer() {
		e.n.Add(1)
	}
	return e.remotePlugin.Handle(ctx, hook, req)
}

func (e *exchanges) Stretch(ctx context.Context, req hookstretch.Request) (hookstretch.Stretch, error) {
	st, err := e.remotePlugin.Stretch(ctx, req)
	if err == nil {
		e.n.Add(1)
	}
	return st, err
}

func (e *exchanges) ModelStage(ctx context.Context, req hookstretch.ModelStageRequest) (hookstretch.Stretch, error) {
	st, err := e.remotePlugin.ModelStage(ctx, req)
	if err == nil {
		e.n.Add(1)
	}
	return st, err
}

var (
	_ hookstretch.Stretcher    = (*exchanges)(nil)
	_ hookstretch.ModelStager  = (*exchanges)(nil)
	_ hookbus.ContextHonouring = (*exchanges)(nil)
)

const session = "conform-session"

func call(name, args string) hooks.ToolCallRequest {
	return hooks.ToolCallRequest{SessionID: session, CallID: "c-" + name, Name: name, Arguments: json.RawMessage(args)}
}

func jsonEqual(got, want string) bool {
	var a, b any
	if json.Unmarshal([]byte(got), &a) != nil || json.Unmarshal([]byte(want), &b) != nil {
		return false
	}
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb)
}

// failures returns the failures of the plugin's hook, by kind.
func failures(bus *hookbus.Bus, hook hooks.Name) map[string]uint64 {
	for _, s := range bus.Stats().Hooks {
		if s.Hook == hook {
			return s.Failures
		}
	}
	return nil
}

func checkHooks(t *testing.T, p Plugin, protocol int) {
	l := &log{}
	tag := "t-" + p.Language
	h, members := start(t, p, protocol, fmt.Sprintf("tag = %q", tag), l)
	st := h.Plugins()[0]
	if st.Protocol != protocol {
		t.Fatalf("speaks protocol %d, pinned to %d", st.Protocol, protocol)
	}
	checkManifest(t, st.Manifest.Version, st.Manifest.Hooks, st.Manifest.Matchers, st.Manifest.HookMatchers, func() []string {
		var names []string
		for _, tool := range st.Manifest.Tools {
			names = append(names, tool.Name)
		}
		return names
	}())
	ex := &exchanges{remotePlugin: members[0].Plugin.(remotePlugin)}
	members[0].Plugin = ex
	bus, err := hookbus.New(members, hookbus.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer bus.Close(context.Background())
	ctx := context.Background()

	// The log line Configure wrote, at the level it chose; stderr is read
	// on its own, so the line may come after Configure's answer.
	waitFor(t, `a WARN line "conform configured" with tag=`+tag+` in the host's log`, func() bool {
		return hasLogLine(l.String(), "[WARN]", "conform configured", "tag="+tag)
	})

	t.Run("pre_tool_list_finalized", func(t *testing.T) {
		tools := []hooks.ToolSpec{{Name: "a"}, {Name: "hidden_b"}, {Name: "c"}}
		change := bus.PreToolListFinalized(ctx, hooks.ToolListRequest{SessionID: session, Tools: tools})
		if change == nil || change.Plugin != "conform" || len(change.Tools) != 2 || change.Tools[0].Name != "a" || change.Tools[1].Name != "c" {
			t.Errorf("tool list with hidden_b: %+v, want [a c]", change)
		}
		if change := bus.PreToolListFinalized(ctx, hooks.ToolListRequest{SessionID: session, Tools: tools[:1]}); change != nil {
			t.Errorf("tool list without hidden tools: %+v, want no opinion", change)
		}
	})

	t.Run("pre_api_request_mutable", func(t *testing.T) {
		req, changes := bus.PreAPIRequestMutable(ctx, hooks.APIRequest{SessionID: session, Request: hooks.ModelRequest{Model: "patch-me", Messages: []hooks.Message{{Role: hooks.RoleUser, Content: "hi"}}}})
		if req.System != "patched by "+tag || req.Temperature == nil || *req.Temperature != 0.5 || len(changes) != 1 ||
			!slices.Equal(slices.Sorted(slices.Values(changes[0].Fields)), []string{"system", "temperature"}) {
			t.Errorf("request for patch-me: system %q, temperature %v, changes %+v", req.System, req.Temperature, changes)
		}
		if _, changes := bus.PreAPIRequestMutable(ctx, hooks.APIRequest{SessionID: session, Request: hooks.ModelRequest{Model: "m"}}); len(changes) != 0 {
			t.Errorf("request for model m: changes %+v, want none", changes)
		}
	})

	t.Run("pre_llm_call_can_provide_response", func(t *testing.T) {
		req := hooks.ModelRequest{Model: "provide-me", Messages: []hooks.Message{{Role: hooks.RoleUser, Content: "hi"}}}
		p := bus.PreLLMCallCanProvideResponse(ctx, hooks.LLMRequest{SessionID: session, Iteration: 1, Route: hooks.RouteGateway, Request: req})
		want := hooks.ModelResponse{
			Model: "provide-me",
			Message: hooks.Message{Role: hooks.RoleAssistant, Content: "provided by " + tag,
				ToolCalls: []hooks.ToolCall{{ID: "conform_call", Name: "conform__echo", Arguments: json.RawMessage(`{"text":"hi"}`)}}},
			Usage: hooks.Usage{InputTokens: 3, OutputTokens: 5}, StopReason: hooks.StopToolUse,
		}
		if p == nil || p.Plugin != "conform" || !reflect.DeepEqual(p.Response, want) {
			t.Errorf("provided response for provide-me: %+v, want conform's %+v", p, want)
		}
		req.Model = "m"
		if p := bus.PreLLMCallCanProvideResponse(ctx, hooks.LLMRequest{SessionID: session, Iteration: 1, Route: hooks.RouteGateway, Request: req}); p != nil {
			t.Errorf("provided response for model m: %+v, want none", p)
		}
	})

	t.Run("post_llm_call_can_reissue", func(t *testing.T) {
		req := hooks.ModelRequest{Model: "m", Messages: []hooks.Message{{Role: hooks.RoleUser, Content: "hi"}}}
		resp := func(text string) hooks.ModelResponse {
			return hooks.ModelResponse{Model: "m", Message: hooks.Message{Role: hooks.RoleAssistant, Content: text}, StopReason: hooks.StopEndTurn}
		}
		r := bus.PostLLMCallCanReissue(ctx, hooks.LLMCall{SessionID: session, Route: hooks.RouteGateway, Request: req, Response: resp("please REISSUE")})
		if r == nil || r.Plugin != "conform" || r.Reason != "conform asked again" || len(r.Patch.Messages) != 2 ||
			r.Patch.Messages[0].Content != "hi" || r.Patch.Messages[1].Role != hooks.RoleUser || r.Patch.Messages[1].Content != "again" {
			t.Errorf("reissue: %+v, want conform's with [hi, again]", r)
		}
		if r := bus.PostLLMCallCanReissue(ctx, hooks.LLMCall{SessionID: session, Route: hooks.RouteGateway, Request: req, Response: resp("fine")}); r != nil {
			t.Errorf("reissue of a fine answer: %+v, want none", r)
		}
	})

	t.Run("transform_llm_output", func(t *testing.T) {
		if text, by := bus.TransformLLMOutput(ctx, hooks.LLMOutput{SessionID: session, Text: "The answer."}); text != "The answer. -- "+tag || !slices.Equal(by, []string{"conform"}) {
			t.Errorf("transform_llm_output: %q by %v", text, by)
		}
		if text, by := bus.TransformLLMOutput(ctx, hooks.LLMOutput{SessionID: session}); text != "" || len(by) != 0 {
			t.Errorf("transform_llm_output of nothing: %q by %v, want no opinion", text, by)
		}
	})

	t.Run("model stages", func(t *testing.T) {
		// One round: the pre-call stage on a request conform patches, the
		// post-call stage on a final answer it transforms.
		n := ex.n.Load()
		pre := bus.PreCall(ctx, hooks.LLMRequest{SessionID: session, Iteration: 1, Route: hooks.RouteGateway,
			Request: hooks.ModelRequest{Model: "patch-me", Tools: []hooks.ToolSpec{{Name: "a"}}, Messages: []hooks.Message{{Role: hooks.RoleUser, Content: "hi"}}}})
		if pre.Request.System != "patched by "+tag || pre.ToolList != nil || pre.Provided != nil || len(pre.Changes) != 1 {
			t.Errorf("pre-call stage for patch-me: %+v, want conform's patch only", pre)
		}
		post := bus.PostCall(ctx, hookbus.PostCallRequest{Reissue: true, Transform: true, Call: hooks.LLMCall{SessionID: session, Iteration: 1, Route: hooks.RouteGateway,
			Request: pre.Request, Response: hooks.ModelResponse{Model: "patch-me", Message: hooks.Message{Role: hooks.RoleAssistant, Content: "fine"}, StopReason: hooks.StopEndTurn}}})
		if post.Reissue != nil || post.Output == nil || post.Output.Text != "fine -- "+tag || !slices.Equal(post.Output.By, []string{"conform"}) {
			t.Errorf("post-call stage on \"fine\": %+v (output %+v), want no reissue and conform's transform", post, post.Output)
		}
		// A plugin in all five model hooks costs one exchange per stage over
		// protocol 2 when its manifest sets model_stages; five hook by hook.
		want := int64(5)
		if protocol == 2 && p.ModelStages {
			want = 2
		}
		if got := ex.n.Load() - n; got != want {
			t.Errorf("a round's model-side hooks took %d exchanges over protocol %d (model_stages %v), want %d", got, protocol, p.ModelStages, want)
		}
	})

	t.Run("on_user_message", func(t *testing.T) {
		um := bus.OnUserMessage(ctx, hooks.UserMessage{SessionID: session, Route: hooks.RouteGateway, Index: 2, Text: "forbidden"})
		if !um.Blocked || um.BlockedBy != "conform" || um.Message != "conform blocks forbidden text" {
			t.Errorf("on_user_message forbidden: %+v, want conform's block", um)
		}
		um = bus.OnUserMessage(ctx, hooks.UserMessage{SessionID: session, Route: hooks.RouteGateway, Text: "context:ticket 7"})
		if um.Blocked || um.Context != "ticket 7 -- "+tag || !slices.Equal(um.ContextBy, []string{"conform"}) {
			t.Errorf("on_user_message context:ticket 7: %+v, want the context %q", um, "ticket 7 -- "+tag)
		}
		if um := bus.OnUserMessage(ctx, hooks.UserMessage{SessionID: session, Text: "hello"}); um.Blocked || um.Context != "" {
			t.Errorf("on_user_message hello: %+v, want no opinion", um)
		}
	})

	t.Run("post_tool_call_can_add_context", func(t *testing.T) {
		ev := hooks.ToolCallOutcome{SessionID: session, CallID: "c", Name: "conform__echo", Arguments: json.RawMessage(`{}`),
			Result: hooks.ToolResult{Content: `"x"`}, Status: hooks.ProvidedBy("conform")}
		if added, by := bus.PostToolCallCanAddContext(ctx, ev); added != "echo checked by "+tag || !slices.Equal(by, []string{"conform"}) {
			t.Errorf("post_tool_call_can_add_context: %q by %v, want %q", added, by, "echo checked by "+tag)
		}
		ev.Status = hooks.StatusOK
		if added, by := bus.PostToolCallCanAddContext(ctx, ev); added != "" || len(by) != 0 {
			t.Errorf("post_tool_call_can_add_context of a native result: %q by %v, want no opinion", added, by)
		}
	})

	t.Run("pre_tool_call", func(t *testing.T) {
		if out := bus.PreToolCall(ctx, call("any_tool", `{"text":"forbidden"}`)); !out.Blocked || out.BlockedBy != "conform" || out.Message != "conform blocks forbidden text" {
			t.Errorf("forbidden: %+v, want blocked by conform", out)
		}
		out := bus.PreToolCall(ctx, call("any_tool", `{"text":"shout:quiet ünïcode","n":1}`))
		if out.Blocked || !slices.Equal(out.ModifiedBy, []string{"conform"}) || !jsonEqual(string(out.Arguments), `{"text":"QUIET üNïCODE","n":1}`) {
			t.Errorf("shout: %+v (arguments %s), want the text upper-cased (ASCII) and n kept", out, out.Arguments)
		}
		for _, args := range []string{`{"text":"calm"}`, `{"other":1}`, `[1,2]`, `"text"`} {
			if out := bus.PreToolCall(ctx, call("any_tool", args)); out.Blocked || len(out.ModifiedBy) != 0 {
				t.Errorf("arguments %s: %+v, want no opinion", args, out)
			}
		}
	})

	t.Run("pre_tool_call_can_provide_result", func(t *testing.T) {
		r := bus.PreToolCallCanProvideResult(ctx, call("conform__echo", `{"text":"hello"}`))
		if r == nil || r.Plugin != "conform" || r.IsError || !jsonEqual(r.Content, fmt.Sprintf(`{"echo":"hello","tag":%q}`, tag)) {
			t.Errorf("echo hello: %+v", r)
		}
		r = bus.PreToolCallCanProvideResult(ctx, call("conform__echo", `{"text":"fail"}`))
		if r == nil || !r.IsError || r.Content != "conform refuses to echo fail" {
			t.Errorf("echo fail: %+v, want conform's error result", r)
		}
		fromServer := call("conform__echo", `{"text":"where"}`)
		fromServer.Origin = hooks.OriginMCP("fs")
		r = bus.PreToolCallCanProvideResult(ctx, fromServer)
		if r == nil || r.IsError || !jsonEqual(r.Content, fmt.Sprintf(`{"echo":"where","tag":%q,"origin":"mcp:fs"}`, tag)) {
			t.Errorf("echo where, from an MCP server: %+v, want the origin echoed", r)
		}
		if r := bus.PreToolCallCanProvideResult(ctx, call("conform__unknown", `{}`)); r != nil {
			t.Errorf("conform__unknown: %+v, want no opinion", r)
		}
		if bus.Subscribed(hooks.PreToolCallCanProvideResult, "other_tool") {
			t.Error("conform is asked to provide other_tool's result; its hook matchers say conform__* only")
		}
		if !bus.Subscribed(hooks.PreToolCall, "other_tool") || !bus.Subscribed(hooks.TransformToolResult, "other_tool") {
			t.Error("conform is not asked pre_tool_call or transform_tool_result for other_tool; it has no matchers")
		}
		before := failures(bus, hooks.PreToolCallCanProvideResult)
		if r := bus.PreToolCallCanProvideResult(ctx, call("conform__raise", `{}`)); r != nil {
			t.Errorf("conform__raise: %+v, want no opinion (a failure)", r)
		}
		after := failures(bus, hooks.PreToolCallCanProvideResult)
		if after["error"]+after["panic"] != before["error"]+before["panic"]+1 {
			t.Errorf("conform__raise counted as failures %v (before %v), want one more error or panic", after, before)
		}
	})

	t.Run("deadline", func(t *testing.T) {
		// A call past its deadline must not hold up the next one, and the
		// plugin must go on answering afterwards.
		slow := make(chan *hookbus.ProvidedResult, 1)
		before := failures(bus, hooks.PreToolCallCanProvideResult)
		go func() { slow <- bus.PreToolCallCanProvideResult(ctx, call("conform__sleep", `{"ms":60000}`)) }()
		time.Sleep(200 * time.Millisecond)
		if r := bus.PreToolCallCanProvideResult(ctx, call("conform__echo", `{"text":"meanwhile"}`)); r == nil || !strings.Contains(r.Content, "meanwhile") {
			t.Errorf("echo while a call sleeps: %+v", r)
		}
		select {
		case r := <-slow:
			if r != nil {
				t.Errorf("a 60 s sleep under a %s deadline answered %+v", toolTimeout, r)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("a call under a %s deadline has not returned after 30 s", toolTimeout)
		}
		if f := failures(bus, hooks.PreToolCallCanProvideResult); f["timeout"] != before["timeout"]+1 {
			t.Errorf("failures %v (before %v), want one more timeout", f, before)
		}
		if r := bus.PreToolCallCanProvideResult(ctx, call("conform__sleep", `{"ms":1}`)); r == nil || r.Content != "slept" {
			t.Errorf("sleep 1 ms after a timeout: %+v, want \"slept\"", r)
		}
	})

	t.Run("tool pipeline", func(t *testing.T) {
		native := dispatch.Tool{
			Spec: hooks.ToolSpec{Name: "native_upper", Description: "returns its text", InputSchema: json.RawMessage(`{"type":"object"}`)},
			Run: func(_ context.Context, args json.RawMessage) (any, error) {
				var a struct{ Text string }
				_ = json.Unmarshal(args, &a)
				return "native says " + a.Text, nil
			},
		}
		reg, err := dispatch.NewRegistry(native)
		if err != nil {
			t.Fatal(err)
		}
		pipe := &dispatch.Pipeline{Registry: reg, Bus: bus}

		n := ex.n.Load()
		out := pipe.Run(ctx, session, hooks.ToolCall{ID: "p1", Name: "conform__echo", Arguments: json.RawMessage(`{"text":"shout:hi"}`)})
		// The pipeline carries a plain-text result as a JSON string, and
		// post_tool_call_can_add_context's context follows it; the echo's
		// keys come in the plugin's order.
		want := fmt.Sprintf(`{"echo":"HI","tag":%q,"origin":"plugin"}`, tag)
		var content string
		result, added := strings.CutSuffix(out.Result.Content, "\n\n"+hookbus.ContextBlock("echo checked by "+tag))
		_ = json.Unmarshal([]byte(result), &content)
		echoed, transformed := strings.CutSuffix(content, " (transformed)")
		if out.Path != dispatch.PathProvided || out.AnsweredBy != "conform" || !added || !transformed || !jsonEqual(echoed, want) || out.Result.IsError ||
			!slices.Equal(out.ModifiedBy, []string{"conform"}) || !slices.Equal(out.TransformedBy, []string{"conform"}) || !slices.Equal(out.ContextBy, []string{"conform"}) {
			t.Errorf("echo shout:hi through the pipeline: %+v, want content %s", out, want)
		}
		// For a plugin's own tool the host asks pre_tool_call on its own (it
		// checks the final arguments against the tool's schema before anyone
		// may provide); protocol 2 then asks the provide and the transform in
		// one exchange, protocol 1 in two; post_tool_call_can_add_context is
		// a plain call after them on both.
		if got, want := ex.n.Load()-n, map[int]int64{1: 4, 2: 3}[protocol]; got != want {
			t.Errorf("the call took %d exchanges with the plugin over protocol %d, want %d", got, protocol, want)
		}

		out = pipe.Run(ctx, session, hooks.ToolCall{ID: "p2", Name: "native_upper", Arguments: json.RawMessage(`{"text":"shout:abc"}`)})
		if out.Path != dispatch.PathNative || out.Result.Content != `"NATIVE SAYS ABC"` || !slices.Equal(out.TransformedBy, []string{"conform"}) {
			t.Errorf("native_upper through the pipeline: %+v, want \"NATIVE SAYS ABC\" transformed by conform", out)
		}

		out = pipe.Run(ctx, session, hooks.ToolCall{ID: "p3", Name: "conform__echo", Arguments: json.RawMessage(`{"text":"forbidden"}`)})
		if out.Path != dispatch.PathBlocked || !out.Result.IsError || !strings.Contains(out.Result.Content, "conform blocks forbidden text") {
			t.Errorf("echo forbidden through the pipeline: %+v, want blocked", out)
		}
	})

	t.Run("ask", func(t *testing.T) { checkAsk(t, ctx, members[0], bus) })

	t.Run("observers", func(t *testing.T) {
		bus.OnSessionStart(hooks.SessionStart{SessionID: "s-obs", Model: "m", Route: hooks.RouteGateway})
		bus.PostLLMCall(hooks.Inference{SessionID: "s-obs", Model: "m-obs", Route: hooks.RouteGateway, StopReason: hooks.StopEndTurn})
		bus.PostToolCall(hooks.ToolCallOutcome{SessionID: "s-obs", CallID: "o1", Name: "observed_tool", Arguments: json.RawMessage(`{}`), Status: hooks.StatusOK})
		bus.PostToolCall(hooks.ToolCallOutcome{SessionID: "s-obs", CallID: "o2", Name: "fs__read", Arguments: json.RawMessage(`{}`), Status: hooks.StatusOK, Origin: hooks.OriginMCP("fs")})
		bus.OnSessionEnd(hooks.SessionEnd{SessionID: "s-obs", Model: "m", Route: hooks.RouteGateway, Reason: hooks.EndCompleted})
		fctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		if err := bus.Flush(fctx); err != nil {
			t.Fatalf("flushing the observers: %v", err)
		}
		want := []string{
			"on_session_start s-obs", "post_llm_call s-obs m-obs",
			"post_tool_call observed_tool ok", "post_tool_call fs__read ok mcp:fs", "on_session_end s-obs completed",
			// From the pipeline's calls above, which know where each call went.
			"post_tool_call conform__echo provided_by:conform plugin", "post_tool_call native_upper ok native",
			// From checkAsk's denied call.
			"post_tool_call conform__echo blocked plugin",
		}
		var seen []string
		waitFor(t, "conform__seen to list every observer event", func() bool {
			r := bus.PreToolCallCanProvideResult(ctx, call("conform__seen", `{}`))
			if r == nil || json.Unmarshal([]byte(r.Content), &seen) != nil {
				return false
			}
			for _, w := range want {
				if !slices.Contains(seen, w) {
					return false
				}
			}
			return true
		})
		if t.Failed() {
			t.Logf("conform__seen lists %q, want at least %q", seen, want)
		}
	})

	t.Run("every hook", func(t *testing.T) { checkEveryHook(t, ctx, ex, bus) })

	if p.Lane {
		checkCarrier(t, l, protocol)
	}

	if f := failures(bus, hooks.OnSessionStart); len(f) != 0 {
		t.Errorf("on_session_start failures: %v", f)
	}

	// Close shuts the plugin down through its controller.
	pid := h.Plugins()[0].PID
	if err := h.Close(context.Background()); err != nil {
		t.Errorf("Close: %v", err)
	}
	waitFor(t, "the plugin to exit after Close", func() bool { return gone(pid) })
	checkGraceful(t, l)
}

// checkCarrier checks, from what a Lane plugin logged, that the calls of
// the round came on the lane over protocol 2 and on gRPC over protocol 1.
func checkCarrier(t *testing.T, l *log, protocol int) {
	t.Helper()
	want, not := "carrier=lane", "carrier=grpc"
	if protocol == 1 {
		want, not = not, want
	}
	waitFor(t, `an INFO line "conform hook calls arrive" with `+want+` in the host's log`, func() bool {
		return hasLogLine(l.String(), "[INFO]", "conform hook calls arrive", want)
	})
	if hasLogLine(l.String(), "conform hook calls arrive", not) {
		t.Errorf("over protocol %d a hook call came with %s, want every one with %s\nhost log:\n%s", protocol, not, want, l)
	}
}

// checkAsk checks conform's ask, alone and against other plugins' answers:
// any block wins over it, it wins over a modify, and the call that goes
// ahead once approved runs with every modify applied.
func checkAsk(t *testing.T, ctx context.Context, conform hookbus.Member, bus *hookbus.Bus) {
	out := bus.PreToolCall(ctx, call("any_tool", `{"text":"ask:a person decides"}`))
	if !out.Asked() || !slices.Equal(out.AskedBy, []string{"conform"}) || out.AskReason != "a person decides" || !jsonEqual(string(out.Arguments), `{"text":"ask:a person decides"}`) {
		t.Errorf("ask: %+v, want asked by conform for \"a person decides\", arguments unchanged", out)
	}

	// Through the pipeline: no one to ask blocks; denied blocks; approved
	// runs the call, which conform then provides.
	pipe := &dispatch.Pipeline{Bus: bus}
	echo := hooks.ToolCall{ID: "a1", Name: "conform__echo", Arguments: json.RawMessage(`{"text":"ask:echo it?"}`)}
	res := pipe.Run(ctx, session, echo)
	if res.Path != dispatch.PathBlocked || res.Status != hooks.StatusBlocked || !strings.Contains(res.Result.Content, "blocked: approval required: echo it?") {
		t.Errorf("ask with no approver: %+v, want blocked, approval required", res)
	}
	var asked []string
	pipe.Approve = func(_ context.Context, c hooks.ToolCall, reason string) (bool, error) {
		asked = append(asked, c.Name+" "+reason)
		return false, nil
	}
	if res := pipe.Run(ctx, session, echo); res.Path != dispatch.PathBlocked || !strings.Contains(res.Result.Content, "denied by the user: echo it?") {
		t.Errorf("ask denied: %+v, want blocked, denied by the user", res)
	}
	pipe.Approve = func(_ context.Context, c hooks.ToolCall, reason string) (bool, error) {
		asked = append(asked, c.Name+" "+reason)
		return true, nil
	}
	if res := pipe.Run(ctx, session, echo); res.Path != dispatch.PathProvided || !strings.Contains(res.Result.Content, `\"echo\":\"ask:echo it?\"`) {
		t.Errorf("ask approved: %+v, want conform's echo", res)
	}
	if want := []string{"conform__echo echo it?", "conform__echo echo it?"}; !slices.Equal(asked, want) {
		t.Errorf("the approver was asked %q, want %q", asked, want)
	}

	// Against other plugins: one that modifies before conform, one that
	// blocks after it when the arguments say so.
	modifier := &hooks.Funcs{Name: "modifier", Matchers: []string{"prec_*"},
		PreToolCallFunc: func(_ context.Context, req hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
			var a map[string]any
			if err := json.Unmarshal(req.Arguments, &a); err != nil {
				return nil, err
			}
			a["modified"] = true
			b, err := json.Marshal(a)
			return &hooks.PreToolCallDecision{ModifiedArgs: b}, err
		}}
	blocker := &hooks.Funcs{Name: "blocker", Matchers: []string{"prec_*"},
		PreToolCallFunc: func(_ context.Context, req hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
			if strings.Contains(string(req.Arguments), `"block":true`) {
				return &hooks.PreToolCallDecision{Block: &hooks.Block{Message: "blocker says no"}}, nil
			}
			return nil, nil
		}}
	prec, err := hookbus.New([]hookbus.Member{{Plugin: modifier}, conform, {Plugin: blocker}}, hookbus.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer prec.Close(context.Background())
	if out := prec.PreToolCall(ctx, call("prec_tool", `{"text":"ask:why","block":true}`)); !out.Blocked || out.BlockedBy != "blocker" || out.Message != "blocker says no" || out.Asked() {
		t.Errorf("ask then block: %+v, want the block to win", out)
	}
	out = prec.PreToolCall(ctx, call("prec_tool", `{"text":"ask:why"}`))
	if out.Blocked || !out.Asked() || out.AskReason != "why" || !slices.Equal(out.ModifiedBy, []string{"modifier"}) ||
		!jsonEqual(string(out.Arguments), `{"text":"ask:why","modified":true}`) {
		t.Errorf("modify then ask: %+v (arguments %s), want asked, with the modify applied", out, out.Arguments)
	}
	native := dispatch.Tool{
		Spec: hooks.ToolSpec{Name: "prec_tool", Description: "returns its arguments", InputSchema: json.RawMessage(`{"type":"object"}`)},
		Run:  func(_ context.Context, args json.RawMessage) (any, error) { return args, nil },
	}
	reg, err := dispatch.NewRegistry(native)
	if err != nil {
		t.Fatal(err)
	}
	var seen json.RawMessage
	precPipe := &dispatch.Pipeline{Registry: reg, Bus: prec, Approve: func(_ context.Context, c hooks.ToolCall, _ string) (bool, error) {
		seen = c.Arguments
		return true, nil
	}}
	res = precPipe.Run(ctx, session, hooks.ToolCall{ID: "a2", Name: "prec_tool", Arguments: json.RawMessage(`{"text":"ask:why"}`)})
	if res.Path != dispatch.PathNative || !jsonEqual(res.Result.Content, `{"text":"ask:why","modified":true}`) || !jsonEqual(string(seen), res.Result.Content) {
		t.Errorf("approved modify then ask: %+v (approver saw %s), want the native tool run with the modified arguments", res, seen)
	}
}

// specObservers are the observers whose line the spec states; any other
// records "<hook> <session_id>".
var specObservers = []hooks.Name{hooks.OnSessionStart, hooks.OnSessionEnd, hooks.PostLLMCall, hooks.PostToolCall}

// checkEveryHook asks the plugin every hook of the catalogue, named by the
// spec or not, with the hook's zero payload bar its session id: an
// answering hook must give no opinion (so says the spec of every hook it
// names, for a zero payload, and of every hook it does not), and an
// observer must record a line that starts with the hook's name: exactly
// "<hook> <session_id>" for one the spec does not name.
func checkEveryHook(t *testing.T, ctx context.Context, plugin hooks.Plugin, bus *hookbus.Bus) {
	const sid = "s-every"
	var want []string
	for _, f := range hooks.CatalogueFacts() {
		payload := reflect.New(f.Payload).Elem()
		if id := payload.FieldByName("SessionID"); id.IsValid() {
			id.SetString(sid)
		}
		answer, err := plugin.Handle(ctx, f.Name, payload.Interface())
		switch {
		case err != nil:
			t.Errorf("%s with the zero payload failed: %v", f.Name, err)
		case f.Observer && slices.Contains(specObservers, f.Name):
			want = append(want, string(f.Name)+" ")
		case f.Observer:
			want = append(want, string(f.Name)+" "+sid)
		case answer != nil && !reflect.ValueOf(answer).IsNil():
			t.Errorf("%s with the zero payload answered %+v, want no opinion", f.Name, answer)
		}
	}
	var seen []string
	recorded := func(w string) bool {
		return slices.ContainsFunc(seen, func(line string) bool {
			return line == w || strings.HasSuffix(w, " ") && strings.HasPrefix(line, w)
		})
	}
	all := func() bool { return !slices.ContainsFunc(want, func(w string) bool { return !recorded(w) }) }
	waitFor(t, "conform__seen to list a line of every observer", func() bool {
		r := bus.PreToolCallCanProvideResult(ctx, call("conform__seen", `{}`))
		if r == nil || json.Unmarshal([]byte(r.Content), &seen) != nil {
			return false
		}
		return all()
	})
	if !all() {
		t.Logf("conform__seen lists %q, want lines %q (one ending in a space: a line that starts with it)", seen, want)
	}
}

// checkStretches runs the stretches the hook checks do not reach, over
// protocol 2: for a native tool inside conform's namespace, conform is
// asked pre_tool_call and the provide in one exchange, which must stop at
// a block and at a provide that gave nothing.
func checkStretches(t *testing.T, p Plugin) {
	l := &log{}
	_, members := start(t, p, 2, "", l)
	ex := &exchanges{remotePlugin: members[0].Plugin.(remotePlugin)}
	members[0].Plugin = ex
	bus, err := hookbus.New(members, hookbus.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer bus.Close(context.Background())
	// A native tool inside conform's namespace: conform is asked every tool
	// hook for it, in one stretch, and provides nothing for it.
	native := dispatch.Tool{
		Spec: hooks.ToolSpec{Name: "conform__native", Description: "returns its text", InputSchema: json.RawMessage(`{"type":"object"}`)},
		Run: func(_ context.Context, args json.RawMessage) (any, error) {
			var a struct{ Text string }
			_ = json.Unmarshal(args, &a)
			return "native says " + a.Text, nil
		},
	}
	reg, err := dispatch.NewRegistry(native)
	if err != nil {
		t.Fatal(err)
	}
	pipe := &dispatch.Pipeline{Registry: reg, Bus: bus}
	ctx := context.Background()

	n := ex.n.Load()
	out := pipe.Run(ctx, session, hooks.ToolCall{ID: "s1", Name: "conform__native", Arguments: json.RawMessage(`{"text":"shout:abc"}`)})
	if out.Path != dispatch.PathNative || out.Result.Content != `"native says ABC"` || !slices.Equal(out.ModifiedBy, []string{"conform"}) || len(out.TransformedBy) != 0 {
		t.Errorf("shout:abc to conform__native: %+v, want the native result of the modified arguments, untransformed", out)
	}
	// The stretch (modify, then no result: it stops), then a plain
	// transform_tool_result and a plain post_tool_call_can_add_context
	// after the native call.
	if got := ex.n.Load() - n; got != 3 {
		t.Errorf("shout:abc to conform__native took %d exchanges with the plugin, want 3 (a stretch, then the transform, then the context)", got)
	}

	n = ex.n.Load()
	out = pipe.Run(ctx, session, hooks.ToolCall{ID: "s2", Name: "conform__native", Arguments: json.RawMessage(`{"text":"forbidden"}`)})
	if out.Path != dispatch.PathBlocked || !strings.Contains(out.Result.Content, "conform blocks forbidden text") {
		t.Errorf("forbidden to conform__native: %+v, want blocked", out)
	}
	// The stretch stops at the block; the blocked result is then a result
	// like any other, which transform_tool_result and
	// post_tool_call_can_add_context are asked about, each alone.
	if got := ex.n.Load() - n; got != 3 {
		t.Errorf("forbidden to conform__native took %d exchanges with the plugin, want 3 (a stretch that stops at the block, then the transform, then the context)", got)
	}

	// An ask ends the stretch as a block does: nothing may be provided
	// before a person approves. With no one to ask the call is blocked;
	// approved, the plugin is asked the provide stage again, by a plain
	// call.
	n = ex.n.Load()
	ask := hooks.ToolCall{ID: "s3", Name: "conform__native", Arguments: json.RawMessage(`{"text":"ask:may I?"}`)}
	out = pipe.Run(ctx, session, ask)
	if out.Path != dispatch.PathBlocked || !strings.Contains(out.Result.Content, "blocked: approval required: may I?") {
		t.Errorf("ask:may I? to conform__native with no approver: %+v, want blocked", out)
	}
	if got := ex.n.Load() - n; got != 3 {
		t.Errorf("ask:may I? to conform__native with no approver took %d exchanges with the plugin, want 3 (a stretch that stops at the ask, then the transform, then the context)", got)
	}
	pipe.Approve = func(context.Context, hooks.ToolCall, string) (bool, error) { return true, nil }
	n = ex.n.Load()
	out = pipe.Run(ctx, session, ask)
	if out.Path != dispatch.PathNative || out.Result.Content != `"native says ask:may I?"` {
		t.Errorf("ask:may I? to conform__native, approved: %+v, want the native result", out)
	}
	if got := ex.n.Load() - n; got != 4 {
		t.Errorf("ask:may I? to conform__native, approved, took %d exchanges with the plugin, want 4 (a stretch that stops at the ask, a plain provide, the transform, the context)", got)
	}

	for _, hook := range fullStretch() {
		if f := failures(bus, hook); len(f) != 0 {
			t.Errorf("%s failures %v, want none\nhost log:\n%s", hook, f, l)
		}
	}
}

// hasLogLine reports whether one line of log holds every part.
func hasLogLine(log string, parts ...string) bool {
	for _, line := range strings.Split(log, "\n") {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(line, p)
		}
		if all {
			return true
		}
	}
	return false
}

func checkConfigErrors(t *testing.T, p Plugin) {
	for _, c := range []struct{ config, key string }{
		// Refused by the host, from the plugin's declaration.
		{`bogus = 1`, "plugins.entries.conform.config.bogus: unknown key (the plugin takes tag)"},
		// Refused by the plugin.
		{`tag = 7`, "tag"},
	} {
		l := &log{}
		h, errs := host.Start(context.Background(), host.Specs(parse(t, configFor(p.Path, 0, c.config))), host.Options{Logger: l.logger()})
		h.Close(context.Background())
		if len(errs) != 1 || !strings.Contains(errs[0].Error(), c.key) {
			t.Errorf("config %s: start errors %v, want one naming %q", c.config, errs, c.key)
		}
	}
}

func checkRestart(t *testing.T, p Plugin) {
	l := &log{}
	h, members := start(t, p, 0, "", l)
	bus, err := hookbus.New(members, hookbus.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer bus.Close(context.Background())
	first := h.Plugins()[0]
	if err := syscall.Kill(first.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the plugin to be restarted after SIGKILL", func() bool {
		now := h.Plugins()[0]
		return now.State == host.StateRunning && now.PID != first.PID && now.PID != 0
	})
	if r := h.Plugins()[0].Restarts; r != 1 {
		t.Errorf("restarts = %d, want 1", r)
	}
	if r := bus.PreToolCallCanProvideResult(context.Background(), call("conform__echo", `{"text":"again"}`)); r == nil || !strings.Contains(r.Content, "again") {
		t.Errorf("echo after the restart: %+v\nhost log:\n%s", r, l)
	}
}

// checkHostKilled SIGKILLs a host, which then cannot shut its plugin down:
// the plugin must notice on its own and exit. Started by the host itself,
// the plugin also gets the parent-death signal the host asks the kernel
// for; started through a wrapper script that does not exec it, as an
// operator's wrapper may, nothing but its own watch on HOOKHOST_HOST_PID
// can tell it.
func checkHostKilled(t *testing.T, p Plugin) {
	t.Run("direct", func(t *testing.T) { hostKilled(t, p.Path, false) })
	t.Run("wrapped", func(t *testing.T) {
		if strings.ContainsRune(p.Path, '\'') {
			t.Fatalf("cannot quote %s for a shell", p.Path)
		}
		wrapper := filepath.Join(t.TempDir(), "wrapper")
		// The command after the plugin keeps the shell from exec'ing it.
		script := fmt.Sprintf("#!/bin/sh\n'%s'\nexit $?\n", p.Path)
		if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		hostKilled(t, wrapper, true)
	})
}

func hostKilled(t *testing.T, path string, wrapped bool) {
	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), childHostEnv+"="+path)
	// exec copies the child's stderr from a goroutine of its own, which
	// may still be writing when a failure reads it.
	var stderr syncbuf.Buffer
	child.Stderr = &stderr
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { child.Process.Kill(); child.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("the child host did not report the plugin's pid (is conformance.Main the package's TestMain?): %v; its stderr: %s", err, stderr.String())
	}
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("the child host printed %q, want a pid", line)
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	if wrapped {
		// The host started the shell; the plugin is its one child.
		shell := pid
		kids, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", shell, shell))
		if pid, err = strconv.Atoi(strings.TrimSpace(string(kids))); err != nil {
			t.Fatalf("the wrapper shell %d has children %q, want the plugin alone: %v", shell, kids, err)
		}
		t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	}
	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	child.Wait()
	waitFor(t, "the plugin to exit after its host was SIGKILLed", func() bool { return gone(pid) })
}

// waitFor polls cond for up to 30 seconds, failing the test if it never
// holds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Errorf("timed out after 30 s waiting for %s", what)
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// gone reports whether pid has exited (a zombie counts as exited).
func gone(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return true
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	// The state follows the command name in parentheses.
	if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) {
		return stat[i+2] == 'Z'
	}
	return false
}
