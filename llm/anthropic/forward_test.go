package anthropic_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/fakeapi"
	"github.com/hookhost/hookhost/internal/upstream"
	"github.com/hookhost/hookhost/llm"
	"github.com/hookhost/hookhost/llm/anthropic"
)

const fwdText = `{"id":"msg_f1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":5,"output_tokens":1}}`

func forward(t *testing.T, p *anthropic.Provider, req llm.Request, pass *upstream.Passthrough, onText func(string)) (llm.Response, *upstream.WireResponse) {
	t.Helper()
	resp, wire, err := p.Forward(context.Background(), req, pass, onText)
	if err != nil {
		t.Fatalf("Forward: %v", err)
	}
	return resp, wire
}

// sent is the top-level fields of the body the fake server received, raw.
func sent(t *testing.T, f *fakeapi.Server, i int) (map[string]json.RawMessage, []byte) {
	t.Helper()
	reqs := f.Requests()
	if len(reqs) <= i {
		t.Fatalf("%d requests, want at least %d", len(reqs), i+1)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(reqs[i].Body, &m); err != nil {
		t.Fatalf("request body is not a JSON object: %v\n%s", err, reqs[i].Body)
	}
	return m, reqs[i].Body
}

func TestForwardSendsFieldsAsGiven(t *testing.T) {
	f := fakeapi.New(t, jsonReply(200, fwdText))
	p := newProvider(t, f, anthropic.Config{})
	pass := &upstream.Passthrough{Fields: map[string]json.RawMessage{
		"thinking":       json.RawMessage(`{"type": "enabled",  "budget_tokens": 2048}`),
		"metadata":       json.RawMessage(`{"user_id":"u-1"}`),
		"tool_choice":    json.RawMessage(`{"type":"any","disable_parallel_tool_use":true}`),
		"stop_sequences": json.RawMessage(`["\n\nHuman:"]`),
		"top_k":          json.RawMessage(`40`),
		"service_tier":   json.RawMessage(`"standard_only"`),
		"future_field":   json.RawMessage(`{ "nested" : [1, 2.50, "<b>"] }`),
		"stream":         json.RawMessage(`true`),
		"tools":          json.RawMessage(`[{"type": "web_search_20250305", "name": "web_search", "max_uses": 3}]`),
	}}
	forward(t, p, userReq("hi"), pass, nil)
	got, body := sent(t, f, 0)
	for k, v := range pass.Fields {
		if k == "stream" || k == "tools" {
			continue
		}
		if !bytes.Equal(got[k], v) {
			t.Errorf("%s = %s, want byte for byte %s", k, got[k], v)
		}
		if !bytes.Contains(body, append([]byte(quote(k)+":"), v...)) {
			t.Errorf("body does not carry %s as given:\n%s", k, body)
		}
	}
	if _, ok := got["stream"]; ok {
		t.Errorf("a non-streamed call sent stream: %s", got["stream"])
	}
	var tools []json.RawMessage
	if err := json.Unmarshal(got["tools"], &tools); err != nil || len(tools) != 2 {
		t.Fatalf("tools = %s, want the neutral tool then the server tool", got["tools"])
	}
	assertJSON(t, tools[0], weatherToolWire)
	if string(tools[1]) != `{"type": "web_search_20250305", "name": "web_search", "max_uses": 3}` {
		t.Errorf("server tool = %s, want it as given", tools[1])
	}
	if string(got["model"]) != `"claude-sonnet-4-5"` || string(got["system"]) != `"be brief"` {
		t.Errorf("model %s, system %s", got["model"], got["system"])
	}
}

func TestForwardStreamFlagComesFromTheCall(t *testing.T) {
	f := fakeapi.New(t, sseReply(textStream...))
	p := newProvider(t, f, anthropic.Config{})
	pass := &upstream.Passthrough{Fields: map[string]json.RawMessage{"stream": json.RawMessage(`false`)}}
	var shown strings.Builder
	resp, _ := forward(t, p, userReq("hi"), pass, func(s string) { shown.WriteString(s) })
	got, _ := sent(t, f, 0)
	if string(got["stream"]) != "true" {
		t.Errorf("stream = %s, want true", got["stream"])
	}
	if shown.String() != "It is sunny in Paris." || resp.Message.Content != shown.String() {
		t.Errorf("shown %q, kept %q", shown.String(), resp.Message.Content)
	}
}

// A conversation the client sent, as a gateway front keeps it.
const (
	wireImageUser = `{"role":"user","content":[{"type":"text","text":"what is this?"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}}]}`
	wireThinking  = `{"role": "assistant", "content": [{"type":"thinking","thinking":"Let me look.","signature":"EqQBCkYIBxgCKkD"},{"type":"text","text":"Checking."},{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{"city":"Paris"}},{"type":"tool_use","id":"toolu_2","name":"get_weather","input":{"city":"Oslo"}}]}`
	wireResult1   = `{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"sunny"}],"cache_control":{"type":"ephemeral"}}`
	wireAfterText = `{"type":"text","text":"and now?"}`
)

func keptConversation() (llm.Request, *upstream.Passthrough) {
	msgs := []hooks.Message{
		{Role: hooks.RoleUser, Content: "what is this?"},
		{Role: hooks.RoleAssistant, Content: "Checking.", ToolCalls: []hooks.ToolCall{
			{ID: "toolu_1", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)},
			{ID: "toolu_2", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Oslo"}`)},
		}},
		{Role: hooks.RoleTool, ToolCallID: "toolu_1", Content: "sunny"},
		{Role: hooks.RoleTool, ToolCallID: "toolu_2", Content: "rain"},
		{Role: hooks.RoleUser, Content: "and now?"},
	}
	pass := &upstream.Passthrough{}
	pass.KeepMessage(msgs[0], json.RawMessage(wireImageUser))
	pass.KeepMessage(msgs[1], json.RawMessage(wireThinking))
	pass.KeepMessage(msgs[2], json.RawMessage(wireResult1))
	// msgs[3] has no kept form (a hook wrote it): it is encoded afresh.
	pass.KeepMessage(msgs[4], json.RawMessage(wireAfterText))
	return llm.Request{Model: "claude-sonnet-4-5", Messages: msgs, MaxTokens: 300}, pass
}

func TestForwardSendsKeptMessages(t *testing.T) {
	f := fakeapi.New(t, jsonReply(200, fwdText))
	p := newProvider(t, f, anthropic.Config{})
	req, pass := keptConversation()
	forward(t, p, req, pass, nil)
	got, _ := sent(t, f, 0)
	var msgs []json.RawMessage
	if err := json.Unmarshal(got["messages"], &msgs); err != nil || len(msgs) != 3 {
		t.Fatalf("messages = %s, want 3 (user, assistant, one user of results and text)", got["messages"])
	}
	if string(msgs[0]) != wireImageUser {
		t.Errorf("image message = %s\nwant as it came %s", msgs[0], wireImageUser)
	}
	if string(msgs[1]) != wireThinking {
		t.Errorf("thinking turn = %s\nwant as it came %s", msgs[1], wireThinking)
	}
	want := `{"role":"user","content":[` + wireResult1 + `,{"type":"tool_result","tool_use_id":"toolu_2","content":"rain"},` + wireAfterText + `]}`
	if string(msgs[2]) != want {
		t.Errorf("results message = %s\nwant %s", msgs[2], want)
	}
	if string(got["max_tokens"]) != "300" {
		t.Errorf("max_tokens = %s", got["max_tokens"])
	}
}

func TestForwardReencodesChangedMessages(t *testing.T) {
	f := fakeapi.New(t, jsonReply(200, fwdText))
	p := newProvider(t, f, anthropic.Config{})
	req, pass := keptConversation()
	req.Messages[0].Content = "describe the picture" // a hook rewrote it
	req.Messages[1].ToolCalls[0].Arguments = json.RawMessage(`{"city":"Lyon"}`)
	forward(t, p, req, pass, nil)
	got, _ := sent(t, f, 0)
	var msgs []json.RawMessage
	if err := json.Unmarshal(got["messages"], &msgs); err != nil || len(msgs) != 3 {
		t.Fatalf("messages = %s", got["messages"])
	}
	assertJSON(t, msgs[0], `{"role":"user","content":"describe the picture"}`)
	assertJSON(t, msgs[1], `{"role":"assistant","content":[{"type":"text","text":"Checking."},
		{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{"city":"Lyon"}},
		{"type":"tool_use","id":"toolu_2","name":"get_weather","input":{"city":"Oslo"}}]}`)
	if bytes.Contains(got["messages"], []byte("iVBORw0KGgo=")) || bytes.Contains(got["messages"], []byte("signature")) {
		t.Errorf("stale wire content of changed messages was sent: %s", got["messages"])
	}
}

func TestForwardKeptSystemAndTools(t *testing.T) {
	f := fakeapi.New(t, jsonReply(200, fwdText), jsonReply(200, fwdText))
	p := newProvider(t, f, anthropic.Config{})
	req := userReq("hi")
	pass := &upstream.Passthrough{}
	system := `[{"type":"text","text":"be brief","cache_control":{"type":"ephemeral"}}]`
	pass.KeepMessage(hooks.Message{Role: hooks.RoleSystem, Content: "be brief"}, json.RawMessage(system))
	tool := `{"name":"get_weather","description":"Current weather for a city","input_schema":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]},"cache_control":{"type":"ephemeral"}}`
	pass.KeepTool(weatherTool, json.RawMessage(tool))
	forward(t, p, req, pass, nil)
	got, _ := sent(t, f, 0)
	if string(got["system"]) != system {
		t.Errorf("system = %s, want as kept %s", got["system"], system)
	}
	if string(got["tools"]) != "["+tool+"]" {
		t.Errorf("tools = %s, want as kept", got["tools"])
	}

	// A hook changed both: they are encoded afresh.
	req.System = "be very brief"
	req.Tools[0].Description = "Weather"
	forward(t, p, req, pass, nil)
	got, _ = sent(t, f, 1)
	if string(got["system"]) != `"be very brief"` {
		t.Errorf("changed system = %s", got["system"])
	}
	assertJSON(t, got["tools"], `[{"name":"get_weather","description":"Weather","input_schema":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}]`)
}

func TestForwardWholeResponse(t *testing.T) {
	body := `{"id":"msg_w","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"thinking","thinking":"hmm","signature":"sig=="},{"type":"text","text":"Hi","citations":null},{"type":"tool_use","id":"toolu_9","name":"get_weather","input":{"city":"Rome"}}],"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":9,"output_tokens":4,"service_tier":"standard"},"container":{"id":"c1"}}`
	f := fakeapi.New(t, jsonReply(200, body))
	p := newProvider(t, f, anthropic.Config{})
	resp, wire := forward(t, p, userReq("hi"), nil, nil)
	if resp.Message.Content != "Hi" || len(resp.Message.ToolCalls) != 1 || resp.StopReason != hooks.StopToolUse {
		t.Errorf("response = %+v", resp)
	}
	want := []string{`{"type":"thinking","thinking":"hmm","signature":"sig=="}`, `{"type":"text","text":"Hi","citations":null}`, `{"type":"tool_use","id":"toolu_9","name":"get_weather","input":{"city":"Rome"}}`}
	if len(wire.Message) != len(want) {
		t.Fatalf("wire message has %d blocks, want %d", len(wire.Message), len(want))
	}
	for i, w := range want {
		if string(wire.Message[i]) != w {
			t.Errorf("block %d = %s, want %s", i, wire.Message[i], w)
		}
	}
	if string(wire.Fields["container"]) != `{"id":"c1"}` || string(wire.Fields["usage"]) != `{"input_tokens":9,"output_tokens":4,"service_tier":"standard"}` || string(wire.Fields["id"]) != `"msg_w"` {
		t.Errorf("fields = %s", wire.Fields)
	}
	if _, ok := wire.Fields["content"]; ok {
		t.Error("content is in Fields as well as in Message")
	}
}

func TestForwardStreamedResponse(t *testing.T) {
	frames := []string{
		ev("message_start", `"message":{"id":"msg_s","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":12,"output_tokens":1},"container":null}`),
		ev("content_block_start", `"index":0,"content_block":{"type":"thinking","thinking":"","signature":""}`),
		ev("content_block_delta", `"index":0,"delta":{"type":"thinking_delta","thinking":"Let me "}`),
		ev("content_block_delta", `"index":0,"delta":{"type":"thinking_delta","thinking":"think."}`),
		ev("content_block_delta", `"index":0,"delta":{"type":"signature_delta","signature":"EqQB"}`),
		ev("content_block_stop", `"index":0`),
		ev("content_block_start", `"index":1,"content_block":{"type":"redacted_thinking","data":"opaque"}`),
		ev("content_block_stop", `"index":1`),
	}
	frames = append(frames, textBlock(2, "Hel", "lo")...)
	frames = append(frames, toolBlock(3, "toolu_7", "get_weather", `{"city":`, `"Oslo"}`)...)
	frames = append(frames,
		ev("message_delta", `"delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":21}`),
		ev("message_stop", ""))
	f := fakeapi.New(t, sseReply(frames...))
	p := newProvider(t, f, anthropic.Config{})
	var shown strings.Builder
	resp, wire := forward(t, p, userReq("hi"), nil, func(s string) { shown.WriteString(s) })
	if shown.String() != "Hello" || resp.Message.Content != "Hello" || len(resp.Message.ToolCalls) != 1 {
		t.Errorf("shown %q, response %+v", shown.String(), resp)
	}
	want := []string{
		`{"type":"thinking","thinking":"Let me think.","signature":"EqQB"}`,
		`{"type":"redacted_thinking","data":"opaque"}`,
		`{"type":"text","text":"Hello"}`,
		`{"type":"tool_use","id":"toolu_7","name":"get_weather","input":{"city":"Oslo"}}`,
	}
	if len(wire.Message) != len(want) {
		t.Fatalf("wire message = %s, want %d blocks", wire.Message, len(want))
	}
	for i, w := range want {
		if string(wire.Message[i]) != w {
			t.Errorf("block %d = %s, want %s", i, wire.Message[i], w)
		}
	}
	if string(wire.Fields["stop_reason"]) != `"tool_use"` || string(wire.Fields["id"]) != `"msg_s"` || string(wire.Fields["container"]) != "null" {
		t.Errorf("fields = %s", wire.Fields)
	}
	assertJSON(t, wire.Fields["usage"], `{"input_tokens":12,"output_tokens":21}`)
}

func TestForwardErrorsAreProviderErrors(t *testing.T) {
	f := fakeapi.New(t, jsonReply(400, `{"type":"error","error":{"type":"invalid_request_error","message":"bad thinking budget"}}`))
	p := newProvider(t, f, anthropic.Config{})
	_, wire, err := p.Forward(context.Background(), userReq("hi"), nil, nil)
	var pe *llm.ProviderError
	if err == nil || wire != nil || !errors.As(err, &pe) || pe.StatusCode != 400 || !strings.Contains(err.Error(), "bad thinking budget") {
		t.Errorf("err = %v, wire = %v; want the provider's 400", err, wire)
	}
}

// FuzzForward feeds Forward's two parsers whatever a server may send: no
// panic, no key in any error, a stream shows exactly the text it keeps,
// and every wire unit it returns is JSON a client can be sent.
func FuzzForward(f *testing.F) {
	f.Add(uint8(0), fwdText, false)
	f.Add(uint8(0), strings.Join(textStream, ""), true)
	f.Add(uint8(0), strings.Join(parallelStream, ""), true)
	f.Add(uint8(0), strings.Join(blockStream(
		ev("content_block_start", `"index":0,"content_block":{"type":"thinking","thinking":""}`),
		ev("content_block_delta", `"index":0,"delta":{"type":"thinking_delta","thinking":"hmm"}`),
		ev("content_block_delta", `"index":0,"delta":{"type":"signature_delta","signature":"s"}`),
		ev("content_block_stop", `"index":0`),
		ev("content_block_start", `"index":1,"content_block":{"type":"tool_use","id":"a","name":"b","input":{}}`),
		ev("content_block_delta", `"index":1,"delta":{"type":"input_json_delta","partial_json":"{\"x\":"}`),
	), ""), true)
	for _, s := range fakeapi.ErrorBodies(testKey) {
		f.Add(uint8(1), s, false)
	}
	z := fakeapi.NewFuzz(f)
	p, err := anthropic.New(anthropic.Config{BaseURL: z.URL(), APIKey: testKey, Timeout: 10 * time.Second})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, pick uint8, body string, stream bool) {
		z.Set(pick, body, stream)
		var shown strings.Builder
		var onText func(string)
		if stream {
			onText = func(s string) { shown.WriteString(s) }
		}
		resp, wire, err := p.Forward(context.Background(), userReq("hi"), nil, onText)
		if err != nil {
			fakeapi.AssertNoKey(t, "forward", err, testKey)
			return
		}
		if stream {
			fakeapi.CheckStream(t, shown.String(), resp.Message.Content)
		}
		for k, v := range wire.Fields {
			if !json.Valid(v) {
				t.Fatalf("field %s is not JSON: %s", k, v)
			}
		}
		for i, b := range wire.Message {
			if !json.Valid(b) {
				t.Fatalf("block %d is not JSON: %s", i, b)
			}
		}
	})
}

