package chat_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/codec/chat"
	"github.com/hookhost/hookhost/internal/dialect"
)

func TestDecodeRefusesWithTheFieldAtFault(t *testing.T) {
	user := `{"role":"user","content":"hi"}`
	cases := []struct {
		name, body, param, says string
	}{
		{"not json", `{"model":`, "", "JSON object"},
		{"array", `[1,2]`, "", "JSON object"},
		{"null", `null`, "", "JSON object"},
		{"string", `"hello"`, "", "JSON object"},
		{"no model", `{"messages":[` + user + `]}`, "model", "model is required"},
		{"model not string", `{"model":7,"messages":[` + user + `]}`, "model", "model"},
		{"empty model", `{"model":"","messages":[` + user + `]}`, "model", "model"},
		{"no messages", `{"model":"m"}`, "messages", "messages is required"},
		{"empty messages", `{"model":"m","messages":[]}`, "messages", "non-empty"},
		{"messages not array", `{"model":"m","messages":{"role":"user"}}`, "messages", "array"},
		{"message not object", `{"model":"m","messages":[` + user + `,3]}`, "messages[1]", "JSON object"},
		{"no role", `{"model":"m","messages":[{"content":"x"}]}`, "messages[0].role", "role is required"},
		{"bad role", `{"model":"m","messages":[{"role":"robot","content":"x"}]}`, "messages[0].role", `"robot"`},
		{"function role", `{"model":"m","messages":[` + user + `,{"role":"function","name":"f","content":"x"}]}`, "messages[1].role", "role \"tool\""},
		{"function_call in message", `{"model":"m","messages":[` + user + `,{"role":"assistant","function_call":{"name":"f","arguments":"{}"}}]}`, "messages[1].function_call", "tool_calls"},
		{"functions", `{"model":"m","messages":[` + user + `],"functions":[{"name":"f"}]}`, "functions", "tools"},
		{"function_call", `{"model":"m","messages":[` + user + `],"function_call":"auto"}`, "function_call", "tool_choice"},
		{"user without content", `{"model":"m","messages":[{"role":"user"}]}`, "messages[0].content", "required"},
		{"content a number", `{"model":"m","messages":[{"role":"user","content":5}]}`, "messages[0].content", "string or an array"},
		{"part without type", `{"model":"m","messages":[{"role":"user","content":[{"text":"a"}]}]}`, "messages[0].content[0].type", "type"},
		{"text part without text", `{"model":"m","messages":[{"role":"user","content":[{"type":"text"}]}]}`, "messages[0].content[0].text", "text"},
		{"system content not text", `{"model":"m","messages":[{"role":"system","content":{}},` + user + `]}`, "messages[0].content", "content"},
		{"tool without call id", `{"model":"m","messages":[` + user + `,{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","content":"ok"}]}`, "messages[2].tool_call_id", "tool_call_id"},
		{"tool call without id", `{"model":"m","messages":[` + user + `,{"role":"assistant","tool_calls":[{"type":"function","function":{"name":"f","arguments":"{}"}}]}]}`, "messages[1].tool_calls[0].id", "id"},
		{"tool call bad type", `{"model":"m","messages":[` + user + `,{"role":"assistant","tool_calls":[{"id":"c","type":"magic","function":{"name":"f","arguments":"{}"}}]}]}`, "messages[1].tool_calls[0].type", "function"},
		{"tool call without name", `{"model":"m","messages":[` + user + `,{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"arguments":"{}"}}]}]}`, "messages[1].tool_calls[0].function.name", "name"},
		{"tool call object arguments", `{"model":"m","messages":[` + user + `,{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":{}}}]}]}`, "messages[1].tool_calls[0].function.arguments", "string"},
		{"tool_calls not array", `{"model":"m","messages":[` + user + `,{"role":"assistant","tool_calls":{}}]}`, "messages[1].tool_calls", "array"},
		{"refusal not string", `{"model":"m","messages":[` + user + `,{"role":"assistant","content":null,"refusal":3}]}`, "messages[1].refusal", "refusal"},
		{"tools not array", `{"model":"m","messages":[` + user + `],"tools":{}}`, "tools", "array"},
		{"tool without type", `{"model":"m","messages":[` + user + `],"tools":[{"function":{"name":"f"}}]}`, "tools[0].type", "type"},
		{"tool bad name", `{"model":"m","messages":[` + user + `],"tools":[{"type":"function","function":{"name":"a.b"}}]}`, "tools[0].function.name", "letters"},
		{"tool long name", `{"model":"m","messages":[` + user + `],"tools":[{"type":"function","function":{"name":"` + strings.Repeat("a", 65) + `"}}]}`, "tools[0].function.name", "64"},
		{"tool duplicate", `{"model":"m","messages":[` + user + `],"tools":[{"type":"function","function":{"name":"f"}},{"type":"function","function":{"name":"f"}}]}`, "tools[1].function.name", "twice"},
		{"tool without function", `{"model":"m","messages":[` + user + `],"tools":[{"type":"function"}]}`, "tools[0].function", "object"},
		{"tool schema not object", `{"model":"m","messages":[` + user + `],"tools":[{"type":"function","function":{"name":"f","parameters":[]}}]}`, "tools[0].function.parameters", "JSON Schema"},
		{"tool description not string", `{"model":"m","messages":[` + user + `],"tools":[{"type":"function","function":{"name":"f","description":1}}]}`, "tools[0].function.description", "string"},
		{"max_tokens zero", `{"model":"m","messages":[` + user + `],"max_tokens":0}`, "max_tokens", "positive"},
		{"max_tokens fraction", `{"model":"m","messages":[` + user + `],"max_tokens":1.5}`, "max_tokens", "positive"},
		{"max_completion_tokens string", `{"model":"m","messages":[` + user + `],"max_completion_tokens":"9"}`, "max_completion_tokens", "positive"},
		{"temperature high", `{"model":"m","messages":[` + user + `],"temperature":2.5}`, "temperature", "0 to 2"},
		{"temperature string", `{"model":"m","messages":[` + user + `],"temperature":"hot"}`, "temperature", "0 to 2"},
		{"stream not bool", `{"model":"m","messages":[` + user + `],"stream":"yes"}`, "stream", "boolean"},
		{"stream_options without stream", `{"model":"m","messages":[` + user + `],"stream_options":{"include_usage":true}}`, "stream_options", "stream is true"},
		{"stream_options with stream false", `{"model":"m","messages":[` + user + `],"stream":false,"stream_options":{"include_usage":true}}`, "stream_options", "stream is true"},
		{"stream_options bad", `{"model":"m","messages":[` + user + `],"stream":true,"stream_options":{"include_usage":"yes"}}`, "stream_options", "include_usage"},
		{"n two", `{"model":"m","messages":[` + user + `],"n":2}`, "n", "one choice"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			call, err := chat.New().Decode([]byte(c.body))
			var de *dialect.Error
			if !errors.As(err, &de) {
				t.Fatalf("Decode = %+v, %v; want a *dialect.Error", call, err)
			}
			if de.Status != 400 || de.Type != "invalid_request_error" || de.Param != c.param {
				t.Errorf("error = %+v, want 400 invalid_request_error about %q", de, c.param)
			}
			if !strings.Contains(de.Message, c.says) {
				t.Errorf("message %q does not say %q", de.Message, c.says)
			}
		})
	}
}

