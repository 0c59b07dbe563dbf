package messages_test

import (
	"encoding/json"
	"regexp"
	"testing"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/codec/messages"
	"github.com/hookhost/hookhost/internal/dialect"
	"github.com/hookhost/hookhost/internal/fakeapi"
	"github.com/hookhost/hookhost/internal/upstream"
	"github.com/hookhost/hookhost/llm"
)

func call(t *testing.T) *dialect.Call {
	t.Helper()
	c, err := messages.New().Decode([]byte(`{"model":"claude-haiku-4-5","max_tokens":64,"messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var idRE = regexp.MustCompile(`"id":"msg_[0-9a-f]{32}"`)

func TestEncodeFresh(t *testing.T) {
	res := &dialect.Result{
		Model: "claude-haiku-4-5",
		Text:  []string{"Let me check.", "", "It is <sunny>."},
		ToolCalls: []hooks.ToolCall{
			{ID: "toolu_1", Name: "get_weather", Arguments: json.RawMessage(`{ "city": "Paris" }`)},
			{ID: "toolu_2", Name: "broken", Arguments: json.RawMessage(`{"city":`)},
		},
		Stop:  hooks.StopToolUse,
		Usage: hooks.Usage{InputTokens: 120, OutputTokens: 33},
	}
	body, err := messages.New().Encode(call(t), res)
	if err != nil {
		t.Fatal(err)
	}
	if !idRE.Match(body) {
		t.Errorf("no msg_ id in %s", body)
	}
	got := idRE.ReplaceAllString(string(body), `"id":"msg_X"`)
	want := `{"id":"msg_X","type":"message","role":"assistant","model":"claude-haiku-4-5","content":[` +
		`{"type":"text","text":"Let me check."},{"type":"text","text":"It is <sunny>."},` +
		`{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{"city":"Paris"}},` +
		`{"type":"tool_use","id":"toolu_2","name":"broken","input":{"invalid_arguments":"{\"city\":"}}],` +
		`"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":120,"output_tokens":33}}`
	if got != want {
		t.Errorf("body =\n%s\nwant\n%s", got, want)
	}
}

func TestEncodeStopReasons(t *testing.T) {
	for stop, want := range map[hooks.StopReason]string{
		hooks.StopEndTurn: "end_turn", hooks.StopToolUse: "tool_use", hooks.StopMaxTokens: "max_tokens",
		hooks.StopRefusal: "refusal", hooks.StopOther: "end_turn", "": "end_turn",
	} {
		body, _ := messages.New().Encode(call(t), &dialect.Result{Stop: stop})
		var m struct {
			StopReason string          `json:"stop_reason"`
			Content    json.RawMessage `json:"content"`
			Model      string          `json:"model"`
		}
		if err := json.Unmarshal(body, &m); err != nil || m.StopReason != want || string(m.Content) != "[]" || m.Model != "claude-haiku-4-5" {
			t.Errorf("%q: %s, want stop_reason %q, empty content and the asked model", stop, body, want)
		}
	}
}

func TestEncodeWholeWire(t *testing.T) {
	wire := &upstream.WireResponse{
		Fields: map[string]json.RawMessage{
			"id": json.RawMessage(`"msg_upstream"`), "type": json.RawMessage(`"message"`), "role": json.RawMessage(`"assistant"`),
			"model": json.RawMessage(`"claude-sonnet-4-5-20250929"`), "stop_reason": json.RawMessage(`"stop_sequence"`),
			"stop_sequence": json.RawMessage(`"END"`), "container": json.RawMessage(`{"id":"c_1"}`),
			"usage": json.RawMessage(`{"input_tokens":10,"cache_creation_input_tokens":50,"cache_read_input_tokens":40,"output_tokens":9,"service_tier":"standard"}`),
		},
		Message: []json.RawMessage{
			json.RawMessage(`{"type":"thinking","thinking":"hm","signature":"sig"}`),
			json.RawMessage(`{"type":"text","text":"Done","citations":[{"type":"char_location","cited_text":"x"}]}`),
		},
	}
	res := &dialect.Result{Model: "claude-sonnet-4-5", Text: []string{"Done"}, Stop: hooks.StopEndTurn,
		Usage: hooks.Usage{InputTokens: 100, OutputTokens: 9}, Wire: wire, WholeWire: true}
	body, err := messages.New().Encode(call(t), res)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":"msg_upstream","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[` +
		`{"type":"thinking","thinking":"hm","signature":"sig"},{"type":"text","text":"Done","citations":[{"type":"char_location","cited_text":"x"}]}],` +
		`"stop_reason":"stop_sequence","stop_sequence":"END",` +
		`"usage":{"input_tokens":10,"cache_creation_input_tokens":50,"cache_read_input_tokens":40,"output_tokens":9,"service_tier":"standard"},` +
		`"container":{"id":"c_1"}}`
	if string(body) != want {
		t.Errorf("body =\n%s\nwant\n%s", body, want)
	}

	// Two rounds: the content is the loop's, the upstream's fields stay,
	// and usage is the sum, with the last round's cache counts beside it.
	res.WholeWire = false
	res.Text = []string{"Looking.", "Done"}
	res.Usage = hooks.Usage{InputTokens: 300, OutputTokens: 20}
	body, _ = messages.New().Encode(call(t), res)
	want = `{"id":"msg_upstream","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[` +
		`{"type":"text","text":"Looking."},{"type":"text","text":"Done"}],"stop_reason":"end_turn","stop_sequence":null,` +
		`"usage":{"input_tokens":210,"cache_creation_input_tokens":50,"cache_read_input_tokens":40,"output_tokens":20,"service_tier":"standard"},` +
		`"container":{"id":"c_1"}}`
	if string(body) != want {
		t.Errorf("two rounds body =\n%s\nwant\n%s", body, want)
	}
}

func TestErrorBody(t *testing.T) {
	f := messages.New()
	got := f.ErrorBody(&dialect.Error{Status: 529, Type: "overloaded_error", Message: "upstream is <busy>"})
	fakeapi.AssertJSON(t, got, `{"type":"error","error":{"type":"overloaded_error","message":"upstream is <busy>"}}`)
	got = f.ErrorBody(dialect.Invalid("max_tokens", "max_tokens: required"))
	fakeapi.AssertJSON(t, got, `{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: required"}}`)
	got = f.ErrorBody(&dialect.Error{Status: 500, Message: "host failed"})
	fakeapi.AssertJSON(t, got, `{"type":"error","error":{"type":"api_error","message":"host failed"}}`)
}

func TestProtocolAndPath(t *testing.T) {
	f := messages.New()
	if f.Protocol() != llm.ProtocolMessages || f.Path() != "/v1/messages" {
		t.Errorf("protocol %q, path %q", f.Protocol(), f.Path())
	}
}
