package anthropic_test

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
	"github.com/hookhost/hookhost/internal/upstream/history"
	"github.com/hookhost/hookhost/llm"
	"github.com/hookhost/hookhost/llm/anthropic"
)

const testKey = "sk-ant-test-9c8b7a6f5e"

var (
	jsonReply  = fakeapi.JSON
	sseReply   = fakeapi.SSE
	named      = fakeapi.Named
	assertJSON = fakeapi.AssertJSON
	quote      = fakeapi.Quote
	itoa       = fakeapi.Itoa
)

func newProvider(t *testing.T, f *fakeapi.Server, cfg anthropic.Config) *anthropic.Provider {
	t.Helper()
	if cfg.BaseURL == "" {
		cfg.BaseURL = f.URL()
	}
	if cfg.Sleep == nil {
		cfg.Sleep = (&fakeapi.Sleeper{}).Sleep
	}
	p, err := anthropic.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

var weatherTool = hooks.ToolSpec{
	Name:        "get_weather",
	Description: "Current weather for a city",
	InputSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`),
}

const weatherToolWire = `{"name":"get_weather","description":"Current weather for a city",
	"input_schema":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}`

func userReq(text string) llm.Request {
	return llm.Request{
		Model: "claude-sonnet-4-5", System: "be brief",
		Messages: []hooks.Message{{Role: hooks.RoleUser, Content: text}},
		Tools:    []hooks.ToolSpec{weatherTool},
	}
}

// Recorded-shape Messages API responses.
const (
	msgText = `{"id":"msg_01XFDUDYJgAACzvnptvVoYEL","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929",
		"content":[{"type":"text","text":"It is sunny in Paris."}],"stop_reason":"end_turn","stop_sequence":null,
		"usage":{"input_tokens":31,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":7,"service_tier":"standard"}}`
	msgOneCall = `{"id":"msg_02","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929",
		"content":[{"type":"tool_use","id":"toolu_01A","name":"get_weather","input":{"city":"Paris"}}],
		"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":40,"output_tokens":15}}`
	msgParallel = `{"id":"msg_03","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929",
		"content":[{"type":"text","text":"I'll check both cities."},
		 {"type":"tool_use","id":"toolu_01A","name":"get_weather","input":{"city":"Paris"}},
		 {"type":"tool_use","id":"toolu_01B","name":"get_weather","input":{"city":"Oslo"}}],
		"stop_reason":"tool_use","stop_sequence":null,
		"usage":{"input_tokens":40,"cache_creation_input_tokens":100,"cache_read_input_tokens":1000,"output_tokens":30}}`
)

func TestTextRequestAndResponse(t *testing.T) {
	f := fakeapi.New(t, jsonReply(200, msgText))
	temp := 0.5
	p := newProvider(t, f, anthropic.Config{APIKey: testKey, Temperature: &temp, Headers: map[string]string{"anthropic-beta": "x-2025"}})
	if p.Name() != "anthropic" {
		t.Errorf("Name() = %q", p.Name())
	}
	resp, err := p.Complete(context.Background(), userReq("weather in Paris?"))
	if err != nil {
		t.Fatal(err)
	}
	want := llm.Response{
		Model:      "claude-sonnet-4-5-20250929",
		Message:    hooks.Message{Role: hooks.RoleAssistant, Content: "It is sunny in Paris."},
		Usage:      hooks.Usage{InputTokens: 31, OutputTokens: 7},
		StopReason: hooks.StopEndTurn,
	}
	if !reflect.DeepEqual(resp, want) {
		t.Errorf("response = %+v\nwant %+v", resp, want)
	}
	r := f.Requests()[0]
	if r.Method != "POST" || r.Path != "/v1/messages" {
		t.Errorf("request = %s %s", r.Method, r.Path)
	}
	for k, v := range map[string]string{
		"x-api-key": testKey, "anthropic-version": "2023-06-01", "Content-Type": "application/json",
		"Accept": "application/json", "anthropic-beta": "x-2025", "Authorization": "",
	} {
		if got := r.Header.Get(k); got != v {
			t.Errorf("header %s = %q, want %q", k, got, v)
		}
	}
	assertJSON(t, r.Body, `{"model":"claude-sonnet-4-5","max_tokens":1024,"system":"be brief","temperature":0.5,
		"messages":[{"role":"user","content":"weather in Paris?"}],"tools":[`+weatherToolWire+`]}`)
}

func TestToolUse(t *testing.T) {
	tests := []struct {
		name    string
		fixture string
		want    llm.Response
	}{
		{"single", msgOneCall, llm.Response{
			Model: "claude-sonnet-4-5-20250929", StopReason: hooks.StopToolUse, Usage: hooks.Usage{InputTokens: 40, OutputTokens: 15},
			Message: hooks.Message{Role: hooks.RoleAssistant, ToolCalls: []hooks.ToolCall{
				{ID: "toolu_01A", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)},
			}},
		}},
		{"parallel, with cache usage", msgParallel, llm.Response{
			Model: "claude-sonnet-4-5-20250929", StopReason: hooks.StopToolUse, Usage: hooks.Usage{InputTokens: 1140, OutputTokens: 30},
			Message: hooks.Message{Role: hooks.RoleAssistant, Content: "I'll check both cities.", ToolCalls: []hooks.ToolCall{
				{ID: "toolu_01A", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)},
				{ID: "toolu_01B", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Oslo"}`)},
			}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := fakeapi.New(t, jsonReply(200, tt.fixture))
			resp, err := newProvider(t, f, anthropic.Config{}).Complete(context.Background(), userReq("weather?"))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(resp, tt.want) {
				t.Errorf("response = %+v\nwant %+v", resp, tt.want)
			}
		})
	}
}

func TestStopReasons(t *testing.T) {
	for reason, want := range map[string]hooks.StopReason{
		"end_turn": hooks.StopEndTurn, "stop_sequence": hooks.StopEndTurn, "max_tokens": hooks.StopMaxTokens,
		"tool_use": hooks.StopToolUse, "refusal": hooks.StopRefusal, "pause_turn": hooks.StopOther,
	} {
		f := fakeapi.New(t, jsonReply(200, `{"type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"x"}],"stop_reason":"`+reason+`","usage":{"input_tokens":1,"output_tokens":1}}`))
		resp, err := newProvider(t, f, anthropic.Config{}).Complete(context.Background(), userReq("hi"))
		if err != nil || resp.StopReason != want {
			t.Errorf("stop_reason %s: %q, %v; want %q", reason, resp.StopReason, err, want)
		}
	}
}

// historyReq is a conversation after a round of tool calls: one with
// arguments that are not JSON, one whose result was an error, one to a
// dotted tool id, and a request-level temperature and token limit.
func historyReq() llm.Request {
	temp := 0.1
	return llm.Request{
		Model: "claude-sonnet-4-5", System: "be brief", MaxTokens: 300, Temperature: &temp,
		Tools: []hooks.ToolSpec{weatherTool, {Name: "files.read", Description: "Reads a file"}},
		Messages: []hooks.Message{
			{Role: hooks.RoleUser, Content: "weather and notes?"},
			{Role: hooks.RoleAssistant, Content: "Checking.", ToolCalls: []hooks.ToolCall{
				{ID: "toolu_1", Name: "get_weather", Arguments: json.RawMessage(`{"city": "Par`)},
				{ID: "toolu_2", Name: "files.read", Arguments: json.RawMessage(`{"path": "notes.txt"}`)},
				{ID: "toolu_3", Name: "get_weather", Arguments: nil},
			}},
			{Role: hooks.RoleTool, ToolCallID: "toolu_1", ToolName: "get_weather", Content: `{"error":"arguments are not a valid JSON object"}`, IsError: true},
			{Role: hooks.RoleTool, ToolCallID: "toolu_2", ToolName: "files.read", Content: `{"text":"buy milk"}`},
			{Role: hooks.RoleTool, ToolCallID: "toolu_3", ToolName: "get_weather", Content: ""},
			{Role: hooks.RoleAssistant, Content: "Your notes say: buy milk."},
			{Role: hooks.RoleUser, Content: "thanks"},
		},
	}
}

func TestHistoryOnTheWire(t *testing.T) {
	reply := `{"id":"m","type":"message","role":"assistant","model":"m","content":[{"type":"tool_use","id":"toolu_4","name":"files__read","input":{ "path" : "a" }}],"stop_reason":"tool_use","usage":{"input_tokens":1,"output_tokens":1}}`
	f := fakeapi.New(t, jsonReply(200, reply))
	resp, err := newProvider(t, f, anthropic.Config{Temperature: new(float64)}).Complete(context.Background(), historyReq())
	if err != nil {
		t.Fatal(err)
	}
	if c := resp.Message.ToolCalls[0]; c.Name != "files.read" || string(c.Arguments) != `{"path":"a"}` {
		t.Errorf("call = %s(%s), want files.read with compact arguments", c.Name, c.Arguments)
	}
	assertJSON(t, f.Requests()[0].Body, `{"model":"claude-sonnet-4-5","max_tokens":300,"system":"be brief","temperature":0.1,
		"messages":[
		 {"role":"user","content":"weather and notes?"},
		 {"role":"assistant","content":[
		  {"type":"text","text":"Checking."},
		  {"type":"tool_use","id":"toolu_1","name":"get_weather","input":{"invalid_arguments":"{\"city\": \"Par"}},
		  {"type":"tool_use","id":"toolu_2","name":"files__read","input":{"path":"notes.txt"}},
		  {"type":"tool_use","id":"toolu_3","name":"get_weather","input":{}}]},
		 {"role":"user","content":[
		  {"type":"tool_result","tool_use_id":"toolu_1","content":"{\"error\":\"arguments are not a valid JSON object\"}","is_error":true},
		  {"type":"tool_result","tool_use_id":"toolu_2","content":"{\"text\":\"buy milk\"}"},
		  {"type":"tool_result","tool_use_id":"toolu_3"}]},
		 {"role":"assistant","content":[{"type":"text","text":"Your notes say: buy milk."}]},
		 {"role":"user","content":"thanks"}],
		"tools":[`+weatherToolWire+`,{"name":"files__read","description":"Reads a file","input_schema":{"type":"object","properties":{}}}]}`)
}

// A turn cancelled between two tool calls leaves a call without a result;
// the next request must still be valid, with the results and the new
// question in one user message.
func TestCancelledTurnIsRepaired(t *testing.T) {
	f := fakeapi.New(t, jsonReply(200, msgText))
	req := llm.Request{Model: "m", Messages: []hooks.Message{
		{Role: hooks.RoleUser, Content: "q1"},
		{Role: hooks.RoleAssistant, ToolCalls: []hooks.ToolCall{{ID: "t1", Name: "a", Arguments: json.RawMessage(`{}`)}, {ID: "t2", Name: "b", Arguments: json.RawMessage(`{}`)}}},
		{Role: hooks.RoleTool, ToolCallID: "t1", Content: "r1"},
		{Role: hooks.RoleUser, Content: "q2"},
	}}
	if _, err := newProvider(t, f, anthropic.Config{}).Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	assertJSON(t, f.Requests()[0].Body, `{"model":"m","max_tokens":1024,"messages":[
		{"role":"user","content":"q1"},
		{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"a","input":{}},{"type":"tool_use","id":"t2","name":"b","input":{}}]},
		{"role":"user","content":[
		 {"type":"tool_result","tool_use_id":"t1","content":"r1"},
		 {"type":"tool_result","tool_use_id":"t2","content":`+quote(history.CancelledResult)+`,"is_error":true},
		 {"type":"text","text":"q2"}]}]}`)
}

func TestErrors(t *testing.T) {
	t.Run("400 is reported, not retried", func(t *testing.T) {
		f := fakeapi.New(t, jsonReply(400, `{"type":"error","error":{"type":"invalid_request_error","message":"messages: roles must alternate"},"request_id":"req_1"}`))
		_, err := newProvider(t, f, anthropic.Config{MaxRetries: 2}).Complete(context.Background(), userReq("hi"))
		var pe *llm.ProviderError
		if !errors.As(err, &pe) || pe.StatusCode != 400 || pe.Type != "invalid_request_error" {
			t.Fatalf("err = %#v", err)
		}
		if want := "provider anthropic: HTTP 400 invalid_request_error: messages: roles must alternate"; err.Error() != want {
			t.Errorf("err = %q, want %q", err, want)
		}
		if n := len(f.Requests()); n != 1 {
			t.Errorf("%d requests, want 1", n)
		}
	})
	t.Run("the key never shows", func(t *testing.T) {
		f := fakeapi.New(t, jsonReply(401, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key `+testKey+`"}}`))
		_, err := newProvider(t, f, anthropic.Config{APIKey: testKey}).Complete(context.Background(), userReq("hi"))
		if err == nil || strings.Contains(err.Error(), testKey) || !strings.Contains(err.Error(), "HTTP 401 authentication_error") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("429 with retry-after, then success", func(t *testing.T) {
		f := fakeapi.New(t,
			jsonReply(429, `{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}`, "retry-after", "3"),
			jsonReply(200, msgText))
		sl := &fakeapi.Sleeper{}
		resp, err := newProvider(t, f, anthropic.Config{MaxRetries: 2, Sleep: sl.Sleep}).Complete(context.Background(), userReq("hi"))
		if err != nil || resp.Message.Content != "It is sunny in Paris." {
			t.Fatalf("resp = %+v, err = %v", resp, err)
		}
		reqs := f.Requests()
		if len(reqs) != 2 || string(reqs[0].Body) != string(reqs[1].Body) {
			t.Errorf("%d requests, want 2 identical", len(reqs))
		}
		if !reflect.DeepEqual(sl.Waits(), []time.Duration{3 * time.Second}) {
			t.Errorf("waits = %v, want [3s]", sl.Waits())
		}
	})
	t.Run("529 overloaded is retried", func(t *testing.T) {
		f := fakeapi.New(t,
			jsonReply(529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`),
			jsonReply(200, msgText))
		if _, err := newProvider(t, f, anthropic.Config{MaxRetries: 1}).Complete(context.Background(), userReq("hi")); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("500 three times, then give up", func(t *testing.T) {
		boom := jsonReply(500, `{"type":"error","error":{"type":"api_error","message":"Internal server error"}}`)
		f := fakeapi.New(t, boom, boom, boom, boom)
		sl := &fakeapi.Sleeper{}
		_, err := newProvider(t, f, anthropic.Config{MaxRetries: 2, Sleep: sl.Sleep}).Complete(context.Background(), userReq("hi"))
		if err == nil || err.Error() != "provider anthropic: HTTP 500 api_error: Internal server error (gave up after 3 attempts)" {
			t.Errorf("err = %v", err)
		}
		if n := len(f.Requests()); n != 3 || len(sl.Waits()) != 2 {
			t.Errorf("%d requests and %d waits, want 3 and 2", n, len(sl.Waits()))
		}
	})
}

func ev(typ, body string) string {
	if body != "" {
		body = "," + body
	}
	return named(typ, `{"type":"`+typ+`"`+body+`}`)
}

// Streams of the same model output as msgText and msgParallel.
var (
	textStream = []string{
		ev("message_start", `"message":{"id":"msg_01XFDUDYJgAACzvnptvVoYEL","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":31,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":1}}`),
		ev("content_block_start", `"index":0,"content_block":{"type":"text","text":""}`),
		ev("ping", ""),
		ev("content_block_delta", `"index":0,"delta":{"type":"text_delta","text":"It is "}`),
		": keepalive\n\n",
		ev("content_block_delta", `"index":0,"delta":{"type":"text_delta","text":"sunny in Paris."}`),
		ev("content_block_stop", `"index":0`),
		ev("message_delta", `"delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":7}`),
		ev("message_stop", ""),
	}
	parallelStream = []string{
		ev("message_start", `"message":{"id":"msg_03","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":40,"cache_creation_input_tokens":100,"cache_read_input_tokens":1000,"output_tokens":1}}`),
		ev("content_block_start", `"index":0,"content_block":{"type":"text","text":""}`),
		ev("content_block_delta", `"index":0,"delta":{"type":"text_delta","text":"I'll check "}`),
		ev("content_block_delta", `"index":0,"delta":{"type":"text_delta","text":"both cities."}`),
		ev("content_block_stop", `"index":0`),
		ev("content_block_start", `"index":1,"content_block":{"type":"tool_use","id":"toolu_01A","name":"get_weather","input":{}}`),
		ev("content_block_delta", `"index":1,"delta":{"type":"input_json_delta","partial_json":""}`),
		ev("content_block_delta", `"index":1,"delta":{"type":"input_json_delta","partial_json":"{\"city\": \"Pa"}`),
		ev("ping", ""),
		ev("content_block_delta", `"index":1,"delta":{"type":"input_json_delta","partial_json":"ris\"}"}`),
		ev("content_block_stop", `"index":1`),
		ev("content_block_start", `"index":2,"content_block":{"type":"tool_use","id":"toolu_01B","name":"get_weather","input":{}}`),
		ev("content_block_delta", `"index":2,"delta":{"type":"input_json_delta","partial_json":"{\"ci"}`),
		ev("content_block_delta", `"index":2,"delta":{"type":"input_json_delta","partial_json":"ty\":\"Oslo\"}"}`),
		ev("content_block_stop", `"index":2`),
		ev("message_delta", `"delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":30}`),
		ev("message_stop", ""),
	}
)

func TestStreamEqualsComplete(t *testing.T) {
	tests := []struct {
		name   string
		whole  string
		stream []string
		text   []string
	}{
		{"text", msgText, textStream, []string{"It is ", "sunny in Paris."}},
		{"parallel tool use with fragmented input", msgParallel, parallelStream, []string{"I'll check ", "both cities."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := fakeapi.New(t, jsonReply(200, tt.whole), sseReply(tt.stream...))
			p := newProvider(t, f, anthropic.Config{APIKey: testKey})
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
			assertJSON(t, r.Body, `{"model":"claude-sonnet-4-5","max_tokens":1024,"system":"be brief","stream":true,
				"messages":[{"role":"user","content":"hi"}],"tools":[`+weatherToolWire+`]}`)
		})
	}
}

func TestStreamFailures(t *testing.T) {
	cut := func(frames []string, n int, extra ...string) []string {
		return append(append([]string(nil), frames[:n]...), extra...)
	}
	tests := []struct {
		name   string
		frames []string
		want   string
	}{
		{"truncated after a tool fragment", parallelStream[:8], "stream ended before message_stop"},
		{"truncated inside an event", cut(textStream, 4, "event: content_block_delta\ndata: {\"type\":\"content_bl"), "stream ended before message_stop"},
		{"overloaded mid-stream", cut(textStream, 4, ev("error", `"error":{"type":"overloaded_error","message":"Overloaded"}`)), "provider anthropic overloaded_error: error in stream: Overloaded"},
		{"no stop_reason", cut(textStream, 7, ev("message_stop", "")), "without a stop_reason"},
		{"delta before message_start", textStream[3:], "came before message_start"},
		{"two messages", cut(textStream, 8, textStream[0]), "second message_start"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := fakeapi.New(t, sseReply(tt.frames...))
			_, err := newProvider(t, f, anthropic.Config{}).Stream(context.Background(), userReq("hi"), nil)
			var pe *llm.ProviderError
			if !errors.As(err, &pe) || pe.Provider != "anthropic" || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want a ProviderError containing %q", err, tt.want)
			}
		})
	}
}

func TestStreamCancel(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	f := fakeapi.New(t, func(w http.ResponseWriter, _ fakeapi.Seen) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, fr := range textStream[:4] {
			w.Write([]byte(fr))
		}
		w.(http.Flusher).Flush()
		<-release
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := newProvider(t, f, anthropic.Config{}).Stream(ctx, userReq("hi"), func(string) { cancel() })
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
	for _, cfg := range []anthropic.Config{{BaseURL: "api.anthropic.com"}, {MaxTokens: -1}} {
		if _, err := anthropic.New(cfg); err == nil || !strings.HasPrefix(err.Error(), "provider anthropic: ") {
			t.Errorf("New(%+v) = %v, want an error", cfg, err)
		}
	}
}
