package wire

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/hookhost/hookhost/hooks"
	pluginv1 "github.com/hookhost/hookhost/plugins/proto/v1"
)

// Client speaks protocol version 1 to a plugin process: one unary RPC per
// hook call. It caches nothing: the host stores the manifest Describe
// returns.
//
// It is safe for concurrent use. Every call honours its context's deadline
// (gRPC enforces it).
type Client struct {
	rules
	cc grpc.ClientConnInterface
}

// NewClient returns a Client speaking to the plugin behind cc, with the
// default Settings until Apply changes them.
func NewClient(cc grpc.ClientConnInterface) *Client {
	c := &Client{}
	c.cc = boundary{cc: cc, r: &c.rules}
	return c
}

// Describe asks the plugin for its manifest.
func (c *Client) Describe(ctx context.Context) (hooks.Manifest, error) {
	return describe(ctx, &c.rules, func(ctx context.Context) (*pluginv1.Manifest, error) {
		return pluginv1.NewPluginClient(c.cc).Describe(ctx, &pluginv1.DescribeRequest{})
	})
}

// Configure hands the plugin its config table as a JSON object and
// returns the hooks it does not serve as configured.
func (c *Client) Configure(ctx context.Context, configJSON []byte) ([]hooks.Name, error) {
	r, err := pluginv1.NewPluginClient(c.cc).Configure(ctx, &pluginv1.ConfigureRequest{ConfigJson: configJSON})
	if err != nil {
		return nil, c.callError(ctx, "configure", err)
	}
	return unservedFromPB(r), nil
}

// describe makes a Describe call through call, and rejects a manifest
// naming hooks this host does not know, which is the one fault a
// hooks.Manifest could not even represent faithfully; the rest of the rules
// depend on host options and are hooks.ValidateManifest's.
func describe(ctx context.Context, r *rules, call func(context.Context) (*pluginv1.Manifest, error)) (hooks.Manifest, error) {
	resp, err := call(ctx)
	if err != nil {
		return hooks.Manifest{}, r.callError(ctx, "describe", err)
	}
	if err := checkManifest(resp); err != nil {
		name := resp.GetName()
		if name == "" {
			name = r.current().Plugin
		}
		return hooks.Manifest{}, &CallError{Plugin: name, Hook: "describe", Kind: ErrMalformed, Msg: err.Error()}
	}
	return manifestFromPB(resp), nil
}

// Handle makes one hook call: the RPC the table names for hook.
func (c *Client) Handle(ctx context.Context, hook hooks.Name, req any) (any, error) {
	row, ok := rowOf(hook)
	if !ok {
		return nil, fmt.Errorf("host: unknown hook %q", hook)
	}
	in, err := row.request(req)
	if err != nil {
		return nil, err
	}
	out := row.newResponse()
	var trailer metadata.MD
	if err := c.cc.Invoke(ctx, row.fullMethod, in, out, grpc.Trailer(&trailer)); err != nil {
		err = c.callError(ctx, string(hook), err)
		if e := (*CallError)(nil); errors.As(err, &e) && e.Kind == nil && status.Code(err) == codes.Internal &&
			slices.Contains(trailer.Get(failureTrailer), failurePanic) {
			e.Kind = hooks.ErrPanicked
		}
		return nil, err
	}
	return row.answer(out), nil
}

// ErrMalformed marks what the plugin sent that breaks the protocol, such as
// an unknown hook name in its manifest, an answer over the host's size
// limit, or (version 2) an answer out of step with its call. Test for it
// with errors.Is; it is hooks.ErrMalformed, so the Bus counts it as
// malformed.
var ErrMalformed = hooks.ErrMalformed

// CallError is how Client and V2Client report a failed call. Kind, when
// set, is the sentinel the failure is classified as, so that errors.Is
// works on it: hooks.ErrUnavailable (the process is gone or the connection
// broke), context.DeadlineExceeded or context.Canceled (the call's context
// ended, or the plugin said its deadline passed), hooks.ErrPanicked (the
// handler panicked: version 2 says so with a PANIC failure, version 1 with
// codes.Internal and the trailer hookhost-failure: panic),
// ErrMalformed, or hooks.ErrRefused (the host would not send the call). A
// nil Kind means the plugin's handler returned an error (Msg is then the
// plugin's own message), or its server refused a request too large for it.
type CallError struct {
	Plugin string // Settings.Plugin, or the manifest's name for a malformed one
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

// callError classifies a failed unary RPC. It is nil-safe.
func (r *rules) callError(ctx context.Context, hook string, err error) error {
	if err == nil {
		return nil
	}
	name := r.current().Plugin
	if e := (*CallError)(nil); errors.As(err, &e) {
		// Refused by the boundary before anything was sent, or by the
		// plugin's server before it answered.
		e.Plugin, e.Hook = name, hook
		return e
	}
	st := status.Convert(err)
	e := &CallError{Plugin: name, Hook: hook, Msg: st.Message(), Status: st}
	switch st.Code() {
	case codes.ResourceExhausted:
		// An answer over the size limit, rejected from its length prefix.
		// (A request the plugin's server refused was told apart by the
		// boundary.)
		e.Kind = ErrMalformed
		e.Msg = st.Message() + r.resultHint()
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

// resultHint tells the user what to do about an answer over the limit.
func (r *rules) resultHint() string {
	s := r.current()
	return fmt.Sprintf(" (this plugin's max_result_size is %d bytes; raise plugins.entries.%s.max_result_size if such answers are legitimate)",
		s.MaxResultSize, s.configName())
}