// A gateway continuing a conversation keeps an upstream answer as the
// content blocks it received (WireResponse.Message): they go back as one
// assistant message, thinking block first, as the API requires.
func TestForwardKeptBlocksOfAnAnswer(t *testing.T) {
	f := fakeapi.New(t, jsonReply(200, fwdText))
	p := newProvider(t, f, anthropic.Config{})
	answer := hooks.Message{Role: hooks.RoleAssistant, ToolCalls: []hooks.ToolCall{{ID: "toolu_5", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Rome"}`)}}}
	result := hooks.Message{Role: hooks.RoleTool, ToolCallID: "toolu_5", Content: `{"temp":21}`}
	req := llm.Request{Model: "claude-sonnet-4-5", Messages: []hooks.Message{{Role: hooks.RoleUser, Content: "Rome?"}, answer, result}}
	pass := &upstream.Passthrough{}
	thinking := `{"type":"thinking","thinking":"Rome it is.","signature":"c2ln"}`
	use := `{"type":"tool_use","id":"toolu_5","name":"get_weather","input":{"city":"Rome"}}`
	pass.KeepMessage(answer, json.RawMessage(thinking), json.RawMessage(use))
	forward(t, p, req, pass, nil)
	got, _ := sent(t, f, 0)
	want := `[{"role":"user","content":"Rome?"},{"role":"assistant","content":[` + thinking + `,` + use + `]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_5","content":"{\"temp\":21}"}]}]`
	if string(got["messages"]) != want {
		t.Errorf("messages =\n%s\nwant\n%s", got["messages"], want)
	}
}
