package messages

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/rawjson"
)

// The front wrote its blocks, stream message and usage as ordered
// key-value objects; the shared shapes must write the same bytes.
func TestWireShapesWriteWhatTheObjectsWrote(t *testing.T) {
	for _, text := range []string{"", "hi", `<b>&"x"</b>`, "line\u2028sep"} {
		if got, want := string(fields("b", Block{Type: "text", Text: &text})), string(fields("b", fields("type", "text", "text", text))); got != want {
			t.Errorf("text block %q:\n got %s\nwant %s", text, got, want)
		}
	}
	for _, args := range []string{"", "{}", `{"q": "<a&b>"}`, "not json", `[1]`} {
		c := hooks.ToolCall{ID: "toolu_1", Name: "lookup<x>", Arguments: json.RawMessage(args)}
		want := fields("type", "tool_use", "id", c.ID, "name", c.Name, "input", arguments(c.Arguments))
		if got := toolUse(c); string(got) != string(want) {
			t.Errorf("tool_use %q:\n got %s\nwant %s", args, got, want)
		}
	}
	start := Response{ID: "msg_1", Type: "message", Role: "assistant", Model: "claude<&>",
		Content: []ResponseBlock{}, Usage: Usage{InputTokens: 12, OutputTokens: 1}}
	want := fields("id", "msg_1", "type", "message", "role", "assistant", "model", "claude<&>",
		"content", json.RawMessage("[]"), "stop_reason", nil, "stop_sequence", nil,
		"usage", fields("input_tokens", 12, "output_tokens", 1))
	if got := fields("m", start); string(got) != string(fields("m", want)) {
		t.Errorf("message_start message:\n got %s\nwant %s", got, fields("m", want))
	}
	if got, want := fields("u", Usage{InputTokens: 0, OutputTokens: 0}), fields("u", fields("input_tokens", 0, "output_tokens", 0)); string(got) != string(want) {
		t.Errorf("usage:\n got %s\nwant %s", got, want)
	}
}

// Both sides turn arguments into a tool_use input with toolInput; each
// must still write what its own function wrote before: the provider the
// object as it came and the wrapper HTML-escaped, the front the object
// compacted and the wrapper as written.
func TestToolInputWritesWhatBothSidesWrote(t *testing.T) {
	oldInput := func(raw json.RawMessage) json.RawMessage {
		tr := bytes.TrimSpace(raw)
		if len(tr) == 0 {
			return json.RawMessage("{}")
		}
		var obj map[string]json.RawMessage
		if json.Unmarshal(tr, &obj) == nil && obj != nil {
			return tr
		}
		w, _ := json.Marshal(map[string]string{"invalid_arguments": string(raw)})
		return w
	}
	oldArguments := func(raw json.RawMessage) json.RawMessage {
		tr := bytes.TrimSpace(raw)
		if len(tr) == 0 {
			return json.RawMessage("{}")
		}
		var obj map[string]json.RawMessage
		if json.Unmarshal(tr, &obj) == nil && obj != nil {
			var b bytes.Buffer
			json.Compact(&b, tr)
			return b.Bytes()
		}
		return rawjson.MustMarshal(map[string]string{"invalid_arguments": string(raw)})
	}
	for _, args := range []string{"", "  ", "{}", " { \"q\" : \"<a&b>\" } \n", `{"a":[1, 2]}`, "null", "[1]", `"s"`, "not <json> & more", "{\"x\":\u2028}", "line\u2028sep"} {
		if got, want := string(Input(json.RawMessage(args))), string(oldInput(json.RawMessage(args))); got != want {
			t.Errorf("Input(%q) = %s, want %s", args, got, want)
		}
		if got, want := string(arguments(json.RawMessage(args))), string(oldArguments(json.RawMessage(args))); got != want {
			t.Errorf("arguments(%q) = %s, want %s", args, got, want)
		}
	}
}
