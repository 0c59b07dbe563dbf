package wire_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"

	"github.com/hookhost/hookhost/hookbus"
	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/hookstretch"
	"github.com/hookhost/hookhost/internal/wire"
	"github.com/hookhost/hookhost/internal/wiretest"
	pluginv1 "github.com/hookhost/hookhost/plugins/proto/v1"
	pluginv2 "github.com/hookhost/hookhost/plugins/proto/v2"
)

// versions lists the protocol versions every test runs over: 1, 2, and 2
// on a lane (onLane).
var versions = []int{1, 2, onLane}

// onLane stands for protocol version 2 with its hook calls on a lane, a
// Unix socket pair, instead of the Hooks stream.
const onLane = -2

// protocol is the protocol version v speaks.
func protocol(v int) int {
	if v == onLane {
		return 2
	}
	return v
}

// overEach runs test once per protocol version.
func overEach(t *testing.T, test func(t *testing.T, version int)) {
	for _, v := range versions {
		name := fmt.Sprintf("v%d", v)
		if v == onLane {
			name = "v2-lane"
		}
		t.Run(name, func(t *testing.T) { test(t, v) })
	}
}

// lanePair makes a lane: the host's end and the plugin's.
func lanePair(t testing.TB) (hostEnd, pluginEnd net.Conn) { return wire.LanePair(t) }

// conn is one plugin server and a client connected to it over an in-memory
// gRPC connection: the full protocol stack without a process.
type conn struct {
	client wire.Conn
	server *grpc.Server
	cc     *grpc.ClientConn // for raw calls
	lane   net.Conn         // the plugin's end of its lane, if it has one
}

// stop ends the plugin's side as its process's end would: its server, and
// its lane.
func (c *conn) stop() {
	c.server.Stop()
	if c.lane != nil {
		c.lane.Close()
	}
}

