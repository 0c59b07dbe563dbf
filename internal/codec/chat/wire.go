package chat

import (
	"encoding/json"

	"github.com/hookhost/hookhost/internal/codec"
	"github.com/hookhost/hookhost/llm/toolfmt"
)

// Chat Completions wire shapes, as far as hookhost writes or reads them
// on either side: the front encodes responses and chunks with them, the
// openai provider encodes requests and decodes responses and chunks.
// Fields that only one side reads are lenient (raw JSON) so that the
// other side's decoding accepts what it accepted before.

// Request is the body the provider sends upstream.
type Request struct {
	Model               string             `json:"model"`
	Messages            []Message          `json:"messages"`
	Tools               []toolfmt.ChatTool `json:"tools,omitempty"`
	MaxTokens           int                `json:"max_tokens,omitempty"`
	MaxCompletionTokens int                `json:"max_completion_tokens,omitempty"`
	Temperature         *float64           `json:"temperature,omitempty"`
	TopP                *float64           `json:"top_p,omitempty"`
	Seed                *int64             `json:"seed,omitempty"`
	Stop                []string           `json:"stop,omitempty"`
	User                string             `json:"user,omitempty"`
	Stream              bool               `json:"stream,omitempty"`
	StreamOptions       *StreamOptions     `json:"stream_options,omitempty"`
}

// StreamOptions asks a stream for its usage.
type StreamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// Message is one message of a request.
type Message struct {
	Role string `json:"role"`
	// Content is null for an assistant message that only calls tools.
	Content    *string    `json:"content"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
}

// ToolCall is a function call in an assistant message, a response's
// message or (with its index) a chunk's delta.
type ToolCall struct {
	ID       string   `json:"id"`
	Type     string   `json:"type"`
	Function Function `json:"function"`
}

// Function is a tool call's name and arguments.
type Function struct {
	Name      string     `json:"name"`
	Arguments codec.Args `json:"arguments"`
}

// Response is a whole completion.
type Response struct {
	ID      string   `json:"id"`
	Object  string   `json:"object"`
	Model   string   `json:"model"`
	Choices []Choice `json:"choices"`
	Usage   *Usage   `json:"usage"`
}

// Choice is one choice of a completion.
type Choice struct {
	Index        int             `json:"index"`
	FinishReason *string         `json:"finish_reason"`
	Message      ResponseMessage `json:"message"`
}

// ResponseMessage is a choice's message.
type ResponseMessage struct {
	Role      string     `json:"role"`
	Content   *string    `json:"content"`
	Refusal   *string    `json:"refusal"`
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
}

// Usage is a completion's token counts.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// Chunk is one streamed event of a completion.
type Chunk struct {
	ID string `json:"id"`
	// Object and Created are only written (by the front); raw, so that
	// reading a server's odd values is no error.
	Object  json.RawMessage `json:"object"`
	Created json.RawMessage `json:"created"`
	Model   string          `json:"model"`
	Choices []ChunkChoice   `json:"choices"`
	Usage   *Usage          `json:"usage,omitempty"`
	// Error is the in-stream error some servers send; only read.
	Error json.RawMessage `json:"error,omitempty"`
}

// ChunkChoice is the delta of one choice.
type ChunkChoice struct {
	Index int   `json:"index"`
	Delta Delta `json:"delta"`
	// Logprobs is written as null; raw, so that reading a server's is no
	// error.
	Logprobs     json.RawMessage `json:"logprobs"`
	FinishReason *string         `json:"finish_reason"`
}

// Delta is what a chunk adds to its choice.
type Delta struct {
	Role    string  `json:"role,omitempty"`
	Content *string `json:"content,omitempty"`
	Refusal *string `json:"refusal,omitempty"`
	// Reasoning text some compatible servers stream before the answer
	// (vLLM, DeepSeek, OpenRouter): not kept, but it is the model at
	// work, so it counts as progress.
	ReasoningContent *string         `json:"reasoning_content,omitempty"`
	Reasoning        *string         `json:"reasoning,omitempty"`
	ToolCalls        []DeltaToolCall `json:"tool_calls,omitempty"`
}

// DeltaToolCall is a tool call, or a fragment of one, in a delta. Index
// is nil when a server leaves it out.
type DeltaToolCall struct {
	Index *int `json:"index"`
	ToolCall
}
