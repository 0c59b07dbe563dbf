package anthropic_test

import (
	"strings"
	"testing"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/fakeapi"
	"github.com/hookhost/hookhost/llm/anthropic"
	"github.com/hookhost/hookhost/llm/internal/convtest"
)

// The story of package convtest on the Messages API, whole and streamed.

const convTools = `[{"name":"echo","description":"Echoes what it is told","input_schema":{"type":"object","properties":{"say":{"type":"string"}},"required":["say"]}},
	{"name":"kora__lookup","description":"Looks up operational figures","input_schema":{"type":"object","properties":{"q":{"type":"string"}}}}]`

// The small model's tool calls, whole. The third call's arguments must not
// be a JSON object; a whole response can only get there with an input that
// is some other JSON value, here a string (a stream can cut the object).
const convCalls = `[{"type":"tool_use","id":"toolu_1","name":"kora__lookup","input":{"q":"burn"}},
	{"type":"tool_use","id":"toolu_2","name":"echo","input":{"say":"hi"}},
	{"type":"tool_use","id":"toolu_3","name":"echo","input":"{\"say\": "}]`

func message(model, content, stop string, u hooks.Usage) string {
	return `{"id":"msg_1","type":"message","role":"assistant","model":"` + model + `","content":` + content + `,
		"stop_reason":"` + stop + `","stop_sequence":null,"usage":{"input_tokens":` + itoa(u.InputTokens) + `,"output_tokens":` + itoa(u.OutputTokens) + `}}`
}

func textContent(s string) string { return `[{"type":"text","text":` + quote(s) + `}]` }

func messageEvents(model string, u hooks.Usage, stop string, blocks ...[]string) []string {
	frames := []string{ev("message_start", `"message":{"id":"msg_1","type":"message","role":"assistant","model":"`+model+`","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":`+itoa(u.InputTokens)+`,"output_tokens":1}}`)}
	for _, b := range blocks {
		frames = append(frames, b...)
	}
	return append(frames,
		ev("message_delta", `"delta":{"stop_reason":"`+stop+`","stop_sequence":null},"usage":{"output_tokens":`+itoa(u.OutputTokens)+`}`),
		ev("message_stop", ""))
}

func textBlock(i int, parts ...string) []string {
	frames := []string{ev("content_block_start", `"index":`+itoa(i)+`,"content_block":{"type":"text","text":""}`)}
	for _, p := range parts {
		frames = append(frames, ev("content_block_delta", `"index":`+itoa(i)+`,"delta":{"type":"text_delta","text":`+quote(p)+`}`))
	}
	return append(frames, ev("content_block_stop", `"index":`+itoa(i)))
}

func toolBlock(i int, id, name string, parts ...string) []string {
	frames := []string{ev("content_block_start", `"index":`+itoa(i)+`,"content_block":{"type":"tool_use","id":"`+id+`","name":"`+name+`","input":{}}`)}
	for _, p := range parts {
		frames = append(frames, ev("content_block_delta", `"index":`+itoa(i)+`,"delta":{"type":"input_json_delta","partial_json":`+quote(p)+`}`))
	}
	return append(frames, ev("content_block_stop", `"index":`+itoa(i)))
}

func TestConversation(t *testing.T) {
	us := convtest.Usages
	for _, stream := range []bool{false, true} {
		t.Run(map[bool]string{false: "complete", true: "stream"}[stream], func(t *testing.T) {
			var replies []fakeapi.Reply
			if !stream {
				replies = []fakeapi.Reply{
					jsonReply(200, message("small", convCalls, "tool_use", us[0])),
					jsonReply(200, message("small", textContent(convtest.Hedge), "end_turn", us[1])),
					jsonReply(200, message("strong", textContent(convtest.StrongAnswer), "end_turn", us[2])),
				}
			} else {
				replies = []fakeapi.Reply{
					sseReply(messageEvents("small", us[0], "tool_use",
						toolBlock(0, "toolu_1", "kora__lookup", `{"q":`, `"burn"}`),
						toolBlock(1, "toolu_2", "echo", `{"say":"hi"}`),
						toolBlock(2, "toolu_3", "echo", `{"say"`, `: `))...),
					sseReply(messageEvents("small", us[1], "end_turn", textBlock(0, "I'm not sure ", "what the burn is."))...),
					sseReply(messageEvents("strong", us[2], "end_turn", textBlock(0, "The burn ", "is 42 USD."))...),
				}
			}
			f := fakeapi.New(t, replies...)
			var text strings.Builder
			var onText func(string)
			if stream {
				onText = func(d string) { text.WriteString(d) }
			}
			turn, log := convtest.Run(t, newProvider(t, f, anthropic.Config{APIKey: testKey}), onText)
			convtest.Check(t, turn, log)
			if stream && text.String() != convtest.Hedge+convtest.StrongAnswer {
				t.Errorf("streamed text = %q, want the hedge then the strong answer", text.String())
			}

			reqs := f.Requests()
			if len(reqs) != 3 {
				t.Fatalf("%d requests, want 3", len(reqs))
			}
			head := `"max_tokens":1024,"system":"be brief","tools":` + convTools
			if stream {
				head = `"stream":true,` + head
			}
			// The bad arguments as the model wrote them: cut-off object
			// text when streamed, a JSON string when whole.
			badArgs := convtest.BadArgs
			if !stream {
				badArgs = quote(convtest.BadArgs)
			}
			first := `{"role":"user","content":` + quote(convtest.Question) + `}`
			assertJSON(t, reqs[0].Body, `{"model":"small",`+head+`,"messages":[`+first+`]}`)
			afterTools := first + `,
				{"role":"assistant","content":[
				 {"type":"tool_use","id":"toolu_1","name":"kora__lookup","input":{"q":"burn"}},
				 {"type":"tool_use","id":"toolu_2","name":"echo","input":{"say":"hi"}},
				 {"type":"tool_use","id":"toolu_3","name":"echo","input":{"invalid_arguments":` + quote(badArgs) + `}}]},
				{"role":"user","content":[
				 {"type":"tool_result","tool_use_id":"toolu_1","content":` + quote(convtest.LookupResult) + `},
				 {"type":"tool_result","tool_use_id":"toolu_2","content":` + quote(convtest.EchoResult) + `},
				 {"type":"tool_result","tool_use_id":"toolu_3","content":` + quote(convtest.BadArgsResult(turn)) + `,"is_error":true}]}`
			assertJSON(t, reqs[1].Body, `{"model":"small",`+head+`,"messages":[`+afterTools+`]}`)
			// The reissue is the same request, to the other model.
			assertJSON(t, reqs[2].Body, `{"model":"strong",`+head+`,"messages":[`+afterTools+`]}`)
		})
	}
}
