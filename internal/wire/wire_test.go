package wire_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/wire"
	pluginv1 "github.com/hookhost/hookhost/plugins/proto/v1"
)

// conn is one plugin server and a client connected to it over an in-memory
// gRPC connection: the full protocol stack without a process.
type conn struct {
	client *wire.Client
	server *grpc.Server
}

func connect(t *testing.T, srv pluginv1.PluginServer) *conn {
	t.Helper()
	lis := bufconn.Listen(1 << 20)
	s := grpc.NewServer()
	pluginv1.RegisterPluginServer(s, srv)
	go func() { _ = s.Serve(lis) }()
	cc, err := grpc.NewClient("passthrough:///plugin",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cc.Close()
		s.Stop()
	})
	return &conn{client: wire.NewClient(cc), server: s}
}

func connectPlugin(t *testing.T, p hooks.Plugin) *wire.Client {
	t.Helper()
	c := connect(t, wire.NewServer(p, nil)).client
	if _, err := c.Describe(t.Context()); err != nil {
		t.Fatalf("describe: %v", err)
	}
	return c
}

func ptr[T any](v T) *T { return &v }

// recorder remembers the last payload each hook received.
type recorder struct {
	mu   sync.Mutex
	seen map[hooks.Name]any
}

func (r *recorder) saw(h hooks.Name, v any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seen == nil {
		r.seen = map[hooks.Name]any{}
	}
	r.seen[h] = v
}

func (r *recorder) got(h hooks.Name) any {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.seen[h]
}

var (
	req = hooks.ModelRequest{
		Model: "offline-small", System: "sys",
		Messages: []hooks.Message{
			{Role: hooks.RoleUser, Content: "hi"},
			{Role: hooks.RoleAssistant, ToolCalls: []hooks.ToolCall{{ID: "c1", Name: "now", Arguments: json.RawMessage(`{"tz":`)}}},
		},
		Tools:       []hooks.ToolSpec{{Name: "now", Description: "time", InputSchema: json.RawMessage(`{"type":"object"}`)}},
		MaxTokens:   100,
		Temperature: ptr(0.0),
	}
	resp = hooks.ModelResponse{Model: "offline-small", Message: hooks.Message{Role: hooks.RoleAssistant, Content: "I'm not sure"}, Usage: hooks.Usage{InputTokens: 5, OutputTokens: 4}, StopReason: hooks.StopEndTurn}

	// One payload per hook, every field set, and the result each hook
	// answers with.
	evStart    = hooks.SessionStart{SessionID: "s", Model: "m", Route: hooks.RouteGateway}
	evEnd      = hooks.SessionEnd{SessionID: "s", Model: "m", Route: hooks.RouteGateway, Reason: hooks.EndMaxIterations, Iterations: 8, Usage: hooks.Usage{InputTokens: 1, OutputTokens: 2}, Error: "e"}
	evToolList = hooks.ToolListRequest{SessionID: "s", Iteration: 1, Tools: req.Tools}
	evAPI      = hooks.APIRequest{SessionID: "s", Iteration: 2, Request: req}
	evLLMCall  = hooks.LLMCall{SessionID: "s", Iteration: 3, Route: hooks.RouteGateway, Request: req, Response: resp}
	evInf      = hooks.Inference{SessionID: "s", Iteration: 3, Route: hooks.RouteGateway, Model: "m", Usage: hooks.Usage{InputTokens: 9}, StopReason: hooks.StopToolUse, Escalated: true, Reason: "r", Duration: 1234 * time.Microsecond, Error: "x"}
	evOutput   = hooks.LLMOutput{SessionID: "s", Text: "answer"}
	evCall     = hooks.ToolCallRequest{SessionID: "s", CallID: "c1", Name: "now", Arguments: json.RawMessage("{not json")}
	evOutcome  = hooks.ToolCallOutcome{SessionID: "s", CallID: "c1", Name: "now", Arguments: json.RawMessage(`{}`), Result: hooks.ToolResult{Content: "12:00"}, Status: hooks.StatusOK, Duration: time.Millisecond}

	resOverride = &hooks.ToolListOverride{Tools: []hooks.ToolSpec{{Name: "only_this"}}}
	resPatch    = &hooks.RequestPatch{Model: ptr("offline-large"), Messages: []hooks.Message{{Role: hooks.RoleUser, Content: "again"}}}
	resReissue  = &hooks.Reissue{Patch: hooks.RequestPatch{Model: ptr("offline-large")}, Reason: "hedged"}
	resText     = &hooks.TextReplacement{Text: "ANSWER"}
	resDecision = &hooks.PreToolCallDecision{ModifiedArgs: json.RawMessage(`{"tz":"UTC"}`)}
	resProvided = &hooks.ToolResult{Content: `"cached"`}
	resTransf   = &hooks.ToolResult{Content: "[redacted]", IsError: true}
)

