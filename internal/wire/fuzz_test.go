package wire

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/hookhost/hookhost/hooks"
	pluginv1 "github.com/hookhost/hookhost/plugins/proto/v1"
)

func valid(s string) string { return strings.ToValidUTF8(s, "\uFFFD") }

// FuzzConvertRoundTrip checks the conversion layer both ways:
//
//   - any bytes that parse as a message convert to hooks values and back to
//     the same values (the conversions are total and stable);
//   - hooks values holding any text, invalid UTF-8 included, can always be
//     sent once repaired, and arrive with exactly the repaired text, while
//     JSON bytes (arguments, schemas) arrive untouched.
func FuzzConvertRoundTrip(f *testing.F) {
	seed, _ := proto.Marshal(llmCallToPB(hooks.LLMCall{
		SessionID: "s1", Iteration: 2, Route: hooks.RouteGateway,
		Request:  hooks.ModelRequest{Model: "m", System: "sys", Messages: someMessages, Tools: someTools, Temperature: ptr(0.5)},
		Response: hooks.ModelResponse{Model: "m", Message: hooks.Message{Role: hooks.RoleAssistant, Content: "hi"}},
	}))
	f.Add(seed, "plain", "text", []byte(`{"a":1}`))
	f.Add([]byte{}, "bad \xff byte", "\xc3", []byte("\xff\x00"))
	f.Add([]byte{0x0a, 0x02, 0xc3, 0x28}, "\xed\xa0\x80 surrogate", "", []byte{})
	f.Fuzz(func(t *testing.T, data []byte, a, b string, args []byte) {
		var pb pluginv1.LlmCall
		if proto.Unmarshal(data, &pb) == nil {
			h := llmCallFromPB(&pb)
			if again := llmCallFromPB(llmCallToPB(h)); !reflect.DeepEqual(h, again) {
				t.Fatalf("unstable round trip:\n got  %s\n want %s", show(again), show(h))
			}
		}

		arguments := json.RawMessage(args)
		if len(args) == 0 {
			arguments = nil // proto3 cannot tell empty from absent
		}
		msg := func(s string) hooks.Message {
			return hooks.Message{Role: hooks.Role(s), Content: s, ToolCallID: s, ToolName: s,
				ToolCalls: []hooks.ToolCall{{ID: s, Name: s, Arguments: arguments}}}
		}
		spec := func(s string) hooks.ToolSpec { return hooks.ToolSpec{Name: s, Description: s, InputSchema: arguments} }
		call := func(a, b string) hooks.LLMCall {
			return hooks.LLMCall{
				SessionID: a, Route: hooks.Route(b),
				Request:  hooks.ModelRequest{Model: a, System: b, Messages: []hooks.Message{msg(a), msg(b)}, Tools: []hooks.ToolSpec{spec(b)}},
				Response: hooks.ModelResponse{Model: b, Message: msg(a), StopReason: hooks.StopReason(b)},
			}
		}
		send(t, "llm call", call(a, b), call(valid(a), valid(b)), llmCallToPB, llmCallFromPB)

		outcome := func(a, b string) hooks.ToolCallOutcome {
			return hooks.ToolCallOutcome{SessionID: a, CallID: b, Name: a, Arguments: arguments,
				Result: hooks.ToolResult{Content: b}, Status: hooks.CallStatus(a)}
		}
		send(t, "tool call outcome", outcome(a, b), outcome(valid(a), valid(b)), toolCallOutcomeToPB, toolCallOutcomeFromPB)

		// Plugin to host: an answer with any text.
		send(t, "tool result", &hooks.ToolResult{Content: a}, &hooks.ToolResult{Content: valid(a)}, toolResultResponseToPB, toolResultResponseFromPB)
		send(t, "text", &hooks.TextReplacement{Text: b}, &hooks.TextReplacement{Text: valid(b)}, textToPB, textFromPB)
	})
}

// send converts in, repairs it as the sending side does, and checks that it
// marshals, that a second repair finds nothing, and that it arrives as want.
func send[T any, M proto.Message](t *testing.T, name string, in, want T, to func(T) M, from func(M) T) {
	t.Helper()
	m := to(in)
	repairText(m)
	if n := repairText(m); n != 0 {
		t.Fatalf("%s: a second repair changed %d fields", name, n)
	}
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatalf("%s: repaired message does not marshal: %v", name, err)
	}
	fresh := m.ProtoReflect().New().Interface().(M)
	if err := proto.Unmarshal(b, fresh); err != nil {
		t.Fatalf("%s: unmarshal: %v", name, err)
	}
	if got := from(fresh); !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: round trip\n got  %s\n want %s", name, show(got), show(want))
	}
}
