package responses

import (
	"encoding/json"
	"testing"

	"github.com/hookhost/hookhost/hooks"
)

// The front wrote its items, parts, usage and errors as maps; the shared
// shapes must write the same bytes.
func TestWireShapesWriteWhatTheMapsWrote(t *testing.T) {
	mapJSON := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	textPartMap := func(text string) map[string]any {
		return map[string]any{"type": "output_text", "text": text, "annotations": []any{}, "logprobs": []any{}}
	}
	for _, text := range []string{"", "hi", `<b>&"x"</b>`, "line\u2028sep"} {
		want := mapJSON(map[string]any{"type": "message", "id": "msg_1", "status": "completed", "role": "assistant",
			"content": []any{textPartMap(text)}})
		if got := string(messageItem("msg_1", "completed", text)); got != want {
			t.Errorf("message item %q:\n got %s\nwant %s", text, got, want)
		}
		if got, want := mapJSON(textPart(text)), mapJSON(textPartMap(text)); got != want {
			t.Errorf("text part %q:\n got %s\nwant %s", text, got, want)
		}
	}
	for _, args := range []string{"", "{}", `{"q":"<a&b>"}`, "not json"} {
		c := hooks.ToolCall{ID: "call_1", Name: "lookup", Arguments: json.RawMessage(args)}
		want := mapJSON(map[string]any{"type": "function_call", "id": "fc_1", "call_id": c.ID, "name": c.Name,
			"arguments": args, "status": "completed"})
		if got := string(callItem("fc_1", "completed", c)); got != want {
			t.Errorf("call item %q:\n got %s\nwant %s", args, got, want)
		}
	}
	opened := mapJSON(map[string]any{"output_index": 1, "item": map[string]any{"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "f",
		"arguments": "", "status": "in_progress"}})
	if got := mapJSON(map[string]any{"output_index": 1, "item": callItem("fc_1", "in_progress", hooks.ToolCall{ID: "call_1", Name: "f"})}); got != opened {
		t.Errorf("opened call item:\n got %s\nwant %s", got, opened)
	}
	u := hooks.Usage{InputTokens: 7, OutputTokens: 5}
	want := mapJSON(map[string]any{
		"input_tokens": 7, "input_tokens_details": map[string]int{"cached_tokens": 0},
		"output_tokens": 5, "output_tokens_details": map[string]int{"reasoning_tokens": 0}, "total_tokens": 12,
	})
	if got := string(usageJSON(u)); got != want {
		t.Errorf("usage:\n got %s\nwant %s", got, want)
	}
	if got, want := mapJSON(Error{Code: "server_error", Message: "a<b"}), mapJSON(map[string]string{"code": "server_error", "message": "a<b"}); got != want {
		t.Errorf("error:\n got %s\nwant %s", got, want)
	}
}
