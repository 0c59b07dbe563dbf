package wire

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/hookhost/hookhost/hooks"
	pluginv1 "github.com/hookhost/hookhost/plugins/proto/v1"
)

// Client implements hooks.Plugin over a gRPC connection to a plugin
// process. Call Describe once before handing it to a Bus: Manifest returns
// what Describe fetched, and the zero Manifest before that.
//
// It is safe for concurrent use. Every call honours its context's deadline
// (gRPC enforces it), so the Bus calls it without a watchdog goroutine.
type Client struct {
	rpc      pluginv1.PluginClient
	manifest atomic.Pointer[hooks.Manifest]
	settings atomic.Pointer[applied]
}

var (
	_ hooks.Plugin           = (*Client)(nil)
	_ hooks.ContextHonouring = (*Client)(nil)
)

// NewClient returns a Client speaking to the plugin behind cc, with the
// default Settings until Apply changes them.
func NewClient(cc grpc.ClientConnInterface) *Client {
	c := &Client{}
	c.rpc = pluginv1.NewPluginClient(boundary{cc: cc, c: c})
	return c
}

// Describe asks the plugin for its manifest and caches it for Manifest. It
// rejects a manifest naming hooks this host does not know, which is the
// one fault a hooks.Manifest could not even represent faithfully; the rest
// of the rules depend on host options and are checked by hooks.NewBus.
func (c *Client) Describe(ctx context.Context) (hooks.Manifest, error) {
	resp, err := c.rpc.Describe(ctx, &pluginv1.DescribeRequest{})
	if err != nil {
		return hooks.Manifest{}, c.callError(ctx, "describe", err)
	}
	m := manifestFromPB(resp)
	if err := checkManifest(m); err != nil {
		return hooks.Manifest{}, &CallError{Plugin: m.Name, Hook: "describe", Kind: ErrMalformed, Msg: err.Error()}
	}
	c.manifest.Store(&m)
	return m, nil
}

// Configure hands the plugin its config table as a JSON object.
func (c *Client) Configure(ctx context.Context, configJSON []byte) error {
	if _, err := c.rpc.Configure(ctx, &pluginv1.ConfigureRequest{ConfigJson: configJSON}); err != nil {
		return c.callError(ctx, "configure", err)
	}
	return nil
}

// Manifest returns the manifest cached by the last successful Describe.
func (c *Client) Manifest() hooks.Manifest {
	if m := c.manifest.Load(); m != nil {
		return *m
	}
	return hooks.Manifest{}
}

// HonoursContext reports true: a gRPC call returns when its deadline passes,
// whatever the plugin process does.
func (c *Client) HonoursContext() bool { return true }

// Handle forwards one hook call to the plugin.
func (c *Client) Handle(ctx context.Context, hook hooks.Name, req any) (any, error) {
	switch hook {
	case hooks.OnSessionStart:
		return nil, c.OnSessionStart(ctx, req.(hooks.SessionStart))
	case hooks.OnSessionEnd:
		return nil, c.OnSessionEnd(ctx, req.(hooks.SessionEnd))
	case hooks.PreToolListFinalized:
		return c.PreToolListFinalized(ctx, req.(hooks.ToolListRequest))
	case hooks.PreAPIRequestMutable:
		return c.PreAPIRequestMutable(ctx, req.(hooks.APIRequest))
	case hooks.PostLLMCallCanReissue:
		return c.PostLLMCallCanReissue(ctx, req.(hooks.LLMCall))
	case hooks.PostLLMCall:
		return nil, c.PostLLMCall(ctx, req.(hooks.Inference))
	case hooks.TransformLLMOutput:
		return c.TransformLLMOutput(ctx, req.(hooks.LLMOutput))
	case hooks.PreToolCall:
		return c.PreToolCall(ctx, req.(hooks.ToolCallRequest))
	case hooks.PreToolCallCanProvideResult:
		return c.PreToolCallCanProvideResult(ctx, req.(hooks.ToolCallRequest))
	case hooks.PostToolCall:
		return nil, c.PostToolCall(ctx, req.(hooks.ToolCallOutcome))
	case hooks.TransformToolResult:
		return c.TransformToolResult(ctx, req.(hooks.ToolCallOutcome))
	}
	return nil, fmt.Errorf("host: unknown hook %q", hook)
}

