package openai_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/hookhost/hookhost/internal/fakeapi"
	"github.com/hookhost/hookhost/llm"
	"github.com/hookhost/hookhost/llm/openai"
)

// A 200 answer without what the protocol requires is an error naming what
// is missing, never an empty answer.
func TestMissingFieldsAreErrors(t *testing.T) {
	tests := []struct {
		name, api, body string
		want            []string
	}{
		{"responses: id only", openai.APIResponses, `{"id":"x"}`, []string{"missing", "status", "output"}},
		{"responses: no output", openai.APIResponses, `{"id":"x","status":"completed"}`, []string{"missing", "output"}},
		{"responses: unknown status", openai.APIResponses, `{"id":"x","status":"weird","output":[]}`, []string{"status", "weird"}},
		{"responses: call without a name", openai.APIResponses,
			`{"id":"x","status":"completed","output":[{"type":"function_call","call_id":"c1","arguments":"{}"}]}`, []string{"function_call", "missing name"}},
		{"responses: item without type", openai.APIResponses,
			`{"id":"x","status":"completed","output":[{"id":"m"}]}`, []string{"output item 0", "type"}},
		{"chat: id only", openai.APIChat, `{"id":"x"}`, []string{"no choices"}},
		{"chat: call without a name", openai.APIChat,
			`{"id":"x","choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":null,"tool_calls":[{"type":"function","id":"c1","function":{"arguments":"{}"}}]}}]}`,
			[]string{"tool call 0", "missing its name"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t, jsonReply(200, tt.body))
			resp, err := newProvider(t, f, openai.Config{API: tt.api}).Complete(context.Background(), hiReq)
			var pe *llm.ProviderError
			if !errors.As(err, &pe) {
				t.Fatalf("got %+v, %v; want a ProviderError", resp, err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("err = %v, want it to name %q", err, w)
				}
			}
		})
	}
}

func TestStreamWithoutRequiredEventsIsAnError(t *testing.T) {
	tests := []struct {
		name, api string
		frames    []string
		want      string
	}{
		{"responses: completed without output", openai.APIResponses, []string{respTextStream[0],
			respEvent("response.completed", `"response":{"id":"x"}`)}, "output"},
		{"responses: text shown but not in the final response", openai.APIResponses, append(append([]string(nil), respTextStream[:5]...),
			respEvent("response.completed", `"response":{"id":"x","status":"completed","output":[]}`)), "differs"},
		{"chat: call without a name", openai.APIChat, []string{
			data(`{"id":"c","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"arguments":"{}"}}]}}]}`),
			data(`{"id":"c","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`),
			data(`[DONE]`)}, "name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t, sseReply(tt.frames...))
			_, err := newProvider(t, f, openai.Config{API: tt.api}).Stream(context.Background(), hiReq, nil)
			var pe *llm.ProviderError
			if !errors.As(err, &pe) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want a ProviderError naming %q", err, tt.want)
			}
		})
	}
}

// Gemini's OpenAI-compatible endpoint sends tool calls with "id": "". The
// loop needs an id to pair each result with its call, so a call without one
// gets one that no other call of the answer has.
func TestToolCallsWithoutIDsGetUniqueOnes(t *testing.T) {
	chatCalls := `"tool_calls":[{"type":"function","id":"","function":{"name":"a","arguments":"{}"}},` +
		`{"type":"function","id":"call_1","function":{"name":"b","arguments":"{}"}},` +
		`{"type":"function","function":{"name":"c","arguments":"{}"}}]`
	respCall := func(id, name string) string {
		return `{"type":"function_call","id":"fc_` + name + `","call_id":"` + id + `","name":"` + name + `","arguments":"{}","status":"completed"}`
	}
	respBody := `{"id":"x","status":"completed","output":[` + respCall("", "a") + `,` + respCall("call_1", "b") + `,` + respCall("", "c") + `]}`
	tests := []struct {
		name, api string
		reply     fakeapi.Reply
		stream    bool
	}{
		{"chat", openai.APIChat, jsonReply(200, `{"id":"x","choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":null,`+chatCalls+`}}]}`), false},
		{"chat stream", openai.APIChat, sseReply(
			data(`{"id":"x","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"","type":"function","function":{"name":"a","arguments":"{}"}}]}}]}`),
			data(`{"id":"x","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_1","type":"function","function":{"name":"b","arguments":"{}"}}]}}]}`),
			data(`{"id":"x","choices":[{"index":0,"delta":{"tool_calls":[{"index":2,"type":"function","function":{"name":"c","arguments":"{}"}}]}}]}`),
			data(`{"id":"x","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`),
			data(`[DONE]`)), true},
		{"responses", openai.APIResponses, jsonReply(200, respBody), false},
		{"responses stream", openai.APIResponses, sseReply(respEvent("response.created", `"response":{"id":"x","status":"in_progress","output":[]}`),
			respEvent("response.completed", `"response":`+respBody)), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newProvider(t, newFake(t, tt.reply), openai.Config{API: tt.api})
			var resp llm.Response
			var err error
			if tt.stream {
				resp, err = p.Stream(context.Background(), hiReq, func(string) {})
			} else {
				resp, err = p.Complete(context.Background(), hiReq)
			}
			if err != nil {
				t.Fatalf("err = %v, want the calls accepted", err)
			}
			if len(resp.Message.ToolCalls) != 3 {
				t.Fatalf("calls = %+v, want 3", resp.Message.ToolCalls)
			}
			seen := map[string]bool{}
			for i, c := range resp.Message.ToolCalls {
				if c.ID == "" || seen[c.ID] {
					t.Errorf("call %d (%s) has id %q; want a non-empty id no other call has: %+v", i, c.Name, c.ID, resp.Message.ToolCalls)
				}
				seen[c.ID] = true
			}
			if got := resp.Message.ToolCalls[1].ID; got != "call_1" {
				t.Errorf("the server's own id became %q, want call_1 kept", got)
			}
		})
	}
}

// A name is at most 64 characters on the wire, so a stream whose name
// fragments run past that is refused at once rather than assembled.
func TestStreamedToolNamePastTheLimitIsRefused(t *testing.T) {
	frames := []string{data(`{"id":"x","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"c","type":"function","function":{"name":"a","arguments":""}}]}}]}`)}
	for i := 0; i < 200; i++ {
		frames = append(frames, data(`{"id":"x","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"b"}}]}}]}`))
	}
	frames = append(frames, data(`{"id":"x","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`), data(`[DONE]`))
	p := newProvider(t, newFake(t, sseReply(frames...)), openai.Config{API: openai.APIChat})
	_, err := p.Stream(context.Background(), hiReq, func(string) {})
	var pe *llm.ProviderError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "openai") || !strings.Contains(err.Error(), "64") {
		t.Errorf("err = %v, want a provider error naming openai and the 64-character limit", err)
	}
}
