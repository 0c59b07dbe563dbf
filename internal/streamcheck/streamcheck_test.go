package streamcheck_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/hookhost/hookhost/internal/streamcheck"
)

// The testdata streams are one round of text and two tool calls, as the
// providers send it: "Hello there.", get_time for CET and UTC, 3 tokens in
// and 4 out.
var wantCalls = []streamcheck.Call{{ID: "call_a", Name: "get_time", Arguments: `{"zone":"CET"}`}, {ID: "call_b", Name: "get_time", Arguments: `{"zone":"UTC"}`}}

func valid(t *testing.T, proto string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/" + proto + ".sse")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// read is what every checker reads from a stream.
type read struct {
	text    string
	calls   []streamcheck.Call
	stop    string
	in, out int
}

func check(proto, s string, includeUsage bool) (read, error) {
	switch proto {
	case "chat":
		c, err := streamcheck.Chat([]byte(s), includeUsage)
		return read{c.Text, c.Calls, c.Finish, c.InputTokens(), c.OutputTokens()}, err
	case "responses":
		c, err := streamcheck.Responses([]byte(s))
		return read{c.Text, c.Calls, c.Status, c.InputTokens, c.OutputTokens}, err
	default:
		c, err := streamcheck.Messages([]byte(s))
		return read{c.Text, c.Calls, c.StopReason, c.InputTokens, c.OutputTokens}, err
	}
}

func drop(pattern string) func(string) string {
	re := regexp.MustCompile(pattern)
	return func(s string) string { return re.ReplaceAllString(s, "") }
}

func replace(old, new string, n int) func(string) string {
	return func(s string) string { return strings.Replace(s, old, new, n) }
}

// frameOf returns the first frame whose text contains each of parts.
func frameOf(s string, parts ...string) string {
	for _, f := range strings.SplitAfter(s, "\n\n") {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(f, p)
		}
		if all {
			return f
		}
	}
	return ""
}