// everything is a plugin subscribed to every hook that records what it was
// given and answers with the res* values.
func everything(r *recorder) *hooks.Funcs {
	return &hooks.Funcs{
		Name: "every", Version: "1.0", Matchers: []string{"n*"}, Tools: []hooks.ToolSpec{{Name: "every__x", Description: "d"}},
		OnSessionStartFunc: func(_ context.Context, ev hooks.SessionStart) error { r.saw(hooks.OnSessionStart, ev); return nil },
		OnSessionEndFunc:   func(_ context.Context, ev hooks.SessionEnd) error { r.saw(hooks.OnSessionEnd, ev); return nil },
		PreToolListFinalizedFunc: func(_ context.Context, ev hooks.ToolListRequest) (*hooks.ToolListOverride, error) {
			r.saw(hooks.PreToolListFinalized, ev)
			return resOverride, nil
		},
		PreAPIRequestMutableFunc: func(_ context.Context, ev hooks.APIRequest) (*hooks.RequestPatch, error) {
			r.saw(hooks.PreAPIRequestMutable, ev)
			return resPatch, nil
		},
		PostLLMCallCanReissueFunc: func(_ context.Context, ev hooks.LLMCall) (*hooks.Reissue, error) {
			r.saw(hooks.PostLLMCallCanReissue, ev)
			return resReissue, nil
		},
		PostLLMCallFunc: func(_ context.Context, ev hooks.Inference) error { r.saw(hooks.PostLLMCall, ev); return nil },
		TransformLLMOutputFunc: func(_ context.Context, ev hooks.LLMOutput) (*hooks.TextReplacement, error) {
			r.saw(hooks.TransformLLMOutput, ev)
			return resText, nil
		},
		PreToolCallFunc: func(_ context.Context, ev hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
			r.saw(hooks.PreToolCall, ev)
			return resDecision, nil
		},
		PreToolCallCanProvideResultFunc: func(_ context.Context, ev hooks.ToolCallRequest) (*hooks.ToolResult, error) {
			r.saw(hooks.PreToolCallCanProvideResult, ev)
			return resProvided, nil
		},
		PostToolCallFunc: func(_ context.Context, ev hooks.ToolCallOutcome) error { r.saw(hooks.PostToolCall, ev); return nil },
		TransformToolResultFunc: func(_ context.Context, ev hooks.ToolCallOutcome) (*hooks.ToolResult, error) {
			r.saw(hooks.TransformToolResult, ev)
			return resTransf, nil
		},
	}
}

// call invokes one hook through any hooks.Plugin and returns its result as
// an untyped value (nil interface for a nil result).
func call(ctx context.Context, p hooks.Plugin, h hooks.Name) (any, error) {
	untyped := func(v any, isNil bool, err error) (any, error) {
		if isNil {
			return nil, err
		}
		return v, err
	}
	switch h {
	case hooks.OnSessionStart:
		return nil, handleErr(ctx, p, hooks.OnSessionStart, evStart)
	case hooks.OnSessionEnd:
		return nil, handleErr(ctx, p, hooks.OnSessionEnd, evEnd)
	case hooks.PreToolListFinalized:
		v, err := hooks.Ask[*hooks.ToolListOverride](ctx, p, hooks.PreToolListFinalized, evToolList)
		return untyped(v, v == nil, err)
	case hooks.PreAPIRequestMutable:
		v, err := hooks.Ask[*hooks.RequestPatch](ctx, p, hooks.PreAPIRequestMutable, evAPI)
		return untyped(v, v == nil, err)
	case hooks.PostLLMCallCanReissue:
		v, err := hooks.Ask[*hooks.Reissue](ctx, p, hooks.PostLLMCallCanReissue, evLLMCall)
		return untyped(v, v == nil, err)
	case hooks.PostLLMCall:
		return nil, handleErr(ctx, p, hooks.PostLLMCall, evInf)
	case hooks.TransformLLMOutput:
		v, err := hooks.Ask[*hooks.TextReplacement](ctx, p, hooks.TransformLLMOutput, evOutput)
		return untyped(v, v == nil, err)
	case hooks.PreToolCall:
		v, err := hooks.Ask[*hooks.PreToolCallDecision](ctx, p, hooks.PreToolCall, evCall)
		return untyped(v, v == nil, err)
	case hooks.PreToolCallCanProvideResult:
		v, err := hooks.Ask[*hooks.ToolResult](ctx, p, hooks.PreToolCallCanProvideResult, evCall)
		return untyped(v, v == nil, err)
	case hooks.PostToolCall:
		return nil, handleErr(ctx, p, hooks.PostToolCall, evOutcome)
	case hooks.TransformToolResult:
		v, err := hooks.Ask[*hooks.ToolResult](ctx, p, hooks.TransformToolResult, evOutcome)
		return untyped(v, v == nil, err)
	}
	panic("unknown hook " + h)
}

