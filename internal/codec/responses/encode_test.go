package responses

import (
	"bytes"
	"encoding/json"
	"reflect"
	"regexp"
	"testing"
	"time"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/dialect"
	"github.com/hookhost/hookhost/internal/upstream"
)

// generatedID matches the ids hookhost mints: 128 random bits and a tag.
var generatedID = regexp.MustCompile(`"(resp|msg|fc)_[0-9a-f]{48}"`)

// normalize replaces generated ids by their prefix and a fixed tail, and
// checks and fixes created_at, so a body can be compared with a golden one.
func normalize(t *testing.T, body []byte) any {
	t.Helper()
	body = generatedID.ReplaceAll(body, []byte(`"${1}_X"`))
	var v map[string]any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("body is not a JSON object: %v\n%s", err, body)
	}
	if c, ok := v["created_at"].(float64); ok && c > float64(time.Now().Add(-time.Hour).Unix()) {
		v["created_at"] = "NOW"
	}
	return v
}

func assertGolden(t *testing.T, got []byte, want string) {
	t.Helper()
	var w any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad golden: %v", err)
	}
	if g := normalize(t, got); !reflect.DeepEqual(g, w) {
		var pretty bytes.Buffer
		json.Indent(&pretty, generatedID.ReplaceAll(got, []byte(`"${1}_X"`)), "", "  ")
		t.Errorf("body =\n%s\nwant\n%s", pretty.String(), want)
	}
}

const defaultsGolden = `"background":false,"instructions":null,"max_output_tokens":null,"metadata":{},"parallel_tool_calls":true,
	"previous_response_id":null,"reasoning":{"effort":null,"summary":null},"temperature":1,"text":{"format":{"type":"text"}},
	"tool_choice":"auto","tools":[],"top_p":1,"truncation":"disabled","store":false,"error":null`

func TestEncodeGolden(t *testing.T) {
	call := decode(t, `{"model":"gpt-4.1","input":"weather?","instructions":"be brief",
		"tools":[{"type":"function","name":"get_weather","parameters":{"type":"object","properties":{}},"strict":false}],
		"metadata":{"k":"v"},"temperature":0.2}`)
	res := &dialect.Result{
		Model: "gpt-4.1", Text: []string{"Checking.", "", "Still checking."},
		ToolCalls: []hooks.ToolCall{{ID: "call_7", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)}},
		Stop:      hooks.StopToolUse, Usage: hooks.Usage{InputTokens: 30, OutputTokens: 12},
	}
	body, err := New().Encode(call, res)
	if err != nil {
		t.Fatal(err)
	}
	assertGolden(t, body, `{"id":"resp_X","object":"response","created_at":"NOW","status":"completed","model":"gpt-4.1",
		"background":false,"instructions":"be brief","max_output_tokens":null,"metadata":{"k":"v"},"parallel_tool_calls":true,
		"previous_response_id":null,"reasoning":{"effort":null,"summary":null},"temperature":0.2,"text":{"format":{"type":"text"}},
		"tool_choice":"auto","top_p":1,"truncation":"disabled","store":false,"error":null,"incomplete_details":null,
		"tools":[{"type":"function","name":"get_weather","parameters":{"type":"object","properties":{}},"strict":false}],
		"output":[
		 {"type":"message","id":"msg_X","status":"completed","role":"assistant","content":[{"type":"output_text","text":"Checking.","annotations":[],"logprobs":[]}]},
		 {"type":"message","id":"msg_X","status":"completed","role":"assistant","content":[{"type":"output_text","text":"Still checking.","annotations":[],"logprobs":[]}]},
		 {"type":"function_call","id":"fc_X","call_id":"call_7","name":"get_weather","arguments":"{\"city\":\"Paris\"}","status":"completed"}],
		"usage":{"input_tokens":30,"input_tokens_details":{"cached_tokens":0},"output_tokens":12,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":42}}`)
}

func TestEncodeIncomplete(t *testing.T) {
	call := decode(t, `{"model":"m","input":"hi"}`)
	body, err := New().Encode(call, &dialect.Result{Model: "m", Text: []string{"It is su"}, Stop: hooks.StopMaxTokens, Usage: hooks.Usage{InputTokens: 1, OutputTokens: 2}})
	if err != nil {
		t.Fatal(err)
	}
	assertGolden(t, body, `{"id":"resp_X","object":"response","created_at":"NOW","status":"incomplete","model":"m",`+defaultsGolden+`,
		"incomplete_details":{"reason":"max_output_tokens"},
		"output":[{"type":"message","id":"msg_X","status":"completed","role":"assistant","content":[{"type":"output_text","text":"It is su","annotations":[],"logprobs":[]}]}],
		"usage":{"input_tokens":1,"input_tokens_details":{"cached_tokens":0},"output_tokens":2,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":3}}`)
}