// TestValidStreamsPass checks that the checkers accept streams the SDKs
// accumulate, keepalive comments included, and read what they carry.
func TestValidStreamsPass(t *testing.T) {
	for _, proto := range []string{"chat", "responses", "messages"} {
		for name, edit := range map[string]func(string) string{
			"as sent": func(s string) string { return s },
			"with comments": func(s string) string {
				return ": ping\n\n" + strings.Replace(s, "\n\n", "\n\n: keepalive\n\n", 3) + ": ping\n\n"
			},
			"with CRLF":      func(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") },
			"data: no space": func(s string) string { return strings.ReplaceAll(s, "data: ", "data:") },
		} {
			t.Run(proto+"/"+name, func(t *testing.T) {
				got, err := check(proto, edit(valid(t, proto)), true)
				if err != nil {
					t.Fatalf("a valid stream was refused: %v", err)
				}
				want := map[string]string{"chat": "tool_calls", "responses": "completed", "messages": "tool_use"}[proto]
				if got.text != "Hello there." || len(got.calls) != 2 || got.calls[0] != wantCalls[0] || got.calls[1] != wantCalls[1] ||
					got.stop != want || got.in != 3 || got.out != 4 {
					t.Errorf("read %+v", got)
				}
			})
		}
	}
}

// TestFailedStreamsPass checks the in-band error each protocol ends a
// failed stream with is accepted and read.
func TestFailedStreamsPass(t *testing.T) {
	chatFailed := "data: " + strings.SplitN(strings.TrimPrefix(valid(t, "chat"), "data: "), "\n\n", 2)[0] + "\n\n" +
		`data: {"error":{"message":"provider openai: HTTP 529 overloaded","type":"server_error","param":null,"code":null}}` + "\n\n"
	c, err := streamcheck.Chat([]byte(chatFailed), true)
	if err != nil || c.Error["message"] != "provider openai: HTTP 529 overloaded" {
		t.Errorf("chat: %v, error %v", err, c.Error)
	}
	msgError := "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"retry later\"}}\n\n"
	msgs := valid(t, "messages")
	for name, s := range map[string]string{
		"before message_start": msgError,
		"mid-stream":           msgs[:strings.Index(msgs, "event: content_block_stop")] + msgError,
	} {
		m, err := streamcheck.Messages([]byte(s))
		if err != nil || m.Error["type"] != "overloaded_error" {
			t.Errorf("messages %s: %v, error %v", name, err, m.Error)
		}
	}
	resp := valid(t, "responses")
	// A failed response may leave the item it was writing open.
	failed := resp[:strings.Index(resp, "event: response.output_text.done")] +
		"event: error\ndata: {\"type\":\"error\",\"sequence_number\":6,\"code\":\"server_error\",\"message\":\"overloaded\",\"param\":null}\n\n" +
		"event: response.failed\ndata: {\"type\":\"response.failed\",\"sequence_number\":7,\"response\":{\"id\":\"resp_fake1\",\"object\":\"response\",\"model\":\"m\",\"status\":\"failed\",\"output\":[{\"id\":\"msg_fake1\",\"type\":\"message\"}],\"usage\":null}}\n\n"
	r, err := streamcheck.Responses([]byte(failed))
	if err != nil || r.Status != "failed" || r.Text != "Hello there." {
		t.Errorf("responses: %v, status %q, text %q", err, r.Status, r.Text)
	}
}

// TestChecksRefuseWhatClientsReject breaks a valid stream in one way the
// SDKs do not tolerate (per WIRE.md) at a time and expects the checker to
// refuse it with a sentence naming the fault.
func TestChecksRefuseWhatClientsReject(t *testing.T) {
	type breach struct {
		name    string
		breakIt func(string) string
		want    string // a fragment of the expected violation
	}
	chatUsage := `data: {"choices":[],`
	chatFinish := `"finish_reason":"tool_calls"`
	cases := map[string][]breach{
		"chat": {
			{"no blank line at the end", func(s string) string { return strings.TrimSuffix(s, "\n") }, "blank line"},
			{"a line that is no field", func(s string) string { return "id: 1\n" + s }, "neither a comment"},
			{"an event name", func(s string) string { return "event: chunk\n" + s }, "event: line"},
			{"a chunk that is not JSON", func(s string) string { return "data: {oops\n\n" + s }, "not a JSON object"},
			{"a chunk with another id", replace(`"id":"chatcmpl-fake1"`, `"id":"chatcmpl-other"`, 3), "a changed id"},
			{"a chunk with another created", replace(`"created":1700000001`, `"created":1700000002`, 2), "a changed id"},
			{"a chunk with another model", replace(`"model":"m"`, `"model":"n"`, 2), "a changed id"},
			{"a chunk without id", replace(`"id":"chatcmpl-fake1",`, ``, 1), "no id"},
			{"another object", replace(`"object":"chat.completion.chunk"`, `"object":"chat.completion"`, 1), "object"},
			{"no choices field", replace(`"choices":[{"delta":{"content":"Hello "},"finish_reason":null,"index":0,"logprobs":null}],`, ``, 1), "no choices field"},
			{"a second choice index", replace(`"finish_reason":null,"index":0`, `"finish_reason":null,"index":1`, 1), "index 0"},
			{"no role in the first chunk", replace(`"role":"assistant"`, `"role":null`, 1), "delta.role"},
			{"a tool-call delta without index", replace(`{"function":{"arguments":"{\"zone\""},"index":0}`, `{"function":{"arguments":"{\"zone\""}}`, 1), "without index"},
			{"a tool call opened at index 1", replace(`"id":"call_a","index":0`, `"id":"call_a","index":1`, 1), "0-based and dense"},
			{"a first tool-call delta without id", replace(`"id":"call_a",`, ``, 1), "lacks id"},
			{"a first tool-call delta without type", replace(`"index":0,"type":"function"`, `"index":0`, 1), "lacks id"},
			{"a later tool-call delta with type", replace(`{"function":{"arguments":"{\"zone\""},"index":0}`, `{"function":{"arguments":"{\"zone\""},"index":0,"type":"function"}`, 1), "repeats id, type or name"},
			{"a later tool-call delta with the name", replace(`{"function":{"arguments":"{\"zone\""},"index":0}`, `{"function":{"arguments":"{\"zone\"","name":"get_time"},"index":0}`, 1), "repeats id, type or name"},
			{"two finish reasons", replace(`"finish_reason":null`, `"finish_reason":"stop"`, 1), "finish_reason"},
			{"no finish reason", replace(chatFinish, `"finish_reason":null`, 1), "finish_reason, want exactly 1"},
			{"an empty finish reason", replace(chatFinish, `"finish_reason":""`, 1), "empty finish_reason"},
			{"a choice chunk after the finish", func(s string) string {
				f := frameOf(s, `"content":"Hello "`)
				return strings.Replace(s, chatUsage, f+chatUsage, 1)
			}, "after finish_reason"},
			{"usage on a choice chunk", replace(`"usage":null`, `"usage":{"prompt_tokens":1}`, 1), "want null"},
			{"no usage field on a choice chunk", replace(`,"usage":null`, ``, 1), "want null"},
			{"no usage chunk", drop(`data: \{"choices":\[\][^\n]*\n\n`), "usage chunks"},
			{"two usage chunks", func(s string) string { f := frameOf(s, chatUsage); return strings.Replace(s, f, f+f, 1) }, "usage chunks"},
			{"a usage chunk without usage", replace(`"usage":{"completion_tokens":4,"prompt_tokens":3,"total_tokens":7}`, `"usage":null`, 1), "no usage"},
			{"a usage chunk that is not last", func(s string) string {
				f := frameOf(s, chatUsage)
				return strings.Replace(strings.Replace(s, f, "", 1), frameOf(s, chatFinish), f+frameOf(s, chatFinish), 1)
			}, "after the usage chunk"},
			{"a wrong total", replace(`"total_tokens":7`, `"total_tokens":8`, 1), "total_tokens"},
			{"no [DONE]", func(s string) string { return strings.TrimSuffix(s, "data: [DONE]\n\n") }, "[DONE]"},
			{"a chunk after [DONE]", func(s string) string { return s + frameOf(s, `"content":"Hello "`) }, "after data: [DONE]"},
			{"an error payload without code", func(s string) string {
				return frameOf(s, `"role":"assistant"`) + `data: {"error":{"message":"m","type":"server_error"}}` + "\n\n"
			}, "lacks message, type or code"},
			{"an error payload then [DONE]", func(s string) string {
				return frameOf(s, `"role":"assistant"`) + `data: {"error":{"message":"m","type":"server_error","code":null}}` + "\n\ndata: [DONE]\n\n"
			}, "ends with [DONE]"},
			{"a chunk after the error payload", func(s string) string {
				return frameOf(s, `"role":"assistant"`) + `data: {"error":{"message":"m","type":"server_error","code":null}}` + "\n\n" + frameOf(s, `"content":"Hello "`)
			}, "after the error payload"},
			{"empty", func(string) string { return "" }, "[DONE]"},
		},
		"responses": {
			{"no response.created", drop(`(?s)^event: response.created\n[^\n]*\n\n`), "response.created"},
			{"a second response.created", func(s string) string {
				return strings.Replace(s, "event: response.in_progress", strings.TrimSuffix(frameOf(s, "event: response.created"), "\n\n")+"\n\nevent: response.in_progress", 1)
			}, "response.created"},
			{"a sequence number that goes back", replace(`"sequence_number":3`, `"sequence_number":1`, 1), "sequence_number"},
			{"no sequence number", replace(`"sequence_number":3,`, ``, 1), "sequence_number"},
			{"a frame named after another type", replace("event: response.in_progress", "event: response.progress", 1), "named"},
			{"an unnamed frame", replace("event: response.output_text.delta\n", "", 1), "named"},
			{"a response with another id", replace(`"id":"resp_fake1"`, `"id":"resp_other"`, 1), "response id"},
			{"a response with another model", replace(`"model":"m"`, `"model":"n"`, 1), "model"},
			{"another object", replace(`"object":"response"`, `"object":"chat"`, 1), "object"},
			{"created with output", replace(`"output":[]`, `"output":[{}]`, 1), "output"},
			{"a delta before its item", drop(`event: response.output_item.added\n[^\n]*"output_index":0[^\n]*\n\n`), "before it was added"},
			{"an item added at the wrong index", replace(`"output_index":1,"sequence_number":9`, `"output_index":2,"sequence_number":9`, 1), "count up from 0"},
			{"an item added without id", replace(`{"content":[],"id":"msg_fake1",`, `{"content":[],`, 1), "output item added with id"},
			{"a call added with arguments", replace(`"arguments":"","call_id":"call_a"`, `"arguments":"{}","call_id":"call_a"`, 1), "function_call added"},
			{"a call_id used twice", replace(`"call_id":"call_b","id":"fc_fake1_1","name":"get_time","status":"in_progress"`, `"call_id":"call_a","id":"fc_fake1_1","name":"get_time","status":"in_progress"`, 1), "seen before: true"},
			{"a text delta before its content part", drop(`event: response.content_part.added\n[^\n]*\n\n`), "before its content part"},
			{"a text delta that is no string", replace(`"delta":"Hello "`, `"delta":null`, 1), "without a string delta"},
			{"an arguments delta that is no string", replace(`{"delta":"{\"zone\"","item_id":"fc_fake1_0"`, `{"delta":{},"item_id":"fc_fake1_0"`, 1), "without a string delta"},
			{"a wrong item_id", replace(`"delta":"Hello ","item_id":"msg_fake1"`, `"delta":"Hello ","item_id":"msg_other"`, 1), "item_id"},
			{"output_text.done with other text", replace(`"text":"Hello there.","type":"response.output_text.done"`, `"text":"Hello.","type":"response.output_text.done"`, 1), "the deltas built"},
			{"content_part.done with other text", replace(`"part":{"annotations":[],"text":"Hello there."`, `"part":{"annotations":[],"text":"Hello."`, 1), "the deltas built"},
			{"arguments.done with other arguments", replace(`"arguments":"{\"zone\":\"CET\"}","item_id"`, `"arguments":"{}","item_id"`, 1), "the deltas built"},
			{"a call done with other arguments", replace(`{"item":{"arguments":"{\"zone\":\"CET\"}"`, `{"item":{"arguments":"{}"`, 1), "function_call done with arguments"},
			{"a delta after its item was done", func(s string) string {
				return strings.Replace(s, "event: response.output_item.added\ndata: {\"item\":{\"arguments\":\"\",\"call_id\":\"call_a\"",
					strings.Replace(frameOf(s, `"delta":"there."`), `"sequence_number":5`, `"sequence_number":9`, 1)+"event: response.output_item.added\ndata: {\"item\":{\"arguments\":\"\",\"call_id\":\"call_a\"", 1)
			}, "after the item was done"},
			{"an item done twice", func(s string) string {
				f := frameOf(s, "event: response.output_item.done")
				return strings.Replace(s, f, f+f, 1)
			}, "done twice"},
			{"an unknown event", func(s string) string {
				return strings.Replace(strings.Replace(s, "event: response.output_text.done", "event: response.refusal.done", 1), `"type":"response.output_text.done"`, `"type":"response.refusal.done"`, 1)
			}, "unexpected event"},
			{"an error not followed by response.failed", func(s string) string {
				return strings.Replace(s, "event: response.completed", "event: error\ndata: {\"type\":\"error\",\"sequence_number\":19}\n\nevent: response.completed", 1)
			}, "not followed by response.failed"},
			{"no response.completed", drop(`event: response.completed\n[^\n]*\n\n`), "ends with"},
			{"an event after response.completed", func(s string) string { return s + frameOf(s, "event: response.output_text.delta") }, "must end with"},
			{"completed with another status", replace(`"status":"completed","temperature"`, `"status":"incomplete","temperature"`, 1), "with status"},
			{"completed with an item missing", replace(`{"content":[{"annotations":[],"text":"Hello there.","type":"output_text"}],"id":"msg_fake1","role":"assistant","status":"completed","type":"message"},{"arguments"`, `{"arguments"`, 1), "holds 2 output items"},
			{"completed with an item changed", replace(`"name":"get_time","status":"completed","type":"function_call"}],"parallel_tool_calls"`, `"name":"get_date","status":"completed","type":"function_call"}],"parallel_tool_calls"`, 1), "it was done as"},
			{"completed while an item is open", drop(`event: response.output_item.done\n[^\n]*"fc_fake1_1"[^\n]*\n\n`), "still open"},
			{"completed without usage", replace(`"usage":{"input_tokens":3,"input_tokens_details":{"cached_tokens":0},"output_tokens":4,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":7}`, `"usage":null`, 1), "want input_tokens"},
			{"a wrong total", replace(`"total_tokens":7`, `"total_tokens":8`, 1), "total_tokens"},
			{"empty", func(string) string { return "" }, "begins"},
		},
		"messages": {
			{"a ping before message_start", func(s string) string { return "event: ping\ndata: {\"type\":\"ping\"}\n\n" + s }, "before message_start"},
			{"two message_start", func(s string) string { return s[:strings.Index(s, "\n\n")+2] + s }, "second message_start"},
			{"an unnamed frame", replace("event: content_block_delta\n", "", 1), "unnamed"},
			{"a frame named after another type", replace("event: content_block_delta\n", "event: content_block_stop\n", 1), "unnamed"},
			{"data that is not JSON", replace(`data: {"type":"ping"}`, `data: ping`, 1), "not a JSON object"},
			{"content in message_start", replace(`"content":[]`, `"content":[{"type":"text","text":"x"}]`, 1), "duplicated"},
			{"no input tokens", replace(`"input_tokens":3`, `"input_tokens":0`, 1), "input_tokens"},
			{"a message_start role other than assistant", replace(`"role":"assistant"`, `"role":"user"`, 1), "role"},
			{"a block index skipped", func(s string) string { return strings.ReplaceAll(s, `"index":2`, `"index":3`) }, "count up"},
			{"a block opened while another is open", drop(`event: content_block_stop\n[^\n]*"index":0[^\n]*\n\n`), "is open"},
			{"a delta for a block not open", replace(`"index":1,"type":"content_block_delta"`, `"index":0,"type":"content_block_delta"`, 1), "a delta for block"},
			{"a stop for a block not open", replace(`{"index":1,"type":"content_block_stop"}`, `{"index":0,"type":"content_block_stop"}`, 1), "content_block_stop for block"},
			{"a text block started with text", replace(`{"text":"","type":"text"}`, `{"text":"Hi","type":"text"}`, 1), `want ""`},
			{"a tool_use block started with input", replace(`"input":{},"name":"get_time"`, `"input":{"zone":"CET"},"name":"get_time"`, 1), "input {}"},
			{"a tool_use block without name", replace(`"input":{},"name":"get_time"`, `"input":{}`, 1), "input {}"},
			{"a block of an unknown type", replace(`{"text":"","type":"text"}`, `{"text":"","type":"image"}`, 1), "content block of type"},
			{"a text delta in a tool_use block", replace(`{"partial_json":"{\"zone\"","type":"input_json_delta"}`, `{"text":"{\"zone\"","type":"text_delta"}`, 1), "delta in a"},
			{"a text_delta without text", replace(`{"text":"Hello ","type":"text_delta"}`, `{"type":"text_delta"}`, 1), "without text"},
			{"an input_json_delta without partial_json", replace(`{"partial_json":"{\"zone\"","type":"input_json_delta"}`, `{"type":"input_json_delta"}`, 1), "without partial_json"},
			{"fragments that are no JSON object", replace(`:\"CET\"}`, `:\"CET\"`, 1), "not a JSON object"},
			{"message_delta without stop_reason", replace(`"stop_reason":"tool_use",`, ``, 1), "stop_reason"},
			{"message_delta without stop_sequence", replace(`,"stop_sequence":null},"type":"message_delta"`, `},"type":"message_delta"`, 1), "stop_sequence"},
			{"no output_tokens in message_delta", replace(`"usage":{"output_tokens":4}`, `"usage":{}`, 1), "output_tokens"},
			{"message_delta while a block is open", drop(`event: content_block_stop\n[^\n]*"index":2[^\n]*\n\n`), "while block 2 is open"},
			{"two message_delta", func(s string) string { f := frameOf(s, "event: message_delta"); return strings.Replace(s, f, f+f, 1) }, "second message_delta"},
			{"a ping after message_delta", replace("event: message_stop", "event: ping\ndata: {\"type\":\"ping\"}\n\nevent: message_stop", 1), "after message_delta"},
			{"message_stop before message_delta", drop(`event: message_delta\n[^\n]*\n\n`), "before message_delta"},
			{"no message_stop", drop(`event: message_stop\n[^\n]*\n\n`), "message_stop"},
			{"a frame after message_stop", func(s string) string { return s + "event: ping\ndata: {\"type\":\"ping\"}\n\n" }, "after message_stop"},
			{"an unknown event", replace("event: ping\ndata: {\"type\":\"ping\"}", "event: pong\ndata: {\"type\":\"pong\"}", 1), "unknown event"},
			{"an error without message", func(s string) string {
				return s[:strings.Index(s, "event: content_block_stop")] + "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\"}}\n\n"
			}, "error.type and error.message"},
			{"a frame after an error", func(s string) string {
				return s[:strings.Index(s, "event: content_block_stop")] + "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"m\"}}\n\n" + frameOf(s, "event: content_block_stop")
			}, "after an error event"},
			{"empty", func(string) string { return "" }, "no message_start"},
		},
	}
	for proto, breaches := range cases {
		for _, c := range breaches {
			t.Run(proto+"/"+c.name, func(t *testing.T) {
				s := valid(t, proto)
				broken := c.breakIt(s)
				if broken == s {
					t.Fatalf("the case does not change the stream")
				}
				_, err := check(proto, broken, true)
				if err == nil {
					t.Fatalf("not refused:\n%s", broken)
				}
				if !strings.Contains(err.Error(), c.want) {
					t.Errorf("not refused with %q but with:\n%v\n%s", c.want, err, broken)
				}
			})
		}
	}
}

// TestChatUsageOnlyWhenAsked checks the include_usage rules from the other
// side: without it, a stream must carry no usage at all.
func TestChatUsageOnlyWhenAsked(t *testing.T) {
	s := valid(t, "chat")
	if _, err := streamcheck.Chat([]byte(s), false); err == nil || !strings.Contains(err.Error(), "did not ask") || !strings.Contains(err.Error(), "without include_usage") {
		t.Errorf("usage without include_usage: %v", err)
	}
	plain := regexp.MustCompile(`,"usage":null|data: \{"choices":\[\][^\n]*\n\n`).ReplaceAllString(s, "")
	if c, err := streamcheck.Chat([]byte(plain), false); err != nil || c.Usage != nil || c.Text != "Hello there." {
		t.Errorf("a stream without usage: %v, usage %v", err, c.Usage)
	}
}

// TestStreamsCutShortAreRefused cuts each valid stream after every event
// but the last: what a client gets when the connection drops must never
// pass for a whole answer, nor make a checker panic.
func TestStreamsCutShortAreRefused(t *testing.T) {
	for _, proto := range []string{"chat", "responses", "messages"} {
		s := valid(t, proto)
		for at := 0; at < len(s)-2; at++ {
			if at > 0 && s[at-1] != '\n' && at%97 != 0 {
				continue
			}
			if _, err := check(proto, s[:at], true); err == nil {
				t.Errorf("%s: a stream cut after %d bytes passed:\n%s", proto, at, s[:at])
			}
		}
	}
}
