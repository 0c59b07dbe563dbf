package openai_test

import (
	"strings"
	"testing"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/fakeapi"
	"github.com/hookhost/hookhost/llm/internal/convtest"
	"github.com/hookhost/hookhost/llm/openai"
)

// The story of package convtest, on both OpenAI APIs, whole and streamed.

const (
	chatTools = `[{"type":"function","function":{"name":"echo","description":"Echoes what it is told","parameters":{"type":"object","properties":{"say":{"type":"string"}},"required":["say"]}}},
		{"type":"function","function":{"name":"kora__lookup","description":"Looks up operational figures","parameters":{"type":"object","properties":{"q":{"type":"string"}}}}}]`
	chatCalls = `[{"id":"call_1","type":"function","function":{"name":"kora__lookup","arguments":"{\"q\":\"burn\"}"}},
		{"id":"call_2","type":"function","function":{"name":"echo","arguments":"{\"say\":\"hi\"}"}},
		{"id":"call_3","type":"function","function":{"name":"echo","arguments":"{\"say\": "}}]`
)

func chatCompletion(model, message, finish string, u hooks.Usage) string {
	return `{"id":"chatcmpl-1","object":"chat.completion","created":1761000000,"model":"` + model + `",
		"choices":[{"index":0,"message":` + message + `,"finish_reason":"` + finish + `"}],
		"usage":{"prompt_tokens":` + itoa(u.InputTokens) + `,"completion_tokens":` + itoa(u.OutputTokens) + `,"total_tokens":` + itoa(u.InputTokens+u.OutputTokens) + `}}`
}

func chatChunks(model string, deltas []string, finish string, u hooks.Usage) []string {
	head := `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1761000000,"model":"` + model + `",`
	var frames []string
	for _, d := range deltas {
		frames = append(frames, data(head+`"choices":[{"index":0,"delta":`+d+`,"finish_reason":null}]}`))
	}
	return append(frames,
		data(head+`"choices":[{"index":0,"delta":{},"finish_reason":"`+finish+`"}]}`),
		data(head+`"choices":[],"usage":{"prompt_tokens":`+itoa(u.InputTokens)+`,"completion_tokens":`+itoa(u.OutputTokens)+`,"total_tokens":`+itoa(u.InputTokens+u.OutputTokens)+`}}`),
		data(`[DONE]`))
}

func TestConversationChat(t *testing.T) {
	us := convtest.Usages
	for _, stream := range []bool{false, true} {
		t.Run(map[bool]string{false: "complete", true: "stream"}[stream], func(t *testing.T) {
			var replies []fakeapi.Reply
			if !stream {
				replies = []fakeapi.Reply{
					jsonReply(200, chatCompletion("small", `{"role":"assistant","content":null,"tool_calls":`+chatCalls+`}`, "tool_calls", us[0])),
					jsonReply(200, chatCompletion("small", `{"role":"assistant","content":`+quote(convtest.Hedge)+`}`, "stop", us[1])),
					jsonReply(200, chatCompletion("strong", `{"role":"assistant","content":`+quote(convtest.StrongAnswer)+`}`, "stop", us[2])),
				}
			} else {
				replies = []fakeapi.Reply{
					sseReply(chatChunks("small", []string{
						`{"role":"assistant","content":null}`,
						`{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"kora__lookup","arguments":"{\"q\":"}}]}`,
						`{"tool_calls":[{"index":0,"function":{"arguments":"\"burn\"}"}}]}`,
						`{"tool_calls":[{"index":1,"id":"call_2","type":"function","function":{"name":"echo","arguments":"{\"say\":\"hi\"}"}}]}`,
						`{"tool_calls":[{"index":2,"id":"call_3","type":"function","function":{"name":"echo","arguments":"{\"say\""}}]}`,
						`{"tool_calls":[{"index":2,"function":{"arguments":": "}}]}`,
					}, "tool_calls", us[0])...),
					sseReply(chatChunks("small", []string{`{"role":"assistant","content":"I'm not sure "}`, `{"content":"what the burn is."}`}, "stop", us[1])...),
					sseReply(chatChunks("strong", []string{`{"role":"assistant","content":"The burn "}`, `{"content":"is 42 USD."}`}, "stop", us[2])...),
				}
			}
			f := newFake(t, replies...)
			var text strings.Builder
			var onText func(string)
			if stream {
				onText = func(d string) { text.WriteString(d) }
			}
			turn, log := convtest.Run(t, newProvider(t, f, openai.Config{APIKey: testKey}), onText)
			convtest.Check(t, turn, log)
			if stream && text.String() != convtest.Hedge+convtest.StrongAnswer {
				t.Errorf("streamed text = %q, want the hedge then the strong answer", text.String())
			}

			reqs := f.Requests()
			if len(reqs) != 3 {
				t.Fatalf("%d requests, want 3", len(reqs))
			}
			streamFields := ""
			if stream {
				streamFields = `"stream":true,"stream_options":{"include_usage":true},`
			}
			first := `{"role":"system","content":"be brief"},{"role":"user","content":` + quote(convtest.Question) + `}`
			assertJSON(t, reqs[0].Body, `{"model":"small",`+streamFields+`"tools":`+chatTools+`,"messages":[`+first+`]}`)
			afterTools := first + `,{"role":"assistant","content":null,"tool_calls":` + chatCalls + `},
				{"role":"tool","tool_call_id":"call_1","content":` + quote(convtest.LookupResult) + `},
				{"role":"tool","tool_call_id":"call_2","content":` + quote(convtest.EchoResult) + `},
				{"role":"tool","tool_call_id":"call_3","content":` + quote(convtest.BadArgsResult(turn)) + `}`
			assertJSON(t, reqs[1].Body, `{"model":"small",`+streamFields+`"tools":`+chatTools+`,"messages":[`+afterTools+`]}`)
			// The reissue is the same request, to the other model.
			assertJSON(t, reqs[2].Body, `{"model":"strong",`+streamFields+`"tools":`+chatTools+`,"messages":[`+afterTools+`]}`)
		})
	}
}