func TestEveryHookOverGRPC(t *testing.T) {
	var rec recorder
	p := everything(&rec)
	c := connectPlugin(t, p)

	if got, want := c.Manifest(), p.Manifest(); !reflect.DeepEqual(got, want) {
		t.Fatalf("manifest\n got  %+v\n want %+v", got, want)
	}
	payloads := map[hooks.Name]any{
		hooks.OnSessionStart: evStart, hooks.OnSessionEnd: evEnd, hooks.PreToolListFinalized: evToolList,
		hooks.PreAPIRequestMutable: evAPI, hooks.PostLLMCallCanReissue: evLLMCall, hooks.PostLLMCall: evInf,
		hooks.TransformLLMOutput: evOutput, hooks.PreToolCall: evCall, hooks.PreToolCallCanProvideResult: evCall,
		hooks.PostToolCall: evOutcome, hooks.TransformToolResult: evOutcome,
	}
	results := map[hooks.Name]any{
		hooks.PreToolListFinalized: resOverride, hooks.PreAPIRequestMutable: resPatch,
		hooks.PostLLMCallCanReissue: resReissue, hooks.TransformLLMOutput: resText,
		hooks.PreToolCall: resDecision, hooks.PreToolCallCanProvideResult: resProvided,
		hooks.TransformToolResult: resTransf,
	}
	for _, h := range hooks.Catalogue {
		got, err := call(t.Context(), c, h)
		if err != nil {
			t.Errorf("%s: %v", h, err)
			continue
		}
		if want := results[h]; !reflect.DeepEqual(got, want) {
			t.Errorf("%s: result\n got  %#v\n want %#v", h, got, want)
		}
		if got, want := rec.got(h), payloads[h]; !reflect.DeepEqual(got, want) {
			t.Errorf("%s: plugin received\n got  %#v\n want %#v", h, got, want)
		}
	}
}

func TestNilResultsOverGRPC(t *testing.T) {
	nilEverything := &hooks.Funcs{
		Name:                            "nil",
		PreToolListFinalizedFunc:        func(context.Context, hooks.ToolListRequest) (*hooks.ToolListOverride, error) { return nil, nil },
		PreAPIRequestMutableFunc:        func(context.Context, hooks.APIRequest) (*hooks.RequestPatch, error) { return nil, nil },
		PostLLMCallCanReissueFunc:       func(context.Context, hooks.LLMCall) (*hooks.Reissue, error) { return nil, nil },
		TransformLLMOutputFunc:          func(context.Context, hooks.LLMOutput) (*hooks.TextReplacement, error) { return nil, nil },
		PreToolCallFunc:                 func(context.Context, hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) { return nil, nil },
		PreToolCallCanProvideResultFunc: func(context.Context, hooks.ToolCallRequest) (*hooks.ToolResult, error) { return nil, nil },
		TransformToolResultFunc:         func(context.Context, hooks.ToolCallOutcome) (*hooks.ToolResult, error) { return nil, nil },
	}
	// A plugin that implements no hook at all answers every call with the
	// empty response too.
	for name, p := range map[string]hooks.Plugin{"nil results": nilEverything, "no hooks": &hooks.Funcs{Name: "none"}} {
		c := connectPlugin(t, p)
		for _, h := range hooks.Catalogue {
			got, err := call(t.Context(), c, h)
			if err != nil || got != nil {
				t.Errorf("%s: %s: got (%#v, %v), want (nil, nil)", name, h, got, err)
			}
		}
	}
}

