package messages_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/codec/messages"
	"github.com/hookhost/hookhost/internal/dialect"
	"github.com/hookhost/hookhost/internal/fakeapi"
	"github.com/hookhost/hookhost/internal/upstream"
	"github.com/hookhost/hookhost/llm/anthropic"
)

func decodeErr(t *testing.T, body string) *dialect.Error {
	t.Helper()
	call, err := messages.New().Decode([]byte(body))
	if err == nil {
		t.Fatalf("Decode(%s) = %+v, want an error", body, call)
	}
	var e *dialect.Error
	if !errors.As(err, &e) {
		t.Fatalf("Decode(%s): error %T %v is not a *dialect.Error", body, err, err)
	}
	return e
}

const okMsgs = `"messages":[{"role":"user","content":"hi"}]`

func TestDecodeRefusesWhatTheAPIRefuses(t *testing.T) {
	head := `{"model":"claude-sonnet-4-5","max_tokens":100,`
	tests := []struct {
		name, body, param string
	}{
		{"not JSON", `{"model":`, ""},
		{"an array", `[1,2]`, ""},
		{"null", `null`, ""},
		{"no model", `{"max_tokens":100,` + okMsgs + `}`, "model"},
		{"model not a string", `{"model":7,"max_tokens":100,` + okMsgs + `}`, "model"},
		{"no max_tokens", `{"model":"m",` + okMsgs + `}`, "max_tokens"},
		{"max_tokens null", `{"model":"m","max_tokens":null,` + okMsgs + `}`, "max_tokens"},
		{"max_tokens zero", `{"model":"m","max_tokens":0,` + okMsgs + `}`, "max_tokens"},
		{"max_tokens negative", `{"model":"m","max_tokens":-5,` + okMsgs + `}`, "max_tokens"},
		{"max_tokens fraction", `{"model":"m","max_tokens":1.5,` + okMsgs + `}`, "max_tokens"},
		{"max_tokens quoted", `{"model":"m","max_tokens":"100",` + okMsgs + `}`, "max_tokens"},
		{"max_tokens huge", `{"model":"m","max_tokens":1e30,` + okMsgs + `}`, "max_tokens"},
		{"no messages", head + `"stream":true}`, "messages"},
		{"messages empty", head + `"messages":[]}`, "messages"},
		{"messages an object", head + `"messages":{"role":"user"}}`, "messages"},
		{"message not an object", head + `"messages":["hi"]}`, "messages[0]"},
		{"developer role", head + `"messages":[{"role":"developer","content":"x"}]}`, "messages[0].role"},
		{"system message without content", head + `"messages":[{"role":"system"}]}`, "messages[0].content"},
		{"system message clear_at a number", head + `"messages":[{"role":"system","content":"x","clear_at":1}]}`, "messages[0].clear_at"},
		{"metadata.user_id a number", head + okMsgs + `,"metadata":{"user_id":7}}`, "metadata.user_id"},
		{"output_config a list", head + okMsgs + `,"output_config":[]}`, "output_config"},
		{"no content", head + `"messages":[{"role":"user"}]}`, "messages[0].content"},
		{"content a number", head + `"messages":[{"role":"user","content":3}]}`, "messages[0].content"},
		{"block without type", head + `"messages":[{"role":"user","content":[{"text":"x"}]}]}`, "messages[0].content[0]"},
		{"text block without text", head + `"messages":[{"role":"user","content":[{"type":"text"}]}]}`, "messages[0].content[0].text"},
		{"tool_use without id", head + `"messages":[{"role":"user","content":"a"},{"role":"assistant","content":[{"type":"tool_use","name":"f","input":{}}]}]}`, "messages[1].content[0]"},
		{"tool_use input a string", head + `"messages":[{"role":"user","content":"a"},{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"f","input":"{}"}]}]}`, "messages[1].content[0].input"},
		{"tool_result without id", head + `"messages":[{"role":"user","content":[{"type":"tool_result","content":"x"}]}]}`, "messages[0].content[0].tool_use_id"},
		{"tool_result content a number", head + `"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":5}]}]}`, "messages[0].content[0].content"},
		{"tool_result inner block bad", head + `"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"text"}]}]}]}`, "messages[0].content[0].content[0].text"},
		{"system a number", head + okMsgs + `,"system":5}`, "system"},
		{"system image block", head + okMsgs + `,"system":[{"type":"image","source":{}}]}`, "system"},
		{"temperature a string", head + okMsgs + `,"temperature":"hot"}`, "temperature"},
		{"stream a string", head + okMsgs + `,"stream":"yes"}`, "stream"},
		{"tools an object", head + okMsgs + `,"tools":{}}`, "tools"},
		{"tool not an object", head + okMsgs + `,"tools":[1]}`, "tools[0]"},
		{"tool without name", head + okMsgs + `,"tools":[{"input_schema":{"type":"object"}}]}`, "tools[0].name"},
		{"tool without schema", head + okMsgs + `,"tools":[{"name":"f"}]}`, "tools[0].input_schema"},
		{"tool schema an array", head + okMsgs + `,"tools":[{"name":"f","input_schema":[]}]}`, "tools[0].input_schema"},
		{"tool name with a dot", head + okMsgs + `,"tools":[{"name":"a.b","input_schema":{}}]}`, "tools[0].name"},
		{"tool name too long", head + okMsgs + `,"tools":[{"name":"` + strings.Repeat("x", 65) + `","input_schema":{}}]}`, "tools[0].name"},
		{"tool twice", head + okMsgs + `,"tools":[{"name":"f","input_schema":{}},{"name":"f","input_schema":{}}]}`, "tools[1].name"},
		{"tool type a number", head + okMsgs + `,"tools":[{"type":1,"name":"f","input_schema":{}}]}`, "tools[0].type"},
		{"description a number", head + okMsgs + `,"tools":[{"name":"f","description":2,"input_schema":{}}]}`, "tools[0].description"},
		{"top_k a string", head + okMsgs + `,"top_k":"x"}`, "top_k"},
		{"top_p a string", head + okMsgs + `,"top_p":"x"}`, "top_p"},
		{"tool_choice a string", head + okMsgs + `,"tool_choice":"auto"}`, "tool_choice"},
		{"metadata a list", head + okMsgs + `,"metadata":[]}`, "metadata"},
		{"stop_sequences numbers", head + okMsgs + `,"stop_sequences":[1]}`, "stop_sequences"},
		{"thinking without type", head + okMsgs + `,"thinking":{"budget_tokens":10}}`, "thinking"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := decodeErr(t, tt.body)
			if e.Status != 400 || e.Type != "invalid_request_error" || e.Param != tt.param {
				t.Errorf("error = %+v, want 400 invalid_request_error about %q", e, tt.param)
			}
			if tt.param != "" && !strings.Contains(e.Message, tt.param) {
				t.Errorf("message %q does not name %s", e.Message, tt.param)
			}
			if tt.param == "" && !strings.Contains(e.Message, "JSON object") {
				t.Errorf("message %q does not say the body must be a JSON object", e.Message)
			}
		})
	}
}

