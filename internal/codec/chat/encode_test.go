package chat_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/codec/chat"
	"github.com/hookhost/hookhost/internal/dialect"
	"github.com/hookhost/hookhost/internal/fakeapi"
	"github.com/hookhost/hookhost/internal/upstream"
)

const plainReq = `{"model":"gpt-4.1-mini","messages":[{"role":"user","content":"hi"}]}`

// encodeJSON encodes res and returns the body with a generated id and
// created checked and then replaced by fixed values, for comparison.
func encodeJSON(t *testing.T, res *dialect.Result) string {
	t.Helper()
	b, err := chat.New().Encode(decode(t, plainReq), res)
	if err != nil {
		t.Fatal(err)
	}
	var top map[string]any
	if err := json.Unmarshal(b, &top); err != nil {
		t.Fatalf("body is not JSON: %v\n%s", err, b)
	}
	if id, _ := top["id"].(string); !strings.HasPrefix(id, "chatcmpl-") {
		t.Errorf("id = %v", top["id"])
	}
	if c, _ := top["created"].(float64); c < 1e9 {
		t.Errorf("created = %v", top["created"])
	}
	top["id"], top["created"] = "ID", 0
	out, _ := json.Marshal(top)
	return string(out)
}

func TestEncodeGolden(t *testing.T) {
	cases := []struct {
		name string
		res  dialect.Result
		want string
	}{
		{"text over rounds", dialect.Result{Model: "gpt-4.1-mini", Text: []string{"Let me check. ", "It is sunny."}, Stop: hooks.StopEndTurn,
			Usage: hooks.Usage{InputTokens: 70, OutputTokens: 20}},
			`{"id":"ID","object":"chat.completion","created":0,"model":"gpt-4.1-mini",
			  "choices":[{"index":0,"message":{"role":"assistant","content":"Let me check. It is sunny."},"finish_reason":"stop","logprobs":null}],
			  "usage":{"prompt_tokens":70,"completion_tokens":20,"total_tokens":90}}`},
		{"client tool calls", dialect.Result{Model: "gpt-4.1-mini", Stop: hooks.StopToolUse,
			ToolCalls: []hooks.ToolCall{{ID: "call_1", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)}, {ID: "call_2", Name: "now", Arguments: json.RawMessage(`{`)}, {ID: "call_3", Name: "now"}},
			Usage:     hooks.Usage{InputTokens: 5, OutputTokens: 6}},
			`{"id":"ID","object":"chat.completion","created":0,"model":"gpt-4.1-mini",
			  "choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[
			    {"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}},
			    {"id":"call_2","type":"function","function":{"name":"now","arguments":"{"}},
			    {"id":"call_3","type":"function","function":{"name":"now","arguments":"{}"}}]},"finish_reason":"tool_calls","logprobs":null}],
			  "usage":{"prompt_tokens":5,"completion_tokens":6,"total_tokens":11}}`},
		{"max tokens", dialect.Result{Model: "m", Text: []string{"cut"}, Stop: hooks.StopMaxTokens},
			`{"id":"ID","object":"chat.completion","created":0,"model":"m",
			  "choices":[{"index":0,"message":{"role":"assistant","content":"cut"},"finish_reason":"length","logprobs":null}],
			  "usage":{"prompt_tokens":0,"completion_tokens":0,"total_tokens":0}}`},
		{"refusal", dialect.Result{Model: "m", Text: []string{"no"}, Stop: hooks.StopRefusal},
			`{"id":"ID","object":"chat.completion","created":0,"model":"m",
			  "choices":[{"index":0,"message":{"role":"assistant","content":"no"},"finish_reason":"content_filter","logprobs":null}],
			  "usage":{"prompt_tokens":0,"completion_tokens":0,"total_tokens":0}}`},
		{"other stop", dialect.Result{Model: "m", Text: []string{"x"}, Stop: hooks.StopOther},
			`{"id":"ID","object":"chat.completion","created":0,"model":"m",
			  "choices":[{"index":0,"message":{"role":"assistant","content":"x"},"finish_reason":"stop","logprobs":null}],
			  "usage":{"prompt_tokens":0,"completion_tokens":0,"total_tokens":0}}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fakeapi.AssertJSON(t, []byte(encodeJSON(t, &c.res)), c.want)
		})
	}
}

// upstream is an OpenAI response's wire form as the forwarding adapter
// returns it.
func upstreamWire() *upstream.WireResponse {
	return &upstream.WireResponse{
		Fields: map[string]json.RawMessage{
			"id": json.RawMessage(`"chatcmpl-UP1"`), "object": json.RawMessage(`"chat.completion"`), "created": json.RawMessage(`1761000000`),
			"model": json.RawMessage(`"gpt-4.1-mini-2025-04-14"`), "system_fingerprint": json.RawMessage(`"fp_1"`), "service_tier": json.RawMessage(`"default"`),
			"usage":  json.RawMessage(`{"prompt_tokens":31,"completion_tokens":7,"total_tokens":38,"prompt_tokens_details":{"cached_tokens":16}}`),
			"choice": json.RawMessage(`{"index":0,"finish_reason":"stop","logprobs":{"content":[]}}`),
		},
		Message: []json.RawMessage{json.RawMessage(`{"role":"assistant","content":"It is sunny.","refusal":null,"annotations":[{"type":"url_citation","url_citation":{"url":"https://x.test"}}]}`)},
	}
}

func TestEncodeKeepsTheUpstreamsFields(t *testing.T) {
	res := &dialect.Result{Model: "gpt-4.1-mini", Text: []string{"It is sunny."}, Stop: hooks.StopEndTurn,
		Usage: hooks.Usage{InputTokens: 31, OutputTokens: 7}, Wire: upstreamWire(), WholeWire: true}
	b, err := chat.New().Encode(decode(t, plainReq), res)
	if err != nil {
		t.Fatal(err)
	}
	fakeapi.AssertJSON(t, b, `{"id":"chatcmpl-UP1","object":"chat.completion","created":1761000000,"model":"gpt-4.1-mini",
	  "system_fingerprint":"fp_1","service_tier":"default",
	  "choices":[{"index":0,"message":{"role":"assistant","content":"It is sunny.","refusal":null,
	    "annotations":[{"type":"url_citation","url_citation":{"url":"https://x.test"}}]},"finish_reason":"stop","logprobs":{"content":[]}}],
	  "usage":{"prompt_tokens":31,"completion_tokens":7,"total_tokens":38,"prompt_tokens_details":{"cached_tokens":16}}}`)

	// Several rounds: the message is the loop's, the usage its sum, and
	// only the top-level fields come from the last round.
	res = &dialect.Result{Model: "gpt-4.1-mini", Text: []string{"Checking. ", "It is sunny."}, Stop: hooks.StopEndTurn,
		Usage: hooks.Usage{InputTokens: 60, OutputTokens: 20}, Wire: upstreamWire()}
	b, err = chat.New().Encode(decode(t, plainReq), res)
	if err != nil {
		t.Fatal(err)
	}
	fakeapi.AssertJSON(t, b, `{"id":"chatcmpl-UP1","object":"chat.completion","created":1761000000,"model":"gpt-4.1-mini",
	  "system_fingerprint":"fp_1","service_tier":"default",
	  "choices":[{"index":0,"message":{"role":"assistant","content":"Checking. It is sunny."},"finish_reason":"stop","logprobs":null}],
	  "usage":{"prompt_tokens":60,"completion_tokens":20,"total_tokens":80}}`)
}

func TestEncodeKeepsAnUpstreamRefusal(t *testing.T) {
	w := upstreamWire()
	w.Message[0] = json.RawMessage(`{"role":"assistant","content":null,"refusal":"I can't help with that."}`)
	res := &dialect.Result{Model: "m", Text: []string{"I can't help with that."}, Stop: hooks.StopRefusal, Wire: w, WholeWire: true}
	b, err := chat.New().Encode(decode(t, plainReq), res)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Choices []struct {
			Message      map[string]any `json:"message"`
			FinishReason string         `json:"finish_reason"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"role": "assistant", "content": nil, "refusal": "I can't help with that."}
	if !reflect.DeepEqual(got.Choices[0].Message, want) || got.Choices[0].FinishReason != "content_filter" {
		t.Errorf("choice = %+v", got.Choices[0])
	}
}

func TestEncodeWithoutAResultFails(t *testing.T) {
	if b, err := chat.New().Encode(nil, nil); err == nil {
		t.Errorf("Encode(nil) = %s, want an error", b)
	}
}
