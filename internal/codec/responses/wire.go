package responses

import (
	"encoding/json"

	"github.com/hookhost/hookhost/internal/codec"
	"github.com/hookhost/hookhost/llm/toolfmt"
)

// Responses wire shapes, as far as hookhost writes or reads them on
// either side: the front writes items, parts, usage and errors with them,
// the openai provider sends requests and reads responses and events.
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
}

// Item is an output item: a message or a function call (others are read
// for their type only).
type Item struct {
	Arguments *codec.Args `json:"arguments,omitempty"`
	CallID    string      `json:"call_id,omitempty"`
	Content   []Part      `json:"content,omitempty"`
	ID        string      `json:"id,omitempty"`
	Name      string      `json:"name,omitempty"`
	Role      string      `json:"role,omitempty"`
	Status    string      `json:"status,omitempty"`
	Type      string      `json:"type"`
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

// Event is one streamed event as the provider reads it; which fields are
// set depends on Type.
type Event struct {
	Type        string    `json:"type"`
	Response    *Response `json:"response"`
	OutputIndex int       `json:"output_index"`
	Item        *Item     `json:"item"`
	Delta       string    `json:"delta"`
	// What the .done events of text and tool arguments carry whole.
	Text      string `json:"text"`
	Arguments string `json:"arguments"`
	// Fields of the "error" event.
	Code    string `json:"code"`
	Message string `json:"message"`
}