// A request using most of what the API offers, compact, as an SDK sends it.
const (
	richSystem = `[{"type":"text","text":"You are terse."},{"type":"text","text":"Use tools.","cache_control":{"type":"ephemeral"}}]`
	richM0     = `{"role":"user","content":"weather in Paris and Oslo?"}`
	richM1     = `{"role":"assistant","content":[{"type":"thinking","thinking":"Two cities.","signature":"EqQBCkY"},{"type":"text","text":"Checking."},{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{"city": "Paris"}},{"type":"tool_use","id":"toolu_2","name":"get_weather","input":{"city":"Oslo"}}]}`
	richR1     = `{"type":"tool_result","tool_use_id":"toolu_1","content":"sunny"}`
	richR2     = `{"type":"tool_result","tool_use_id":"toolu_2","content":[{"type":"text","text":"rain"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AAAA"}}],"is_error":true}`
	richT      = `{"type":"text","text":"and a picture:"}`
	richImg    = `{"type":"image","source":{"type":"url","url":"https://example.com/a.png"}}`
	richM2     = `{"role":"user","content":[` + richR1 + `,` + richR2 + `,` + richT + `,` + richImg + `]}`
	richTool   = `{"name":"get_weather","description":"Weather for a city","input_schema":{"type":"object","properties":{"city":{"type":"string"}}},"cache_control":{"type":"ephemeral"}}`
	richServer = `{"type":"web_search_20250305","name":"web_search","max_uses":2}`
	richBody   = `{"model":"claude-sonnet-4-5","max_tokens":2048,"stream":true,"temperature":0.5,` +
		`"system":` + richSystem + `,` +
		`"messages":[` + richM0 + `,` + richM1 + `,` + richM2 + `],` +
		`"tools":[` + richTool + `,` + richServer + `],` +
		`"metadata":{"user_id":"u-7"},"thinking":{"type":"enabled","budget_tokens":1024},"tool_choice":{"type":"auto"},"x_future":{"a": [1, 2]}}`
)

