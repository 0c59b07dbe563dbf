package hooks

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"strings"
	"time"
)

// Role is who wrote a message.
type Role string

// The four roles of a provider-neutral conversation.
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Message is one provider-neutral conversation message. Assistant messages may
// carry tool calls; tool messages answer exactly one call by ToolCallID.
type Message struct {
	Role       Role       `json:"role"`
	Content    string     `json:"content,omitempty"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
	ToolName   string     `json:"tool_name,omitempty"`
	IsError    bool       `json:"is_error,omitempty"`
}

// ToolCall is a model's request to run one tool. Arguments is the raw JSON
// the model produced; it may be invalid, which dispatch turns into an error
// result rather than a failed turn.
type ToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// ToolSpec describes a tool offered to the model. InputSchema is a JSON
// Schema object.
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema,omitempty"`
}

// Usage counts tokens of one or more model calls.
type Usage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
}

// Add returns the sum of two usages.
func (u Usage) Add(o Usage) Usage {
	return Usage{InputTokens: u.InputTokens + o.InputTokens, OutputTokens: u.OutputTokens + o.OutputTokens}
}

// StopReason says why a model stopped producing output.
type StopReason string

// Provider-neutral stop reasons.
const (
	StopEndTurn   StopReason = "end_turn"
	StopToolUse   StopReason = "tool_use"
	StopMaxTokens StopReason = "max_tokens"
	StopRefusal   StopReason = "refusal"
	StopOther     StopReason = "other"
)

// ModelRequest is the provider-neutral request for one model call.
type ModelRequest struct {
	Model       string     `json:"model"`
	System      string     `json:"system,omitempty"`
	Messages    []Message  `json:"messages"`
	Tools       []ToolSpec `json:"tools,omitempty"`
	MaxTokens   int        `json:"max_tokens,omitempty"`
	Temperature *float64   `json:"temperature,omitempty"`
	// TopP, Stop, Seed and User are the client's other sampling and
	// identity settings, carried from the gateway's fronts to an upstream
	// of any protocol (each provider sends those its API has). Plugins do
	// not see or patch them: the plugin protocol does not carry them.
	TopP *float64 `json:"top_p,omitempty"`
	// Stop are sequences at which the model stops writing.
	Stop []string `json:"stop,omitempty"`
	Seed *int64   `json:"seed,omitempty"`
	// User identifies the end user to the provider (OpenAI's user,
	// Anthropic's metadata.user_id), for its abuse monitoring.
	User string `json:"user,omitempty"`
}

// ModelResponse is the provider-neutral answer of one model call. Message is
// always an assistant message.
type ModelResponse struct {
	Model      string     `json:"model"`
	Message    Message    `json:"message"`
	Usage      Usage      `json:"usage"`
	StopReason StopReason `json:"stop_reason"`
}

// ToolResult is what a tool call produced, as the model will see it.
// Content is JSON text; IsError marks a failed call. A plugin may answer
// with plain text instead: see AsJSON, which the tool-call pipeline applies
// to every result before it goes further, so "sunny" reaches the model as
// "\"sunny\"".
type ToolResult struct {
	Content string `json:"content"`
	IsError bool   `json:"is_error,omitempty"`
}

// Route is the path traffic takes through the host.
type Route string

// The two routes. On RouteBypass no hook fires and only native tools are
// offered; on RouteGateway plugin tools are offered and every hook fires.
const (
	RouteBypass  Route = "bypass"
	RouteGateway Route = "gateway"
)

// EndReason says why a conversation run ended.
type EndReason string

// Reasons carried by on_session_end.
const (
	EndCompleted     EndReason = "completed"
	EndMaxIterations EndReason = "max_iterations"
	EndError         EndReason = "error"
	EndCancelled     EndReason = "cancelled"
)

// CallStatus is how a tool call was answered, as reported to post_tool_call.
// Besides the constants it takes the form "provided_by:<plugin>".
type CallStatus string

// Fixed call statuses; see ProvidedBy for the plugin form.
const (
	StatusOK      CallStatus = "ok"
	StatusError   CallStatus = "error"
	StatusBlocked CallStatus = "blocked"
)

// ProvidedBy is the status of a call whose result a plugin supplied.
func ProvidedBy(plugin string) CallStatus { return CallStatus("provided_by:" + plugin) }

// Origin says where a tool call is headed: who would run the tool were no
// plugin to block it or provide its result. Tool hooks' matchers still
// match the tool's name (a server's tools keep their namespaced names,
// github__search); the origin lets a plugin tell, say, a configured MCP
// server's tools from the host's own without knowing every name.
type Origin string

