package chat_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/codec/chat"
	"github.com/hookhost/hookhost/internal/dialect"
	"github.com/hookhost/hookhost/internal/fakeapi"
	"github.com/hookhost/hookhost/llm/openai"
)

// clientBody is a request an OpenAI client could send, with what the
// neutral types do not model in every place it can be.
const clientBody = `{
  "model": "gpt-4o",
  "messages": [
    {"role": "developer", "content": [{"type": "text", "text": "be brief"}], "name": "ops"},
    {"role": "user", "content": [{"type": "text", "text": "what is in this picture?"},
                                 {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo=", "detail": "low"}}]},
    {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "lookup", "arguments": "{\"q\": \"cat\"}"}}]},
    {"role": "tool", "tool_call_id": "call_1", "content": "a cat"}
  ],
  "tools": [{"type": "function", "function": {"name": "lookup", "description": "Search", "parameters": {"type": "object"}, "strict": true}}],
  "response_format": {"type": "json_schema", "json_schema": {"name": "answer", "schema": {"type": "object"}}},
  "reasoning_effort": "low",
  "seed": 7,
  "x_unknown_future_field": {"nested": [1, 2, {"deep": true}]},
  "stream": false
}`

// TestDecodedRequestReachesAnOpenAIUpstreamUnchanged decodes a client's
// request and forwards it through the OpenAI adapter, as the gateway does
// when both sides speak Chat Completions: every message, tool and field
// reaches the upstream as the client wrote it.
func TestDecodedRequestReachesAnOpenAIUpstreamUnchanged(t *testing.T) {
	f := fakeapi.New(t, fakeapi.JSON(200, `{"id":"chatcmpl-U","object":"chat.completion","created":1761000000,"model":"gpt-4o-2024-08-06",
	  "choices":[{"index":0,"message":{"role":"assistant","content":"{\"answer\":\"a cat\"}","refusal":null,"annotations":[]},"logprobs":null,"finish_reason":"stop"}],
	  "usage":{"prompt_tokens":90,"completion_tokens":8,"total_tokens":98},"system_fingerprint":"fp_x"}`))
	p, err := openai.New(openai.Config{BaseURL: f.URL() + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	call := decode(t, clientBody)
	resp, wire, err := p.Forward(context.Background(), call.Request, call.Pass, nil)
	if err != nil {
		t.Fatal(err)
	}
	sent := f.Requests()[0].Body
	var got, want map[string]json.RawMessage
	if err := json.Unmarshal(sent, &got); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(clientBody), &want); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"response_format", "reasoning_effort", "seed", "x_unknown_future_field", "model"} {
		if !bytes.Equal(got[k], want[k]) {
			t.Errorf("%s sent as %s, client wrote %s", k, got[k], want[k])
		}
	}
	if _, ok := got["stream"]; ok {
		t.Errorf("a non-streamed call sent stream: %s", sent)
	}
	for _, k := range []string{"messages", "tools"} {
		var g, w []json.RawMessage
		_ = json.Unmarshal(got[k], &g)
		_ = json.Unmarshal(want[k], &w)
		if len(g) != len(w) {
			t.Fatalf("%s: sent %d, client wrote %d\n%s", k, len(g), len(w), sent)
		}
		for i := range w {
			if !bytes.Equal(g[i], w[i]) {
				t.Errorf("%s[%d] sent as\n%s\nclient wrote\n%s", k, i, g[i], w[i])
			}
		}
	}

	// The answer goes back with the upstream's fields.
	res := &dialect.Result{Model: call.Request.Model, Text: []string{resp.Message.Content}, Stop: resp.StopReason, Usage: resp.Usage, Wire: wire, WholeWire: true}
	b, err := chat.New().Encode(call, res)
	if err != nil {
		t.Fatal(err)
	}
	fakeapi.AssertJSON(t, b, `{"id":"chatcmpl-U","object":"chat.completion","created":1761000000,"model":"gpt-4o","system_fingerprint":"fp_x",
	  "choices":[{"index":0,"message":{"role":"assistant","content":"{\"answer\":\"a cat\"}","refusal":null,"annotations":[]},"logprobs":null,"finish_reason":"stop"}],
	  "usage":{"prompt_tokens":90,"completion_tokens":8,"total_tokens":98}}`)
}

// TestHookChangesReachTheUpstream checks the other half: what a hook
// changed is sent as changed, what it left alone is sent as written.
func TestHookChangesReachTheUpstream(t *testing.T) {
	f := fakeapi.New(t, fakeapi.JSON(200, `{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}`))
	p, err := openai.New(openai.Config{BaseURL: f.URL() + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	call := decode(t, clientBody)
	req := call.Request
	req.System = "be very brief"
	req.Messages = append([]hooks.Message(nil), req.Messages...)
	req.Messages[2].Content = "[redacted]"
	if _, _, err := p.Forward(context.Background(), req, call.Pass, nil); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Messages []json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal(f.Requests()[0].Body, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Messages) != 4 {
		t.Fatalf("messages = %s", got.Messages)
	}
	fakeapi.AssertJSON(t, got.Messages[0], `{"role":"system","content":"be very brief"}`)
	if !bytes.Contains(got.Messages[1], []byte(`"image_url"`)) {
		t.Errorf("the untouched user message lost its image: %s", got.Messages[1])
	}
	fakeapi.AssertJSON(t, got.Messages[3], `{"role":"tool","tool_call_id":"call_1","content":"[redacted]"}`)
}
