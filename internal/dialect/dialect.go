// Package dialect is the contract between the gateway's hook loop and the
// wire protocols its clients speak. Each codec package under
// internal/codec implements Front for one protocol: chat (OpenAI Chat
// Completions), responses (OpenAI Responses) and messages (Anthropic
// Messages).
//
// A Front turns a client's request body into a Call (the neutral request
// hooks see, plus what only an upstream of the same protocol can carry),
// and turns the loop's outcome back into that protocol: a whole JSON body
// (Encode) or a stream of events written as the loop produces them (Sink).
// The loop itself never sees a protocol's shapes.
package dialect

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"

	"github.com/hookhost/hookhost/internal/rawjson"
	"github.com/hookhost/hookhost/internal/upstream"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/llm"
)

// Front is one client-facing wire protocol.
type Front interface {
	// Protocol is the protocol this front speaks.
	Protocol() llm.Protocol
	// Path is the endpoint it serves, such as "/v1/chat/completions".
	Path() string
	// Decode reads a client's request body. A body the protocol does not
	// allow is an *Error with Status 400 naming the field at fault.
	Decode(body []byte) (*Call, error)
	// Encode writes the loop's outcome as one non-streamed response body.
	Encode(call *Call, res *Result) ([]byte, error)
	// NewStream returns a Sink writing call's answer to w as this
	// protocol's server-sent events. Nothing is written (not even the
	// status line) until the first Sink method that emits something, so
	// an error before that can still be sent as a plain HTTP error.
	NewStream(w http.ResponseWriter, call *Call, meta Meta) Sink
	// ErrorBody renders e in this protocol's error shape.
	ErrorBody(e *Error) []byte
	// Fields is the front's field table: one row per field its protocol
	// documents (and per header its clients send), in the order the
	// API's reference lists them, saying what becomes of each across
	// protocols.
	Fields() []Field
}

// Call is one decoded client request.
type Call struct {
	// Request is the neutral view hooks see: model, system prompt,
	// messages, the client's own tools, max tokens and temperature.
	Request hooks.ModelRequest
	// Stream is true when the client asked for server-sent events.
	Stream bool
	// Pass keeps what the neutral view does not model, in this front's
	// protocol, for an upstream that speaks it too (upstream.Forwarder).
	Pass *upstream.Passthrough
	// Foreign names what in the request only an upstream of the same
	// protocol can carry ("response_format", "messages[2].content[1]
	// (image_url)"), for the 400 given when the upstream speaks another
	// protocol. Empty when the whole request translates.
	Foreign []string
	// Dropped names the hint fields the request holds (rows of the
	// front's table whose Handling is Hint, by their Path): an upstream
	// of another protocol gets the request without them, and each is
	// counted. Set through Drop.
	Dropped []string
	// State is the front's own per-request state (for example Chat
	// Completions' stream_options.include_usage); the loop passes it
	// back untouched through Encode and NewStream.
	State any
	// Tenant tells apart clients that must never see each other's
	// conversations (the server sets it to a digest of the inbound key
	// presented); hidden rounds kept for one tenant are never spliced
	// into another's. Empty is one tenant like any other.
	Tenant string
}

// Meta is what a stream needs before the first round has answered.
type Meta struct {
	// Model is the model name every event reports: the one the client
	// asked for.
	Model string
	// InputTokens estimates the request's input tokens, for protocols that
	// announce usage at the start of a stream (Anthropic's message_start,
	// which must never say 0); the final usage event carries the real sum.
	InputTokens int
}

