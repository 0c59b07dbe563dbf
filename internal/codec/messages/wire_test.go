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
		want := fields("type", "tool_use", "id", c.ID, "name", c.Name, "input", AnswerInput.Of(c.Arguments))
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

// Both sides turn arguments into a tool_use input with ToolInput; each
// form must still write what its own function wrote before: the provider the
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
		if got, want := string(RequestInput.Of(json.RawMessage(args))), string(oldInput(json.RawMessage(args))); got != want {
			t.Errorf("RequestInput.Of(%q) = %s, want %s", args, got, want)
		}
		if got, want := string(AnswerInput.Of(json.RawMessage(args))), string(oldArguments(json.RawMessage(args))); got != want {
			t.Errorf("AnswerInput.Of(%q) = %s, want %s", args, got, want)
		}
	}
}

// The front wrote its stream envelopes as ordered objects; Event must
// write the same bytes for each event, index 0 and HTML characters
// included, and the provider must read them back.
func TestEventWritesWhatTheObjectsWrote(t *testing.T) {
	idx := func(i int) *int { return &i }
	start := Response{ID: "msg_1", Type: "message", Role: "assistant", Model: "claude<&>",
		Content: []ResponseBlock{}, Usage: Usage{InputTokens: 3, OutputTokens: 1}}
	text := Block{Type: "text", Text: new(string)}
	use := Block{Type: "tool_use", ID: "toolu_1", Name: "look<up>", Input: json.RawMessage("{}")}
	textDelta := fields("type", "text_delta", "text", `a<b & "c"`)
	argsDelta := fields("type", "input_json_delta", "partial_json", string(AnswerInput.Of(json.RawMessage(`{"q": "<x>"}`))))
	stop := fields("stop_reason", "end_turn", "stop_sequence", nil)
	cases := []struct {
		name     string
		old, new json.RawMessage
	}{
		{"message_start", fields("type", "message_start", "message", start),
			envelope(Event{Type: "message_start", Message: &start})},
		{"text start", fields("type", "content_block_start", "index", 0, "content_block", text),
			envelope(Event{Type: "content_block_start", Index: idx(0), ContentBlock: &ResponseBlock{Verbatim: rawjson.MustMarshal(text)}})},
		{"tool_use start", fields("type", "content_block_start", "index", 2, "content_block", use),
			envelope(Event{Type: "content_block_start", Index: idx(2), ContentBlock: &ResponseBlock{Verbatim: rawjson.MustMarshal(use)}})},
		{"text delta", fields("type", "content_block_delta", "index", 0, "delta", textDelta),
			envelope(Event{Type: "content_block_delta", Index: idx(0), Delta: textDelta})},
		{"arguments delta", fields("type", "content_block_delta", "index", 1, "delta", argsDelta),
			envelope(Event{Type: "content_block_delta", Index: idx(1), Delta: argsDelta})},
		{"block stop", fields("type", "content_block_stop", "index", 0),
			envelope(Event{Type: "content_block_stop", Index: idx(0)})},
		{"ping", fields("type", "ping"), envelope(Event{Type: "ping"})},
		{"message_delta", fields("type", "message_delta", "delta", stop, "usage", Usage{InputTokens: 0, OutputTokens: 0}),
			envelope(Event{Type: "message_delta", Delta: stop, Usage: &Usage{}})},
		{"message_stop", fields("type", "message_stop"), envelope(Event{Type: "message_stop"})},
	}
	for _, c := range cases {
		if string(c.new) != string(c.old) {
			t.Errorf("%s:\n got %s\nwant %s", c.name, c.new, c.old)
		}
		var back Event
		if err := json.Unmarshal(c.new, &back); err != nil || back.Type == "" {
			t.Errorf("%s: the provider reads %+v, %v", c.name, back, err)
		}
	}
	// A block the provider reads and the front's blocks it starts with
	// are one type; without Verbatim it writes its fields as it did.
	b := ResponseBlock{Type: "text", Text: "<a>"}
	if got, err := json.Marshal(b); err != nil || string(got) != `{"type":"text","text":"\u003ca\u003e","id":"","name":"","input":null}` {
		t.Errorf("json.Marshal(%+v) = %s, %v", b, got, err)
	}
	if got := rawjson.MustMarshal(b); string(got) != `{"type":"text","text":"<a>","id":"","name":"","input":null}` {
		t.Errorf("rawjson.Marshal(%+v) = %s", b, got)
	}
	var e Event
	if err := json.Unmarshal([]byte(`{"type":"content_block_stop","index":"x"}`), &e); err == nil ||
		err.Error() != "json: cannot unmarshal string into Go struct field Event.index of type int" {
		t.Errorf("a bad index gives %v", err)
	}
}

// The front's deltas and the provider's are one type: written, each kind
// is what the front's ordered objects were (a message_delta with
// stop_sequence null, a text delta without the key); read, a bad one
// fails with the text the provider reported before.
func TestDeltaWritesWhatTheObjectsWrote(t *testing.T) {
	for _, c := range []struct {
		d    Delta
		want json.RawMessage
	}{
		{Delta{Type: "text_delta", Text: `a<b & "c"`}, fields("type", "text_delta", "text", `a<b & "c"`)},
		{Delta{Type: "input_json_delta", PartialJSON: `{"q":"<x>"}`}, fields("type", "input_json_delta", "partial_json", `{"q":"<x>"}`)},
		{Delta{StopReason: new("end_turn")}, fields("stop_reason", "end_turn", "stop_sequence", nil)},
		{Delta{StopReason: new("stop_sequence"), StopSequence: new("###")}, fields("stop_reason", "stop_sequence", "stop_sequence", "###")},
	} {
		if got := rawjson.MustMarshal(c.d); string(got) != string(c.want) {
			t.Errorf("%+v:\n got %s\nwant %s", c.d, got, c.want)
		}
		var back Delta
		if err := json.Unmarshal(rawjson.MustMarshal(c.d), &back); err != nil || back.Type != c.d.Type || back.Text != c.d.Text || back.PartialJSON != c.d.PartialJSON {
			t.Errorf("%+v reads back as %+v, %v", c.d, back, err)
		}
	}
	var d Delta
	if err := json.Unmarshal([]byte(`{"type":"text_delta","text":1}`), &d); err == nil ||
		err.Error() != "json: cannot unmarshal number into Go struct field Delta.text of type string" {
		t.Errorf("a bad text delta gives %v", err)
	}
}
