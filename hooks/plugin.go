package hooks

import (
	"context"
	"errors"
)

// Name identifies a hook in the catalogue.
type Name string

// The hook catalogue, v1. The comment on each says when it fires; the combine
// rule of each lives in bus_hooks.go.
const (
	OnSessionStart              Name = "on_session_start"                 // a session begins (observe)
	OnSessionEnd                Name = "on_session_end"                   // each run ends (observe)
	PreToolListFinalized        Name = "pre_tool_list_finalized"          // before each model call
	PreAPIRequestMutable        Name = "pre_api_request_mutable"          // before each model call
	PostLLMCallCanReissue       Name = "post_llm_call_can_reissue"        // after each model response
	PostLLMCall                 Name = "post_llm_call"                    // after every model call, reissues too (observe)
	TransformLLMOutput          Name = "transform_llm_output"             // on the final answer text
	PreToolCall                 Name = "pre_tool_call"                    // before each tool call
	PreToolCallCanProvideResult Name = "pre_tool_call_can_provide_result" // after pre_tool_call, before native dispatch
	PostToolCall                Name = "post_tool_call"                   // after every tool call (observe)
	TransformToolResult         Name = "transform_tool_result"            // before a result joins the conversation
)

// Catalogue lists every hook in firing order of a typical turn.
var Catalogue = []Name{
	OnSessionStart, PreToolListFinalized, PreAPIRequestMutable, PostLLMCallCanReissue,
	PostLLMCall, PreToolCall, PreToolCallCanProvideResult, PostToolCall,
	TransformToolResult, TransformLLMOutput, OnSessionEnd,
}

// Known reports whether n is a hook of the catalogue.
func (n Name) Known() bool {
	for _, c := range Catalogue {
		if c == n {
			return true
		}
	}
	return false
}

// ToolScoped reports whether the hook fires per tool call, so that a
// plugin's tool matchers decide whether it is asked.
func (n Name) ToolScoped() bool {
	switch n {
	case PreToolCall, PreToolCallCanProvideResult, PostToolCall, TransformToolResult:
		return true
	}
	return false
}

// Observer reports whether the hook only observes: it is delivered
// asynchronously and its result is ignored.
func (n Name) Observer() bool {
	switch n {
	case OnSessionStart, OnSessionEnd, PostToolCall, PostLLMCall:
		return true
	}
	return false
}

// Manifest is what a plugin says about itself. The host asks a plugin only
// for the hooks listed here, and asks tool hooks only for tool names matching
// one of Matchers (path.Match globs; empty means every tool).
type Manifest struct {
	Name     string     `json:"name"`
	Version  string     `json:"version"`
	Hooks    []Name     `json:"hooks"`
	Matchers []string   `json:"matchers,omitempty"`
	Tools    []ToolSpec `json:"tools,omitempty"`
}

// Plugin is one extension of the conversation loop. In-process plugins (Go
// values, see Funcs) and remote plugins (processes adapted by package host)
// implement the same interface, so the Bus cannot tell them apart.
//
// Every method may return (nil, nil) to mean "no opinion". A returned error,
// a panic, a missed deadline or a malformed result counts as nil too: the Bus
// logs and counts it, and the conversation goes on.
type Plugin interface {
	Manifest() Manifest

	OnSessionStart(context.Context, SessionStart) error
	OnSessionEnd(context.Context, SessionEnd) error
	PreToolListFinalized(context.Context, ToolListRequest) (*ToolListOverride, error)
	PreAPIRequestMutable(context.Context, APIRequest) (*RequestPatch, error)
	PostLLMCallCanReissue(context.Context, LLMCall) (*Reissue, error)
	PostLLMCall(context.Context, Inference) error
	TransformLLMOutput(context.Context, LLMOutput) (*TextReplacement, error)
	PreToolCall(context.Context, ToolCallRequest) (*PreToolCallDecision, error)
	PreToolCallCanProvideResult(context.Context, ToolCallRequest) (*ToolResult, error)
	PostToolCall(context.Context, ToolCallOutcome) error
	TransformToolResult(context.Context, ToolCallOutcome) (*ToolResult, error)
}

// ErrUnavailable is returned by a plugin adapter whose process is not running
// (crashed, restarting, circuit open). The Bus treats it as nil at once.
var ErrUnavailable = errors.New("plugin unavailable")

// ErrMalformed is returned by a plugin adapter when what the plugin sent
// breaks the protocol (a result over the host's size limit, a message with
// no valid role). The Bus counts it as KindMalformed: the plugin's fault.
var ErrMalformed = errors.New("plugin sent a malformed response")

// ErrRefused is returned by a plugin adapter that would not send a call,
// such as a request over the size the host allows for that plugin. The Bus
// counts it as KindRefused and logs it like a failure, but it is the host's
// decision, not the plugin's fault.
var ErrRefused = errors.New("host refused to send the call")