// Result is the outcome of the loop for one client request: one assistant
// message, which may span several upstream rounds.
type Result struct {
	// Model is the model name to report: the one the client asked for.
	Model string
	// Text holds the answer's text, one element per round that produced
	// text, in order; a stream shows the same parts.
	Text []string
	// ToolCalls are the calls the client must run itself, with the
	// arguments it must see (after any pre_tool_call modify).
	ToolCalls []hooks.ToolCall
	// Stop is why the message ended: StopToolUse when ToolCalls is not
	// empty.
	Stop hooks.StopReason
	// Usage is summed over every upstream round, reissues included.
	Usage hooks.Usage
	// Wire is the last upstream response's wire form when the upstream
	// speaks this front's protocol, nil otherwise. Its top-level fields
	// that the front does not set itself reach the client unchanged.
	Wire *upstream.WireResponse
	// WholeWire is true when the client's message is exactly the last
	// upstream response's message (one round, nothing intercepted or
	// rewritten): then Wire.Message may be sent as it came, so content
	// the neutral types do not model (thinking blocks, refusals,
	// annotations) reaches the client.
	WholeWire bool
}

// Sink receives one streamed assistant message as the loop produces it,
// round after round. Methods are called from one goroutine. After the
// first error from a Sink the loop stops calling it.
type Sink interface {
	// Text appends a fragment of the answer's text to the current text
	// part, opening one if needed.
	Text(delta string) error
	// EndRound closes the current round: the next Text starts a new text
	// part (Anthropic, Responses: a new block or item; Chat Completions:
	// the same content, continued).
	EndRound() error
	// ToolCall adds a call for the client to run, its arguments whole.
	ToolCall(c hooks.ToolCall) error
	// Ping keeps the connection alive while plugin tools run (a comment
	// line, or Anthropic's ping event).
	Ping() error
	// Finish ends the message with its stop reason and the usage summed
	// over every round, as the protocol wants it reported.
	Finish(stop hooks.StopReason, usage hooks.Usage) error
	// Fail ends the stream with the protocol's in-stream error event.
	Fail(e *Error) error
	// Started reports whether anything has been written to the client;
	// before that, an error can still be sent as a plain HTTP response.
	Started() bool
}

// InputAnnouncer may be implemented by a Sink whose protocol states the
// request's input tokens when the message starts (Anthropic's
// message_start, which clients such as LangChain read usage from). The
// loop calls InputTokens with the first upstream round's real count as
// soon as it is known: during the round when the upstream announces it
// first (llm.WithInputReport), else when the round ends. If the message
// has not started yet, the count replaces Meta.InputTokens; after that it
// changes nothing, and the final usage carries the real sum as always.
type InputAnnouncer interface {
	InputTokens(n int)
}

// Error is a failure to report to a client, in the vocabulary of
// Anthropic's error types, which each front maps onto its own shape.
type Error struct {
	Status  int    // HTTP status
	Type    string // invalid_request_error, authentication_error, permission_error, not_found_error, request_too_large, rate_limit_error, api_error, overloaded_error, timeout_error
	Param   string // the request field at fault, when one is
	Message string
	// Code, when set, is the OpenAI error code to send in place of the
	// one derived from Type (previous_response_not_found).
	Code string
}

func (e *Error) Error() string { return e.Message }

// Invalid returns a 400 invalid_request_error about param.
func Invalid(param, message string) *Error {
	return &Error{Status: http.StatusBadRequest, Type: "invalid_request_error", Param: param, Message: message}
}

// Fields reads a request body that must be one JSON object and returns its
// top-level fields, values raw. Anything else (not JSON, an array, null) is
// refused with a 400 that says what was wrong and shows example, a small
// valid request of the front's protocol, so the client sees what to send.
//
// The values are sub-slices of body, not copies: the wire forms a front
// keeps share the body's bytes instead of holding them twice.
func Fields(body []byte, example string) (map[string]json.RawMessage, error) {
	if top, ok := rawjson.Members(body); ok {
		return top, nil
	}
	var top map[string]json.RawMessage
	err := json.Unmarshal(body, &top)
	msg := "the request body is not a JSON object"
	if err != nil {
		msg += " (" + err.Error() + ")"
	}
	return nil, Invalid("", msg+"; send a request such as "+example)
}

// NewID returns prefix followed by 128 random bits in hex, the shape of the
// ids the providers give their messages, responses and items (msg_…,
// chatcmpl-…, resp_…, fc_…).
func NewID(prefix string) string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}
