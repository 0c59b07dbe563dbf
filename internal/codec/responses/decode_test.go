package responses

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/dialect"
)

func decode(t *testing.T, body string) *dialect.Call {
	t.Helper()
	call, err := New().Decode([]byte(body))
	if err != nil {
		t.Fatalf("Decode: %v\n%s", err, body)
	}
	return call
}

func TestDecodeRefusals(t *testing.T) {
	tests := []struct {
		name, body, param, says string
	}{
		{"not JSON", `{"model":`, "", "not a JSON object"},
		{"an array", `[{"model":"m"}]`, "", "not a JSON object"},
		{"null", `null`, "", "not a JSON object"},
		{"no model", `{"input":"hi"}`, "model", "model is required"},
		{"empty model", `{"model":"","input":"hi"}`, "model", "non-empty string"},
		{"model not a string", `{"model":7,"input":"hi"}`, "model", "non-empty string"},
		{"no input", `{"model":"m"}`, "input", "whole conversation"},
		{"input a number", `{"model":"m","input":3}`, "input", "string or a list"},
		{"conversation", `{"model":"m","input":"and then?","conversation":{"id":"conv_1"}}`, "conversation", "previous_response_id"},
		{"background", `{"model":"m","input":"hi","background":true}`, "background", "polled by id"},
		{"instructions not a string", `{"model":"m","input":"hi","instructions":["a"]}`, "instructions", "must be a string"},
		{"max_output_tokens zero", `{"model":"m","input":"hi","max_output_tokens":0}`, "max_output_tokens", "positive integer"},
		{"max_output_tokens fraction", `{"model":"m","input":"hi","max_output_tokens":1.5}`, "max_output_tokens", "positive integer"},
		{"temperature too high", `{"model":"m","input":"hi","temperature":3}`, "temperature", "between 0 and 2"},
		{"stream not a bool", `{"model":"m","input":"hi","stream":"yes"}`, "stream", "true or false"},
		{"item not an object", `{"model":"m","input":["hi"]}`, "input[0]", "input item object"},
		{"item without type or role", `{"model":"m","input":[{"content":"hi"}]}`, "input[0].type", "has no type"},
		{"unknown role", `{"model":"m","input":[{"type":"message","role":"robot","content":"hi"}]}`, "input[0].role", `"robot"`},
		{"message without content", `{"model":"m","input":[{"role":"user"}]}`, "input[0].content", "required"},
		{"content a number", `{"model":"m","input":[{"role":"user","content":5}]}`, "input[0].content", "string or a list"},
		{"text part without text", `{"model":"m","input":[{"role":"user","content":[{"type":"input_text"}]}]}`, "input[0].content[0].text", "needs text"},
		{"part without type", `{"model":"m","input":[{"role":"user","content":[{"text":"x"}]}]}`, "input[0].content[0].type", "has no type"},
		{"call without call_id", `{"model":"m","input":[{"type":"function_call","name":"f","arguments":"{}"}]}`, "input[0].call_id", "call_id"},
		{"call without name", `{"model":"m","input":[{"type":"function_call","call_id":"c","arguments":"{}"}]}`, "input[0].name", "name"},
		{"call without arguments", `{"model":"m","input":[{"type":"function_call","call_id":"c","name":"f"}]}`, "input[0].arguments", "arguments"},
		{"output without call_id", `{"model":"m","input":[{"type":"function_call_output","output":"x"}]}`, "input[0].call_id", "call_id"},
		{"output missing", `{"model":"m","input":[{"type":"function_call_output","call_id":"c"}]}`, "input[0].output", "required"},
		{"tools not a list", `{"model":"m","input":"hi","tools":{}}`, "tools", "list of tool objects"},
		{"tool without type", `{"model":"m","input":"hi","tools":[{"name":"f"}]}`, "tools[0]", "with a type"},
		{"custom tool", `{"model":"m","input":"hi","tools":[{"type":"function","name":"f"},{"type":"web_search"},{"type":"custom","name":"code_exec"}]}`, "tools[2]", "pre_tool_call"},
		{"computer tool", `{"model":"m","input":"hi","tools":[{"type":"computer_use_preview","display_width":1024,"display_height":768,"environment":"browser"}]}`, "tools[0]", "function tool"},
		{"local shell tool", `{"model":"m","input":"hi","tools":[{"type":"local_shell"}]}`, "tools[0]", "bypass route"},
		{"tool with a dotted name", `{"model":"m","input":"hi","tools":[{"type":"function","name":"a.b","parameters":{"type":"object"}}]}`, "tools[0]", "must match"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New().Decode([]byte(tt.body))
			var e *dialect.Error
			if !errors.As(err, &e) {
				t.Fatalf("err = %v, want a *dialect.Error", err)
			}
			if e.Status != 400 || e.Type != "invalid_request_error" || e.Param != tt.param || !strings.Contains(e.Message, tt.says) {
				t.Errorf("err = %+v, want 400 invalid_request_error about %q saying %q", e, tt.param, tt.says)
			}
		})
	}
}