func TestHandlerErrorOverGRPC(t *testing.T) {
	p := &hooks.Funcs{
		Name: "flaky",
		PreToolCallFunc: func(context.Context, hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
			return nil, errors.New("policy store unreachable")
		},
		PostToolCallFunc: func(context.Context, hooks.ToolCallOutcome) error {
			// A status from some backend the handler called is still the
			// handler's error, never a transport failure.
			return status.Error(codes.Unavailable, "backend down")
		},
	}
	c := connectPlugin(t, p)

	_, err := c.PreToolCall(t.Context(), evCall)
	if err == nil || err.Error() != `plugin "flaky": pre_tool_call: policy store unreachable` {
		t.Fatalf("got %v", err)
	}
	if status.Code(err) != codes.Unknown {
		t.Errorf("code %v, want Unknown", status.Code(err))
	}
	err = c.PostToolCall(t.Context(), evOutcome)
	if err == nil || errors.Is(err, hooks.ErrUnavailable) || !strings.Contains(err.Error(), "backend down") {
		t.Fatalf("backend status error: got %v", err)
	}
	for _, sentinel := range []error{hooks.ErrUnavailable, context.DeadlineExceeded, context.Canceled, wire.ErrMalformed} {
		if errors.Is(err, sentinel) {
			t.Errorf("handler error classified as %v", sentinel)
		}
	}
}

func TestHandlerPanicOverGRPC(t *testing.T) {
	var calls int
	var mu sync.Mutex
	p := &hooks.Funcs{
		Name: "panicky",
		PreToolCallCanProvideResultFunc: func(_ context.Context, ev hooks.ToolCallRequest) (*hooks.ToolResult, error) {
			mu.Lock()
			calls++
			mu.Unlock()
			if ev.Name == "panic" {
				panic("index out of range")
			}
			return &hooks.ToolResult{Content: "fine"}, nil
		},
		OnSessionStartFunc: func(context.Context, hooks.SessionStart) error { panic(errors.New("nil map")) },
	}
	c := connectPlugin(t, p)

	_, err := c.PreToolCallCanProvideResult(t.Context(), hooks.ToolCallRequest{Name: "panic"})
	if err == nil || err.Error() != `plugin "panicky": pre_tool_call_can_provide_result: panic in pre_tool_call_can_provide_result handler: index out of range` {
		t.Fatalf("got %v", err)
	}
	if status.Code(err) != codes.Internal {
		t.Errorf("code %v, want Internal", status.Code(err))
	}
	if err := c.OnSessionStart(t.Context(), evStart); err == nil || !strings.Contains(err.Error(), "panic in on_session_start handler: nil map") {
		t.Fatalf("observer panic: got %v", err)
	}
	// The server survived: the next call is answered.
	r, err := c.PreToolCallCanProvideResult(t.Context(), hooks.ToolCallRequest{Name: "ok"})
	if err != nil || r == nil || r.Content != "fine" {
		t.Fatalf("after panic: got (%v, %v)", r, err)
	}
	if calls != 2 {
		t.Fatalf("handler ran %d times, want 2", calls)
	}
}

func TestDeadlineOverGRPC(t *testing.T) {
	released := make(chan error, 1)
	p := &hooks.Funcs{
		Name: "slow",
		TransformToolResultFunc: func(ctx context.Context, _ hooks.ToolCallOutcome) (*hooks.ToolResult, error) {
			<-ctx.Done()
			released <- ctx.Err()
			return nil, ctx.Err()
		},
	}
	c := connectPlugin(t, p)

	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	_, err := c.TransformToolResult(ctx, evOutcome)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want context.DeadlineExceeded", err)
	}
	if errors.Is(err, hooks.ErrUnavailable) {
		t.Errorf("deadline classified as unavailable: %v", err)
	}
	if !strings.HasPrefix(err.Error(), `plugin "slow": transform_tool_result: context deadline exceeded`) {
		t.Errorf("message %q", err)
	}
	// The deadline travels to the plugin, whose handler is released too.
	select {
	case herr := <-released:
		if herr == nil {
			t.Errorf("handler context ended without an error")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the plugin's handler never saw its context end")
	}
}