func TestDecodeConversation(t *testing.T) {
	call, err := messages.New().Decode([]byte(richBody))
	if err != nil {
		t.Fatal(err)
	}
	temp := 0.5
	want := hooks.ModelRequest{
		Model: "claude-sonnet-4-5", MaxTokens: 2048, Temperature: &temp,
		System: "You are terse.\n\nUse tools.",
		Messages: []hooks.Message{
			{Role: hooks.RoleUser, Content: "weather in Paris and Oslo?"},
			{Role: hooks.RoleAssistant, Content: "Checking.", ToolCalls: []hooks.ToolCall{
				{ID: "toolu_1", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)},
				{ID: "toolu_2", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Oslo"}`)},
			}},
			{Role: hooks.RoleTool, ToolCallID: "toolu_1", ToolName: "get_weather", Content: "sunny"},
			{Role: hooks.RoleTool, ToolCallID: "toolu_2", ToolName: "get_weather", Content: "rain", IsError: true},
			{Role: hooks.RoleUser, Content: "and a picture:"},
		},
		Tools: []hooks.ToolSpec{{Name: "get_weather", Description: "Weather for a city", InputSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`)}},
		User:  "u-7",
	}
	if !reflect.DeepEqual(call.Request, want) {
		t.Errorf("request =\n%+v\nwant\n%+v", call.Request, want)
	}
	if !call.Stream {
		t.Error("stream not seen")
	}
	wantForeign := []string{
		"messages[2].content[1].content[1] (image)",
		"messages[2].content[3] (image)",
		"tools[1] (web_search_20250305)",
		"x_future",
	}
	if !reflect.DeepEqual(call.Foreign, wantForeign) {
		t.Errorf("foreign = %q\nwant %q", call.Foreign, wantForeign)
	}
	wantDropped := []string{"system[].cache_control", "messages[].content[] (thinking)", "tools[].cache_control", "thinking"}
	if !reflect.DeepEqual(call.Dropped, wantDropped) {
		t.Errorf("dropped = %q\nwant %q", call.Dropped, wantDropped)
	}
	wantFields := map[string]string{
		"metadata": `{"user_id":"u-7"}`, "thinking": `{"type":"enabled","budget_tokens":1024}`,
		"tool_choice": `{"type":"auto"}`, "x_future": `{"a": [1, 2]}`, "tools": "[" + richServer + "]",
	}
	if len(call.Pass.Fields) != len(wantFields) {
		t.Errorf("pass fields = %s", call.Pass.Fields)
	}
	for k, v := range wantFields {
		if string(call.Pass.Fields[k]) != v {
			t.Errorf("pass field %s = %s, want %s", k, call.Pass.Fields[k], v)
		}
	}
	forms := call.Pass.Messages()
	wantForms := [][]string{{richM0}, {richM1}, {richR1}, {richR2}, {richT, richImg}}
	for i, m := range call.Request.Messages {
		got, ok := forms.Take(m)
		if !ok {
			t.Errorf("message %d: no kept form", i)
			continue
		}
		var s []string
		for _, g := range got {
			s = append(s, string(g))
		}
		if !reflect.DeepEqual(s, wantForms[i]) {
			t.Errorf("message %d kept as %q, want %q", i, s, wantForms[i])
		}
	}
	if sys, ok := forms.Take(hooks.Message{Role: hooks.RoleSystem, Content: call.Request.System}); !ok || string(sys[0]) != richSystem {
		t.Errorf("system kept as %q, want %s", sys, richSystem)
	}
	if tool, ok := call.Pass.Tool(call.Request.Tools[0]); !ok || string(tool) != richTool {
		t.Errorf("tool kept as %s, want %s", tool, richTool)
	}
}

func TestDefaultsAndHintsAreNotForeign(t *testing.T) {
	body := `{"model":"m","max_tokens":10,"system":[{"type":"text","text":"s","cache_control":{"type":"ephemeral"}}],` +
		`"messages":[{"role":"user","content":[{"type":"text","text":"hi","cache_control":{"type":"ephemeral"}}]}],` +
		`"tools":[{"type":"custom","name":"f","input_schema":{"type":"object"},"cache_control":{"type":"ephemeral"}}],` +
		`"metadata":{},"tool_choice":{"type":"auto"},"stop_sequences":[],"thinking":{"type":"disabled"},"service_tier":"auto","top_k":null}`
	call, err := messages.New().Decode([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if len(call.Foreign) != 0 {
		t.Errorf("foreign = %q, want nothing: the request translates", call.Foreign)
	}
	if len(call.Request.Tools) != 1 || call.Request.Messages[0].Content != "hi" || call.Request.System != "s" {
		t.Errorf("request = %+v", call.Request)
	}
	for _, k := range []string{"stop_sequences", "top_k", "service_tier"} {
		if _, ok := call.Pass.Fields[k]; !ok {
			t.Errorf("%s is not passed on", k)
		}
	}
}

func TestToolResultsSplitAndOrder(t *testing.T) {
	tests := []struct {
		name    string
		content string
		roles   []hooks.Role
	}{
		{"results only", `[{"type":"tool_result","tool_use_id":"a"},{"type":"tool_result","tool_use_id":"b","content":"x"}]`, []hooks.Role{"tool", "tool"}},
		{"text before results", `[{"type":"text","text":"t"},{"type":"tool_result","tool_use_id":"a","content":"x"}]`, []hooks.Role{"tool", "user"}},
		{"text only", `[{"type":"text","text":"t"},{"type":"text","text":"u"}]`, []hooks.Role{"user"}},
		{"empty", `[]`, []hooks.Role{"user"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			call, err := messages.New().Decode([]byte(`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":` + tt.content + `}]}`))
			if err != nil {
				t.Fatal(err)
			}
			var roles []hooks.Role
			for _, m := range call.Request.Messages {
				roles = append(roles, m.Role)
			}
			if !reflect.DeepEqual(roles, tt.roles) {
				t.Errorf("roles = %v, want %v", roles, tt.roles)
			}
		})
	}
}

