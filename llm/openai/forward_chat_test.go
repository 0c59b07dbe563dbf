package openai_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/fakeapi"
	"github.com/hookhost/hookhost/internal/upstream"
	"github.com/hookhost/hookhost/llm"
	"github.com/hookhost/hookhost/llm/openai"
)

// sentField returns one top-level field of a request body, as sent.
func sentField(t *testing.T, body []byte, key string) json.RawMessage {
	t.Helper()
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		t.Fatalf("request body is not a JSON object: %v\n%s", err, body)
	}
	return top[key]
}

func sentArray(t *testing.T, body []byte, key string) []json.RawMessage {
	t.Helper()
	var items []json.RawMessage
	if err := json.Unmarshal(sentField(t, body, key), &items); err != nil {
		t.Fatalf("%s is not an array: %v\n%s", key, err, body)
	}
	return items
}

func TestForwardChatSendsUnknownFieldsByteEqual(t *testing.T) {
	f := newFake(t, jsonReply(200, chatText))
	p := newProvider(t, f, openai.Config{APIKey: testKey})
	format := `{"type": "json_schema",  "json_schema": {"name": "w", "schema": {"type": "object"}, "strict": true}}`
	pass := &upstream.Passthrough{Fields: map[string]json.RawMessage{
		"response_format":  json.RawMessage(format),
		"seed":             json.RawMessage(`42`),
		"x_future_setting": json.RawMessage(`{"a":[1, 2,3] , "b":"<&>"}`),
		// The adapter owns these: a non-streamed call never carries them.
		"stream":         json.RawMessage(`true`),
		"stream_options": json.RawMessage(`{"include_usage":true}`),
		// Set by the adapter from the neutral request: the neutral value wins.
		"model": json.RawMessage(`"other-model"`),
	}}
	resp, wire, err := p.Forward(context.Background(), userReq("weather?"), pass, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Content != "It is sunny in Paris." {
		t.Errorf("content = %q", resp.Message.Content)
	}
	body := f.Requests()[0].Body
	for _, want := range []string{
		`"response_format":` + format,
		`"seed":42`,
		`"x_future_setting":{"a":[1, 2,3] , "b":"<&>"}`,
		`"model":"gpt-4.1-mini"`,
	} {
		if !bytes.Contains(body, []byte(want)) {
			t.Errorf("body lacks %s\n%s", want, body)
		}
	}
	for _, key := range []string{"stream", "stream_options"} {
		if sentField(t, body, key) != nil {
			t.Errorf("a non-streamed call sent %s: %s", key, body)
		}
	}
	if bytes.Count(body, []byte(`"model"`)) != 1 {
		t.Errorf("model sent more than once: %s", body)
	}
	if wire == nil {
		t.Fatal("no wire response")
	}
	for key, want := range map[string]string{
		"id": `"chatcmpl-AbC1"`, "service_tier": `"default"`, "system_fingerprint": `"fp_1a2b3c"`, "created": `1761000000`,
	} {
		if got := string(wire.Fields[key]); got != want {
			t.Errorf("wire field %s = %s, want %s", key, got, want)
		}
	}
	if _, ok := wire.Fields["choices"]; ok {
		t.Error("wire fields keep choices, which Message and choice already hold")
	}
	var choice map[string]any
	if err := json.Unmarshal(wire.Fields["choice"], &choice); err != nil {
		t.Fatal(err)
	}
	if _, ok := choice["message"]; ok || choice["finish_reason"] != "stop" || choice["logprobs"] != nil {
		t.Errorf("choice = %v", choice)
	}
	if _, ok := choice["logprobs"]; !ok {
		t.Errorf("choice lost logprobs: %v", choice)
	}
	if len(wire.Message) != 1 || !bytes.Contains(wire.Message[0], []byte(`"annotations":[]`)) {
		t.Errorf("wire message = %s", wire.Message)
	}
}

func TestForwardChatKeepsImagePartsAndClientSystemMessages(t *testing.T) {
	f := newFake(t, jsonReply(200, chatText))
	p := newProvider(t, f, openai.Config{})
	sys := []json.RawMessage{
		json.RawMessage(`{"role":"system","content":"be brief"}`),
		json.RawMessage(`{"role":"developer","content":[{"type":"text","text":"answer in French"}],"name":"ops"}`),
	}
	user := json.RawMessage(`{"role":"user","content":[{"type":"text","text":"what is this?"},{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo=","detail":"low"}}]}`)
	req := llm.Request{
		Model:    "gpt-4.1-mini",
		System:   "be brief\n\nanswer in French",
		Messages: []hooks.Message{{Role: hooks.RoleUser, Content: "what is this?"}},
	}
	pass := &upstream.Passthrough{}
	pass.KeepMessage(hooks.Message{Role: hooks.RoleSystem, Content: req.System}, sys...)
	pass.KeepMessage(req.Messages[0], user)
	if _, _, err := p.Forward(context.Background(), req, pass, nil); err != nil {
		t.Fatal(err)
	}
	got := sentArray(t, f.Requests()[0].Body, "messages")
	want := append(append([]json.RawMessage{}, sys...), user)
	if len(got) != len(want) {
		t.Fatalf("sent %d messages, want %d: %s", len(got), len(want), got)
	}
	for i := range want {
		if !bytes.Equal(got[i], want[i]) {
			t.Errorf("message %d =\n%s\nwant\n%s", i, got[i], want[i])
		}
	}
}

func TestForwardChatReencodesChangedMessages(t *testing.T) {
	f := newFake(t, jsonReply(200, chatText))
	p := newProvider(t, f, openai.Config{})
	kept := hooks.Message{Role: hooks.RoleUser, Content: "what is this?"}
	pass := &upstream.Passthrough{}
	pass.KeepMessage(hooks.Message{Role: hooks.RoleSystem, Content: "be brief"}, json.RawMessage(`{"role":"developer","content":"be brief"}`))
	pass.KeepMessage(kept, json.RawMessage(`{"role":"user","content":[{"type":"text","text":"what is this?"},{"type":"image_url","image_url":{"url":"https://x.test/a.png"}}]}`))
	// A hook rewrote both the system prompt and the user's message: what
	// the client sent must not reach the model in their place.
	req := llm.Request{
		Model:    "gpt-4.1-mini",
		System:   "be very brief",
		Messages: []hooks.Message{{Role: hooks.RoleUser, Content: "what is this? (redacted)"}},
	}
	if _, _, err := p.Forward(context.Background(), req, pass, nil); err != nil {
		t.Fatal(err)
	}
	assertJSON(t, sentField(t, f.Requests()[0].Body, "messages"),
		`[{"role":"system","content":"be very brief"},{"role":"user","content":"what is this? (redacted)"}]`)
}

func TestForwardChatKeepsToolForms(t *testing.T) {
	f := newFake(t, jsonReply(200, chatOneCall))
	p := newProvider(t, f, openai.Config{})
	strictTool := json.RawMessage(`{"type":"function","function":{"name":"get_weather","description":"Current weather for a city","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]},"strict":true}}`)
	pass := &upstream.Passthrough{}
	pass.KeepTool(weatherTool, strictTool)
	added := hooks.ToolSpec{Name: "kora__get_burn", Description: "cost", InputSchema: json.RawMessage(`{"type":"object"}`)}
	req := userReq("weather?")
	req.Tools = append(req.Tools, added)
	resp, _, err := p.Forward(context.Background(), req, pass, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Message.ToolCalls) != 1 || resp.Message.ToolCalls[0].Name != "get_weather" {
		t.Errorf("tool calls = %+v", resp.Message.ToolCalls)
	}
	tools := sentArray(t, f.Requests()[0].Body, "tools")
	if len(tools) != 2 {
		t.Fatalf("sent %d tools, want 2: %s", len(tools), tools)
	}
	if !bytes.Equal(tools[0], strictTool) {
		t.Errorf("kept tool sent as %s", tools[0])
	}
	assertJSON(t, tools[1], `{"type":"function","function":{"name":"kora__get_burn","description":"cost","parameters":{"type":"object"}}}`)
}

func TestForwardChatStreamBuildsWireResponse(t *testing.T) {
	f := newFake(t, sseReply(
		data(`{"id":"chatcmpl-S1","object":"chat.completion.chunk","created":1761000005,"model":"gpt-4.1-mini-2025-04-14","service_tier":"default","system_fingerprint":"fp_9","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}],"usage":null}`),
		data(`{"id":"chatcmpl-S1","object":"chat.completion.chunk","created":1761000005,"model":"gpt-4.1-mini-2025-04-14","choices":[{"index":0,"delta":{"content":"Hello"},"finish_reason":null}],"usage":null}`),
		data(`{"id":"chatcmpl-S1","object":"chat.completion.chunk","created":1761000005,"model":"gpt-4.1-mini-2025-04-14","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\""}}]},"finish_reason":null}],"usage":null}`),
		data(`{"id":"chatcmpl-S1","object":"chat.completion.chunk","created":1761000005,"model":"gpt-4.1-mini-2025-04-14","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":":\"Oslo\"}"}}]},"finish_reason":"tool_calls"}],"usage":null}`),
		data(`{"id":"chatcmpl-S1","object":"chat.completion.chunk","created":1761000005,"model":"gpt-4.1-mini-2025-04-14","choices":[],"usage":{"prompt_tokens":12,"completion_tokens":5,"total_tokens":17}}`),
		"data: [DONE]\n\n",
	))
	p := newProvider(t, f, openai.Config{})
	pass := &upstream.Passthrough{Fields: map[string]json.RawMessage{
		"stream_options": json.RawMessage(`{"include_usage":false}`),
		"top_p":          json.RawMessage(`0.5`),
	}}
	var shown strings.Builder
	resp, wire, err := p.Forward(context.Background(), userReq("weather?"), pass, func(s string) { shown.WriteString(s) })
	if err != nil {
		t.Fatal(err)
	}
	if shown.String() != "Hello" || resp.Message.Content != "Hello" {
		t.Errorf("shown %q, kept %q", shown.String(), resp.Message.Content)
	}
	wantCalls := []hooks.ToolCall{{ID: "call_1", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Oslo"}`)}}
	if !reflect.DeepEqual(resp.Message.ToolCalls, wantCalls) || resp.Usage != (hooks.Usage{InputTokens: 12, OutputTokens: 5}) {
		t.Errorf("response = %+v", resp)
	}
	body := f.Requests()[0].Body
	assertJSON(t, sentField(t, body, "stream_options"), `{"include_usage":true}`)
	if string(sentField(t, body, "stream")) != "true" || string(sentField(t, body, "top_p")) != "0.5" {
		t.Errorf("body = %s", body)
	}
	for key, want := range map[string]string{
		"id": `"chatcmpl-S1"`, "created": `1761000005`, "system_fingerprint": `"fp_9"`, "service_tier": `"default"`,
		"model": `"gpt-4.1-mini-2025-04-14"`, "object": `"chat.completion"`,
	} {
		if got := string(wire.Fields[key]); got != want {
			t.Errorf("wire field %s = %s, want %s", key, got, want)
		}
	}
	assertJSON(t, wire.Fields["usage"], `{"prompt_tokens":12,"completion_tokens":5,"total_tokens":17}`)
	assertJSON(t, wire.Fields["choice"], `{"index":0,"finish_reason":"tool_calls","logprobs":null}`)
	if len(wire.Message) != 1 {
		t.Fatalf("wire message = %s", wire.Message)
	}
	assertJSON(t, wire.Message[0], `{"role":"assistant","content":"Hello","refusal":null,
		"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Oslo\"}"}}]}`)
}

func TestForwardChatErrorsAreSealed(t *testing.T) {
	f := newFake(t, jsonReply(400, `{"error":{"message":"bad seed `+testKey+`","type":"invalid_request_error","param":"seed","code":null}}`))
	p := newProvider(t, f, openai.Config{APIKey: testKey})
	_, _, err := p.Forward(context.Background(), userReq("hi"), nil, nil)
	var pe *llm.ProviderError
	if !errors.As(err, &pe) || pe.StatusCode != 400 {
		t.Fatalf("err = %v", err)
	}
	if strings.Contains(err.Error(), testKey) {
		t.Errorf("key in error: %v", err)
	}
}

// FuzzForwardChat serves each input as a whole answer and as a stream:
// forwarding must not panic, must keep the key out of errors, must show
// what it keeps, and must hand back a wire form that is valid JSON.
func FuzzForwardChat(f *testing.F) {
	addSeeds(f, true,
		chatText, chatOneCall, chatParallel, chatBadArgs,
		data(`{"id":"c","created":1,"system_fingerprint":"fp","choices":[{"index":0,"delta":{"role":"assistant","content":"It "}}]}`)+
			data(`{"id":"c","choices":[{"index":0,"delta":{"content":"is."},"finish_reason":"stop"}]}`)+
			data(`{"id":"c","choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2}}`)+data(`[DONE]`))
	z := fakeapi.NewFuzz(f)
	p := fuzzProvider(f, z, openai.APIChat)
	pass := &upstream.Passthrough{Fields: map[string]json.RawMessage{"seed": json.RawMessage(`1`)}}
	f.Fuzz(func(t *testing.T, pick uint8, body string) {
		check := func(what string, wire *upstream.WireResponse) {
			if wire == nil {
				t.Fatalf("%s: no wire form", what)
			}
			for k, v := range wire.Fields {
				if !json.Valid(v) {
					t.Fatalf("%s: wire field %s is not JSON: %q", what, k, v)
				}
			}
			for _, m := range wire.Message {
				if !json.Valid(m) {
					t.Fatalf("%s: wire message is not JSON: %q", what, m)
				}
			}
		}
		z.Set(pick, body, false)
		if _, wire, err := p.Forward(context.Background(), hiReq, pass, nil); err != nil {
			fakeapi.AssertNoKey(t, "forward", err, testKey)
		} else {
			check("forward", wire)
		}
		z.Set(pick, body, true)
		var shown strings.Builder
		resp, wire, err := p.Forward(context.Background(), hiReq, pass, func(s string) { shown.WriteString(s) })
		if err != nil {
			fakeapi.AssertNoKey(t, "forward stream", err, testKey)
			return
		}
		fakeapi.CheckStream(t, shown.String(), resp.Message.Content)
		check("forward stream", wire)
	})
}

func TestForwardChatKeepsTheClientsTokenLimitField(t *testing.T) {
	for _, c := range []struct {
		name, host, clientKey, sentKey, absent string
	}{
		{"newer field to a compatible server", "", "max_completion_tokens", "max_completion_tokens", "max_tokens"},
		{"older field to api.openai.com", "https://api.openai.com/v1", "max_tokens", "max_tokens", "max_completion_tokens"},
		{"no client field: the adapter's choice", "", "", "max_tokens", "max_completion_tokens"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFake(t, jsonReply(200, chatText))
			cfg := openai.Config{}
			if c.host != "" {
				cfg.BaseURL = c.host
				cfg.HTTPClient = f.Redirect()
			}
			p := newProvider(t, f, cfg)
			pass := &upstream.Passthrough{Fields: map[string]json.RawMessage{}}
			if c.clientKey != "" {
				pass.Fields[c.clientKey] = json.RawMessage(`50`)
			}
			req := userReq("hi")
			req.MaxTokens = 80 // a hook raised the client's limit: the new value is sent
			if _, _, err := p.Forward(context.Background(), req, pass, nil); err != nil {
				t.Fatal(err)
			}
			body := f.Requests()[0].Body
			if got := string(sentField(t, body, c.sentKey)); got != "80" {
				t.Errorf("%s = %q, want 80: %s", c.sentKey, got, body)
			}
			if sentField(t, body, c.absent) != nil {
				t.Errorf("%s sent beside %s: %s", c.absent, c.sentKey, body)
			}
		})
	}
}

func TestForwardChatWireMessageCarriesFilledCallIDs(t *testing.T) {
	noIDs := `{"id":"c","object":"chat.completion","created":1,"model":"gemini-2.5-flash","choices":[{"index":0,"finish_reason":"tool_calls",
	  "message":{"role":"assistant","content":null,"tool_calls":[
	    {"id":"","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}},
	    {"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Oslo\"}"}}]}}]}`
	f := newFake(t, jsonReply(200, noIDs), sseReply(
		data(`{"id":"c","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"","type":"function","function":{"name":"get_weather","arguments":"{}"}}]}}]}`),
		data(`{"id":"c","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`),
		"data: [DONE]\n\n"))
	p := newProvider(t, f, openai.Config{})
	for _, stream := range []bool{false, true} {
		var onText func(string)
		if stream {
			onText = func(string) {}
		}
		resp, wire, err := p.Forward(context.Background(), userReq("weather?"), nil, onText)
		if err != nil {
			t.Fatal(err)
		}
		var m struct {
			ToolCalls []struct {
				ID string `json:"id"`
			} `json:"tool_calls"`
		}
		if err := json.Unmarshal(wire.Message[0], &m); err != nil {
			t.Fatal(err)
		}
		if len(m.ToolCalls) != len(resp.Message.ToolCalls) {
			t.Fatalf("stream=%v: wire message %s, response %+v", stream, wire.Message[0], resp.Message.ToolCalls)
		}
		for i, c := range resp.Message.ToolCalls {
			if c.ID == "" || m.ToolCalls[i].ID != c.ID {
				t.Errorf("stream=%v: call %d has id %q in the response and %q on the wire", stream, i, c.ID, m.ToolCalls[i].ID)
			}
		}
	}
}