// upstreamWire is a response as an upstream of this protocol sent it.
func upstreamWire() *upstream.WireResponse {
	return &upstream.WireResponse{
		Fields: map[string]json.RawMessage{
			"id": json.RawMessage(`"resp_upstream"`), "object": json.RawMessage(`"response"`), "created_at": json.RawMessage(`1761000000`),
			"status": json.RawMessage(`"completed"`), "model": json.RawMessage(`"gpt-4.1-2025-04-14"`),
			"service_tier": json.RawMessage(`"default"`), "reasoning": json.RawMessage(`{"effort":"high","summary":null}`),
			"instructions": json.RawMessage(`"be brief. PLUGIN: you may call kora__get_burn"`),
			"tools":        json.RawMessage(`[{"type":"function","name":"kora__get_burn","parameters":{},"strict":false}]`),
			"usage":        json.RawMessage(`{"input_tokens":30,"input_tokens_details":{"cached_tokens":20},"output_tokens":5,"output_tokens_details":{"reasoning_tokens":3},"total_tokens":35}`),
			"store":        json.RawMessage(`false`),
		},
		Message: []json.RawMessage{
			json.RawMessage(`{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"gAAA"}`),
			json.RawMessage(`{"type":"message","id":"msg_up","status":"completed","role":"assistant","content":[{"type":"output_text","text":"Sunny.","annotations":[{"type":"url_citation","url":"https://w.example","start_index":0,"end_index":5,"title":"w"}]}]}`),
		},
	}
}

func TestEncodeWholeWire(t *testing.T) {
	call := decode(t, `{"model":"gpt-4.1","input":"weather?","instructions":"be brief"}`)
	res := &dialect.Result{Model: "gpt-4.1", Text: []string{"Sunny."}, Stop: hooks.StopEndTurn,
		Usage: hooks.Usage{InputTokens: 30, OutputTokens: 5}, Wire: upstreamWire(), WholeWire: true}
	body, err := New().Encode(call, res)
	if err != nil {
		t.Fatal(err)
	}
	// The upstream's id, items and usage details reach the client; the
	// instructions and tools hooks and plugins added do not.
	assertGolden(t, body, `{"id":"resp_upstream","object":"response","created_at":1761000000,"status":"completed","model":"gpt-4.1",
		"background":false,"instructions":"be brief","max_output_tokens":null,"metadata":{},"parallel_tool_calls":true,
		"previous_response_id":null,"reasoning":{"effort":"high","summary":null},"temperature":1,"text":{"format":{"type":"text"}},
		"tool_choice":"auto","tools":[],"top_p":1,"truncation":"disabled","store":false,"error":null,"incomplete_details":null,
		"service_tier":"default",
		"output":[{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"gAAA"},
		 {"type":"message","id":"msg_up","status":"completed","role":"assistant","content":[{"type":"output_text","text":"Sunny.","annotations":[{"type":"url_citation","url":"https://w.example","start_index":0,"end_index":5,"title":"w"}]}]}],
		"usage":{"input_tokens":30,"input_tokens_details":{"cached_tokens":20},"output_tokens":5,"output_tokens_details":{"reasoning_tokens":3},"total_tokens":35}}`)
}

func TestEncodeWireFieldsWithoutWholeWire(t *testing.T) {
	// Two rounds: the answer is not the upstream's message, so its items
	// are built afresh and usage is the loop's sum, but the last response's
	// other fields still reach the client.
	call := decode(t, `{"model":"gpt-4.1","input":"burn?"}`)
	res := &dialect.Result{Model: "gpt-4.1", Text: []string{"Burn is low."}, Stop: hooks.StopEndTurn,
		Usage: hooks.Usage{InputTokens: 60, OutputTokens: 9}, Wire: upstreamWire()}
	body, err := New().Encode(call, res)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]json.RawMessage
	json.Unmarshal(body, &got)
	if generatedID.Find(got["id"]) == nil {
		t.Errorf("id = %s, want a fresh one: the answer spans rounds", got["id"])
	}
	if string(got["service_tier"]) != `"default"` || string(got["created_at"]) != `1761000000` {
		t.Errorf("service_tier %s, created_at %s: the upstream's fields were not kept", got["service_tier"], got["created_at"])
	}
	if bytes.Contains(body, []byte("kora__")) || bytes.Contains(body, []byte("gAAA")) {
		t.Errorf("plugin tools or the upstream's items reached the client:\n%s", body)
	}
	var usage struct {
		InputTokens  int `json:"input_tokens"`
		OutputTokens int `json:"output_tokens"`
		TotalTokens  int `json:"total_tokens"`
	}
	json.Unmarshal(got["usage"], &usage)
	if usage.InputTokens != 60 || usage.OutputTokens != 9 || usage.TotalTokens != 69 {
		t.Errorf("usage = %s, want the sum over rounds", got["usage"])
	}
}