const responsesTools = `[{"type":"function","name":"echo","description":"Echoes what it is told","parameters":{"type":"object","properties":{"say":{"type":"string"}},"required":["say"]},"strict":false},
	{"type":"function","name":"kora__lookup","description":"Looks up operational figures","parameters":{"type":"object","properties":{"q":{"type":"string"}}},"strict":false}]`

func responseObject(model, output string, u hooks.Usage) string {
	return `{"id":"resp_1","object":"response","created_at":1761000000,"status":"completed","error":null,"incomplete_details":null,
		"model":"` + model + `","output":` + output + `,"usage":{"input_tokens":` + itoa(u.InputTokens) + `,"output_tokens":` + itoa(u.OutputTokens) + `,"total_tokens":` + itoa(u.InputTokens+u.OutputTokens) + `}}`
}

func textOutput(text string) string {
	return `[{"id":"msg_1","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","annotations":[],"text":` + quote(text) + `}]}]`
}

const callsOutput = `[{"id":"fc_1","type":"function_call","status":"completed","call_id":"call_1","name":"kora__lookup","arguments":"{\"q\":\"burn\"}"},
	{"id":"fc_2","type":"function_call","status":"completed","call_id":"call_2","name":"echo","arguments":"{\"say\":\"hi\"}"},
	{"id":"fc_3","type":"function_call","status":"completed","call_id":"call_3","name":"echo","arguments":"{\"say\": "}]`

// responsesEvents streams a response object: created, text deltas, done.
func responsesEvents(final string, deltas ...string) []string {
	frames := []string{respEvent("response.created", `"sequence_number":0,"response":{"id":"resp_1","object":"response","status":"in_progress","output":[]}`)}
	for i, d := range deltas {
		frames = append(frames, respEvent("response.output_text.delta", `"sequence_number":`+itoa(i+1)+`,"item_id":"msg_1","output_index":0,"content_index":0,"delta":`+quote(d)))
	}
	return append(frames, respEvent("response.completed", `"sequence_number":99,"response":`+final))
}

func TestConversationResponses(t *testing.T) {
	us := convtest.Usages
	for _, stream := range []bool{false, true} {
		t.Run(map[bool]string{false: "complete", true: "stream"}[stream], func(t *testing.T) {
			objs := []string{
				responseObject("small", callsOutput, us[0]),
				responseObject("small", textOutput(convtest.Hedge), us[1]),
				responseObject("strong", textOutput(convtest.StrongAnswer), us[2]),
			}
			var replies []fakeapi.Reply
			if !stream {
				for _, o := range objs {
					replies = append(replies, jsonReply(200, o))
				}
			} else {
				replies = []fakeapi.Reply{
					sseReply(responsesEvents(objs[0])...),
					sseReply(responsesEvents(objs[1], "I'm not sure ", "what the burn is.")...),
					sseReply(responsesEvents(objs[2], "The burn ", "is 42 USD.")...),
				}
			}
			f := newFake(t, replies...)
			var text strings.Builder
			var onText func(string)
			if stream {
				onText = func(d string) { text.WriteString(d) }
			}
			turn, log := convtest.Run(t, newProvider(t, f, openai.Config{API: openai.APIResponses}), onText)
			convtest.Check(t, turn, log)
			if stream && text.String() != convtest.Hedge+convtest.StrongAnswer {
				t.Errorf("streamed text = %q", text.String())
			}
			reqs := f.Requests()
			if len(reqs) != 3 {
				t.Fatalf("%d requests, want 3", len(reqs))
			}
			streamField := ""
			if stream {
				streamField = `"stream":true,`
			}
			head := `"instructions":"be brief","store":false,` + streamField + `"tools":` + responsesTools
			first := `{"type":"message","role":"user","content":` + quote(convtest.Question) + `}`
			assertJSON(t, reqs[0].Body, `{"model":"small",`+head+`,"input":[`+first+`]}`)
			afterTools := first + `,
				{"type":"function_call","call_id":"call_1","name":"kora__lookup","arguments":"{\"q\":\"burn\"}"},
				{"type":"function_call","call_id":"call_2","name":"echo","arguments":"{\"say\":\"hi\"}"},
				{"type":"function_call","call_id":"call_3","name":"echo","arguments":"{\"say\": "},
				{"type":"function_call_output","call_id":"call_1","output":` + quote(convtest.LookupResult) + `},
				{"type":"function_call_output","call_id":"call_2","output":` + quote(convtest.EchoResult) + `},
				{"type":"function_call_output","call_id":"call_3","output":` + quote(convtest.BadArgsResult(turn)) + `}`
			assertJSON(t, reqs[1].Body, `{"model":"small",`+head+`,"input":[`+afterTools+`]}`)
			assertJSON(t, reqs[2].Body, `{"model":"strong",`+head+`,"input":[`+afterTools+`]}`)
		})
	}
}
