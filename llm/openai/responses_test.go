package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/llm"
	"github.com/hookhost/hookhost/llm/openai"
)

const weatherToolResponses = `{"type":"function","name":"get_weather","description":"Current weather for a city",
	"parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]},"strict":false}`

// Recorded-shape Responses API objects.
const (
	respText = `{"id":"resp_68a1","object":"response","created_at":1761000000,"status":"completed","background":false,
		"error":null,"incomplete_details":null,"instructions":"be brief","max_output_tokens":null,"model":"gpt-4.1-mini-2025-04-14",
		"output":[{"id":"msg_68a1","type":"message","status":"completed","role":"assistant",
		 "content":[{"type":"output_text","annotations":[],"logprobs":[],"text":"It is sunny in Paris."}]}],
		"parallel_tool_calls":true,"previous_response_id":null,"store":false,"temperature":1.0,"tool_choice":"auto",
		"usage":{"input_tokens":31,"input_tokens_details":{"cached_tokens":0},"output_tokens":7,
		 "output_tokens_details":{"reasoning_tokens":0},"total_tokens":38}}`
	respParallel = `{"id":"resp_68a2","object":"response","created_at":1761000001,"status":"completed","error":null,
		"incomplete_details":null,"model":"gpt-4.1-mini-2025-04-14",
		"output":[
		 {"id":"fc_01","type":"function_call","status":"completed","arguments":"{\"city\": \"Paris\"}","call_id":"call_P1","name":"get_weather"},
		 {"id":"fc_02","type":"function_call","status":"completed","arguments":"{\"city\": \"Oslo\"}","call_id":"call_P2","name":"get_weather"}],
		"usage":{"input_tokens":40,"output_tokens":30,"total_tokens":70}}`
)

func TestResponsesRequestShape(t *testing.T) {
	f := newFake(t, jsonReply(200, respText))
	p := newProvider(t, f, openai.Config{API: openai.APIResponses, APIKey: testKey, MaxTokens: 200})
	if p.API() != openai.APIResponses {
		t.Fatalf("API() = %q", p.API())
	}
	if _, err := p.Complete(context.Background(), historyReq()); err != nil {
		t.Fatal(err)
	}
	r := f.Requests()[0]
	if r.Path != "/v1/responses" || r.Header.Get("Authorization") != "Bearer "+testKey {
		t.Errorf("request to %s with Authorization %q", r.Path, r.Header.Get("Authorization"))
	}
	assertJSON(t, r.Body, `{"model":"gpt-4.1-mini","instructions":"be brief","store":false,"max_output_tokens":200,
		"input":[
		 {"type":"message","role":"user","content":"weather and notes?"},
		 {"type":"function_call","call_id":"call_1","name":"get_weather","arguments":"{\"city\": \"Par"},
		 {"type":"function_call","call_id":"call_2","name":"files__read","arguments":"{\"path\":\"notes.txt\"}"},
		 {"type":"function_call_output","call_id":"call_1","output":"{\"error\":\"arguments are not a valid JSON object\"}"},
		 {"type":"function_call_output","call_id":"call_2","output":"{\"text\":\"buy milk\"}"},
		 {"type":"message","role":"assistant","content":"Your notes say: buy milk."},
		 {"type":"message","role":"user","content":"thanks"}],
		"tools":[`+weatherToolResponses+`,
		 {"type":"function","name":"files__read","description":"Reads a file","parameters":{"type":"object","properties":{}},"strict":false}]}`)
}

