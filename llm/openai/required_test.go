package openai_test

import (
	"context"
	"errors"
	"strings"
	"testing"

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
		{"responses: call without id and name", openai.APIResponses,
			`{"id":"x","status":"completed","output":[{"type":"function_call","arguments":"{}"}]}`, []string{"function_call", "call_id", "name"}},
		{"responses: item without type", openai.APIResponses,
			`{"id":"x","status":"completed","output":[{"id":"m"}]}`, []string{"output item 0", "type"}},
		{"chat: id only", openai.APIChat, `{"id":"x"}`, []string{"no choices"}},
		{"chat: call without id and name", openai.APIChat,
			`{"id":"x","choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":null,"tool_calls":[{"type":"function","function":{"arguments":"{}"}}]}}]}`,
			[]string{"tool call 0", "id", "name"}},
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