// dial serves what register registers and connects the client of version.
func dial(t testing.TB, version int, register func(*grpc.Server), opts ...grpc.ServerOption) *conn {
	t.Helper()
	lis := bufconn.Listen(1 << 20)
	s := grpc.NewServer(append(opts, grpc.MaxRecvMsgSize(wire.MaxMessageSize))...)
	register(s)
	go func() { _ = s.Serve(lis) }()
	cc, err := grpc.NewClient("passthrough:///plugin",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	var c wire.Conn = wire.NewClient(cc)
	if protocol(version) == 2 {
		c = wire.NewV2Client(cc)
	}
	t.Cleanup(func() {
		c.Close()
		_ = cc.Close()
		s.Stop()
	})
	return &conn{client: c, server: s, cc: cc}
}

// connect serves p with protocol version; the client knows the plugin by
// name, as the host does.
func connect(t testing.TB, version int, p hooks.Plugin, configure wire.ConfigureFunc) *conn {
	t.Helper()
	var hostEnd, pluginEnd net.Conn
	if version == onLane {
		hostEnd, pluginEnd = lanePair(t)
	}
	cn := dial(t, version, func(s *grpc.Server) {
		switch version {
		case 1:
			wire.RegisterV1(s, p, configure)
		case onLane:
			wire.RegisterV2Lane(s, p, configure, pluginEnd)
		default:
			wire.RegisterV2(s, p, configure)
		}
	})
	if hostEnd != nil {
		cn.client.(*wire.V2Client).OfferLane(hostEnd)
		cn.lane = pluginEnd
	}
	cn.client.Apply(wire.Settings{Plugin: p.Manifest().Name})
	return cn
}

// connectPlugin is connect for a plugin seen as the Bus sees it.
func connectPlugin(t testing.TB, version int, p hooks.Plugin) *wiretest.Remote {
	t.Helper()
	return &wiretest.Remote{Conn: connect(t, version, p, nil).client}
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
	evLLMReq   = hooks.LLMRequest{SessionID: "s", Iteration: 2, Route: hooks.RouteGateway, Request: req}
	evLLMCall  = hooks.LLMCall{SessionID: "s", Iteration: 3, Route: hooks.RouteGateway, Request: req, Response: resp}
	evInf      = hooks.Inference{SessionID: "s", Iteration: 3, Route: hooks.RouteGateway, Model: "m", Usage: hooks.Usage{InputTokens: 9}, StopReason: hooks.StopToolUse, Escalated: true, Reason: "r", Duration: 1234 * time.Microsecond, Error: "x", ProvidedBy: "p"}
	evOutput   = hooks.LLMOutput{SessionID: "s", Text: "answer"}
	evCall     = hooks.ToolCallRequest{SessionID: "s", CallID: "c1", Name: "now", Arguments: json.RawMessage("{not json")}
	evOutcome  = hooks.ToolCallOutcome{SessionID: "s", CallID: "c1", Name: "now", Arguments: json.RawMessage(`{}`), Result: hooks.ToolResult{Content: "12:00"}, Status: hooks.StatusOK, Duration: time.Millisecond}
	evUser     = hooks.UserMessage{SessionID: "s", Route: hooks.RouteGateway, Index: 4, Text: "what time is it?"}

	resOverride         = &hooks.ToolListOverride{Tools: []hooks.ToolSpec{{Name: "only_this"}}}
	resPatch            = &hooks.RequestPatch{Model: ptr("offline-large"), Messages: []hooks.Message{{Role: hooks.RoleUser, Content: "again"}}}
	resProvidedResponse = &hooks.ModelResponse{Model: "own", StopReason: hooks.StopToolUse, Usage: hooks.Usage{InputTokens: 1, OutputTokens: 2},
		Message: hooks.Message{Role: hooks.RoleAssistant, Content: "provided", ToolCalls: []hooks.ToolCall{{ID: "c9", Name: "now", Arguments: json.RawMessage(`{"tz":"UTC"}`)}}}}
	resReissue  = &hooks.Reissue{Patch: hooks.RequestPatch{Model: ptr("offline-large")}, Reason: "hedged"}
	resText     = &hooks.TextReplacement{Text: "ANSWER"}
	resDecision = &hooks.PreToolCallDecision{ModifiedArgs: json.RawMessage(`{"tz":"UTC"}`)}
	resProvided = &hooks.ToolResult{Content: `"cached"`}
	resTransf   = &hooks.ToolResult{Content: "[redacted]", IsError: true}
	resUser     = &hooks.UserMessageDecision{AdditionalContext: "the user is in Lisbon"}
	resContext  = &hooks.AddedContext{AdditionalContext: "times are local"}
)

// everything is a plugin subscribed to every hook that records what it was
// given and answers with the res* values.
func everything(r *recorder) *hooks.Funcs {
	return &hooks.Funcs{
		Name: "every", Version: "1.0", Matchers: []string{"n*"}, Tools: []hooks.ToolSpec{{Name: "every__x", Description: "d"}},
		HookMatchers:       map[hooks.Name][]string{hooks.PostToolCall: nil, hooks.PreToolCallCanProvideResult: {"every__*"}},
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
		PreLLMCallCanProvideResponseFunc: func(_ context.Context, ev hooks.LLMRequest) (*hooks.ModelResponse, error) {
			r.saw(hooks.PreLLMCallCanProvideResponse, ev)
			return resProvidedResponse, nil
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
		OnUserMessageFunc: func(_ context.Context, ev hooks.UserMessage) (*hooks.UserMessageDecision, error) {
			r.saw(hooks.OnUserMessage, ev)
			return resUser, nil
		},
		PostToolCallCanAddContextFunc: func(_ context.Context, ev hooks.ToolCallOutcome) (*hooks.AddedContext, error) {
			r.saw(hooks.PostToolCallCanAddContext, ev)
			return resContext, nil
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
	case hooks.PreLLMCallCanProvideResponse:
		v, err := hooks.Ask[*hooks.ModelResponse](ctx, p, hooks.PreLLMCallCanProvideResponse, evLLMReq)
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
	case hooks.OnUserMessage:
		v, err := hooks.Ask[*hooks.UserMessageDecision](ctx, p, hooks.OnUserMessage, evUser)
		return untyped(v, v == nil, err)
	case hooks.PostToolCallCanAddContext:
		v, err := hooks.Ask[*hooks.AddedContext](ctx, p, hooks.PostToolCallCanAddContext, evOutcome)
		return untyped(v, v == nil, err)
	}
	panic("unknown hook " + h)
}

func TestEveryHookOverGRPC(t *testing.T) {
	overEach(t, func(t *testing.T, version int) {
		var rec recorder
		p := everything(&rec)
		c := connectPlugin(t, version, p)

		m, err := c.Conn.Describe(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if want := p.Manifest(); !reflect.DeepEqual(m, want) {
			t.Fatalf("manifest\n got  %+v\n want %+v", m, want)
		}
		payloads := map[hooks.Name]any{
			hooks.OnSessionStart: evStart, hooks.OnSessionEnd: evEnd, hooks.PreToolListFinalized: evToolList,
			hooks.PreAPIRequestMutable: evAPI, hooks.PreLLMCallCanProvideResponse: evLLMReq, hooks.PostLLMCallCanReissue: evLLMCall, hooks.PostLLMCall: evInf,
			hooks.TransformLLMOutput: evOutput, hooks.PreToolCall: evCall, hooks.PreToolCallCanProvideResult: evCall,
			hooks.PostToolCall: evOutcome, hooks.TransformToolResult: evOutcome,
			hooks.OnUserMessage: evUser, hooks.PostToolCallCanAddContext: evOutcome,
		}
		results := map[hooks.Name]any{
			hooks.PreToolListFinalized: resOverride, hooks.PreAPIRequestMutable: resPatch,
			hooks.PreLLMCallCanProvideResponse: resProvidedResponse,
			hooks.PostLLMCallCanReissue:        resReissue, hooks.TransformLLMOutput: resText,
			hooks.PreToolCall: resDecision, hooks.PreToolCallCanProvideResult: resProvided,
			hooks.TransformToolResult: resTransf,
			hooks.OnUserMessage:       resUser, hooks.PostToolCallCanAddContext: resContext,
		}
		for _, h := range hooks.Catalogue {
			// Handle itself answers an untyped nil for no opinion and the
			// hook's answer type otherwise.
			got, err := c.Handle(t.Context(), h, payloads[h])
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
	})
}

// A payload of the wrong type is the host's own mistake: an error, sent
// nowhere.
func TestWrongPayloadType(t *testing.T) {
	overEach(t, func(t *testing.T, version int) {
		var rec recorder
		c := connectPlugin(t, version, everything(&rec))
		_, err := c.Handle(t.Context(), hooks.PreToolCall, evOutcome)
		if err == nil || !strings.Contains(err.Error(), "host: pre_tool_call payload is hooks.ToolCallOutcome, want hooks.ToolCallRequest") {
			t.Fatalf("got %v", err)
		}
		if _, err := c.Handle(t.Context(), "pre_coffee", evCall); err == nil || !strings.Contains(err.Error(), `unknown hook "pre_coffee"`) {
			t.Fatalf("unknown hook: got %v", err)
		}
		if rec.got(hooks.PreToolCall) != nil {
			t.Fatal("the plugin was called")
		}
	})
}

func TestNilResultsOverGRPC(t *testing.T) {
	nilEverything := &hooks.Funcs{
		Name:                             "nil",
		PreToolListFinalizedFunc:         func(context.Context, hooks.ToolListRequest) (*hooks.ToolListOverride, error) { return nil, nil },
		PreAPIRequestMutableFunc:         func(context.Context, hooks.APIRequest) (*hooks.RequestPatch, error) { return nil, nil },
		PostLLMCallCanReissueFunc:        func(context.Context, hooks.LLMCall) (*hooks.Reissue, error) { return nil, nil },
		PreLLMCallCanProvideResponseFunc: func(context.Context, hooks.LLMRequest) (*hooks.ModelResponse, error) { return nil, nil },
		TransformLLMOutputFunc:           func(context.Context, hooks.LLMOutput) (*hooks.TextReplacement, error) { return nil, nil },
		PreToolCallFunc:                  func(context.Context, hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) { return nil, nil },
		PreToolCallCanProvideResultFunc:  func(context.Context, hooks.ToolCallRequest) (*hooks.ToolResult, error) { return nil, nil },
		TransformToolResultFunc:          func(context.Context, hooks.ToolCallOutcome) (*hooks.ToolResult, error) { return nil, nil },
		OnUserMessageFunc:                func(context.Context, hooks.UserMessage) (*hooks.UserMessageDecision, error) { return nil, nil },
		PostToolCallCanAddContextFunc:    func(context.Context, hooks.ToolCallOutcome) (*hooks.AddedContext, error) { return nil, nil },
	}
	overEach(t, func(t *testing.T, version int) {
		// A plugin that implements no hook at all answers every call with
		// the empty response too.
		for name, p := range map[string]hooks.Plugin{"nil results": nilEverything, "no hooks": &hooks.Funcs{Name: "none"}} {
			c := connectPlugin(t, version, p)
			for _, h := range hooks.Catalogue {
				got, err := call(t.Context(), c, h)
				if err != nil || got != nil {
					t.Errorf("%s: %s: got (%#v, %v), want (nil, nil)", name, h, got, err)
				}
				// Handle's own answer is an untyped nil.
				if got, err := c.Handle(t.Context(), h, payloadOf(h)); err != nil || got != nil {
					t.Errorf("%s: %s: Handle answered (%#v, %v), want (nil, nil)", name, h, got, err)
				}
			}
		}
	})
}

func payloadOf(h hooks.Name) any {
	return map[hooks.Name]any{
		hooks.OnSessionStart: evStart, hooks.OnSessionEnd: evEnd, hooks.PreToolListFinalized: evToolList,
		hooks.PreAPIRequestMutable: evAPI, hooks.PreLLMCallCanProvideResponse: evLLMReq, hooks.PostLLMCallCanReissue: evLLMCall, hooks.PostLLMCall: evInf,
		hooks.TransformLLMOutput: evOutput, hooks.PreToolCall: evCall, hooks.PreToolCallCanProvideResult: evCall,
		hooks.PostToolCall: evOutcome, hooks.TransformToolResult: evOutcome,
		hooks.OnUserMessage: evUser, hooks.PostToolCallCanAddContext: evOutcome,
	}[h]
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
	overEach(t, func(t *testing.T, version int) {
		c := connectPlugin(t, version, p)

		_, err := c.Handle(t.Context(), hooks.PreToolCall, evCall)
		if err == nil || err.Error() != `plugin "flaky": pre_tool_call: policy store unreachable` {
			t.Fatalf("got %v", err)
		}
		if status.Code(err) != codes.Unknown {
			t.Errorf("code %v, want Unknown", status.Code(err))
		}
		var ce *wire.CallError
		if !errors.As(err, &ce) || ce.Kind != nil || ce.Msg != "policy store unreachable" {
			t.Errorf("call error %#v", ce)
		}
		_, err = c.Handle(t.Context(), hooks.PostToolCall, evOutcome)
		if err == nil || errors.Is(err, hooks.ErrUnavailable) || !strings.Contains(err.Error(), "backend down") {
			t.Fatalf("backend status error: got %v", err)
		}
		for _, sentinel := range []error{hooks.ErrUnavailable, context.DeadlineExceeded, context.Canceled, wire.ErrMalformed, hooks.ErrPanicked} {
			if errors.Is(err, sentinel) {
				t.Errorf("handler error classified as %v", sentinel)
			}
		}
	})
}

func TestHandlerPanicOverGRPC(t *testing.T) {
	overEach(t, func(t *testing.T, version int) {
		var calls atomic.Int32
		p := &hooks.Funcs{
			Name: "panicky",
			PreToolCallCanProvideResultFunc: func(_ context.Context, ev hooks.ToolCallRequest) (*hooks.ToolResult, error) {
				calls.Add(1)
				if ev.Name == "panic" {
					panic("index out of range")
				}
				return &hooks.ToolResult{Content: "fine"}, nil
			},
			OnSessionStartFunc: func(context.Context, hooks.SessionStart) error { panic(errors.New("nil map")) },
		}
		c := connectPlugin(t, version, p)

		_, err := c.Handle(t.Context(), hooks.PreToolCallCanProvideResult, hooks.ToolCallRequest{Name: "panic"})
		const prefix, suffix = `plugin "panicky": pre_tool_call_can_provide_result: `, `panic in pre_tool_call_can_provide_result handler: index out of range`
		if err == nil || !strings.HasPrefix(err.Error(), prefix) || !strings.HasSuffix(err.Error(), suffix) {
			t.Fatalf("got %v", err)
		}
		if status.Code(err) != codes.Internal {
			t.Errorf("code %v, want Internal", status.Code(err))
		}
		// Both versions say it was a panic: version 2 in a PANIC failure,
		// version 1 in a trailer beside codes.Internal.
		if !errors.Is(err, hooks.ErrPanicked) {
			t.Errorf("errors.Is(err, hooks.ErrPanicked) = false")
		}
		if _, err := c.Handle(t.Context(), hooks.OnSessionStart, evStart); err == nil || !strings.Contains(err.Error(), "panic in on_session_start handler: nil map") {
			t.Fatalf("observer panic: got %v", err)
		}
		// The server survived: the next call is answered.
		r, err := hooks.Ask[*hooks.ToolResult](t.Context(), c, hooks.PreToolCallCanProvideResult, hooks.ToolCallRequest{Name: "ok"})
		if err != nil || r == nil || r.Content != "fine" {
			t.Fatalf("after panic: got (%v, %v)", r, err)
		}
		if n := calls.Load(); n != 2 {
			t.Fatalf("handler ran %d times, want 2", n)
		}
	})
}

func TestDeadlineOverGRPC(t *testing.T) {
	overEach(t, func(t *testing.T, version int) {
		released := make(chan error, 1)
		p := &hooks.Funcs{
			Name: "slow",
			TransformToolResultFunc: func(ctx context.Context, _ hooks.ToolCallOutcome) (*hooks.ToolResult, error) {
				<-ctx.Done()
				released <- ctx.Err()
				return nil, ctx.Err()
			},
		}
		c := connectPlugin(t, version, p)

		ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
		defer cancel()
		_, err := c.Handle(ctx, hooks.TransformToolResult, evOutcome)
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
	})
}

func TestCallerCancelOverGRPC(t *testing.T) {
	overEach(t, func(t *testing.T, version int) {
		entered := make(chan struct{})
		released := make(chan error, 1)
		p := &hooks.Funcs{
			Name: "slow",
			PreToolCallFunc: func(ctx context.Context, _ hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
				close(entered)
				<-ctx.Done()
				released <- ctx.Err()
				return nil, ctx.Err()
			},
		}
		c := connectPlugin(t, version, p)
		ctx, cancel := context.WithCancel(t.Context())
		go func() {
			<-entered
			cancel()
		}()
		_, err := c.Handle(ctx, hooks.PreToolCall, evCall)
		if !errors.Is(err, context.Canceled) || errors.Is(err, hooks.ErrUnavailable) {
			t.Fatalf("got %v, want context.Canceled only", err)
		}
		// The cancellation reaches the plugin's handler.
		select {
		case herr := <-released:
			if !errors.Is(herr, context.Canceled) {
				t.Errorf("handler saw %v, want context.Canceled", herr)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("the plugin's handler never saw its context end")
		}
	})
}

func TestServerStoppedIsUnavailable(t *testing.T) {
	overEach(t, func(t *testing.T, version int) {
		var rec recorder
		cn := connect(t, version, everything(&rec), nil)
		if _, err := cn.client.Describe(t.Context()); err != nil {
			t.Fatal(err)
		}
		// Version 2's stream is open when the server goes.
		if _, err := cn.client.Handle(t.Context(), hooks.PreToolCall, evCall); err != nil {
			t.Fatal(err)
		}
		cn.stop()
		for _, h := range hooks.Catalogue {
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
			_, err := cn.client.Handle(ctx, h, payloadOf(h))
			cancel()
			if !errors.Is(err, hooks.ErrUnavailable) {
				t.Errorf("%s: got %v, want hooks.ErrUnavailable", h, err)
				continue
			}
			if !strings.HasPrefix(err.Error(), `plugin "every": `+string(h)+": plugin unavailable") {
				t.Errorf("%s: message %q", h, err)
			}
		}
	})
}

// A blocked call whose server goes away mid-call fails as unavailable, not as
// a deadline, even though the call had one.
func TestServerStoppedMidCallIsUnavailable(t *testing.T) {
	overEach(t, func(t *testing.T, version int) {
		entered := make(chan struct{})
		p := &hooks.Funcs{
			Name: "hang",
			PreToolCallFunc: func(ctx context.Context, _ hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
				close(entered)
				<-ctx.Done()
				return nil, ctx.Err()
			},
		}
		cn := connect(t, version, p, nil)
		go func() {
			<-entered
			cn.stop()
		}()
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		_, err := cn.client.Handle(ctx, hooks.PreToolCall, evCall)
		if !errors.Is(err, hooks.ErrUnavailable) {
			t.Fatalf("got %v, want hooks.ErrUnavailable", err)
		}
	})
}

func TestConfigureOverGRPC(t *testing.T) {
	overEach(t, func(t *testing.T, version int) {
		var got []json.RawMessage
		configure := func(_ context.Context, cfg json.RawMessage) error {
			got = append(got, append(json.RawMessage{}, cfg...))
			if strings.Contains(string(cfg), "bad") {
				return errors.New(`state_dir: "bad" does not exist`)
			}
			return nil
		}
		c := connect(t, version, &hooks.Funcs{Name: "cfg"}, configure).client
		if _, err := c.Configure(t.Context(), []byte(`{"state_dir":".kora"}`)); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Configure(t.Context(), nil); err != nil {
			t.Fatal(err)
		}
		_, err := c.Configure(t.Context(), []byte(`{"state_dir":"bad"}`))
		if err == nil || err.Error() != `plugin "cfg": configure: state_dir: "bad" does not exist` {
			t.Fatalf("configure error: got %v", err)
		}
		var ce *wire.CallError
		if !errors.As(err, &ce) || ce.Msg != `state_dir: "bad" does not exist` {
			t.Fatalf("the plugin's own words are not in the CallError: %#v", ce)
		}
		want := []json.RawMessage{json.RawMessage(`{"state_dir":".kora"}`), json.RawMessage(`{}`), json.RawMessage(`{"state_dir":"bad"}`)}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("configure saw %q, want %q", got, want)
		}

		// Without a configure function any config is accepted and ignored.
		c2 := connect(t, version, &hooks.Funcs{Name: "nocfg"}, nil).client
		if _, err := c2.Configure(t.Context(), []byte(`{"x":1}`)); err != nil {
			t.Fatal(err)
		}
	})
}

func TestVersion(t *testing.T) {
	overEach(t, func(t *testing.T, version int) {
		c := connect(t, version, &hooks.Funcs{Name: "v"}, nil).client
		if c.Version() != protocol(version) {
			t.Fatalf("Version() = %d", c.Version())
		}
		_, err := c.Stretch(t.Context(), hookstretch.Request{})
		if protocol(version) == 1 && !errors.Is(err, hookstretch.ErrNoStretch) {
			t.Fatalf("v1 stretch: got %v, want hookstretch.ErrNoStretch", err)
		}
		if protocol(version) == 2 && (err == nil || errors.Is(err, hookstretch.ErrNoStretch)) {
			t.Fatalf("v2 stretch of no stages: got %v", err)
		}
	})
}

// rogue is a plugin written against the raw version 1 protocol that breaks
// its rules.
type rogue struct {
	pluginv1.UnimplementedPluginServer
	manifest *pluginv1.Manifest
}

func (r rogue) Describe(context.Context, *pluginv1.DescribeRequest) (*pluginv1.Manifest, error) {
	return r.manifest, nil
}

// rogueV2 is the same for version 2's Describe.
type rogueV2 struct {
	pluginv2.UnimplementedPluginServer
	manifest *pluginv1.Manifest
}

func (r rogueV2) Describe(context.Context, *pluginv1.DescribeRequest) (*pluginv1.Manifest, error) {
	return r.manifest, nil
}

func TestMalformedManifest(t *testing.T) {
	for name, c := range map[string]struct {
		m    *pluginv1.Manifest
		want string
	}{
		"unknown hook": {&pluginv1.Manifest{Name: "rogue", Hooks: []string{"pre_tool_call", "pre_coffee"}},
			`plugin "rogue": describe: plugin sent a malformed response: unknown hook "pre_coffee"`},
		"unknown hook in hook_matchers": {&pluginv1.Manifest{Name: "rogue", HookMatchers: []*pluginv1.HookMatchers{{Hook: "pre_coffee"}}},
			`plugin "rogue": describe: plugin sent a malformed response: unknown hook "pre_coffee" in the manifest's hook_matchers`},
	} {
		overEach(t, func(t *testing.T, version int) {
			cn := dial(t, version, func(s *grpc.Server) {
				if protocol(version) == 1 {
					pluginv1.RegisterPluginServer(s, rogue{manifest: c.m})
				} else {
					pluginv2.RegisterPluginServer(s, rogueV2{manifest: c.m})
				}
			})
			_, err := cn.client.Describe(t.Context())
			if !errors.Is(err, wire.ErrMalformed) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("%s: got %v", name, err)
			}
		})
	}
}

// An RPC the plugin never implemented is the plugin's error, not a
// transport failure.
func TestUnimplementedRPC(t *testing.T) {
	cn := dial(t, 1, func(s *grpc.Server) { pluginv1.RegisterPluginServer(s, rogue{}) })
	_, err := cn.client.Handle(t.Context(), hooks.PreToolCall, evCall)
	if err == nil || errors.Is(err, hooks.ErrUnavailable) || status.Code(err) != codes.Unimplemented {
		t.Fatalf("unimplemented: got %v", err)
	}
}

// The Bus must classify each remote failure the same way it classifies the
// in-process one; this is what the host relies on.
func TestBusClassifiesRemoteFailures(t *testing.T) {
	overEach(t, func(t *testing.T, version int) {
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
		cn := connect(t, version, p, nil)
		// Long enough that a panic's answer, stack and all, comes back in
		// time on a loaded machine under -race; only "hang" reaches it.
		bus, err := hookbus.New([]hookbus.Member{{Plugin: &wiretest.Remote{Conn: cn.client}, Options: hookbus.Options{Timeout: 2 * time.Second}}}, hookbus.Config{})
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
		cn.stop()
		bus.PreToolCall(t.Context(), hooks.ToolCallRequest{Name: "block"})

		want := map[hookbus.FailureKind]uint64{
			hookbus.KindError:       1,
			hookbus.KindPanic:       1,
			hookbus.KindTimeout:     1,
			hookbus.KindUnavailable: 1,
		}
		st := bus.Stats()
		for kind, n := range want {
			if got := st.Failures("remote", hooks.PreToolCall, kind); got != n {
				t.Errorf("%s failures: got %d, want %d (stats %+v)", kind, got, n, st)
			}
		}
	})
}

// handleErr makes one observer call and returns its error.
func handleErr(ctx context.Context, p hooks.Plugin, hook hooks.Name, ev any) error {
	_, err := p.Handle(ctx, hook, ev)
	return err
}

// Size limits hold both ways: an answer over max_result_size is the
// plugin's malformed answer and a request over max_request_size is never
// sent; neither harms the next call.
func TestSizeLimitsOverGRPC(t *testing.T) {
	overEach(t, func(t *testing.T, version int) {
		var calls atomic.Int32
		p := &hooks.Funcs{
			Name: "big",
			PreToolCallCanProvideResultFunc: func(_ context.Context, ev hooks.ToolCallRequest) (*hooks.ToolResult, error) {
				calls.Add(1)
				if ev.Name == "big" {
					return &hooks.ToolResult{Content: strings.Repeat("x", 100<<10)}, nil
				}
				return &hooks.ToolResult{Content: "small"}, nil
			},
		}
		c := connect(t, version, p, nil).client
		c.Apply(wire.Settings{Plugin: "big", MaxResultSize: 64 << 10, MaxRequestSize: 1 << 10})
		ask := func(req hooks.ToolCallRequest) (any, error) {
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			return c.Handle(ctx, hooks.PreToolCallCanProvideResult, req)
		}

		_, err := ask(hooks.ToolCallRequest{Name: "big"})
		if !errors.Is(err, wire.ErrMalformed) || !strings.Contains(err.Error(), "max_result_size is 65536 bytes; raise plugins.entries.big.max_result_size") {
			t.Fatalf("oversized answer: got %v", err)
		}
		if v, err := ask(hooks.ToolCallRequest{Name: "small"}); err != nil || v.(*hooks.ToolResult).Content != "small" {
			t.Fatalf("after an oversized answer: (%v, %v)", v, err)
		}

		before := calls.Load()
		_, err = ask(hooks.ToolCallRequest{Name: "small", Arguments: json.RawMessage(`"` + strings.Repeat("a", 2<<10) + `"`)})
		if !errors.Is(err, hooks.ErrRefused) || !strings.Contains(err.Error(), "over the 1024 bytes this plugin's max_request_size allows (raise plugins.entries.big.max_request_size") {
			t.Fatalf("oversized request: got %v", err)
		}
		if calls.Load() != before {
			t.Fatal("an oversized request reached the plugin")
		}
		if v, err := ask(hooks.ToolCallRequest{Name: "small"}); err != nil || v.(*hooks.ToolResult).Content != "small" {
			t.Fatalf("after an oversized request: (%v, %v)", v, err)
		}

		// Raised limits let the same answer through.
		c.Apply(wire.Settings{Plugin: "big", MaxResultSize: 1 << 20})
		if v, err := ask(hooks.ToolCallRequest{Name: "big"}); err != nil || len(v.(*hooks.ToolResult).Content) != 100<<10 {
			t.Fatalf("with a raised limit: %v", err)
		}
	})
}

// Version 1's service, built from the table, goes through a server's
// interceptors under the methods plugin.proto names.
func TestV1ServiceThroughInterceptor(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	intercept := grpc.UnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		mu.Lock()
		seen = append(seen, info.FullMethod)
		mu.Unlock()
		return handler(ctx, req)
	})
	var rec recorder
	cn := dial(t, 1, func(s *grpc.Server) { wire.RegisterV1(s, everything(&rec), nil) }, intercept)
	if _, err := cn.client.Describe(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := cn.client.Configure(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	for _, h := range hooks.Catalogue {
		if _, err := cn.client.Handle(t.Context(), h, payloadOf(h)); err != nil {
			t.Fatalf("%s: %v", h, err)
		}
	}
	want := []string{"/hookhost.plugin.v1.Plugin/Describe", "/hookhost.plugin.v1.Plugin/Configure"}
	for _, m := range []string{"OnSessionStart", "OnUserMessage", "PreToolListFinalized", "PreApiRequestMutable", "PreLlmCallCanProvideResponse", "PostLlmCallCanReissue", "PostLlmCall",
		"PreToolCall", "PreToolCallCanProvideResult", "PostToolCall", "TransformToolResult", "PostToolCallCanAddContext", "TransformLlmOutput", "OnSessionEnd"} {
		want = append(want, "/hookhost.plugin.v1.Plugin/"+m)
	}
	mu.Lock()
	defer mu.Unlock()
	if !reflect.DeepEqual(seen, want) {
		t.Fatalf("methods\n got  %v\n want %v", seen, want)
	}
	// And they are the methods of the generated service description.
	var generated []string
	for _, m := range pluginv1.Plugin_ServiceDesc.Methods {
		generated = append(generated, "/"+pluginv1.Plugin_ServiceDesc.ServiceName+"/"+m.MethodName)
	}
	slices.Sort(generated)
	sorted := slices.Sorted(slices.Values(want))
	if !reflect.DeepEqual(sorted, generated) {
		t.Fatalf("the table's methods %v are not plugin.proto's %v", sorted, generated)
	}
}

// internalV1 is a raw version 1 plugin whose pre_tool_call fails with
// codes.Internal and a message like the SDK's panic, without its trailer.
type internalV1 struct {
	pluginv1.UnimplementedPluginServer
}

func (internalV1) PreToolCall(context.Context, *pluginv1.ToolCallRequest) (*pluginv1.PreToolCallResponse, error) {
	return nil, status.Error(codes.Internal, "panic in pre_tool_call handler: not really")
}

// Over version 1 a panic is told by the server's trailer, not by the code,
// which gRPC uses for failures of its own, nor by the message.
func TestV1InternalWithoutThePanicTrailerIsAnError(t *testing.T) {
	cn := dial(t, 1, func(s *grpc.Server) { pluginv1.RegisterPluginServer(s, internalV1{}) })
	_, err := cn.client.Handle(t.Context(), hooks.PreToolCall, evCall)
	var ce *wire.CallError
	if !errors.As(err, &ce) || ce.Kind != nil || status.Code(err) != codes.Internal {
		t.Fatalf("got %v, want the plugin's error with codes.Internal", err)
	}
	if errors.Is(err, hooks.ErrPanicked) {
		t.Fatalf("got %v, classified as a panic", err)
	}
}