func TestDecodeStringInput(t *testing.T) {
	call := decode(t, `{"model":"gpt-4.1","input":"Hello","instructions":"be brief","max_output_tokens":100,"temperature":0.5,"stream":true}`)
	temp := 0.5
	want := hooks.ModelRequest{Model: "gpt-4.1", System: "be brief", MaxTokens: 100, Temperature: &temp,
		Messages: []hooks.Message{{Role: hooks.RoleUser, Content: "Hello"}}}
	if !reflect.DeepEqual(call.Request, want) {
		t.Errorf("request = %+v\nwant %+v", call.Request, want)
	}
	if !call.Stream || len(call.Foreign) != 0 || len(call.Pass.Fields) != 0 {
		t.Errorf("stream %v, foreign %q, fields %v", call.Stream, call.Foreign, call.Pass.Fields)
	}
}

// A reasoning model's earlier turn, sent back by the client whole.
const conversation = `{"model":"o4-mini","input":[
 {"role":"developer","content":"Answer in French."},
 {"type":"message","role":"user","content":[{"type":"input_text","text":"What is in"},{"type":"input_image","image_url":"https://example.com/a.png"},{"type":"input_text","text":"this picture?"}]},
 {"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"gAAA-1"},
 {"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Let me look.","annotations":[]}]},
 {"type":"function_call","id":"fc_1","call_id":"call_1","name":"zoom","arguments":"{\"x\":1}","status":"completed"},
 {"type":"function_call","id":"fc_2","call_id":"call_2","name":"ocr","arguments":"","status":"completed"},
 {"type":"function_call_output","call_id":"call_1","output":"zoomed"},
 {"type":"function_call_output","call_id":"call_2","output":[{"type":"input_text","text":"STOP"},{"type":"input_image","image_url":"data:image/png;base64,AA=="}]},
 {"type":"web_search_call","id":"ws_1","status":"completed","action":{"type":"search","query":"stop sign"}},
 {"type":"message","role":"assistant","content":"Un panneau stop."},
 {"role":"user","content":"Merci"}],
 "tools":[{"type":"function","name":"zoom","description":"Zooms","parameters":{"type":"object","properties":{"x":{"type":"number"}}},"strict":true},
  {"type":"web_search","search_context_size":"low"},
  {"type":"function","name":"ocr","parameters":{"type":"object","properties":{}}}],
 "store":false,"metadata":{"k":"v"},"reasoning":{"effort":"high"},"include":["reasoning.encrypted_content"],
 "parallel_tool_calls":true,"tool_choice":"auto","text":{"format":{"type":"text"}},"truncation":"auto",
 "future_knob":{"a":[1,2]},"user":null}`

