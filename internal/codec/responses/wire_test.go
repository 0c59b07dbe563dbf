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

// The front wrote its stream events as maps; Event must write the same
// bytes for each kind of event, zero indexes, empty strings and null
// included, and the provider must read back what it reads.
func TestEventWritesWhatTheMapsWrote(t *testing.T) {
	mapJSON := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	ptr := func(s string) *string { return &s }
	idx := func(i int) *int { return &i }
	snap := json.RawMessage(`{"id":"resp_1","output":[],"status":"in_progress","text":"<a&b>"}`)
	item := callItem("fc_1", "completed", hooks.ToolCall{ID: "call_1", Name: "f", Arguments: json.RawMessage(`{"q":"<x>"}`)})
	param := "model"
	cases := []struct {
		name string
		old  map[string]any
		new  Event
	}{
		{"created", map[string]any{"response": snap},
			Event{Response: &Response{Verbatim: snap}}},
		{"message added", map[string]any{"output_index": 0,
			"item": map[string]any{"type": "message", "id": "msg_1", "status": "in_progress", "role": "assistant", "content": []any{}}},
			Event{OutputIndex: idx(0), Item: &Item{Type: "message", ID: "msg_1", Status: "in_progress", Role: "assistant", Content: []Part{}}}},
		{"part added", map[string]any{"item_id": "msg_1", "output_index": 0, "content_index": 0, "part": textPart("")},
			Event{ItemID: "msg_1", OutputIndex: idx(0), ContentIndex: 0, Part: textPart("")}},
		{"text delta", map[string]any{"item_id": "msg_1", "output_index": 2, "content_index": 0, "delta": "a<b", "logprobs": []any{}},
			Event{ItemID: "msg_1", OutputIndex: idx(2), ContentIndex: 0, Delta: ptr("a<b"), Logprobs: noLogprobs}},
		{"text done", map[string]any{"item_id": "msg_1", "output_index": 0, "content_index": 0, "text": "", "logprobs": []any{}},
			Event{ItemID: "msg_1", OutputIndex: idx(0), ContentIndex: 0, Text: ptr(""), Logprobs: noLogprobs}},
		{"item done", map[string]any{"output_index": 1, "item": item},
			Event{OutputIndex: idx(1), Item: &Item{Verbatim: item}}},
		{"empty arguments delta", map[string]any{"item_id": "fc_1", "output_index": 0, "delta": ""},
			Event{ItemID: "fc_1", OutputIndex: idx(0), Delta: ptr("")}},
		{"arguments done", map[string]any{"item_id": "fc_1", "output_index": 0, "name": "", "arguments": ""},
			Event{ItemID: "fc_1", OutputIndex: idx(0), Name: "", Arguments: ptr("")}},
		{"error without param", map[string]any{"code": "server_error", "message": "", "param": (*string)(nil)},
			Event{Code: ptr("server_error"), Message: ptr(""), Param: (*string)(nil)}},
		{"error with param", map[string]any{"code": "", "message": "m & n", "param": &param},
			Event{Code: ptr(""), Message: ptr("m & n"), Param: &param}},
	}
	for seq, c := range cases {
		c.old["type"], c.old["sequence_number"] = "response.x", seq
		c.new.Type, c.new.SequenceNumber = "response.x", seq
		want, got := mapJSON(c.old), mapJSON(c.new)
		if got != want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, want)
		}
		var back Event
		if err := json.Unmarshal([]byte(got), &back); err != nil {
			t.Errorf("%s: the provider cannot read it: %v", c.name, err)
		}
	}
}

// Fields only the front writes must not make the provider refuse an event
// it read before: whatever a server puts in them is accepted.
func TestEventReadsAnyFrontOnlyField(t *testing.T) {
	data := `{"type":"response.output_text.delta","sequence_number":"x","item_id":5,"content_index":{},"logprobs":"no","name":[1],"param":true,"part":3,"delta":"hi","output_index":2}`
	var e Event
	if err := json.Unmarshal([]byte(data), &e); err != nil {
		t.Fatalf("read %s: %v", data, err)
	}
	if Value(e.Delta) != "hi" || Value(e.OutputIndex) != 2 || !Progresses(e) {
		t.Errorf("read %+v", e)
	}
	if err := json.Unmarshal([]byte(`{"output_index":"x"}`), &e); err == nil ||
		err.Error() != "json: cannot unmarshal string into Go struct field Event.output_index of type int" {
		t.Errorf("a bad output_index gives %v", err)
	}
}