func TestCallerCancelOverGRPC(t *testing.T) {
	p := &hooks.Funcs{
		Name: "slow",
		PreToolCallFunc: func(ctx context.Context, _ hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		},
	}
	c := connectPlugin(t, p)
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(50*time.Millisecond, cancel)
	_, err := c.PreToolCall(ctx, evCall)
	if !errors.Is(err, context.Canceled) || errors.Is(err, hooks.ErrUnavailable) {
		t.Fatalf("got %v, want context.Canceled only", err)
	}
}

func TestServerStoppedIsUnavailable(t *testing.T) {
	var rec recorder
	cn := connect(t, wire.NewServer(everything(&rec), nil))
	if _, err := cn.client.Describe(t.Context()); err != nil {
		t.Fatal(err)
	}
	cn.server.Stop()
	for _, h := range hooks.Catalogue {
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		_, err := call(ctx, cn.client, h)
		cancel()
		if !errors.Is(err, hooks.ErrUnavailable) {
			t.Errorf("%s: got %v, want hooks.ErrUnavailable", h, err)
			continue
		}
		if !strings.HasPrefix(err.Error(), `plugin "every": `+string(h)+": plugin unavailable") {
			t.Errorf("%s: message %q", h, err)
		}
	}
}

// A blocked call whose server goes away mid-call fails as unavailable, not as
// a deadline, even though the call had one.
func TestServerStoppedMidCallIsUnavailable(t *testing.T) {
	entered := make(chan struct{})
	p := &hooks.Funcs{
		Name: "hang",
		PreToolCallFunc: func(ctx context.Context, _ hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
			close(entered)
			<-ctx.Done()
			return nil, ctx.Err()
		},
	}
	cn := connect(t, wire.NewServer(p, nil))
	go func() {
		<-entered
		cn.server.Stop()
	}()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	_, err := cn.client.PreToolCall(ctx, evCall)
	if !errors.Is(err, hooks.ErrUnavailable) {
		t.Fatalf("got %v, want hooks.ErrUnavailable", err)
	}
}