func TestResponsesParse(t *testing.T) {
	tests := []struct {
		name    string
		fixture string
		want    llm.Response
	}{
		{"text", respText, llm.Response{
			Model: "gpt-4.1-mini-2025-04-14", StopReason: hooks.StopEndTurn, Usage: hooks.Usage{InputTokens: 31, OutputTokens: 7},
			Message: hooks.Message{Role: hooks.RoleAssistant, Content: "It is sunny in Paris."},
		}},
		{"parallel calls", respParallel, llm.Response{
			Model: "gpt-4.1-mini-2025-04-14", StopReason: hooks.StopToolUse, Usage: hooks.Usage{InputTokens: 40, OutputTokens: 30},
			Message: hooks.Message{Role: hooks.RoleAssistant, ToolCalls: []hooks.ToolCall{
				{ID: "call_P1", Name: "get_weather", Arguments: json.RawMessage(`{"city": "Paris"}`)},
				{ID: "call_P2", Name: "get_weather", Arguments: json.RawMessage(`{"city": "Oslo"}`)},
			}},
		}},
		{"invalid arguments and a reasoning item", `{"id":"r","object":"response","status":"completed","model":"o4-mini",
			"output":[{"id":"rs_1","type":"reasoning","summary":[]},
			 {"id":"fc_1","type":"function_call","status":"completed","arguments":"{\"city\":","call_id":"call_X","name":"files__read"}],
			"usage":{"input_tokens":5,"output_tokens":6,"total_tokens":11}}`, llm.Response{
			Model: "o4-mini", StopReason: hooks.StopToolUse, Usage: hooks.Usage{InputTokens: 5, OutputTokens: 6},
			Message: hooks.Message{Role: hooks.RoleAssistant, ToolCalls: []hooks.ToolCall{
				{ID: "call_X", Name: "files.read", Arguments: json.RawMessage(`{"city":`)},
			}},
		}},
		{"incomplete", `{"id":"r","object":"response","status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"model":"m",
			"output":[{"type":"message","role":"assistant","content":[{"type":"output_text","text":"It is su"}]}],
			"usage":{"input_tokens":5,"output_tokens":16,"total_tokens":21}}`, llm.Response{
			Model: "m", StopReason: hooks.StopMaxTokens, Usage: hooks.Usage{InputTokens: 5, OutputTokens: 16},
			Message: hooks.Message{Role: hooks.RoleAssistant, Content: "It is su"},
		}},
		{"refusal", `{"id":"r","object":"response","status":"completed","model":"m",
			"output":[{"type":"message","role":"assistant","content":[{"type":"refusal","refusal":"I can't help with that."}]}]}`, llm.Response{
			Model: "m", StopReason: hooks.StopRefusal,
			Message: hooks.Message{Role: hooks.RoleAssistant, Content: "I can't help with that."},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t, jsonReply(200, tt.fixture))
			req := userReq("hi")
			req.Tools = append(req.Tools, hooks.ToolSpec{Name: "files.read"})
			resp, err := newProvider(t, f, openai.Config{API: openai.APIResponses}).Complete(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(resp, tt.want) {
				t.Errorf("response = %+v\nwant %+v", resp, tt.want)
			}
		})
	}
}