func (c *Client) OnSessionStart(ctx context.Context, ev hooks.SessionStart) error {
	_, err := c.rpc.OnSessionStart(ctx, sessionStartToPB(ev))
	return c.callError(ctx, hooks.OnSessionStart, err)
}

func (c *Client) OnSessionEnd(ctx context.Context, ev hooks.SessionEnd) error {
	_, err := c.rpc.OnSessionEnd(ctx, sessionEndToPB(ev))
	return c.callError(ctx, hooks.OnSessionEnd, err)
}

func (c *Client) PreToolListFinalized(ctx context.Context, ev hooks.ToolListRequest) (*hooks.ToolListOverride, error) {
	resp, err := c.rpc.PreToolListFinalized(ctx, toolListRequestToPB(ev))
	if err != nil {
		return nil, c.callError(ctx, hooks.PreToolListFinalized, err)
	}
	return overrideFromPB(resp), nil
}

func (c *Client) PreAPIRequestMutable(ctx context.Context, ev hooks.APIRequest) (*hooks.RequestPatch, error) {
	resp, err := c.rpc.PreApiRequestMutable(ctx, apiRequestToPB(ev))
	if err != nil {
		return nil, c.callError(ctx, hooks.PreAPIRequestMutable, err)
	}
	p := patchResponseFromPB(resp)
	if p != nil {
		if err := checkMessages(p.Messages); err != nil {
			return nil, c.malformed(hooks.PreAPIRequestMutable, err)
		}
	}
	return p, nil
}

func (c *Client) PostLLMCallCanReissue(ctx context.Context, ev hooks.LLMCall) (*hooks.Reissue, error) {
	resp, err := c.rpc.PostLlmCallCanReissue(ctx, llmCallToPB(ev))
	if err != nil {
		return nil, c.callError(ctx, hooks.PostLLMCallCanReissue, err)
	}
	r := reissueFromPB(resp)
	if r != nil {
		if err := checkMessages(r.Patch.Messages); err != nil {
			return nil, c.malformed(hooks.PostLLMCallCanReissue, err)
		}
	}
	return r, nil
}

func (c *Client) PostLLMCall(ctx context.Context, ev hooks.Inference) error {
	_, err := c.rpc.PostLlmCall(ctx, inferenceToPB(ev))
	return c.callError(ctx, hooks.PostLLMCall, err)
}

func (c *Client) TransformLLMOutput(ctx context.Context, ev hooks.LLMOutput) (*hooks.TextReplacement, error) {
	resp, err := c.rpc.TransformLlmOutput(ctx, llmOutputToPB(ev))
	if err != nil {
		return nil, c.callError(ctx, hooks.TransformLLMOutput, err)
	}
	return textFromPB(resp), nil
}

func (c *Client) PreToolCall(ctx context.Context, ev hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
	resp, err := c.rpc.PreToolCall(ctx, toolCallRequestToPB(ev))
	if err != nil {
		return nil, c.callError(ctx, hooks.PreToolCall, err)
	}
	return decisionFromPB(resp), nil
}

func (c *Client) PreToolCallCanProvideResult(ctx context.Context, ev hooks.ToolCallRequest) (*hooks.ToolResult, error) {
	resp, err := c.rpc.PreToolCallCanProvideResult(ctx, toolCallRequestToPB(ev))
	if err != nil {
		return nil, c.callError(ctx, hooks.PreToolCallCanProvideResult, err)
	}
	return toolResultResponseFromPB(resp), nil
}

func (c *Client) PostToolCall(ctx context.Context, ev hooks.ToolCallOutcome) error {
	_, err := c.rpc.PostToolCall(ctx, toolCallOutcomeToPB(ev))
	return c.callError(ctx, hooks.PostToolCall, err)
}

