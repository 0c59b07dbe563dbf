package clienttest

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hookhost/hookhost/internal/fakeapi"
)

// tool is a client tool, rendered in each protocol's shape.
type tool struct{ Name, Description, Schema string }

var (
	getTime          = tool{"get_time", "Current time in a time zone", `{"type":"object","properties":{"zone":{"type":"string"}},"required":["zone"]}`}
	deleteEverything = tool{"delete_everything", "Deletes every file", `{"type":"object","properties":{}}`}
)

// What the lookup plugin (internal/lookup) owns, answers and blocks.
const (
	pluginTool      = "lookup__weather"
	pluginResult    = "sunny, 21 C"
	blockedMessage  = "lookup: delete_everything is not allowed through this gateway"
	cachedTime      = `{"time":"12:00","zone":"UTC","source":"lookup cache"}`
	pluginToolMatch = "lookup__"
)

func user(text string) map[string]any { return map[string]any{"role": "user", "content": text} }

// request is a request body for the SDK call sdk with the conversation so
// far (input) and the client's tools.
func request(sdk, model string, input []any, tools []tool, stream bool) map[string]any {
	var specs []any
	for _, tl := range tools {
		schema := json.RawMessage(tl.Schema)
		switch sdk {
		case chat:
			specs = append(specs, map[string]any{"type": "function", "function": map[string]any{"name": tl.Name, "description": tl.Description, "parameters": schema}})
		case responses:
			specs = append(specs, map[string]any{"type": "function", "name": tl.Name, "description": tl.Description, "parameters": schema, "strict": false})
		case messages:
			specs = append(specs, map[string]any{"name": tl.Name, "description": tl.Description, "input_schema": schema})
		}
	}
	p := map[string]any{"model": model}
	switch sdk {
	case chat:
		p["messages"] = input
		if stream {
			p["stream_options"] = map[string]any{"include_usage": true}
		}
	case responses:
		p["input"] = input
	case messages:
		p["messages"] = input
		p["max_tokens"] = 256
	}
	if specs != nil {
		p["tools"] = specs
	}
	return p
}

// continuation is input followed by the assistant's answer as the SDK
// returned it and the client's results for its calls, the way an agent
// continues a conversation in each protocol.
func continuation(t *testing.T, sdk string, input []any, result json.RawMessage, results []call) []any {
	t.Helper()
	next := append([]any(nil), input...)
	switch sdk {
	case chat:
		var r struct {
			Choices []struct {
				Message struct {
					Content   *string         `json:"content"`
					ToolCalls json.RawMessage `json:"tool_calls"`
				} `json:"message"`
			} `json:"choices"`
		}
		mustDecode(t, result, &r)
		next = append(next, map[string]any{"role": "assistant", "content": r.Choices[0].Message.Content, "tool_calls": r.Choices[0].Message.ToolCalls})
		for _, c := range results {
			next = append(next, map[string]any{"role": "tool", "tool_call_id": c.ID, "content": c.Args})
		}
	case responses:
		var r struct {
			Output []json.RawMessage `json:"output"`
		}
		mustDecode(t, result, &r)
		for _, it := range r.Output {
			next = append(next, it)
		}
		for _, c := range results {
			next = append(next, map[string]any{"type": "function_call_output", "call_id": c.ID, "output": c.Args})
		}
	case messages:
		var r struct {
			Content json.RawMessage `json:"content"`
		}
		mustDecode(t, result, &r)
		next = append(next, map[string]any{"role": "assistant", "content": r.Content})
		var blocks []any
		for _, c := range results {
			blocks = append(blocks, map[string]any{"type": "tool_result", "tool_use_id": c.ID, "content": c.Args})
		}
		next = append(next, map[string]any{"role": "user", "content": blocks})
	}
	return next
}

// item is one step of a conversation an upstream received, whatever its
// protocol: a text, a tool call or a tool result.
type item = fakeapi.Item

// conversationOf flattens the conversation in a request body of protocol
// proto.
func conversationOf(t *testing.T, proto string, body []byte) []item {
	t.Helper()
	conv, err := flatten(proto, body)
	if err != nil {
		t.Fatalf("not the JSON expected: %v\n%s", err, body)
	}
	return conv
}

// flatten is conversationOf for callers that are no test, such as a fake
// upstream's handler.
var flatten = fakeapi.Conversation

// toolsOf names the tools a request body of protocol proto offers.
func toolsOf(t *testing.T, proto string, body []byte) []string {
	t.Helper()
	names, err := fakeapi.Tools(proto, body)
	if err != nil {
		t.Fatalf("not the JSON expected: %v\n%s", err, body)
	}
	return names
}

// find returns the position of the first item of kind with call id, or -1.
func find(conv []item, kind, id string) int {
	return slices.IndexFunc(conv, func(i item) bool { return i.Kind == kind && i.ID == id })
}

// words collapses runs of white space, so texts joined across rounds
// compare whatever separator a protocol puts between rounds.
func words(s string) string { return strings.Join(strings.Fields(s), " ") }

// finalStop and toolStop are how each protocol says the message ended
// with an answer or with calls for the client.
func finalStop(sdk string) string {
	switch sdk {
	case chat:
		return "stop"
	case responses:
		return "completed"
	}
	return "end_turn"
}

func toolStop(sdk string) string {
	switch sdk {
	case chat:
		return "tool_calls"
	case responses:
		return "completed"
	}
	return "tool_use"
}

// sameCalls reports whether two call lists match, arguments compared as
// JSON values.
func sameCalls(a, b []call) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !handedAs(a[i].ID, b[i].ID) || a[i].Name != b[i].Name || !sameJSON(a[i].Args, b[i].Args) {
			return false
		}
	}
	return true
}

// handedAs reports whether a client got the call id upstream as it came
// or as one hookhost minted for it: the upstream's prefix and 32 hex
// digits, so that no other client can continue that conversation.
func handedAs(got, upstream string) bool {
	if got == upstream {
		return true
	}
	return minted.MatchString(got) && strings.HasPrefix(got, upstream[:strings.IndexByte(upstream, '_')+1])
}

var minted = regexp.MustCompile(`^[a-z]+[_-][0-9a-f]{32}$`)

// check checks one SDK call's outcome: a 200, the raw body or stream valid
// for its protocol, and the SDK's accumulated object saying the same as
// the raw bytes. It returns what the client ended up with.
func check(t *testing.T, sdk string, stream bool, o outcome) visible {
	t.Helper()
	o.ok(t)
	ex := o.only(t)
	if ex.Status != 200 {
		t.Fatalf("status %d: %s", ex.Status, ex.Body)
	}
	got := visibleOf(t, sdk, o.Result)
	var raw visible
	if stream {
		if ct := ex.Headers["content-type"]; !strings.HasPrefix(ct, "text/event-stream") {
			t.Errorf("a stream with Content-Type %q", ct)
		}
		if enc := ex.Headers["content-encoding"]; enc != "" {
			t.Errorf("a stream with Content-Encoding %q", enc)
		}
		raw = checkStream(t, sdk, ex.bytes(), sdk == chat)
		if helper := strings.Join(o.Texts, ""); helper != raw.Text {
			t.Errorf("the SDK's text events said %q, the stream carried %q", helper, raw.Text)
		}
	} else {
		raw = visibleOf(t, sdk, ex.bytes())
	}
	if raw.Text != got.Text || !sameCalls(raw.Calls, got.Calls) || raw.In != got.In || raw.Out != got.Out || raw.Stop != got.Stop || raw.ID != got.ID {
		t.Errorf("the SDK accumulated %+v, the raw bytes carried %+v", got, raw)
	}
	return got
}
