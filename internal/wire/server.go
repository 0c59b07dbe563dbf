package wire

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/hookhost/hookhost/hooks"
	pluginv1 "github.com/hookhost/hookhost/plugins/proto/v1"
	pluginv2 "github.com/hookhost/hookhost/plugins/proto/v2"
)

// server serves either protocol version by calling a hooks.Plugin. The
// config handed to configure is always JSON: an empty one arrives as {}.
//
// A handler error reaches the host with its text. A handler panic is
// recovered and logged with its stack at DEBUG through hclog.Default, so the
// process keeps serving. Text in an answer that is not valid UTF-8 is
// repaired with U+FFFD and logged. Hooks p does not implement answer with
// the empty response, which means no opinion.
type server struct {
	p         hooks.Plugin
	configure ConfigureFunc
	warned    sync.Map // hooks.Name → struct{}: invalid UTF-8 already warned
}

// answer makes a handler's response fit to send (see repairText) and says
// so when it had to: WARN the first time per hook, DEBUG after, through
// hclog.Default, which Serve points at the host.
func answer[M proto.Message](s *server, hook hooks.Name, m M) M {
	if n := repairText(m); n > 0 {
		args := []any{"hook", string(hook), "fields", n}
		if _, seen := s.warned.LoadOrStore(hook, struct{}{}); !seen {
			hclog.Default().Warn("a hook handler answered with invalid UTF-8; replaced it with U+FFFD", args...)
		} else {
			hclog.Default().Debug("a hook handler answered with invalid UTF-8; replaced it with U+FFFD", args...)
		}
	}
	return m
}

// failure is why a call got no answer, in protocol version 2's terms;
// version 1 carries it as a gRPC status (status).
type failure struct {
	kind pluginv2.Failure_Kind
	msg  string
}

func (f *failure) status() error { return status.Error(failureCode(f.kind), f.msg) }

// failureCode is the gRPC code of a failure of kind k: what version 1
// sends, and what version 2's client reports, so that no rule that looks
// at the code differs by version.
func failureCode(k pluginv2.Failure_Kind) codes.Code {
	switch k {
	case pluginv2.Failure_PANIC:
		return codes.Internal
	case pluginv2.Failure_DEADLINE_EXCEEDED:
		return codes.DeadlineExceeded
	case pluginv2.Failure_CANCELLED:
		return codes.Canceled
	case pluginv2.Failure_UNKNOWN_HOOK:
		return codes.Unimplemented
	case pluginv2.Failure_BAD_REQUEST:
		return codes.InvalidArgument
	}
	return codes.Unknown
}

func (f *failure) pb() *pluginv2.Failure {
	return &pluginv2.Failure{Kind: f.kind, Message: f.msg}
}

// guard runs one handler, turning its error or panic into a failure.
func guard(ctx context.Context, hook hooks.Name, fn func() error) (f *failure) {
	defer func() {
		if v := recover(); v != nil {
			// DEBUG, not ERROR: the host already warns once per plugin,
			// hook and kind when the call fails, and a handler that panics
			// on every call must not flood its log with stacks.
			hclog.Default().Debug("recovered a panic in a hook handler", "hook", string(hook), "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			f = &failure{pluginv2.Failure_PANIC, fmt.Sprintf("panic in %s handler: %v", hook, v)}
		}
	}()
	if err := fn(); err != nil {
		// A handler that gave up because its own call ended says so with
		// the matching kind. Any other error is the handler's, whatever it
		// wraps: passing through a status it got from some backend would
		// make the host blame the transport (Unavailable) for a plugin
		// error.
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			return contextFailure(ctx.Err(), err.Error())
		}
		return &failure{pluginv2.Failure_ERROR, err.Error()}
	}
	return nil
}

func contextFailure(ctxErr error, msg string) *failure {
	if errors.Is(ctxErr, context.DeadlineExceeded) {
		return &failure{pluginv2.Failure_DEADLINE_EXCEEDED, msg}
	}
	return &failure{pluginv2.Failure_CANCELLED, msg}
}

func (s *server) describe(ctx context.Context) (*pluginv1.Manifest, *failure) {
	var out *pluginv1.Manifest
	f := guard(ctx, "describe", func() error {
		out = answer(s, "describe", manifestToPB(s.p.Manifest()))
		return nil
	})
	return out, f
}