// The whole point of keeping wire forms: a request decoded here and
// forwarded to an Anthropic upstream arrives with its conversation, system
// prompt, tools and unmodelled fields byte for byte as the client sent
// them, and a message a hook changes is the only thing rewritten.
func TestDecodedRequestForwardsByteForByte(t *testing.T) {
	reply := `{"id":"msg_u","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":3,"output_tokens":1}}`
	f := fakeapi.New(t, fakeapi.JSON(200, reply), fakeapi.JSON(200, reply))
	p, err := anthropic.New(anthropic.Config{BaseURL: f.URL()})
	if err != nil {
		t.Fatal(err)
	}
	call, err := messages.New().Decode([]byte(richBody))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := p.Forward(context.Background(), call.Request, call.Pass, nil); err != nil {
		t.Fatal(err)
	}
	var client, upstream map[string]json.RawMessage
	json.Unmarshal([]byte(richBody), &client)
	if err := json.Unmarshal(f.Requests()[0].Body, &upstream); err != nil {
		t.Fatalf("upstream body: %v", err)
	}
	for k, v := range client {
		if k == "stream" {
			continue
		}
		if string(upstream[k]) != string(v) {
			t.Errorf("%s reached upstream as\n%s\nwant as sent\n%s", k, upstream[k], v)
		}
	}
	if _, ok := upstream["stream"]; ok {
		t.Error("a non-streamed forward sent stream")
	}

	// A hook rewrites the last user text: that message alone is encoded
	// afresh (and loses its image, which the hook's text replaced).
	req := call.Request
	req.Messages = append([]hooks.Message(nil), req.Messages...)
	req.Messages[4].Content = "and a drawing:"
	if _, _, err := p.Forward(context.Background(), req, call.Pass, nil); err != nil {
		t.Fatal(err)
	}
	json.Unmarshal(f.Requests()[1].Body, &upstream)
	want := `[` + richM0 + `,` + richM1 + `,{"role":"user","content":[` + richR1 + `,` + richR2 + `,{"type":"text","text":"and a drawing:"}]}]`
	if string(upstream["messages"]) != want {
		t.Errorf("messages =\n%s\nwant\n%s", upstream["messages"], want)
	}
}

var _ upstream.Forwarder = (*anthropic.Provider)(nil)

// A system message between an assistant's tool calls and their results
// follows the results, so the calls do not look unanswered; elsewhere it
// stays where it was sent.
func TestSystemMessagePlaces(t *testing.T) {
	body := `{"model":"m","max_tokens":5,"messages":[{"role":"system","content":"a"},{"role":"user","content":"hi"},` +
		`{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"f","input":{}}]},{"role":"system","content":"b"},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"ok"},{"type":"text","text":"and?"}]},{"role":"system","content":"c"}]}`
	call, err := messages.New().Decode([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range call.Request.Messages {
		got = append(got, string(m.Role)+":"+m.Content)
	}
	want := []string{"system:a", "user:hi", "assistant:", "tool:ok", "system:b", "user:and?", "system:c"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("messages = %q, want %q", got, want)
	}
}
