package wire

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/hookhost/hookhost/hooks"
	pluginv1 "github.com/hookhost/hookhost/plugins/proto/v1"
)

// server serves the protocol by calling a hooks.Plugin. Embedding the
// generated Unimplemented type by value keeps it compiling, and answering
// Unimplemented, when the proto grows an RPC.
type server struct {
	pluginv1.UnimplementedPluginServer
	p         hooks.Plugin
	configure func(context.Context, json.RawMessage) error
	warned    sync.Map // hooks.Name → struct{}: invalid UTF-8 already warned
}

var _ pluginv1.PluginServer = (*server)(nil)

// NewServer returns a pluginv1.PluginServer backed by p. configure receives
// the host's Configure call; nil accepts and ignores any config. The config
// handed to configure is always JSON: an empty one arrives as {}.
//
// A handler error reaches the host as codes.Unknown carrying the error's
// text. A handler panic is recovered, logged with its stack at DEBUG through
// hclog.Default, and reaches the host as codes.Internal, so the process
// keeps serving. Text in a response that is not valid UTF-8 is repaired
// with U+FFFD and logged. Hooks p does not implement answer with the empty
// response, which means no opinion.
func NewServer(p hooks.Plugin, configure func(context.Context, json.RawMessage) error) pluginv1.PluginServer {
	return &server{p: p, configure: configure}
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

// guard runs one handler, turning its error or panic into a status error.
func guard(ctx context.Context, hook hooks.Name, fn func() error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			// DEBUG, not ERROR: the host already warns once per plugin,
			// hook and kind when the call fails, and a handler that panics
			// on every call must not flood its log with stacks.
			hclog.Default().Debug("recovered a panic in a hook handler", "hook", string(hook), "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			err = status.Errorf(codes.Internal, "panic in %s handler: %v", hook, v)
		}
	}()
	if err := fn(); err != nil {
		// A handler that gave up because its own call ended says so with
		// the matching code. Any other error is the handler's, whatever it
		// wraps: passing through a status it got from some backend would
		// make the host blame the transport (Unavailable) for a plugin
		// error.
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			return status.FromContextError(err).Err()
		}
		return status.Error(codes.Unknown, err.Error())
	}
	return nil
}

func (s *server) Describe(ctx context.Context, _ *pluginv1.DescribeRequest) (*pluginv1.Manifest, error) {
	var out *pluginv1.Manifest
	err := guard(ctx, "describe", func() error {
		out = answer(s, "describe", manifestToPB(s.p.Manifest()))
		return nil
	})
	return out, err
}

func (s *server) Configure(ctx context.Context, req *pluginv1.ConfigureRequest) (*pluginv1.ConfigureResponse, error) {
	if s.configure == nil {
		return &pluginv1.ConfigureResponse{}, nil
	}
	cfg := json.RawMessage(req.GetConfigJson())
	if len(cfg) == 0 {
		cfg = json.RawMessage("{}")
	}
	err := guard(ctx, "configure", func() error { return s.configure(ctx, cfg) })
	if err != nil {
		return nil, err
	}
	return &pluginv1.ConfigureResponse{}, nil
}

func (s *server) OnSessionStart(ctx context.Context, req *pluginv1.SessionStart) (*pluginv1.Empty, error) {
	err := guard(ctx, hooks.OnSessionStart, func() error { _, err := s.p.Handle(ctx, hooks.OnSessionStart, sessionStartFromPB(req)); return err })
	if err != nil {
		return nil, err
	}
	return &pluginv1.Empty{}, nil
}

func (s *server) OnSessionEnd(ctx context.Context, req *pluginv1.SessionEnd) (*pluginv1.Empty, error) {
	err := guard(ctx, hooks.OnSessionEnd, func() error { _, err := s.p.Handle(ctx, hooks.OnSessionEnd, sessionEndFromPB(req)); return err })
	if err != nil {
		return nil, err
	}
	return &pluginv1.Empty{}, nil
}

func (s *server) PreToolListFinalized(ctx context.Context, req *pluginv1.ToolListRequest) (*pluginv1.ToolListResponse, error) {
	var out *hooks.ToolListOverride
	err := guard(ctx, hooks.PreToolListFinalized, func() (err error) {
		out, err = hooks.Ask[*hooks.ToolListOverride](ctx, s.p, hooks.PreToolListFinalized, toolListRequestFromPB(req))
		return err
	})
	if err != nil {
		return nil, err
	}
	return answer(s, hooks.PreToolListFinalized, overrideToPB(out)), nil
}

