package openai_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/hookhost/hookhost/llm"
	"github.com/hookhost/hookhost/llm/openai"
)

// A call of a kind the neutral types cannot hold (a custom tool's free
// text) must not vanish from an answer: the provider says what it got.
func TestChatCallOfUnmodelledKindIsAProviderError(t *testing.T) {
	const whole = `{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"custom","custom":{"name":"code_exec","input":"print(1)"}}]}}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`
	stream := []string{
		data(`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"custom","custom":{"name":"code_exec","input":"print(1)"}}]},"finish_reason":null}]}`),
		data(`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`),
		"data: [DONE]\n\n",
	}
	for _, streamed := range []bool{false, true} {
		var err error
		if streamed {
			f := newFake(t, sseReply(stream...))
			_, err = newProvider(t, f, openai.Config{}).Stream(context.Background(), userReq("run it"), func(string) {})
		} else {
			f := newFake(t, jsonReply(200, whole))
			_, err = newProvider(t, f, openai.Config{}).Complete(context.Background(), userReq("run it"))
		}
		var pe *llm.ProviderError
		if !errors.As(err, &pe) || !strings.Contains(pe.Message, `"custom"`) || !strings.Contains(pe.Message, "function tools") {
			t.Errorf("streamed=%v: error %v, want a provider error naming the custom call", streamed, err)
		}
	}
}

// A Responses item the neutral message cannot hold must not vanish: a
// call the client must run always fails clearly, and an item of a kind not
// known here fails when the round goes on upstream (beside a function
// call) without it. Items the provider finished itself pass.
func TestResponsesItemOfUnmodelledKind(t *testing.T) {
	const fcall = `{"type":"function_call","id":"fc_1","call_id":"k1","name":"get_weather","arguments":"{}","status":"completed"}`
	tests := []struct {
		name, items, want string
	}{
		{"custom call beside a function call", `{"type":"custom_tool_call","id":"ctc_1","call_id":"x1","name":"code_exec","input":"print(1)","status":"completed"},` + fcall, "custom_tool_call"},
		{"custom call alone", `{"type":"custom_tool_call","id":"ctc_1","call_id":"x1","name":"code_exec","input":"print(1)","status":"completed"}`, "custom_tool_call"},
		{"computer call", `{"type":"computer_call","id":"cu_1","call_id":"x2","action":{"type":"click","x":1,"y":2},"pending_safety_checks":[],"status":"completed"}`, "computer_call"},
		{"local shell call", `{"type":"local_shell_call","id":"ls_1","call_id":"x3","action":{"type":"exec","command":["ls"]},"status":"completed"}`, "local_shell_call"},
		{"unknown item beside a function call", `{"type":"future_call","id":"f_1"},` + fcall, "future_call"},
		{"unknown item ending the turn", `{"type":"future_note","id":"f_1"}`, ""},
		{"provider-run tools beside a function call", `{"type":"web_search_call","id":"ws_1","status":"completed","action":{"type":"search","query":"x"}},{"type":"reasoning","id":"rs_1","summary":[]},` + fcall, ""},
	}
	for _, tt := range tests {
		for _, streamed := range []bool{false, true} {
			t.Run(tt.name, func(t *testing.T) {
				resp := `{"id":"resp_1","object":"response","created_at":1,"status":"completed","model":"m","output":[` + tt.items + `],"usage":{"input_tokens":1,"output_tokens":1,"total_tokens":2}}`
				var err error
				p := openai.Config{API: openai.APIResponses}
				if streamed {
					f := newFake(t, sseReply(
						named("response.created", `{"type":"response.created","sequence_number":0,"response":{"id":"resp_1","object":"response","created_at":1,"status":"in_progress","model":"m","output":[]}}`),
						named("response.completed", `{"type":"response.completed","sequence_number":1,"response":`+resp+`}`)))
					_, err = newProvider(t, f, p).Stream(context.Background(), userReq("go"), func(string) {})
				} else {
					f := newFake(t, jsonReply(200, resp))
					_, err = newProvider(t, f, p).Complete(context.Background(), userReq("go"))
				}
				if tt.want == "" {
					if err != nil {
						t.Fatalf("streamed=%v: %v", streamed, err)
					}
					return
				}
				var pe *llm.ProviderError
				if !errors.As(err, &pe) || !strings.Contains(pe.Message, tt.want) || !strings.Contains(pe.Message, "does not model") {
					t.Errorf("streamed=%v: error %v, want a provider error naming the %s", streamed, err, tt.want)
				}
			})
		}
	}
}