func TestDecodeConversation(t *testing.T) {
	call := decode(t, conversation)
	want := []hooks.Message{
		{Role: hooks.RoleSystem, Content: "Answer in French."},
		{Role: hooks.RoleUser, Content: "What is in\nthis picture?"},
		{Role: hooks.RoleAssistant, Content: "Let me look.", ToolCalls: []hooks.ToolCall{
			{ID: "call_1", Name: "zoom", Arguments: json.RawMessage(`{"x":1}`)},
			{ID: "call_2", Name: "ocr", Arguments: json.RawMessage(`{}`)},
		}},
		{Role: hooks.RoleTool, ToolCallID: "call_1", ToolName: "zoom", Content: "zoomed"},
		{Role: hooks.RoleTool, ToolCallID: "call_2", ToolName: "ocr", Content: "STOP"},
		{Role: hooks.RoleAssistant, Content: "Un panneau stop."},
		{Role: hooks.RoleUser, Content: "Merci"},
	}
	if !reflect.DeepEqual(call.Request.Messages, want) {
		t.Errorf("messages =\n%+v\nwant\n%+v", call.Request.Messages, want)
	}
	wantForeign := []string{
		"future_knob",
		"input[1].content[1] (input_image)", "input[7].output[1] (input_image)", "input[8] (web_search_call)",
	}
	if !reflect.DeepEqual(call.Foreign, wantForeign) {
		t.Errorf("foreign = %q\nwant %q", call.Foreign, wantForeign)
	}
	// Hints are dropped across protocols, not refused.
	wantDropped := []string{
		"include[]: reasoning.encrypted_content", "metadata", "parallel_tool_calls", "reasoning", "store", "truncation",
		"tools[].strict", "tools[] (built-in)", "input[] (reasoning)", "input[].id", "input[].status",
	}
	if !reflect.DeepEqual(call.Dropped, wantDropped) {
		t.Errorf("dropped = %q\nwant %q", call.Dropped, wantDropped)
	}
	// Unmodelled fields are kept as sent, defaults included, nulls too.
	var top map[string]json.RawMessage
	json.Unmarshal([]byte(conversation), &top)
	for _, k := range []string{"store", "metadata", "reasoning", "include", "parallel_tool_calls", "tool_choice", "text", "truncation", "future_knob", "user"} {
		if string(call.Pass.Fields[k]) != string(top[k]) {
			t.Errorf("Pass.Fields[%s] = %s, want %s", k, call.Pass.Fields[k], top[k])
		}
	}
	for _, k := range []string{"model", "input", "stream", "instructions"} {
		if _, ok := call.Pass.Fields[k]; ok {
			t.Errorf("Pass.Fields has %s, which the neutral request models", k)
		}
	}
	if string(call.Pass.Fields["tools"]) != `[{"type":"web_search","search_context_size":"low"}]` {
		t.Errorf("built-in tools kept as %s", call.Pass.Fields["tools"])
	}

	// Each message's wire form is what the client sent for it: the
	// assistant turn is its reasoning, message and calls together, and the
	// last assistant message carries the built-in call before it.
	var items []json.RawMessage
	json.Unmarshal(top["input"], &items)
	wantWire := [][]json.RawMessage{
		{items[0]}, {items[1]}, {items[2], items[3], items[4], items[5]}, {items[6]}, {items[7]}, {items[8], items[9]}, {items[10]},
	}
	kept := call.Pass.Messages()
	for i, m := range call.Request.Messages {
		got, ok := kept.Take(m)
		if !ok || !reflect.DeepEqual(got, wantWire[i]) {
			t.Errorf("message %d kept as %s, want %s", i, got, wantWire[i])
		}
	}

	if len(call.Request.Tools) != 2 || call.Request.Tools[0].Name != "zoom" || call.Request.Tools[1].Name != "ocr" {
		t.Fatalf("tools = %+v", call.Request.Tools)
	}
	var tools []json.RawMessage
	json.Unmarshal(top["tools"], &tools)
	for i, w := range []json.RawMessage{tools[0], tools[2]} {
		if got, ok := call.Pass.Tool(call.Request.Tools[i]); !ok || string(got) != string(w) {
			t.Errorf("tool %d kept as %s, want %s", i, got, w)
		}
	}
}