func (s *server) configureWith(ctx context.Context, req *pluginv1.ConfigureRequest) *failure {
	if s.configure == nil {
		return nil
	}
	cfg := json.RawMessage(req.GetConfigJson())
	if len(cfg) == 0 {
		cfg = json.RawMessage("{}")
	}
	return guard(ctx, "configure", func() error { return s.configure(ctx, cfg) })
}

// configured is the answer to a successful Configure: the hooks the
// plugin, as configured, does not serve.
func (s *server) configured() *pluginv1.ConfigureResponse {
	r := &pluginv1.ConfigureResponse{}
	if u, ok := s.p.(hooks.Unserving); ok {
		for _, h := range u.Unserved() {
			r.UnservedHooks = append(r.UnservedHooks, string(h))
		}
	}
	return r
}

// unservedFromPB reads the hooks a Configure answer says are not served.
func unservedFromPB(r *pluginv1.ConfigureResponse) []hooks.Name {
	var out []hooks.Name
	for _, h := range r.GetUnservedHooks() {
		out = append(out, hooks.Name(h))
	}
	return out
}

// call answers one hook call: in is the hook's request message, the
// result its response message, fit to send.
func (s *server) call(ctx context.Context, row *hookRow, in proto.Message) (proto.Message, *failure) {
	var out proto.Message
	f := guard(ctx, row.name, func() error {
		v, err := s.p.Handle(ctx, row.name, row.payload(in))
		if err != nil {
			return err
		}
		out, err = row.response(v)
		return err
	})
	if f != nil {
		return nil, f
	}
	return answer(s, row.name, out), nil
}

// RegisterV1 serves protocol version 1 for p on s: the service
// hookhost.plugin.v1.Plugin, with one method per row of the table.
func RegisterV1(s grpc.ServiceRegistrar, p hooks.Plugin, configure ConfigureFunc) {
	s.RegisterService(&v1Desc, &server{p: p, configure: configure})
}

var v1Desc = func() grpc.ServiceDesc {
	d := grpc.ServiceDesc{
		ServiceName: v1Service,
		// Any handler will do: the methods below are bound to *server.
		HandlerType: (*any)(nil),
		Metadata:    "plugin.proto",
		Methods: []grpc.MethodDesc{
			{MethodName: "Describe", Handler: unary(fresh[*pluginv1.DescribeRequest], "Describe",
				func(s *server, ctx context.Context, _ proto.Message) (proto.Message, *failure) {
					return s.describe(ctx)
				})},
			{MethodName: "Configure", Handler: unary(fresh[*pluginv1.ConfigureRequest], "Configure",
				func(s *server, ctx context.Context, in proto.Message) (proto.Message, *failure) {
					if f := s.configureWith(ctx, in.(*pluginv1.ConfigureRequest)); f != nil {
						return nil, f
					}
					return s.configured(), nil
				})},
		},
	}
	for i := range table {
		r := &table[i]
		d.Methods = append(d.Methods, grpc.MethodDesc{MethodName: r.method, Handler: unary(r.newRequest, r.method,
			func(s *server, ctx context.Context, in proto.Message) (proto.Message, *failure) {
				return s.call(ctx, r, in)
			})})
	}
	return d
}()

// failureTrailer is the trailer key by which a version 1 server says what
// kind of failure a status is, where the code alone cannot: failurePanic
// for a handler panic (codes.Internal).
const (
	failureTrailer = "hookhost-failure"
	failurePanic   = "panic"
)

// unary makes the gRPC handler of one version 1 method.
func unary(newIn func() proto.Message, method string, serve func(*server, context.Context, proto.Message) (proto.Message, *failure)) grpc.MethodHandler {
	info := &grpc.UnaryServerInfo{FullMethod: "/" + v1Service + "/" + method}
	return func(srv any, ctx context.Context, dec func(any) error, interceptor grpc.UnaryServerInterceptor) (any, error) {
		in := newIn()
		if err := dec(in); err != nil {
			return nil, err
		}
		handler := func(ctx context.Context, req any) (any, error) {
			out, f := serve(srv.(*server), ctx, req.(proto.Message))
			if f != nil {
				if f.kind == pluginv2.Failure_PANIC {
					// codes.Internal is also gRPC's own: the trailer tells
					// the host it was the handler's panic, as version 2's
					// PANIC does. Failing to set it only costs that.
					_ = grpc.SetTrailer(ctx, metadata.Pairs(failureTrailer, failurePanic))
				}
				return nil, f.status()
			}
			return out, nil
		}
		if interceptor == nil {
			return handler(ctx, in)
		}
		i := *info
		i.Server = srv
		return interceptor(ctx, in, &i, handler)
	}
}