// The origins of a tool call. A configured MCP server's tools have the
// origin OriginMCP(server).
const (
	// OriginNative is a native tool of the host; a call to a tool nobody
	// offers has it too, since the host answers it (with an error).
	OriginNative Origin = "native"
	// OriginPlugin is a tool a plugin declares in its manifest.
	OriginPlugin Origin = "plugin"
	// OriginClient is a tool the gateway's client runs itself.
	OriginClient Origin = "client"
)

// originMCPPrefix starts the origin of a configured MCP server's tool.
const originMCPPrefix = "mcp:"

// OriginMCP is the origin of a tool of the configured MCP server named
// server, whether the model calls it (offer_to_model) or an MCP client does
// through hookhost's MCP gateway: "mcp:" + server.
func OriginMCP(server string) Origin { return Origin(originMCPPrefix + server) }

// MCPServer returns the MCP server of an origin made by OriginMCP, and
// false for every other origin.
func (o Origin) MCPServer() (string, bool) {
	server, ok := strings.CutPrefix(string(o), originMCPPrefix)
	return server, ok && server != ""
}

// --- hook payloads and results -------------------------------------------

// NewSessionID returns a fresh random session id, the one plugins see for
// a conversation whether it runs in `chat` or behind the gateway.
func NewSessionID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// SessionStart is the payload of on_session_start.
type SessionStart struct {
	SessionID string `json:"session_id"`
	Model     string `json:"model"`
	Route     Route  `json:"route"`
}

// SessionEnd is the payload of on_session_end, fired when each run ends.
type SessionEnd struct {
	SessionID  string    `json:"session_id"`
	Model      string    `json:"model"`
	Route      Route     `json:"route"`
	Reason     EndReason `json:"reason"`
	Iterations int       `json:"iterations"`
	Usage      Usage     `json:"usage"`
	Error      string    `json:"error,omitempty"`
}

// ToolListRequest is the payload of pre_tool_list_finalized.
type ToolListRequest struct {
	SessionID string     `json:"session_id"`
	Iteration int        `json:"iteration"`
	Tools     []ToolSpec `json:"tools"`
}

// ToolListOverride replaces the tool list for one model call.
type ToolListOverride struct {
	Tools []ToolSpec `json:"tools"`
}

// APIRequest is the payload of pre_api_request_mutable.
type APIRequest struct {
	SessionID string       `json:"session_id"`
	Iteration int          `json:"iteration"`
	Request   ModelRequest `json:"request"`
}

// RequestPatch overrides fields of a ModelRequest. A nil field is left
// alone. Across plugins the first write per field wins, in priority order
// (see hookbus.Bus.PreAPIRequestMutable): a field a higher-priority plugin set is not
// changed by a lower one's patch. Messages must keep the shape every
// provider accepts (known roles, tool calls only from the assistant, each
// with an id and a name, tool results naming their call), and the patch is
// bounded by the plugin's max_result_size; a patch that breaks these rules
// is malformed and applies nothing.
type RequestPatch struct {
	Model       *string    `json:"model,omitempty"`
	System      *string    `json:"system,omitempty"`
	Messages    []Message  `json:"messages,omitempty"`
	Tools       []ToolSpec `json:"tools,omitempty"`
	MaxTokens   *int       `json:"max_tokens,omitempty"`
	Temperature *float64   `json:"temperature,omitempty"`
}

// LLMRequest is the payload of pre_llm_call_can_provide_response: the
// request of one model call as it will go upstream, after
// pre_tool_list_finalized and pre_api_request_mutable.
type LLMRequest struct {
	SessionID string       `json:"session_id"`
	Iteration int          `json:"iteration"`
	Route     Route        `json:"route"`
	Request   ModelRequest `json:"request"`
}

// LLMCall is the payload of post_llm_call_can_reissue: one model response and
// the request that produced it.
type LLMCall struct {
	SessionID string        `json:"session_id"`
	Iteration int           `json:"iteration"`
	Route     Route         `json:"route"`
	Request   ModelRequest  `json:"request"`
	Response  ModelResponse `json:"response"`
	// Partial says Response holds only the opening of a streamed answer
	// (HookOptions.DecideAfterBytes): its text so far; its tool calls,
	// usage and stop reason are not known yet.
	Partial bool `json:"partial,omitempty"`
}

// Reissue asks the host to make the model call again with Patch applied to
// the original request. Reason is recorded with the second inference.
type Reissue struct {
	Patch  RequestPatch `json:"patch"`
	Reason string       `json:"reason"`
}