func (c *Client) TransformToolResult(ctx context.Context, ev hooks.ToolCallOutcome) (*hooks.ToolResult, error) {
	resp, err := c.rpc.TransformToolResult(ctx, toolCallOutcomeToPB(ev))
	if err != nil {
		return nil, c.callError(ctx, hooks.TransformToolResult, err)
	}
	return toolResultResponseFromPB(resp), nil
}

// ErrMalformed marks a response the plugin sent that breaks the protocol,
// such as an unknown hook name in its manifest, a message with no valid
// role, or a result over the host's size limit. Test for it with errors.Is;
// it is hooks.ErrMalformed, so the Bus counts it as malformed.
var ErrMalformed = hooks.ErrMalformed

// CallError is how a Client reports a failed call. Kind, when set, is the
// sentinel the failure is classified as, so that errors.Is works on it:
// hooks.ErrUnavailable (the process is gone or the connection broke),
// context.DeadlineExceeded or context.Canceled (the call's context ended),
// ErrMalformed, or hooks.ErrRefused (the host would not send the call). A
// nil Kind means the plugin's handler returned an error or panicked (Msg is
// then the plugin's own message), or its server refused a request too large
// for it.
type CallError struct {
	Plugin string // the manifest name, empty before Describe succeeded
	Hook   string // the hook name, or "describe" / "configure"
	Kind   error
	Msg    string
	Status *status.Status // the gRPC status, nil for ErrMalformed
}

func (e *CallError) Error() string {
	who := "plugin"
	if e.Plugin != "" {
		who = fmt.Sprintf("plugin %q", e.Plugin)
	}
	switch {
	case e.Kind == nil:
		return fmt.Sprintf("%s: %s: %s", who, e.Hook, e.Msg)
	case e.Msg == "" || e.Msg == e.Kind.Error():
		return fmt.Sprintf("%s: %s: %v", who, e.Hook, e.Kind)
	default:
		return fmt.Sprintf("%s: %s: %v: %s", who, e.Hook, e.Kind, e.Msg)
	}
}

// Unwrap exposes Kind to errors.Is.
func (e *CallError) Unwrap() error { return e.Kind }

// GRPCStatus lets status.FromError and status.Code see the original code.
func (e *CallError) GRPCStatus() *status.Status {
	if e.Status == nil {
		return status.New(codes.Unknown, e.Error())
	}
	return e.Status
}

func (c *Client) name() string { return c.Manifest().Name }

// callError classifies a failed RPC. It is nil-safe so that observer
// methods can return it directly.
func (c *Client) callError(ctx context.Context, hook hooks.Name, err error) error {
	if err == nil {
		return nil
	}
	if e := (*CallError)(nil); errors.As(err, &e) {
		// Refused by the boundary before anything was sent, or by the
		// plugin's server before it answered.
		e.Plugin, e.Hook = c.name(), string(hook)
		return e
	}
	st := status.Convert(err)
	e := &CallError{Plugin: c.name(), Hook: string(hook), Msg: st.Message(), Status: st}
	switch st.Code() {
	case codes.ResourceExhausted:
		// An answer over the size limit, rejected from its length prefix.
		// (A request the plugin's server refused was told apart by the
		// boundary.)
		e.Kind = ErrMalformed
		e.Msg = fmt.Sprintf("%s (this plugin's max_result_size is %d bytes; raise plugins.entries.%s.max_result_size if such answers are legitimate)",
			st.Message(), c.current().MaxResultSize, c.name())
	case codes.DeadlineExceeded:
		e.Kind = context.DeadlineExceeded
	case codes.Canceled:
		if ctx.Err() != nil {
			e.Kind = ctx.Err()
		} else {
			// The caller did not cancel, so the connection was torn down
			// under the call: the plugin is gone or being restarted.
			e.Kind = hooks.ErrUnavailable
		}
	case codes.Unavailable:
		e.Kind = hooks.ErrUnavailable
	}
	return e
}

func (c *Client) malformed(hook hooks.Name, err error) error {
	return &CallError{Plugin: c.name(), Hook: string(hook), Kind: ErrMalformed, Msg: err.Error()}
}