func TestConfigureOverGRPC(t *testing.T) {
	var got []json.RawMessage
	configure := func(_ context.Context, cfg json.RawMessage) error {
		got = append(got, append(json.RawMessage{}, cfg...))
		if strings.Contains(string(cfg), "bad") {
			return errors.New(`state_dir: "bad" does not exist`)
		}
		return nil
	}
	c := connect(t, wire.NewServer(&hooks.Funcs{Name: "cfg"}, configure)).client
	if _, err := c.Describe(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := c.Configure(t.Context(), []byte(`{"state_dir":".kora"}`)); err != nil {
		t.Fatal(err)
	}
	if err := c.Configure(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	err := c.Configure(t.Context(), []byte(`{"state_dir":"bad"}`))
	if err == nil || err.Error() != `plugin "cfg": configure: state_dir: "bad" does not exist` {
		t.Fatalf("configure error: got %v", err)
	}
	want := []json.RawMessage{json.RawMessage(`{"state_dir":".kora"}`), json.RawMessage(`{}`), json.RawMessage(`{"state_dir":"bad"}`)}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("configure saw %q, want %q", got, want)
	}

	// Without a configure function any config is accepted and ignored.
	c2 := connect(t, wire.NewServer(&hooks.Funcs{Name: "nocfg"}, nil)).client
	if err := c2.Configure(t.Context(), []byte(`{"x":1}`)); err != nil {
		t.Fatal(err)
	}
}

func TestManifestBeforeDescribe(t *testing.T) {
	c := connect(t, wire.NewServer(&hooks.Funcs{Name: "late"}, nil)).client
	if m := c.Manifest(); !reflect.DeepEqual(m, hooks.Manifest{}) {
		t.Fatalf("manifest before describe: %+v", m)
	}
	if !c.HonoursContext() {
		t.Fatal("client must honour its context")
	}
}

// rogue is a plugin written against the raw protocol that breaks its rules.
type rogue struct {
	pluginv1.UnimplementedPluginServer
}

func (rogue) Describe(context.Context, *pluginv1.DescribeRequest) (*pluginv1.Manifest, error) {
	return &pluginv1.Manifest{Name: "rogue", Hooks: []string{"pre_tool_call", "pre_coffee"}}, nil
}

func (rogue) PreApiRequestMutable(context.Context, *pluginv1.ApiRequest) (*pluginv1.RequestPatchResponse, error) {
	return &pluginv1.RequestPatchResponse{Patch: &pluginv1.RequestPatch{Messages: &pluginv1.MessageList{
		Messages: []*pluginv1.Message{{Role: "user", Content: "ok"}, {Role: "wizard", Content: "?"}},
	}}}, nil
}

func (rogue) PostLlmCallCanReissue(context.Context, *pluginv1.LlmCall) (*pluginv1.ReissueResponse, error) {
	return &pluginv1.ReissueResponse{Reissue: &pluginv1.Reissue{Patch: &pluginv1.RequestPatch{Messages: &pluginv1.MessageList{
		Messages: []*pluginv1.Message{{Content: "no role"}},
	}}}}, nil
}

func TestMalformedResponses(t *testing.T) {
	c := connect(t, rogue{}).client

	_, err := c.Describe(t.Context())
	if !errors.Is(err, wire.ErrMalformed) || !strings.Contains(err.Error(), `plugin "rogue": describe: plugin sent a malformed response: unknown hook "pre_coffee"`) {
		t.Fatalf("describe: got %v", err)
	}
	if m := c.Manifest(); m.Name != "" {
		t.Fatalf("a rejected manifest was cached: %+v", m)
	}
	_, err = c.PreAPIRequestMutable(t.Context(), evAPI)
	if !errors.Is(err, wire.ErrMalformed) || !strings.Contains(err.Error(), `pre_api_request_mutable: plugin sent a malformed response: message 1 has role "wizard"`) {
		t.Fatalf("patch: got %v", err)
	}
	_, err = c.PostLLMCallCanReissue(t.Context(), evLLMCall)
	if !errors.Is(err, wire.ErrMalformed) || !strings.Contains(err.Error(), `message 0 has role ""`) {
		t.Fatalf("reissue: got %v", err)
	}
	// An RPC the plugin never implemented is the plugin's error, not a
	// transport failure.
	_, err = c.PreToolCall(t.Context(), evCall)
	if err == nil || errors.Is(err, hooks.ErrUnavailable) || status.Code(err) != codes.Unimplemented {
		t.Fatalf("unimplemented: got %v", err)
	}
}

// The Bus must classify each remote failure the same way it classifies the
// in-process one; this is what the host relies on.
func TestBusClassifiesRemoteFailures(t *testing.T) {
	p := &hooks.Funcs{
		Name: "remote",
		PreToolCallFunc: func(ctx context.Context, ev hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
			switch ev.Name {
			case "error":
				return nil, errors.New("nope")
			case "panic":
				panic("boom")
			case "hang":
				<-ctx.Done()
				return nil, ctx.Err()
			case "block":
				return &hooks.PreToolCallDecision{Block: &hooks.Block{Message: "blocked remotely"}}, nil
			}
			return nil, nil
		},
	}
	cn := connect(t, wire.NewServer(p, nil))
	if _, err := cn.client.Describe(t.Context()); err != nil {
		t.Fatal(err)
	}
	bus, err := hooks.NewBus([]hooks.Member{{Plugin: cn.client, Options: hooks.Options{Timeout: 200 * time.Millisecond}}}, hooks.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = bus.Close(context.Background()) }()

	if out := bus.PreToolCall(t.Context(), hooks.ToolCallRequest{Name: "block"}); !out.Blocked || out.Message != "blocked remotely" || out.BlockedBy != "remote" {
		t.Fatalf("block: %+v", out)
	}
	for _, name := range []string{"error", "panic", "hang"} {
		if out := bus.PreToolCall(t.Context(), hooks.ToolCallRequest{Name: name}); out.Blocked {
			t.Fatalf("%s: a failure blocked the call", name)
		}
	}
	cn.server.Stop()
	bus.PreToolCall(t.Context(), hooks.ToolCallRequest{Name: "block"})

	st := bus.Stats()
	for kind, want := range map[hooks.FailureKind]uint64{
		hooks.KindError:       2, // error and the recovered panic: a remote panic arrives as an error
		hooks.KindTimeout:     1,
		hooks.KindUnavailable: 1,
	} {
		if got := st.Failures("remote", hooks.PreToolCall, kind); got != want {
			t.Errorf("%s failures: got %d, want %d (stats %+v)", kind, got, want, st)
		}
	}
}

// handleErr makes one observer call and returns its error.
func handleErr(ctx context.Context, p hooks.Plugin, hook hooks.Name, ev any) error {
	_, err := p.Handle(ctx, hook, ev)
	return err
}
