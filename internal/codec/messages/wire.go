package messages

import (
	"encoding/json"

	"github.com/hookhost/hookhost/internal/rawjson"

	"github.com/hookhost/hookhost/llm/toolfmt"
)

// Anthropic Messages wire shapes, as far as hookhost writes or reads
// them with types: the anthropic provider sends requests and reads
// responses and events; the front writes content blocks, its stream's
// event envelopes, message and usage with them, and reads tool_use and
// text blocks. Everything else the front keeps or writes as raw JSON,
// byte for byte.

// Request is the body the provider sends upstream.
type Request struct {
	Model       string                  `json:"model"`
	MaxTokens   int                     `json:"max_tokens"`
	System      string                  `json:"system,omitempty"`
	Messages    []Message               `json:"messages"`
	Tools       []toolfmt.AnthropicTool `json:"tools,omitempty"`
	Temperature *float64                `json:"temperature,omitempty"`
	// TopP is sent beside Temperature when both are set, as the caller
	// asked: some newer models refuse the pair, and their 400 says so,
	// where choosing one here would quietly change what was asked for.
	TopP          *float64  `json:"top_p,omitempty"`
	StopSequences []string  `json:"stop_sequences,omitempty"`
	Metadata      *Metadata `json:"metadata,omitempty"`
	Stream        bool      `json:"stream,omitempty"`
}

// Metadata identifies the end user to Anthropic.
type Metadata struct {
	UserID string `json:"user_id"`
}

// Message is one message of a request.
type Message struct {
	Role string `json:"role"`
	// Content is a string for a plain user message and []Block otherwise.
	Content any `json:"content"`
}

// Block is a content block as hookhost writes it: text, tool_use (in a
// request's history and in the front's answers) or tool_result.
type Block struct {
	Type string `json:"type"`
	// text
	Text *string `json:"text,omitempty"`
	// tool_use
	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`
	// tool_result
	ToolUseID string  `json:"tool_use_id,omitempty"`
	Content   *string `json:"content,omitempty"`
	IsError   bool    `json:"is_error,omitempty"`
}

// Response is a message object: a whole response, or the message of a
// stream's message_start (the front writes its own with empty content).
type Response struct {
	ID           string          `json:"id"`
	Type         string          `json:"type"`
	Role         string          `json:"role"`
	Model        string          `json:"model"`
	Content      []ResponseBlock `json:"content"`
	StopReason   *string         `json:"stop_reason"`
	StopSequence *string         `json:"stop_sequence"`
	Usage        Usage           `json:"usage"`
}

// ResponseBlock is a content block as hookhost reads it: a response's,
// or a tool_use block of a client's history.
type ResponseBlock struct {
	Type  string          `json:"type"`
	Text  string          `json:"text"`
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
	// Verbatim, when set, is written instead of the fields: the front
	// writes the blocks it starts as a Block, with only the fields each
	// type has.
	Verbatim json.RawMessage `json:"-"`
}

// MarshalJSON writes Verbatim when it is set. The fields are written
// without HTML escaping, which the encoder that calls it adds or not as
// it would for a struct without the method.
func (b ResponseBlock) MarshalJSON() ([]byte, error) {
	if b.Verbatim != nil {
		return b.Verbatim, nil
	}
	type fields ResponseBlock
	return rawjson.Marshal(fields(b))
}

// TextBlock is a text block as the front reads it, to tell a text block
// without its text from one with empty text.
type TextBlock struct {
	Type string  `json:"type"`
	Text *string `json:"text"`
}

// ToolResult is a tool_result block as the front reads it.
type ToolResult struct {
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   *bool           `json:"is_error"`
}

// Usage is a message's token counts. The cache counts are left out when
// zero, as the front's stream reports none.
type Usage struct {
	InputTokens              int `json:"input_tokens"`
	OutputTokens             int `json:"output_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens,omitempty"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens,omitempty"`
}

// Event is one streamed event's envelope: the front writes it, the
// provider reads it. Fields are in the order the front writes them and
// written only when set (Index is a pointer, so that index 0 is written).
// The delta is raw: see Delta. The "error" event is ErrorBody's.
type Event struct {
	Type         string          `json:"type"`
	Message      *Response       `json:"message,omitempty"`
	Index        *int            `json:"index,omitempty"`
	ContentBlock *ResponseBlock  `json:"content_block,omitempty"`
	Delta        json.RawMessage `json:"delta,omitempty"`
	Usage        *Usage          `json:"usage,omitempty"`
}

// BlockIndex is the event's block index, 0 when it has none.
func (e Event) BlockIndex() int {
	if e.Index == nil {
		return 0
	}
	return *e.Index
}

// Delta is a content_block_delta's or message_delta's delta, one shape
// for both sides: the provider reads it with the struct's fields (and
// their names in its decode errors), the front writes it with MarshalJSON.
type Delta struct {
	Type         string  `json:"type"`
	Text         string  `json:"text"`
	PartialJSON  string  `json:"partial_json"`
	StopReason   *string `json:"stop_reason"`
	StopSequence *string `json:"stop_sequence"`
}

// MarshalJSON writes the delta as Anthropic sends it: a message_delta's
// (no type) as its stop_reason and stop_sequence, null when unset; a
// text_delta or input_json_delta as its type and the one field the type
// carries, with no stop_sequence key at all. Another type writes every
// field.
func (d Delta) MarshalJSON() ([]byte, error) {
	switch d.Type {
	case "":
		return fields("stop_reason", d.StopReason, "stop_sequence", d.StopSequence), nil
	case "text_delta":
		return fields("type", d.Type, "text", d.Text), nil
	case "input_json_delta":
		return fields("type", d.Type, "partial_json", d.PartialJSON), nil
	}
	type plain Delta
	return rawjson.Marshal(plain(d))
}
