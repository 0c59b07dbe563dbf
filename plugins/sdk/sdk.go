// Package sdk is what a hookhost plugin author imports to write a plugin in
// Go: a plugin is a type with an Info method that implements any of the
// per-hook interfaces below, and its main function is one call to Serve.
//
//	type guard struct{ sdk.Base }
//
//	func (guard) Info() sdk.Info { return sdk.Info{Name: "guard", Version: "1.0.0"} }
//
//	func (guard) PreToolCall(ctx context.Context, call hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
//		if call.Name == "delete_everything" {
//			return &hooks.PreToolCallDecision{Block: &hooks.Block{Message: "not here"}}, nil
//		}
//		return nil, nil // no opinion
//	}
//
//	func main() { sdk.Serve(&guard{}) }
//
// The hooks a plugin subscribes to are derived from the interfaces it
// implements, so there is no second list to keep in sync: guard above is
// asked pre_tool_call and nothing else. Every handler may return (nil, nil)
// for "no opinion"; an error, a panic or a missed deadline counts as no
// opinion too, so a failing plugin never breaks a conversation.
//
// Lifecycle of a plugin process. The host starts the binary with go-plugin's
// handshake (a magic cookie in the environment; started by hand, the binary
// prints a notice and exits 1). Serve derives and validates the manifest,
// prints the handshake line on stdout and serves gRPC. The host then calls
// Describe, then Configure once with the plugin's config table, then hooks,
// concurrently, each under a deadline. The process exits when the host
// shuts it down, and also when the host dies, however it died: on Linux,
// macOS and the BSDs, Serve watches its parent and, once it is gone, kills
// the plugin's process group (its children included) when the plugin leads
// one, or exits otherwise.
//
// What crosses to the host is bounded: an answer over the host's
// max_result_size for the plugin (4 MiB by default) is dropped and counted
// against the plugin, text that is not valid UTF-8 arrives with U+FFFD in
// place of each bad sequence, and a tool result that is not JSON reaches the
// model as a JSON string holding the text.
//
// Stdout carries the handshake, so a plugin must never write to it; log
// through Base.Logger, which writes structured lines to stderr that the
// host re-levels into its own log. See Serve for what happens to stray
// writes.
//
// Package plugintest runs a plugin in-process against a real hooks.Bus, so
// a plugin's behaviour can be tested without building a binary.
package sdk

import (
	"context"
	"encoding/json"

	"github.com/hashicorp/go-hclog"

	"github.com/hookhost/hookhost/hooks"
)

// Info is what a plugin says about itself. Matchers are path.Match globs of
// the tool names its tool hooks apply to (empty: every tool). Tools are the
// tools it contributes; their names must start with "<Name>__" unless the
// host's config grants allow_tool_override.
type Info struct {
	Name     string
	Version  string
	Matchers []string
	// HookMatchers gives one tool hook globs of its own, overriding
	// Matchers for it: audit every tool in post_tool_call, provide results
	// only for "<Name>__*".
	HookMatchers map[hooks.Name][]string
	// Tools are tools the plugin answers itself, in its ResultProvider.
	Tools []hooks.ToolSpec
	// ToolFuncs are tools written as Go functions (NewTool), which the SDK
	// answers.
	ToolFuncs []Tool
}

// Plugin is the one method every plugin has.
type Plugin interface {
	Info() Info
}

// Configurer receives the plugin's config table from the host's config
// ([plugins.entries.<name>.config]) as a JSON object, once, before any hook.
// An error makes the host report the plugin as failed to start.
type Configurer interface {
	Configure(ctx context.Context, config json.RawMessage) error
}

// The per-hook interfaces. Each is one hook of the catalogue (see package
// hooks for when it fires and how answers combine); implement the ones the
// plugin needs.
type (
	// SessionStarter observes on_session_start.
	SessionStarter interface {
		OnSessionStart(context.Context, hooks.SessionStart) error
	}
	// SessionEnder observes on_session_end.
	SessionEnder interface {
		OnSessionEnd(context.Context, hooks.SessionEnd) error
	}
	// ToolListFinalizer answers pre_tool_list_finalized: replace the tool
	// list for one model call.
	ToolListFinalizer interface {
		PreToolListFinalized(context.Context, hooks.ToolListRequest) (*hooks.ToolListOverride, error)
	}
	// RequestMutator answers pre_api_request_mutable: patch the request
	// before it goes to the model.
	RequestMutator interface {
		PreAPIRequestMutable(context.Context, hooks.APIRequest) (*hooks.RequestPatch, error)
	}
	// Reissuer answers post_llm_call_can_reissue: ask for the model call to
	// be made again with a patched request.
	Reissuer interface {
		PostLLMCallCanReissue(context.Context, hooks.LLMCall) (*hooks.Reissue, error)
	}
	// LLMCallObserver observes post_llm_call, every inference.
	LLMCallObserver interface {
		PostLLMCall(context.Context, hooks.Inference) error
	}
	// OutputTransformer answers transform_llm_output: rewrite the final
	// answer text.
	OutputTransformer interface {
		TransformLLMOutput(context.Context, hooks.LLMOutput) (*hooks.TextReplacement, error)
	}
	// ToolCallGuard answers pre_tool_call: block a call or rewrite its
	// arguments.
	ToolCallGuard interface {
		PreToolCall(context.Context, hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error)
	}
	// ResultProvider answers pre_tool_call_can_provide_result: supply the
	// tool's result and skip native dispatch.
	ResultProvider interface {
		PreToolCallCanProvideResult(context.Context, hooks.ToolCallRequest) (*hooks.ToolResult, error)
	}
	// ToolCallObserver observes post_tool_call, every tool call.
	ToolCallObserver interface {
		PostToolCall(context.Context, hooks.ToolCallOutcome) error
	}
	// ResultTransformer answers transform_tool_result: rewrite a result
	// before it joins the conversation.
	ResultTransformer interface {
		TransformToolResult(context.Context, hooks.ToolCallOutcome) (*hooks.ToolResult, error)
	}
)

// Base gives a plugin the defaults it would otherwise write by hand: a
// Configure that accepts any config, and a Logger. Embed it.
type Base struct {
	log hclog.Logger
}

var _ Configurer = Base{}

// Configure accepts and ignores the config. Override it to read one.
func (Base) Configure(context.Context, json.RawMessage) error { return nil }

// Logger returns the plugin's logger, named after the plugin. Under Serve it
// writes JSON lines to the process's stderr, which the host parses into its
// own log with their levels; under Adapt (tests) it writes text to stderr.
func (b Base) Logger() hclog.Logger {
	if b.log != nil {
		return b.log
	}
	return hclog.Default()
}

// setLogger is how Adapt and Serve reach an embedded Base. It needs a
// pointer: a plugin passed by value keeps hclog.Default as its logger.
func (b *Base) setLogger(l hclog.Logger) { b.log = l }

type loggerSetter interface{ setLogger(hclog.Logger) }
