package chat

import (
	"encoding/json"
	"testing"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/rawjson"
)

// The front wrote chunks and tool calls with its own structs (below, as
// they were); the shared shapes must write the same bytes.
func TestWireShapesWriteWhatTheFrontsStructsWrote(t *testing.T) {
	type oldFunction struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	}
	type oldCall struct {
		ID       string      `json:"id"`
		Type     string      `json:"type"`
		Function oldFunction `json:"function"`
	}
	type oldDeltaCall struct {
		Index int `json:"index"`
		oldCall
	}
	type oldDelta struct {
		Role      string         `json:"role,omitempty"`
		Content   *string        `json:"content,omitempty"`
		ToolCalls []oldDeltaCall `json:"tool_calls,omitempty"`
	}
	type oldChoice struct {
		Index        int      `json:"index"`
		Delta        oldDelta `json:"delta"`
		Logprobs     *string  `json:"logprobs"`
		FinishReason *string  `json:"finish_reason"`
	}
	type oldChunk struct {
		ID      string      `json:"id"`
		Object  string      `json:"object"`
		Created int64       `json:"created"`
		Model   string      `json:"model"`
		Choices []oldChoice `json:"choices"`
		Usage   *Usage      `json:"usage,omitempty"`
	}
	for _, args := range []string{"", "{}", `{"q":"<a&b>"}`, "line\u2028sep"} {
		c := hooks.ToolCall{ID: "call_1", Name: "f", Arguments: json.RawMessage(args)}
		nc := wireCalls([]hooks.ToolCall{c})[0]
		text, stop, idx := "a<b>&c", "tool_calls", 3
		got := rawjson.MustMarshal(Chunk{ID: "chatcmpl-1", Object: chunkObject, Created: rawjson.MustMarshal(int64(17)), Model: "m",
			Choices: []ChunkChoice{{Delta: Delta{Role: "assistant", Content: &text, ToolCalls: []DeltaToolCall{{Index: &idx, ToolCall: nc}}}, FinishReason: &stop}},
			Usage:   &Usage{PromptTokens: 1, CompletionTokens: 2, TotalTokens: 3}})
		oc := oldCall{ID: nc.ID, Type: nc.Type, Function: oldFunction{Name: nc.Function.Name, Arguments: string(nc.Function.Arguments)}}
		want := rawjson.MustMarshal(oldChunk{ID: "chatcmpl-1", Object: "chat.completion.chunk", Created: 17, Model: "m",
			Choices: []oldChoice{{Delta: oldDelta{Role: "assistant", Content: &text, ToolCalls: []oldDeltaCall{{Index: idx, oldCall: oc}}}, FinishReason: &stop}},
			Usage:   &Usage{PromptTokens: 1, CompletionTokens: 2, TotalTokens: 3}})
		if string(got) != string(want) {
			t.Errorf("chunk %q:\n got %s\nwant %s", args, got, want)
		}
		if got, want := rawjson.MustMarshal(nc), rawjson.MustMarshal(oc); string(got) != string(want) {
			t.Errorf("tool call %q:\n got %s\nwant %s", args, got, want)
		}
	}
	if got, want := rawjson.MustMarshal(Chunk{ID: "x", Object: chunkObject, Created: rawjson.MustMarshal(int64(1)), Choices: []ChunkChoice{}}),
		rawjson.MustMarshal(oldChunk{ID: "x", Object: "chat.completion.chunk", Created: 1, Choices: []oldChoice{}}); string(got) != string(want) {
		t.Errorf("usage chunk:\n got %s\nwant %s", got, want)
	}
}