func TestDecodeMapsTheNeutralRequest(t *testing.T) {
	body := `{
	  "model": "gpt-4.1-mini",
	  "messages": [
	    {"role": "system", "content": "be brief"},
	    {"role": "developer", "content": [{"type": "text", "text": "answer in French"}]},
	    {"role": "user", "content": [{"type": "text", "text": "weather"}, {"type": "text", "text": "in Paris?"}]},
	    {"role": "assistant", "content": null, "refusal": null, "annotations": [],
	     "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Par"}}]},
	    {"role": "tool", "tool_call_id": "call_1", "content": [{"type": "text", "text": "sunny"}]},
	    {"role": "system", "content": "now summarise"},
	    {"role": "assistant", "content": null, "refusal": "I cannot help with that."}
	  ],
	  "tools": [{"type": "function", "function": {"name": "get_weather", "description": "Weather", "parameters": {"type": "object"}}}],
	  "max_tokens": 50, "max_completion_tokens": 100, "temperature": 0.5,
	  "stream": true, "stream_options": {"include_usage": true}, "n": 1,
	  "tool_choice": "auto", "parallel_tool_calls": true, "top_p": 1, "metadata": {}, "modalities": ["text"]
	}`
	call, err := chat.New().Decode([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	temp, topP := 0.5, 1.0
	want := hooks.ModelRequest{
		Model:  "gpt-4.1-mini",
		System: "be brief\n\nanswer in French",
		Messages: []hooks.Message{
			{Role: hooks.RoleUser, Content: "weather\nin Paris?"},
			{Role: hooks.RoleAssistant, ToolCalls: []hooks.ToolCall{{ID: "call_1", Name: "get_weather", Arguments: json.RawMessage(`{"city": "Par`)}}},
			{Role: hooks.RoleTool, ToolCallID: "call_1", ToolName: "get_weather", Content: "sunny"},
			{Role: hooks.RoleSystem, Content: "now summarise"},
			{Role: hooks.RoleAssistant, Content: "I cannot help with that."},
		},
		Tools:       []hooks.ToolSpec{{Name: "get_weather", Description: "Weather", InputSchema: json.RawMessage(`{"type": "object"}`)}},
		MaxTokens:   100,
		Temperature: &temp,
		TopP:        &topP,
	}
	if !reflect.DeepEqual(call.Request, want) {
		t.Errorf("request =\n%+v\nwant\n%+v", call.Request, want)
	}
	if !call.Stream {
		t.Error("stream not set")
	}
	// Defaults and empty values need no translation.
	if len(call.Foreign) != 0 {
		t.Errorf("foreign = %q, want none", call.Foreign)
	}
	var keys []string
	for k := range call.Pass.Fields {
		keys = append(keys, k)
	}
	if len(keys) != 6 || string(call.Pass.Fields["max_completion_tokens"]) != "100" {
		t.Errorf("passed-through fields = %q, want tool_choice, parallel_tool_calls, top_p, metadata, modalities and the token limit's key", keys)
	}
}

func TestDecodeNamesWhatOnlyThisProtocolCarries(t *testing.T) {
	body := `{"model":"gpt-4o","messages":[
	    {"role":"user","content":[{"type":"text","text":"what is this?"},{"type":"image_url","image_url":{"url":"https://x.test/a.png"}}]},
	    {"role":"user","name":"alice","content":[{"type":"input_audio","input_audio":{"data":"AAAA","format":"wav"}},{"type":"file","file":{"file_id":"f1"}}]},
	    {"role":"assistant","content":"ok","audio":{"id":"audio_1"}}
	  ],
	  "tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"},"strict":true}}],
	  "response_format":{"type":"json_object"},"seed":7,"tool_choice":"required","reasoning_effort":"low","x_future":{"a":1},
	  "parallel_tool_calls":false,"logit_bias":null,"modalities":["text","audio"]}`
	call, err := chat.New().Decode([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"messages[0].content[1] (image_url)",
		"messages[1].content[0] (input_audio)",
		"messages[1].content[1] (file)",
		"messages[2].audio",
		"modalities", "response_format", "tool_choice", "x_future",
	}
	if !reflect.DeepEqual(call.Foreign, want) {
		t.Errorf("foreign =\n%q\nwant\n%q", call.Foreign, want)
	}
	// Hints are dropped across protocols, not refused; the seed is mapped.
	wantDropped := []string{"messages[].name", "tools[].function.strict", "parallel_tool_calls", "reasoning_effort"}
	if !reflect.DeepEqual(call.Dropped, wantDropped) {
		t.Errorf("dropped =\n%q\nwant\n%q", call.Dropped, wantDropped)
	}
	if call.Request.Seed == nil || *call.Request.Seed != 7 {
		t.Errorf("seed = %v, want 7", call.Request.Seed)
	}
	for k, v := range map[string]string{
		"response_format": `{"type":"json_object"}`, "seed": `7`, "x_future": `{"a":1}`, "logit_bias": `null`,
	} {
		if got := string(call.Pass.Fields[k]); got != v {
			t.Errorf("passed-through %s = %s, want %s", k, got, v)
		}
	}
	if len(call.Request.Tools) != 1 || call.Request.Tools[0].Name != "f" {
		t.Errorf("tools = %+v", call.Request.Tools)
	}
	if got := call.Request.Messages[0].Content; got != "what is this?" {
		t.Errorf("text of a message with an image = %q", got)
	}
}

// A custom tool's calls come back to the client as free text: hookhost
// could not run pre_tool_call on them, and the upstream parser has no
// neutral form to hand them on in, so the request is refused up front.
func TestDecodeRefusesClientToolsWithNoNeutralForm(t *testing.T) {
	body := `{"model":"m","messages":[{"role":"user","content":"run it"}],"tools":[
	  {"type":"function","function":{"name":"f","parameters":{"type":"object"}}},
	  {"type":"function","function":{"name":"g","parameters":{"type":"object"}}},
	  {"type":"custom","custom":{"name":"code_exec","description":"runs code"}}]}`
	_, err := chat.New().Decode([]byte(body))
	var de *dialect.Error
	if !errors.As(err, &de) || de.Status != 400 {
		t.Fatalf("error %v (%T), want a 400 *dialect.Error", err, err)
	}
	if de.Param != "tools[2]" || !strings.Contains(de.Message, "tools[2]") || !strings.Contains(de.Message, "pre_tool_call") || !strings.Contains(de.Message, "function tool") {
		t.Errorf("error names %q: %s", de.Param, de.Message)
	}
}

func TestDecodeKeepsEmptyArgumentsAsAnObject(t *testing.T) {
	body := `{"model":"m","messages":[{"role":"user","content":"x"},
	  {"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"now","arguments":""}}]},
	  {"role":"tool","tool_call_id":"c1","content":"12:00"}]}`
	call, err := chat.New().Decode([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if got := string(call.Request.Messages[1].ToolCalls[0].Arguments); got != "{}" {
		t.Errorf("arguments = %q", got)
	}
}

func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"model":"m","messages":[{"role":"user","content":"hi"}]}`,
		`{"model":"m","messages":[{"role":"system","content":[{"type":"text","text":"a"}]},{"role":"user","content":[{"type":"image_url","image_url":{"url":"x"}}]},{"role":"assistant","tool_calls":[{"id":"1","type":"function","function":{"name":"f","arguments":"{"}}]},{"role":"tool","tool_call_id":"1","content":"r"}],"tools":[{"type":"function","function":{"name":"f","parameters":{}}},{"type":"custom","custom":{}}],"stream":true,"stream_options":{"include_usage":true},"max_tokens":5,"temperature":1,"n":1,"seed":1}`,
		`{"model":"m","messages":[{"role":"assistant","tool_calls":[{"id":"1","type":"custom","custom":{"name":"g","input":"x"}}]}]}`,
		`[]`, `null`, `{}`, `{"model":null,"messages":null}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		call, err := chat.New().Decode(body)
		if err != nil {
			var de *dialect.Error
			if !errors.As(err, &de) || de.Status != 400 {
				t.Fatalf("error %v (%T) is not a 400 *dialect.Error", err, err)
			}
			return
		}
		if call == nil || call.Pass == nil || call.Request.Model == "" {
			t.Fatalf("accepted body decodes to %+v", call)
		}
		for k, v := range call.Pass.Fields {
			if !json.Valid(v) {
				t.Fatalf("passed-through field %s is not JSON: %q", k, v)
			}
		}
	})
}