func TestResponsesFailures(t *testing.T) {
	t.Run("failed status", func(t *testing.T) {
		f := newFake(t, jsonReply(200, `{"id":"r","object":"response","status":"failed","model":"m","output":[],
			"error":{"code":"server_error","message":"The model failed to generate a response."}}`))
		_, err := newProvider(t, f, openai.Config{API: openai.APIResponses}).Complete(context.Background(), userReq("hi"))
		var pe *llm.ProviderError
		if !errors.As(err, &pe) || pe.Type != "server_error" || !strings.Contains(pe.Message, "failed to generate") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("HTTP error", func(t *testing.T) {
		f := newFake(t, jsonReply(404, `{"error":{"message":"The model 'gpt-9' does not exist","type":"invalid_request_error","param":"model","code":"model_not_found"}}`))
		_, err := newProvider(t, f, openai.Config{API: openai.APIResponses, MaxRetries: 2}).Complete(context.Background(), userReq("hi"))
		if err == nil || err.Error() != "provider openai: HTTP 404 invalid_request_error: The model 'gpt-9' does not exist" || len(f.Requests()) != 1 {
			t.Errorf("err = %v after %d requests", err, len(f.Requests()))
		}
	})
}

func respEvent(typ, body string) string {
	return named(typ, `{"type":"`+typ+`",`+body+`}`)
}

var (
	respTextStream = []string{
		respEvent("response.created", `"sequence_number":0,"response":{"id":"resp_68a1","object":"response","status":"in_progress","model":"gpt-4.1-mini-2025-04-14","output":[],"usage":null}`),
		respEvent("response.in_progress", `"sequence_number":1,"response":{"id":"resp_68a1","object":"response","status":"in_progress","model":"gpt-4.1-mini-2025-04-14","output":[]}`),
		respEvent("response.output_item.added", `"sequence_number":2,"output_index":0,"item":{"id":"msg_68a1","type":"message","status":"in_progress","role":"assistant","content":[]}`),
		respEvent("response.content_part.added", `"sequence_number":3,"item_id":"msg_68a1","output_index":0,"content_index":0,"part":{"type":"output_text","annotations":[],"text":""}`),
		respEvent("response.output_text.delta", `"sequence_number":4,"item_id":"msg_68a1","output_index":0,"content_index":0,"delta":"It is "`),
		respEvent("response.output_text.delta", `"sequence_number":5,"item_id":"msg_68a1","output_index":0,"content_index":0,"delta":"sunny in Paris."`),
		respEvent("response.output_text.done", `"sequence_number":6,"item_id":"msg_68a1","output_index":0,"content_index":0,"text":"It is sunny in Paris."`),
		respEvent("response.content_part.done", `"sequence_number":7,"item_id":"msg_68a1","output_index":0,"content_index":0,"part":{"type":"output_text","annotations":[],"text":"It is sunny in Paris."}`),
		respEvent("response.output_item.done", `"sequence_number":8,"output_index":0,"item":{"id":"msg_68a1","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","annotations":[],"text":"It is sunny in Paris."}]}`),
		respEvent("response.completed", `"sequence_number":9,"response":`+respText),
	}
	respParallelStream = []string{
		respEvent("response.created", `"sequence_number":0,"response":{"id":"resp_68a2","object":"response","status":"in_progress","model":"gpt-4.1-mini-2025-04-14","output":[]}`),
		respEvent("response.in_progress", `"sequence_number":1,"response":{"id":"resp_68a2","object":"response","status":"in_progress","model":"gpt-4.1-mini-2025-04-14","output":[]}`),
		respEvent("response.output_item.added", `"sequence_number":2,"output_index":0,"item":{"id":"fc_01","type":"function_call","status":"in_progress","arguments":"","call_id":"call_P1","name":"get_weather"}`),
		respEvent("response.function_call_arguments.delta", `"sequence_number":3,"item_id":"fc_01","output_index":0,"delta":"{\"city\": "`),
		respEvent("response.function_call_arguments.delta", `"sequence_number":4,"item_id":"fc_01","output_index":0,"delta":"\"Paris\"}"`),
		respEvent("response.function_call_arguments.done", `"sequence_number":5,"item_id":"fc_01","output_index":0,"arguments":"{\"city\": \"Paris\"}"`),
		respEvent("response.output_item.done", `"sequence_number":6,"output_index":0,"item":{"id":"fc_01","type":"function_call","status":"completed","arguments":"{\"city\": \"Paris\"}","call_id":"call_P1","name":"get_weather"}`),
		respEvent("response.output_item.added", `"sequence_number":7,"output_index":1,"item":{"id":"fc_02","type":"function_call","status":"in_progress","arguments":"","call_id":"call_P2","name":"get_weather"}`),
		respEvent("response.function_call_arguments.delta", `"sequence_number":8,"item_id":"fc_02","output_index":1,"delta":"{\"city\": \"Oslo\"}"`),
		respEvent("response.function_call_arguments.done", `"sequence_number":9,"item_id":"fc_02","output_index":1,"arguments":"{\"city\": \"Oslo\"}"`),
		respEvent("response.output_item.done", `"sequence_number":10,"output_index":1,"item":{"id":"fc_02","type":"function_call","status":"completed","arguments":"{\"city\": \"Oslo\"}","call_id":"call_P2","name":"get_weather"}`),
		respEvent("response.completed", `"sequence_number":11,"response":`+respParallel),
	}
)

func TestResponsesStreamEqualsComplete(t *testing.T) {
	// A server whose final event leaves the output out is assembled from
	// the items it finished.
	emptyFinal := append([]string(nil), respParallelStream...)
	emptyFinal[len(emptyFinal)-1] = respEvent("response.completed", `"sequence_number":11,"response":{"id":"resp_68a2","object":"response","status":"completed","model":"gpt-4.1-mini-2025-04-14","output":[],"usage":{"input_tokens":40,"output_tokens":30,"total_tokens":70}}`)
	tests := []struct {
		name   string
		whole  string
		stream []string
		text   []string
	}{
		{"text", respText, respTextStream, []string{"It is ", "sunny in Paris."}},
		{"parallel calls, fragmented arguments", respParallel, respParallelStream, nil},
		{"final event without output", respParallel, emptyFinal, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t, jsonReply(200, tt.whole), sseReply(tt.stream...))
			p := newProvider(t, f, openai.Config{API: openai.APIResponses})
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
			assertJSON(t, f.Requests()[1].Body, `{"model":"gpt-4.1-mini","instructions":"be brief","store":false,"stream":true,
				"input":[{"type":"message","role":"user","content":"hi"}],"tools":[`+weatherToolResponses+`]}`)
		})
	}
}

func TestResponsesStreamFailures(t *testing.T) {
	tests := []struct {
		name   string
		frames []string
		want   string
	}{
		{"truncated", respParallelStream[:8], "stream ended before response.completed"},
		{"error event", append(append([]string(nil), respTextStream[:3]...), respEvent("error", `"sequence_number":3,"code":"server_error","message":"Something went wrong","param":null`)), "server_error: error in stream: Something went wrong"},
		{"failed", append(append([]string(nil), respTextStream[:3]...), respEvent("response.failed", `"sequence_number":3,"response":{"id":"r","object":"response","status":"failed","model":"m","output":[],"error":{"code":"rate_limit_exceeded","message":"Too many tokens"}}`)), "rate_limit_exceeded: Too many tokens"},
		{"completed before created", respTextStream[9:], "without a response.created"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t, sseReply(tt.frames...))
			_, err := newProvider(t, f, openai.Config{API: openai.APIResponses}).Stream(context.Background(), userReq("hi"), nil)
			var pe *llm.ProviderError
			if !errors.As(err, &pe) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want a ProviderError containing %q", err, tt.want)
			}
		})
	}
}
