// Package chat is the OpenAI Chat Completions codec: the protocol's wire
// shapes, defined once for both sides. As the gateway's front it decodes
// client requests into dialect.Call and writes the loop's answer back,
// whole or streamed, in the shapes the official SDKs accept; the openai
// provider sends and reads the same shapes upstream.
//
// Decoding follows the front's field table (Fields): every field is
// translated into the neutral request, mapped to it (top_p, seed, stop,
// user and safety_identifier; a tool message's name as the tool's name),
// a hint, or refused. Everything the neutral request cannot say is kept
// for an upstream of this protocol: each message and tool in its wire form
// (upstream.Passthrough) and unmodelled top-level fields as given. For an
// upstream of another protocol, the hints the request holds (metadata,
// store, strict on tools, names on messages, a text part's replayed role,
// …) are listed in Call.Dropped, to be left out and counted, and what only
// an OpenAI Chat upstream can carry (images, audio and file parts,
// response_format, a tool_choice other than auto, fields newer than the
// table, …) is named in Call.Foreign. The leading system and developer
// messages become the system prompt, joined by blank lines. Tools other
// than function tools (custom) are refused with a 400: the client runs
// their calls, which have no neutral form, so pre_tool_call could not see
// them and a round that also called a plugin tool could not be continued.
//
// Several upstream rounds become one completion: one id, created and
// model, text continuing the same content, client tool calls numbered
// from 0 across rounds, and usage summed over every round.
package chat

import (
	"net/http"

	"github.com/hookhost/hookhost/internal/dialect"
	"github.com/hookhost/hookhost/llm"
)

// Front speaks OpenAI Chat Completions to clients.
type Front struct{}

var _ dialect.Front = (*Front)(nil)

// New returns the front.
func New() *Front { return &Front{} }

// Protocol returns llm.ProtocolChat.
func (f *Front) Protocol() llm.Protocol { return llm.ProtocolChat }

// Path returns "/v1/chat/completions".
func (f *Front) Path() string { return "/v1/chat/completions" }

// NewStream returns a Sink writing server-sent events to w.
func (f *Front) NewStream(w http.ResponseWriter, call *dialect.Call, meta dialect.Meta) dialect.Sink {
	return newStream(w, call, meta)
}