// Inference is the payload of post_llm_call, the observer that sees every
// model call, including a reissued one (Escalated, with its Reason).
type Inference struct {
	SessionID  string        `json:"session_id"`
	Iteration  int           `json:"iteration"`
	Route      Route         `json:"route"`
	Model      string        `json:"model"`
	Usage      Usage         `json:"usage"`
	StopReason StopReason    `json:"stop_reason"`
	Escalated  bool          `json:"escalated,omitempty"`
	Reason     string        `json:"reason,omitempty"`
	Duration   time.Duration `json:"duration"`
	Error      string        `json:"error,omitempty"`
	// ProvidedBy names the plugin whose pre_llm_call_can_provide_response
	// answered this call instead of the model; empty when the model did.
	ProvidedBy string `json:"provided_by,omitempty"`
}

// LLMOutput is the payload of transform_llm_output: the final answer text.
type LLMOutput struct {
	SessionID string `json:"session_id"`
	Text      string `json:"text"`
	// Windowed says Text is one window of a streamed answer (a plugin
	// that declared HookOptions.WindowBytes). None of Text has reached
	// the client: its first Overlap bytes are the end of the previous
	// window (as that window's answers left it), held back so that text
	// spanning the boundary is seen whole; the rest is new. Offset is
	// where Text starts in the answer as the client gets it. A
	// replacement replaces the whole of Text; the host then releases all
	// of it but its last overlap bytes, which open the next window. Last
	// says the answer ends with this window (nothing is held back).
	Windowed bool  `json:"windowed,omitempty"`
	Offset   int64 `json:"offset,omitempty"`
	Overlap  int64 `json:"overlap,omitempty"`
	Last     bool  `json:"last,omitempty"`
}

// TextReplacement replaces the answer text (or, windowed, the window's
// text). Stop, instead, ends the answer: the text not yet released is
// dropped, Stop.Message is shown in its place, and the answer ends with
// the protocol's refusal form (Anthropic stop_reason "refusal", Chat
// Completions finish_reason "content_filter", Responses status
// "incomplete" for "content_filter"). Text must be empty with Stop.
type TextReplacement struct {
	Text string      `json:"text"`
	Stop *OutputStop `json:"stop,omitempty"`
}

// OutputStop is transform_llm_output's answer that ends the answer.
type OutputStop struct {
	Message string `json:"message"`
}

// ToolCallRequest is the payload of pre_tool_call and
// pre_tool_call_can_provide_result.
type ToolCallRequest struct {
	SessionID string          `json:"session_id"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	// Origin is where the call is headed: OriginNative, OriginPlugin,
	// OriginClient or OriginMCP(server).
	Origin Origin `json:"origin,omitempty"`
}

// PreToolCallDecision is what a pre_tool_call handler returns: a block (its
// message becomes the error result), an ask (a person must approve the
// call first), or replacement arguments; at most one of the three.
type PreToolCallDecision struct {
	Block        *Block           `json:"block,omitempty"`
	Ask          *ApprovalRequest `json:"ask,omitempty"`
	ModifiedArgs json.RawMessage  `json:"modified_args,omitempty"`
}

// ApprovalRequest is the ask of a pre_tool_call answer: it holds a tool
// call until a person approves it; Reason tells the person why they are
// asked. Denied, or with no one to ask, the call is blocked with the
// reason. (Its name is not Ask: that is the function that asks a plugin.)
type ApprovalRequest struct {
	Reason string `json:"reason"`
}

// Block stops a tool call; Message tells the model why.
type Block struct {
	Message string `json:"message"`
}

// UserMessage is the payload of on_user_message: a new user message,
// before the first model call of its turn. Index is the message's place in
// the conversation's messages (in `chat`, the session's history; on the
// gateway, the messages of the client's request).
type UserMessage struct {
	SessionID string `json:"session_id"`
	Route     Route  `json:"route"`
	Index     int    `json:"index"`
	Text      string `json:"text"`
}

// UserMessageDecision is what an on_user_message handler returns: either a
// block (its message becomes the turn's answer and the model is not
// called) or additional context the model sees beside the user's message,
// never both.
type UserMessageDecision struct {
	Block             *Block `json:"block,omitempty"`
	AdditionalContext string `json:"additional_context,omitempty"`
}

// AddedContext is what a post_tool_call_can_add_context handler returns:
// text the model sees after the tool's result.
type AddedContext struct {
	AdditionalContext string `json:"additional_context"`
}

// ToolCallOutcome is the payload of post_tool_call, transform_tool_result
// and post_tool_call_can_add_context.
type ToolCallOutcome struct {
	SessionID string          `json:"session_id"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Result    ToolResult      `json:"result"`
	Status    CallStatus      `json:"status"`
	Duration  time.Duration   `json:"duration"`
	// Origin is where the call was headed, as in ToolCallRequest.
	Origin Origin `json:"origin,omitempty"`
}