func TestDecodeDefaultsAreNotForeign(t *testing.T) {
	call := decode(t, `{"model":"m","input":"hi","store":true,"metadata":{},"parallel_tool_calls":true,"tool_choice":"auto",
		"truncation":"disabled","text":{"format":{"type":"text"}},"include":[],"top_p":1,"service_tier":"auto","background":false,
		"reasoning":null,"user":null,"previous_response_id":null,"conversation":null,"stream_options":{"include_obfuscation":false}}`)
	if len(call.Foreign) != 0 {
		t.Errorf("foreign = %q, want none: every field holds the protocol's default", call.Foreign)
	}
	call = decode(t, `{"model":"m","input":"hi","tool_choice":"required","parallel_tool_calls":false,"top_p":0.9}`)
	if want := []string{"tool_choice"}; !reflect.DeepEqual(call.Foreign, want) {
		t.Errorf("foreign = %q, want %q", call.Foreign, want)
	}
	if want := []string{"parallel_tool_calls"}; !reflect.DeepEqual(call.Dropped, want) {
		t.Errorf("dropped = %q, want %q", call.Dropped, want)
	}
	if call.Request.TopP == nil || *call.Request.TopP != 0.9 {
		t.Errorf("top_p = %v, want 0.9", call.Request.TopP)
	}
}

func TestDecodeGroupsOnlyConsecutiveAssistantItems(t *testing.T) {
	call := decode(t, `{"model":"m","input":[
		{"role":"user","content":"a"},
		{"type":"function_call","call_id":"c1","name":"f","arguments":"{}"},
		{"type":"function_call_output","call_id":"c1","output":"1"},
		{"type":"reasoning","id":"rs","summary":[]},
		{"type":"function_call","call_id":"c2","name":"g","arguments":"{}"},
		{"type":"function_call_output","call_id":"c2","output":"2"},
		{"role":"assistant","content":[{"type":"output_text","text":"done"},{"type":"refusal","refusal":"but no more"}]}]}`)
	var roles []string
	for _, m := range call.Request.Messages {
		roles = append(roles, string(m.Role)+":"+m.Content+":"+itoa(len(m.ToolCalls)))
	}
	want := []string{"user:a:0", "assistant::1", "tool:1:0", "assistant::1", "tool:2:0", "assistant:done\nbut no more:0"}
	if !reflect.DeepEqual(roles, want) {
		t.Errorf("messages = %q, want %q", roles, want)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// A client that sends each call followed by its output (as OpenAI's
// function-calling guide builds the next request) continues one assistant
// turn: its calls must be on one message, or the relay cannot recognise
// the calls it handed out.
func TestDecodeInterleavedCallsAreOneTurn(t *testing.T) {
	items := []string{
		`{"type":"reasoning","id":"rs","summary":[]}`,
		`{"type":"function_call","call_id":"c1","name":"f","arguments":"{}"}`,
		`{"type":"function_call_output","call_id":"c1","output":"A"}`,
		`{"type":"function_call","call_id":"c2","name":"g","arguments":"{}"}`,
		`{"type":"function_call_output","call_id":"c2","output":"B"}`,
	}
	call := decode(t, `{"model":"m","input":[{"role":"user","content":"go"},`+strings.Join(items, ",")+`,{"role":"user","content":"more"}]}`)
	var got []string
	for _, m := range call.Request.Messages {
		s := string(m.Role) + ":" + m.Content + ":" + m.ToolCallID
		for _, c := range m.ToolCalls {
			s += ":" + c.ID
		}
		got = append(got, s)
	}
	want := []string{"user:go:", "assistant:::c1:c2", "tool:A:c1", "tool:B:c2", "user:more:"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("messages = %q, want %q", got, want)
	}
	// The assistant message keeps the whole turn in the client's order,
	// and each output keeps its own item.
	forms := call.Pass.Messages()
	wire, ok := forms.Take(call.Request.Messages[1])
	if !ok || len(wire) != len(items) {
		t.Fatalf("assistant turn kept as %s, want all %d items", wire, len(items))
	}
	for i, w := range wire {
		if string(w) != items[i] {
			t.Errorf("turn item %d = %s, want %s", i, w, items[i])
		}
	}
	for i, at := range []int{2, 4} {
		w, ok := forms.Take(call.Request.Messages[2+i])
		if !ok || len(w) != 1 || string(w[0]) != items[at] {
			t.Errorf("output %d kept as %s, want %s", i, w, items[at])
		}
	}
}