func (s *server) PreApiRequestMutable(ctx context.Context, req *pluginv1.ApiRequest) (*pluginv1.RequestPatchResponse, error) {
	var out *hooks.RequestPatch
	err := guard(ctx, hooks.PreAPIRequestMutable, func() (err error) {
		out, err = hooks.Ask[*hooks.RequestPatch](ctx, s.p, hooks.PreAPIRequestMutable, apiRequestFromPB(req))
		return err
	})
	if err != nil {
		return nil, err
	}
	return answer(s, hooks.PreAPIRequestMutable, patchResponseToPB(out)), nil
}

func (s *server) PostLlmCallCanReissue(ctx context.Context, req *pluginv1.LlmCall) (*pluginv1.ReissueResponse, error) {
	var out *hooks.Reissue
	err := guard(ctx, hooks.PostLLMCallCanReissue, func() (err error) {
		out, err = hooks.Ask[*hooks.Reissue](ctx, s.p, hooks.PostLLMCallCanReissue, llmCallFromPB(req))
		return err
	})
	if err != nil {
		return nil, err
	}
	return answer(s, hooks.PostLLMCallCanReissue, reissueToPB(out)), nil
}

func (s *server) PostLlmCall(ctx context.Context, req *pluginv1.Inference) (*pluginv1.Empty, error) {
	err := guard(ctx, hooks.PostLLMCall, func() error { _, err := s.p.Handle(ctx, hooks.PostLLMCall, inferenceFromPB(req)); return err })
	if err != nil {
		return nil, err
	}
	return &pluginv1.Empty{}, nil
}

func (s *server) TransformLlmOutput(ctx context.Context, req *pluginv1.LlmOutput) (*pluginv1.TextResponse, error) {
	var out *hooks.TextReplacement
	err := guard(ctx, hooks.TransformLLMOutput, func() (err error) {
		out, err = hooks.Ask[*hooks.TextReplacement](ctx, s.p, hooks.TransformLLMOutput, llmOutputFromPB(req))
		return err
	})
	if err != nil {
		return nil, err
	}
	return answer(s, hooks.TransformLLMOutput, textToPB(out)), nil
}

func (s *server) PreToolCall(ctx context.Context, req *pluginv1.ToolCallRequest) (*pluginv1.PreToolCallResponse, error) {
	var out *hooks.PreToolCallDecision
	err := guard(ctx, hooks.PreToolCall, func() (err error) {
		out, err = hooks.Ask[*hooks.PreToolCallDecision](ctx, s.p, hooks.PreToolCall, toolCallRequestFromPB(req))
		return err
	})
	if err != nil {
		return nil, err
	}
	return answer(s, hooks.PreToolCall, decisionToPB(out)), nil
}

func (s *server) PreToolCallCanProvideResult(ctx context.Context, req *pluginv1.ToolCallRequest) (*pluginv1.ToolResultResponse, error) {
	var out *hooks.ToolResult
	err := guard(ctx, hooks.PreToolCallCanProvideResult, func() (err error) {
		out, err = hooks.Ask[*hooks.ToolResult](ctx, s.p, hooks.PreToolCallCanProvideResult, toolCallRequestFromPB(req))
		return err
	})
	if err != nil {
		return nil, err
	}
	return answer(s, hooks.PreToolCallCanProvideResult, toolResultResponseToPB(out)), nil
}

func (s *server) PostToolCall(ctx context.Context, req *pluginv1.ToolCallOutcome) (*pluginv1.Empty, error) {
	err := guard(ctx, hooks.PostToolCall, func() error { _, err := s.p.Handle(ctx, hooks.PostToolCall, toolCallOutcomeFromPB(req)); return err })
	if err != nil {
		return nil, err
	}
	return &pluginv1.Empty{}, nil
}

func (s *server) TransformToolResult(ctx context.Context, req *pluginv1.ToolCallOutcome) (*pluginv1.ToolResultResponse, error) {
	var out *hooks.ToolResult
	err := guard(ctx, hooks.TransformToolResult, func() (err error) {
		out, err = hooks.Ask[*hooks.ToolResult](ctx, s.p, hooks.TransformToolResult, toolCallOutcomeFromPB(req))
		return err
	})
	if err != nil {
		return nil, err
	}
	return answer(s, hooks.TransformToolResult, toolResultResponseToPB(out)), nil
}

