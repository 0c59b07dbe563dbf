package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/fakeapi"
	"github.com/hookhost/hookhost/llm"
	"github.com/hookhost/hookhost/llm/openai"
)

var weatherTool = hooks.ToolSpec{
	Name:        "get_weather",
	Description: "Current weather for a city",
	InputSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`),
}

const weatherToolChat = `{"type":"function","function":{"name":"get_weather","description":"Current weather for a city",
	"parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}`

func userReq(text string) llm.Request {
	return llm.Request{
		Model: "gpt-4.1-mini", System: "be brief",
		Messages: []hooks.Message{{Role: hooks.RoleUser, Content: text}},
		Tools:    []hooks.ToolSpec{weatherTool},
	}
}

// Recorded-shape Chat Completions responses.
const (
	chatText = `{"id":"chatcmpl-AbC1","object":"chat.completion","created":1761000000,"model":"gpt-4.1-mini-2025-04-14",
		"choices":[{"index":0,"message":{"role":"assistant","content":"It is sunny in Paris.","refusal":null,"annotations":[]},
		"logprobs":null,"finish_reason":"stop"}],
		"usage":{"prompt_tokens":31,"completion_tokens":7,"total_tokens":38,
		"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}},
		"service_tier":"default","system_fingerprint":"fp_1a2b3c"}`
	chatOneCall = `{"id":"chatcmpl-AbC2","object":"chat.completion","created":1761000001,"model":"gpt-4.1-mini-2025-04-14",
		"choices":[{"index":0,"message":{"role":"assistant","content":null,"refusal":null,"annotations":[],
		"tool_calls":[{"id":"call_W1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},
		"logprobs":null,"finish_reason":"tool_calls"}],
		"usage":{"prompt_tokens":40,"completion_tokens":15,"total_tokens":55}}`
	chatParallel = `{"id":"chatcmpl-AbC3","object":"chat.completion","created":1761000002,"model":"gpt-4.1-mini-2025-04-14",
		"choices":[{"index":0,"message":{"role":"assistant","content":"Checking both.","refusal":null,
		"tool_calls":[
		 {"id":"call_P1","type":"function","function":{"name":"get_weather","arguments":"{\"city\": \"Paris\"}"}},
		 {"id":"call_P2","type":"function","function":{"name":"get_weather","arguments":"{\"city\": \"Oslo\"}"}}]},
		"finish_reason":"tool_calls"}],
		"usage":{"prompt_tokens":40,"completion_tokens":30,"total_tokens":70}}`
	chatBadArgs = `{"id":"chatcmpl-AbC4","object":"chat.completion","created":1761000003,"model":"gpt-4.1-mini",
		"choices":[{"index":0,"message":{"role":"assistant","content":null,
		"tool_calls":[{"id":"call_B1","type":"function","function":{"name":"get_weather","arguments":"{\"city\": \"Par"}}]},
		"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":40,"completion_tokens":9,"total_tokens":49}}`
)

func TestChatTextRequestAndResponse(t *testing.T) {
	f := newFake(t, jsonReply(200, chatText))
	temp := 0.2
	p := newProvider(t, f, openai.Config{APIKey: testKey, Temperature: &temp, Headers: map[string]string{"OpenAI-Project": "proj_1"}})
	resp, err := p.Complete(context.Background(), userReq("weather in Paris?"))
	if err != nil {
		t.Fatal(err)
	}
	want := llm.Response{
		Model:      "gpt-4.1-mini-2025-04-14",
		Message:    hooks.Message{Role: hooks.RoleAssistant, Content: "It is sunny in Paris."},
		Usage:      hooks.Usage{InputTokens: 31, OutputTokens: 7},
		StopReason: hooks.StopEndTurn,
	}
	if !reflect.DeepEqual(resp, want) {
		t.Errorf("response = %+v\nwant %+v", resp, want)
	}
	r := f.Requests()[0]
	if r.Method != "POST" || r.Path != "/v1/chat/completions" {
		t.Errorf("request = %s %s", r.Method, r.Path)
	}
	for k, v := range map[string]string{
		"Authorization": "Bearer " + testKey, "Content-Type": "application/json",
		"Accept": "application/json", "Openai-Project": "proj_1",
	} {
		if got := r.Header.Get(k); got != v {
			t.Errorf("header %s = %q, want %q", k, got, v)
		}
	}
	assertJSON(t, r.Body, `{"model":"gpt-4.1-mini","temperature":0.2,
		"messages":[{"role":"system","content":"be brief"},{"role":"user","content":"weather in Paris?"}],
		"tools":[`+weatherToolChat+`]}`)
}

func TestChatToolCalls(t *testing.T) {
	tests := []struct {
		name    string
		fixture string
		want    llm.Response
	}{
		{"single", chatOneCall, llm.Response{
			Model: "gpt-4.1-mini-2025-04-14", StopReason: hooks.StopToolUse, Usage: hooks.Usage{InputTokens: 40, OutputTokens: 15},
			Message: hooks.Message{Role: hooks.RoleAssistant, ToolCalls: []hooks.ToolCall{
				{ID: "call_W1", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)},
			}},
		}},
		{"parallel", chatParallel, llm.Response{
			Model: "gpt-4.1-mini-2025-04-14", StopReason: hooks.StopToolUse, Usage: hooks.Usage{InputTokens: 40, OutputTokens: 30},
			Message: hooks.Message{Role: hooks.RoleAssistant, Content: "Checking both.", ToolCalls: []hooks.ToolCall{
				{ID: "call_P1", Name: "get_weather", Arguments: json.RawMessage(`{"city": "Paris"}`)},
				{ID: "call_P2", Name: "get_weather", Arguments: json.RawMessage(`{"city": "Oslo"}`)},
			}},
		}},
		{"invalid JSON arguments pass through", chatBadArgs, llm.Response{
			Model: "gpt-4.1-mini", StopReason: hooks.StopToolUse, Usage: hooks.Usage{InputTokens: 40, OutputTokens: 9},
			Message: hooks.Message{Role: hooks.RoleAssistant, ToolCalls: []hooks.ToolCall{
				{ID: "call_B1", Name: "get_weather", Arguments: json.RawMessage(`{"city": "Par`)},
			}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t, jsonReply(200, tt.fixture))
			resp, err := newProvider(t, f, openai.Config{}).Complete(context.Background(), userReq("weather?"))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(resp, tt.want) {
				t.Errorf("response = %+v\nwant %+v", resp, tt.want)
			}
		})
	}
}

// historyReq is a conversation after a round of tool calls: one with
// arguments that are not JSON, one whose result was an error, one to a
// dotted tool id.
func historyReq() llm.Request {
	return llm.Request{
		Model: "gpt-4.1-mini", System: "be brief",
		Tools: []hooks.ToolSpec{weatherTool, {Name: "files.read", Description: "Reads a file"}},
		Messages: []hooks.Message{
			{Role: hooks.RoleUser, Content: "weather and notes?"},
			{Role: hooks.RoleAssistant, ToolCalls: []hooks.ToolCall{
				{ID: "call_1", Name: "get_weather", Arguments: json.RawMessage(`{"city": "Par`)},
				{ID: "call_2", Name: "files.read", Arguments: json.RawMessage(`{"path":"notes.txt"}`)},
			}},
			{Role: hooks.RoleTool, ToolCallID: "call_1", ToolName: "get_weather", Content: `{"error":"arguments are not a valid JSON object"}`, IsError: true},
			{Role: hooks.RoleTool, ToolCallID: "call_2", ToolName: "files.read", Content: `{"text":"buy milk"}`},
			{Role: hooks.RoleAssistant, Content: "Your notes say: buy milk."},
			{Role: hooks.RoleUser, Content: "thanks"},
		},
	}
}

func TestChatHistoryOnTheWire(t *testing.T) {
	reply := `{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"finish_reason":"tool_calls",
		"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_3","type":"function","function":{"name":"files__read","arguments":"{}"}}]}}]}`
	f := newFake(t, jsonReply(200, reply))
	resp, err := newProvider(t, f, openai.Config{}).Complete(context.Background(), historyReq())
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.Message.ToolCalls[0].Name; got != "files.read" {
		t.Errorf("called tool %q, want the wire name mapped back to files.read", got)
	}
	if resp.Usage != (hooks.Usage{}) {
		t.Errorf("usage = %+v, want zero when the server sends none", resp.Usage)
	}
	assertJSON(t, f.Requests()[0].Body, `{"model":"gpt-4.1-mini",
		"messages":[
		 {"role":"system","content":"be brief"},
		 {"role":"user","content":"weather and notes?"},
		 {"role":"assistant","content":null,"tool_calls":[
		  {"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\": \"Par"}},
		  {"id":"call_2","type":"function","function":{"name":"files__read","arguments":"{\"path\":\"notes.txt\"}"}}]},
		 {"role":"tool","tool_call_id":"call_1","content":"{\"error\":\"arguments are not a valid JSON object\"}"},
		 {"role":"tool","tool_call_id":"call_2","content":"{\"text\":\"buy milk\"}"},
		 {"role":"assistant","content":"Your notes say: buy milk."},
		 {"role":"user","content":"thanks"}],
		"tools":[`+weatherToolChat+`,
		 {"type":"function","function":{"name":"files__read","description":"Reads a file","parameters":{"type":"object","properties":{}}}}]}`)
}

func TestChatMaxTokensField(t *testing.T) {
	f := newFake(t, jsonReply(200, chatText), jsonReply(200, chatText))
	official := newProvider(t, f, openai.Config{BaseURL: "https://api.openai.com/v1", MaxTokens: 100, HTTPClient: f.Redirect()})
	local := newProvider(t, f, openai.Config{MaxTokens: 100})
	req := llm.Request{Model: "m", Messages: []hooks.Message{{Role: hooks.RoleUser, Content: "hi"}}}
	if _, err := official.Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	req.MaxTokens = 50 // the request's own limit wins over the config's
	if _, err := local.Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	reqs := f.Requests()
	assertJSON(t, reqs[0].Body, `{"model":"m","max_completion_tokens":100,"messages":[{"role":"user","content":"hi"}]}`)
	assertJSON(t, reqs[1].Body, `{"model":"m","max_tokens":50,"messages":[{"role":"user","content":"hi"}]}`)
	if reqs[1].Header.Get("Authorization") != "" {
		t.Errorf("Authorization sent without a key: %q", reqs[1].Header.Get("Authorization"))
	}
}

func TestChatErrors(t *testing.T) {
	t.Run("400 is reported, not retried", func(t *testing.T) {
		f := newFake(t, jsonReply(400, `{"error":{"message":"Invalid value for 'model'.","type":"invalid_request_error","param":"model","code":"invalid_value"}}`))
		_, err := newProvider(t, f, openai.Config{APIKey: testKey, MaxRetries: 2}).Complete(context.Background(), userReq("hi"))
		var pe *llm.ProviderError
		if !errors.As(err, &pe) || pe.Provider != "openai" || pe.StatusCode != 400 || pe.Type != "invalid_request_error" {
			t.Fatalf("err = %#v", err)
		}
		if want := "provider openai: HTTP 400 invalid_request_error: Invalid value for 'model'."; err.Error() != want {
			t.Errorf("err = %q, want %q", err, want)
		}
		if n := len(f.Requests()); n != 1 {
			t.Errorf("%d requests, want 1", n)
		}
	})
	t.Run("the key never shows", func(t *testing.T) {
		f := newFake(t, jsonReply(401, `{"error":{"message":"Incorrect API key provided: `+testKey+`.","type":"invalid_request_error","code":"invalid_api_key"}}`))
		_, err := newProvider(t, f, openai.Config{APIKey: testKey}).Complete(context.Background(), userReq("hi"))
		if err == nil || strings.Contains(err.Error(), testKey) || !strings.Contains(err.Error(), "HTTP 401") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("429 with retry-after, then success", func(t *testing.T) {
		f := newFake(t,
			jsonReply(429, `{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`, "Retry-After", "1"),
			jsonReply(200, chatText))
		sl := &fakeapi.Sleeper{}
		resp, err := newProvider(t, f, openai.Config{MaxRetries: 2, Sleep: sl.Sleep}).Complete(context.Background(), userReq("hi"))
		if err != nil || resp.Message.Content != "It is sunny in Paris." {
			t.Fatalf("resp = %+v, err = %v", resp, err)
		}
		reqs := f.Requests()
		if len(reqs) != 2 || string(reqs[0].Body) != string(reqs[1].Body) {
			t.Errorf("%d requests, want 2 identical", len(reqs))
		}
		if !reflect.DeepEqual(sl.Waits(), []time.Duration{time.Second}) {
			t.Errorf("waits = %v, want [1s]", sl.Waits())
		}
	})
	t.Run("500 three times, then give up", func(t *testing.T) {
		boom := jsonReply(500, `{"error":{"message":"The server had an error","type":"server_error"}}`)
		f := newFake(t, boom, boom, boom, boom)
		sl := &fakeapi.Sleeper{}
		_, err := newProvider(t, f, openai.Config{MaxRetries: 2, Sleep: sl.Sleep}).Complete(context.Background(), userReq("hi"))
		var pe *llm.ProviderError
		if !errors.As(err, &pe) || pe.StatusCode != 500 || pe.Type != "server_error" || !strings.Contains(err.Error(), "gave up after 3 attempts") {
			t.Errorf("err = %v", err)
		}
		if n := len(f.Requests()); n != 3 || len(sl.Waits()) != 2 {
			t.Errorf("%d requests and %d waits, want 3 and 2", n, len(sl.Waits()))
		}
	})
	t.Run("not a completion", func(t *testing.T) {
		f := newFake(t, jsonReply(200, `{"id":"x","object":"chat.completion","choices":[]}`))
		_, err := newProvider(t, f, openai.Config{}).Complete(context.Background(), userReq("hi"))
		if err == nil || !strings.Contains(err.Error(), "no choices") {
			t.Errorf("err = %v", err)
		}
	})
}

func TestChatStopReasons(t *testing.T) {
	for reason, want := range map[string]hooks.StopReason{
		"stop": hooks.StopEndTurn, "length": hooks.StopMaxTokens, "content_filter": hooks.StopRefusal,
		"tool_calls": hooks.StopToolUse, "weird": hooks.StopOther,
	} {
		f := newFake(t, jsonReply(200, `{"model":"m","choices":[{"index":0,"finish_reason":"`+reason+`","message":{"role":"assistant","content":"x"}}]}`))
		resp, err := newProvider(t, f, openai.Config{}).Complete(context.Background(), userReq("hi"))
		if err != nil || resp.StopReason != want {
			t.Errorf("finish_reason %s: stop = %q, err %v; want %q", reason, resp.StopReason, err, want)
		}
	}
	f := newFake(t, jsonReply(200, `{"model":"m","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":null,"refusal":"I can't help with that."}}]}`))
	resp, err := newProvider(t, f, openai.Config{}).Complete(context.Background(), userReq("hi"))
	if err != nil || resp.StopReason != hooks.StopRefusal || resp.Message.Content != "I can't help with that." {
		t.Errorf("refusal = %+v, %v", resp, err)
	}
}

// Streams of the same model output as the non-streaming fixtures above.
var (
	chatTextStream = []string{
		data(`{"id":"chatcmpl-AbC1","object":"chat.completion.chunk","created":1761000000,"model":"gpt-4.1-mini-2025-04-14","choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"finish_reason":null}],"usage":null}`),
		": keepalive\n\n",
		data(`{"id":"chatcmpl-AbC1","object":"chat.completion.chunk","created":1761000000,"model":"gpt-4.1-mini-2025-04-14","choices":[{"index":0,"delta":{"content":"It is "},"finish_reason":null}],"usage":null}`),
		data(`{"id":"chatcmpl-AbC1","object":"chat.completion.chunk","created":1761000000,"model":"gpt-4.1-mini-2025-04-14","choices":[{"index":0,"delta":{"content":"sunny in Paris."},"finish_reason":null}],"usage":null}`),
		data(`{"id":"chatcmpl-AbC1","object":"chat.completion.chunk","created":1761000000,"model":"gpt-4.1-mini-2025-04-14","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":null}`),
		data(`{"id":"chatcmpl-AbC1","object":"chat.completion.chunk","created":1761000000,"model":"gpt-4.1-mini-2025-04-14","choices":[],"usage":{"prompt_tokens":31,"completion_tokens":7,"total_tokens":38}}`),
		data(`[DONE]`),
	}
	chatParallelStream = []string{
		data(`{"id":"chatcmpl-AbC3","object":"chat.completion.chunk","created":1761000002,"model":"gpt-4.1-mini-2025-04-14","choices":[{"index":0,"delta":{"role":"assistant","content":"Checking "},"finish_reason":null}]}`),
		data(`{"id":"chatcmpl-AbC3","object":"chat.completion.chunk","created":1761000002,"model":"gpt-4.1-mini-2025-04-14","choices":[{"index":0,"delta":{"content":"both."},"finish_reason":null}]}`),
		data(`{"id":"chatcmpl-AbC3","object":"chat.completion.chunk","created":1761000002,"model":"gpt-4.1-mini-2025-04-14","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_P1","type":"function","function":{"name":"get_weather","arguments":""}}]},"finish_reason":null}]}`),
		data(`{"id":"chatcmpl-AbC3","object":"chat.completion.chunk","created":1761000002,"model":"gpt-4.1-mini-2025-04-14","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"ci"}}]},"finish_reason":null}]}`),
		data(`{"id":"chatcmpl-AbC3","object":"chat.completion.chunk","created":1761000002,"model":"gpt-4.1-mini-2025-04-14","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_P2","type":"function","function":{"name":"get_weather","arguments":"{\"city\""}}]},"finish_reason":null}]}`),
		data(`{"id":"chatcmpl-AbC3","object":"chat.completion.chunk","created":1761000002,"model":"gpt-4.1-mini-2025-04-14","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"ty\": \"Paris\"}"}}]},"finish_reason":null}]}`),
		data(`{"id":"chatcmpl-AbC3","object":"chat.completion.chunk","created":1761000002,"model":"gpt-4.1-mini-2025-04-14","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":": \"Oslo\"}"}}]},"finish_reason":null}]}`),
		data(`{"id":"chatcmpl-AbC3","object":"chat.completion.chunk","created":1761000002,"model":"gpt-4.1-mini-2025-04-14","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`),
		data(`{"id":"chatcmpl-AbC3","object":"chat.completion.chunk","created":1761000002,"model":"gpt-4.1-mini-2025-04-14","choices":[],"usage":{"prompt_tokens":40,"completion_tokens":30,"total_tokens":70}}`),
		data(`[DONE]`),
	}
)

func TestChatStreamEqualsComplete(t *testing.T) {
	tests := []struct {
		name   string
		whole  string
		stream []string
		text   []string
	}{
		{"text", chatText, chatTextStream, []string{"It is ", "sunny in Paris."}},
		{"parallel tool calls with fragmented arguments", chatParallel, chatParallelStream, []string{"Checking ", "both."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t, jsonReply(200, tt.whole), sseReply(tt.stream...))
			p := newProvider(t, f, openai.Config{APIKey: testKey})
			whole, err := p.Complete(context.Background(), userReq("hi"))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			streamed, err := p.Stream(context.Background(), userReq("hi"), func(d string) { got = append(got, d) })
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(streamed, whole) {
				t.Errorf("streamed = %+v\nwhole    = %+v", streamed, whole)
			}
			if !reflect.DeepEqual(got, tt.text) {
				t.Errorf("text deltas = %q, want %q", got, tt.text)
			}
			r := f.Requests()[1]
			if r.Header.Get("Accept") != "text/event-stream" {
				t.Errorf("Accept = %q", r.Header.Get("Accept"))
			}
			assertJSON(t, r.Body, `{"model":"gpt-4.1-mini","stream":true,"stream_options":{"include_usage":true},
				"messages":[{"role":"system","content":"be brief"},{"role":"user","content":"hi"}],
				"tools":[`+weatherToolChat+`]}`)
		})
	}
}

func TestChatStreamFailures(t *testing.T) {
	tests := []struct {
		name   string
		frames []string
		want   string
	}{
		{"cut before the end", chatParallelStream[:5], "stream ended before the answer was finished"},
		{"cut inside a chunk", append(append([]string(nil), chatTextStream[:3]...), `data: {"id":"chatcmpl-AbC1","choices":[{"ind`), "stream ended before the answer was finished"},
		{"no [DONE]", chatTextStream[:6], "without its [DONE] marker"},
		{"[DONE] without a finish_reason", append(append([]string(nil), chatTextStream[:3]...), data(`[DONE]`)), "no finish_reason"},
		{"error chunk", append(append([]string(nil), chatTextStream[:2]...), data(`{"error":{"message":"The server had an error while processing your request.","type":"server_error"}}`)), "provider openai server_error: error in stream: The server had an error"},
		{"garbage", []string{data(`{not json`)}, "stream chunk is not JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t, sseReply(tt.frames...))
			_, err := newProvider(t, f, openai.Config{}).Stream(context.Background(), userReq("hi"), nil)
			var pe *llm.ProviderError
			if !errors.As(err, &pe) || pe.Provider != "openai" || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want a ProviderError containing %q", err, tt.want)
			}
		})
	}
}

func TestStreamErrorStatusIsRetried(t *testing.T) {
	f := newFake(t,
		jsonReply(503, `{"error":{"message":"overloaded","type":"server_error"}}`),
		sseReply(chatTextStream...))
	resp, err := newProvider(t, f, openai.Config{MaxRetries: 1}).Stream(context.Background(), userReq("hi"), nil)
	if err != nil || resp.Message.Content != "It is sunny in Paris." {
		t.Errorf("resp = %+v, err = %v", resp, err)
	}
}

func TestStreamCancel(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	f := newFake(t, func(w http.ResponseWriter, _ fakeapi.Seen) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, fr := range chatTextStream[:3] {
			w.Write([]byte(fr))
		}
		w.(http.Flusher).Flush()
		<-release
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := newProvider(t, f, openai.Config{}).Stream(ctx, userReq("hi"), func(string) { cancel() })
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Stream did not return after cancel")
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	for _, cfg := range []openai.Config{
		{API: "completions"},
		{BaseURL: "localhost:11434"},
		{MaxRetries: -1},
	} {
		if _, err := openai.New(cfg); err == nil || !strings.HasPrefix(err.Error(), "provider openai: ") {
			t.Errorf("New(%+v) = %v, want an error", cfg, err)
		}
	}
}

func TestChatToolNameCollision(t *testing.T) {
	f := newFake(t)
	req := userReq("hi")
	req.Tools = append(req.Tools, hooks.ToolSpec{Name: "files.read"}, hooks.ToolSpec{Name: "files__read"})
	_, err := newProvider(t, f, openai.Config{}).Complete(context.Background(), req)
	if err == nil || !strings.Contains(err.Error(), `tools "files.read" and "files__read" both become "files__read"`) {
		t.Errorf("err = %v", err)
	}
	if n := len(f.Requests()); n != 0 {
		t.Errorf("%d requests sent, want none", n)
	}
}

// Some compatible servers send tool arguments as a JSON object rather than
// a string holding one.
func TestChatArgumentsAsObject(t *testing.T) {
	f := newFake(t, jsonReply(200, `{"model":"llama3.2","choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":"",
		"tool_calls":[{"id":"call_0","type":"function","function":{"name":"get_weather","arguments":{"city":"Paris"}}}]}}]}`))
	resp, err := newProvider(t, f, openai.Config{}).Complete(context.Background(), userReq("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if c := resp.Message.ToolCalls; len(c) != 1 || string(c[0].Arguments) != `{"city":"Paris"}` || resp.Message.Content != "" {
		t.Errorf("message = %+v", resp.Message)
	}
	if r := f.Requests()[0]; r.Header.Get("User-Agent") != "hookhost" {
		t.Errorf("User-Agent = %q", r.Header.Get("User-Agent"))
	}
}
