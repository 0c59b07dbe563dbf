// Package responses is the OpenAI Responses codec: the protocol's wire
// shapes, defined once for both sides. As the gateway's front it decodes
// client requests into dialect.Call and writes the loop's answer back,
// whole or streamed; the openai provider sends and reads the same shapes
// upstream.
//
// # Requests
//
// input is a string (one user message) or a list of items. Message items
// of role user, system or developer become one neutral message each (system
// and developer both as RoleSystem); their text parts are joined, and other
// parts (input_image, input_file, …) are Foreign. Consecutive
// assistant-side items (assistant messages, function_call, reasoning,
// built-in tool calls and any item type hookhost does not model) form one
// neutral assistant message whose wire form is all of those items, so an
// upstream of this protocol gets reasoning and the rest back as they came
// while hooks see the text and the calls. A function_call_output becomes a
// tool message. A client may answer each call right after it (call,
// output, call, output): the run of calls and outputs is still one turn,
// one assistant message with all the calls followed by the outputs as
// tool messages in order, so that the relay recognises the calls it handed
// out; its wire form is then the whole run, which llm/openai forwards as
// it came while no output in it changed. Function tools become tool specs, kept as sent; tools the
// provider runs itself (web_search, file_search, mcp, …) are kept in
// Pass.Fields["tools"] for an upstream of this protocol and are Foreign.
// Tools whose calls come back to the client but are not function calls
// (custom, computer_use_preview, local_shell, shell, apply_patch) are
// refused with a 400: pre_tool_call could not see their calls, and a
// round that also called a plugin tool could not be continued.
//
// Responses hookhost stored (store:true, the default) are resolved before
// Decode by States.Resolve: a previous_response_id or an item_reference
// naming one of hookhost's becomes the items it stands for, so Decode sees
// the whole conversation. What Decode still finds of them is a Responses
// upstream's own state: previous_response_id goes to Pass.Fields and an
// item_reference travels with the assistant turn it sits in, both Foreign.
// conversation is refused with a 400: hookhost keeps responses, not
// conversation objects, and continuing without the earlier turns would let
// the model silently lose them. background:true is refused too: a
// background response is polled by id while it runs.
//
// Every other field hookhost does not model (store, metadata, reasoning,
// text, include, truncation, tool_choice, …, and fields added to the API
// later) goes to Pass.Fields as sent, for an upstream of this protocol.
// For an upstream of another protocol the front's field table (Fields)
// says what becomes of it: top_p, user and safety_identifier are mapped
// onto the neutral request; hints, which cannot change the answer the
// client relies on (metadata, store, prompt_cache_key, client_metadata,
// reasoning, include of reasoning.encrypted_content, strict on tools,
// replayed reasoning items and the ids, statuses and phases of replayed
// items, …), are listed in Call.Dropped, to be left out and counted; the
// rest (text.format other than text, tool_choice other than auto,
// built-in tools, image and file parts, fields newer than the table, …)
// is Foreign unless it holds the protocol's default.
//
// # Responses
//
// A Response object carries one message item per text part of the answer,
// then one function_call item per call the client must run, and usage
// summed over every upstream round. Fields of the last upstream response
// reach the client unchanged; when the answer is exactly that response's
// message, its output items are sent as they came (reasoning, annotations).
// The client's own instructions and tools are echoed, never those hooks
// or plugins added.
//
// A stream that fails after it started sends an error event, on which the
// official SDKs raise the error from finalResponse() (a response.failed
// alone would resolve it as a failed response), then response.failed with
// the items so far, so that the stream still ends with a final event.
package responses

import (
	"github.com/hookhost/hookhost/internal/codec"
	"github.com/hookhost/hookhost/internal/dialect"
	"github.com/hookhost/hookhost/llm"
)

// Front speaks OpenAI Responses to clients.
type Front struct{}

var _ dialect.Front = (*Front)(nil)

// New returns the front.
func New() *Front { return &Front{} }

// Protocol returns llm.ProtocolResponses.
func (f *Front) Protocol() llm.Protocol { return llm.ProtocolResponses }

// Path returns "/v1/responses".
func (f *Front) Path() string { return "/v1/responses" }

// ErrorBody renders e in OpenAI's error shape,
// {"error":{"message","type","param","code"}}.
func (f *Front) ErrorBody(e *dialect.Error) []byte { return codec.OpenAIErrorBody(e) }
