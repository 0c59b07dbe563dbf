package responses

import (
	"encoding/json"

	"github.com/hookhost/hookhost/internal/codec"
	"github.com/hookhost/hookhost/internal/rawjson"
	"github.com/hookhost/hookhost/llm/toolfmt"
)

// Responses wire shapes, as far as hookhost writes or reads them on
// either side: the front writes items, parts, usage, errors and stream
// events with them, the openai provider sends requests and reads
// responses and events.
// Fields are in alphabetical order where the front writes the shape, as
// the objects it wrote before were maps; fields only one side reads are
// raw JSON, so that the other side's decoding accepts what it did.

// Request is the body the provider sends upstream.
type Request struct {
	Model           string                  `json:"model"`
	Instructions    string                  `json:"instructions,omitempty"`
	Input           []Input                 `json:"input"`
	Tools           []toolfmt.ResponsesTool `json:"tools,omitempty"`
	MaxOutputTokens int                     `json:"max_output_tokens,omitempty"`
	Temperature     *float64                `json:"temperature,omitempty"`
	TopP            *float64                `json:"top_p,omitempty"`
	User            string                  `json:"user,omitempty"`
	Stream          bool                    `json:"stream,omitempty"`
	Store           bool                    `json:"store"`
}

// Input is one input item of a request: a message, a function call the
// model made earlier, or a function call's output.
type Input struct {
	Type      string      `json:"type"`
	Role      string      `json:"role,omitempty"`
	Content   *string     `json:"content,omitempty"`
	CallID    string      `json:"call_id,omitempty"`
	Name      string      `json:"name,omitempty"`
	Arguments *codec.Args `json:"arguments,omitempty"`
	// Output is a pointer so that an empty result is still sent: the
	// field is required.
	Output *string `json:"output,omitempty"`
}

// Response is a Response object as the provider reads it (the front
// writes its own from the upstream's fields).
type Response struct {
	ID                string `json:"id"`
	Object            string `json:"object"`
	Status            string `json:"status"`
	Model             string `json:"model"`
	Output            []Item `json:"output"`
	Usage             *Usage `json:"usage"`
	Error             *Error `json:"error"`
	IncompleteDetails *struct {
		Reason string `json:"reason"`
	} `json:"incomplete_details"`
	// Verbatim, when set, is written instead of the fields: the front's
	// Response object carries fields this struct does not model.
	Verbatim json.RawMessage `json:"-"`
}

// MarshalJSON writes Verbatim when it is set. The fields are written
// without HTML escaping, which the encoder that calls it adds or not as
// it would for a struct without the method.
func (r Response) MarshalJSON() ([]byte, error) {
	if r.Verbatim != nil {
		return r.Verbatim, nil
	}
	type fields Response
	return rawjson.Marshal(fields(r))
}

// Item is an output item: a message or a function call (others are read
// for their type only).
type Item struct {
	Arguments *codec.Args `json:"arguments,omitempty"`
	CallID    string      `json:"call_id,omitempty"`
	// Content is written when set, even empty: an item just opened
	// has "content": [].
	Content []Part `json:"content,omitzero"`
	ID      string `json:"id,omitempty"`
	Name    string `json:"name,omitempty"`
	Role    string `json:"role,omitempty"`
	Status  string `json:"status,omitempty"`
	Type    string `json:"type"`
	// Verbatim, when set, is written instead of the fields: an item as
	// the upstream sent it.
	Verbatim json.RawMessage `json:"-"`
}

// MarshalJSON writes Verbatim when it is set.
func (it Item) MarshalJSON() ([]byte, error) {
	if it.Verbatim != nil {
		return it.Verbatim, nil
	}
	type fields Item
	return rawjson.Marshal(fields(it))
}

// Part is a message item's content part: output_text or refusal.
type Part struct {
	Annotations json.RawMessage `json:"annotations,omitempty"`
	Logprobs    json.RawMessage `json:"logprobs,omitempty"`
	Refusal     string          `json:"refusal,omitempty"`
	Text        string          `json:"text"`
	Type        string          `json:"type"`
}

// Usage is a response's token counts.
type Usage struct {
	InputTokens         int             `json:"input_tokens"`
	InputTokensDetails  json.RawMessage `json:"input_tokens_details,omitempty"`
	OutputTokens        int             `json:"output_tokens"`
	OutputTokensDetails json.RawMessage `json:"output_tokens_details,omitempty"`
	TotalTokens         int             `json:"total_tokens"`
}

// Error is a failed response's error object.
type Error struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Event is one streamed event: the front writes it, the provider reads
// it; which fields are set depends on Type. Fields are in alphabetical
// order, as the front wrote its events as maps, and a field is written
// only when set (pointers and interfaces, so that a zero index or an empty
// delta is still written where the event carries one). The fields only
// the front uses are untyped, so that the provider's decoding accepts
// whatever a server sends in them, as it ignored them before.
type Event struct {
	// What the .done event of tool arguments carries whole.
	Arguments      *string   `json:"arguments,omitempty"`
	Code           *string   `json:"code,omitempty"` // of the "error" event
	ContentIndex   any       `json:"content_index,omitempty"`
	Delta          *string   `json:"delta,omitempty"`
	Item           *Item     `json:"item,omitempty"`
	ItemID         any       `json:"item_id,omitempty"`
	Logprobs       any       `json:"logprobs,omitempty"`
	Message        *string   `json:"message,omitempty"` // of the "error" event
	Name           any       `json:"name,omitempty"`
	OutputIndex    *int      `json:"output_index,omitempty"`
	Param          any       `json:"param,omitempty"` // of the "error" event
	Part           any       `json:"part,omitempty"`
	Response       *Response `json:"response,omitempty"`
	SequenceNumber any       `json:"sequence_number,omitempty"`
	// What the .done event of text carries whole.
	Text *string `json:"text,omitempty"`
	Type string  `json:"type"`
}
