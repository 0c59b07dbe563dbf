package responses_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/hookhost/hookhost/internal/codec/responses"
	"github.com/hookhost/hookhost/internal/dialect"
	"github.com/hookhost/hookhost/internal/fakeapi"
	"github.com/hookhost/hookhost/llm/openai"
)

// clientBody is what an agent using reasoning, structured output, a
// built-in tool and an image sends; every line of it is compact, as the
// SDKs send JSON.
const clientBody = `{"model":"o4-mini","instructions":"be brief","stream":false,"store":false,` +
	`"reasoning":{"effort":"high","summary":"auto"},"include":["reasoning.encrypted_content"],` +
	`"text":{"format":{"type":"json_schema","name":"answer","schema":{"type":"object","properties":{"a":{"type":"string"}},"required":["a"],"additionalProperties":false},"strict":true}},` +
	`"metadata":{"trace":"t-1"},"prompt_cache_key":"k1","a_future_field":{"x":[1,2,3]},` +
	`"tools":[{"type":"function","name":"lookup","description":"Looks up","parameters":{"type":"object","properties":{"q":{"type":"string"}},"required":["q"],"additionalProperties":false},"strict":true},{"type":"web_search"}],` +
	`"input":[` + userItem + `,` + reasoningItem + `,` + callItemWire + `,` + outputItem + `,{"role":"user","content":"and?"}]}`

const (
	userItem      = `{"type":"message","role":"user","content":[{"type":"input_text","text":"what is this?"},{"type":"input_image","image_url":"data:image/png;base64,iVBORw0KGgo=","detail":"low"}]}`
	reasoningItem = `{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"look it up"}],"encrypted_content":"gAAAAB-opaque=="}`
	callItemWire  = `{"type":"function_call","id":"fc_1","call_id":"call_1","name":"lookup","arguments":"{\"q\":\"png\"}","status":"completed"}`
	outputItem    = `{"type":"function_call_output","call_id":"call_1","output":"a tiny image"}`
)

const upstreamReply = `{"id":"resp_up","object":"response","created_at":1761000000,"status":"completed","model":"o4-mini-2025-04-16",
	"service_tier":"default","text":{"format":{"type":"json_schema","name":"answer","strict":true}},
	"output":[{"type":"reasoning","id":"rs_2","summary":[],"encrypted_content":"gAAAAB-next=="},
	 {"type":"message","id":"msg_2","status":"completed","role":"assistant","content":[{"type":"output_text","text":"{\"a\":\"a PNG\"}","annotations":[],"logprobs":[]}]}],
	"usage":{"input_tokens":120,"input_tokens_details":{"cached_tokens":64},"output_tokens":30,"output_tokens_details":{"reasoning_tokens":20},"total_tokens":150}}`

// A request decoded by the front and forwarded unchanged reaches an
// upstream of the same protocol with everything the client sent, and the
// upstream's answer reaches the client with everything it sent.
func TestSameProtocolFidelity(t *testing.T) {
	call := decodeCall(t, clientBody)
	srv := fakeapi.New(t, fakeapi.JSON(200, upstreamReply))
	p, err := openai.New(openai.Config{API: openai.APIResponses, BaseURL: srv.URL() + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	resp, wire, err := p.Forward(context.Background(), call.Request, call.Pass, nil)
	if err != nil {
		t.Fatal(err)
	}
	sent := srv.Requests()[0].Body

	// As values: the client's body, without stream (the upstream call is
	// not streamed) and with the function tool first, as hookhost orders
	// tools.
	var want map[string]any
	json.Unmarshal([]byte(clientBody), &want)
	delete(want, "stream")
	fakeapi.AssertJSON(t, sent, mustMarshal(want))

	// As bytes: every part hookhost does not model is sent as written.
	for _, part := range []string{userItem, reasoningItem, callItemWire, outputItem,
		`"a_future_field":{"x":[1,2,3]}`, `"prompt_cache_key":"k1"`, `{"type":"web_search"}`,
		`{"type":"function","name":"lookup","description":"Looks up","parameters":{"type":"object","properties":{"q":{"type":"string"}},"required":["q"],"additionalProperties":false},"strict":true}`,
		`"text":{"format":{"type":"json_schema","name":"answer","schema":{"type":"object","properties":{"a":{"type":"string"}},"required":["a"],"additionalProperties":false},"strict":true}}`,
	} {
		if !bytes.Contains(sent, []byte(part)) {
			t.Errorf("upstream did not get %s byte for byte:\n%s", part, sent)
		}
	}

	body, err := responses.New().Encode(call, &dialect.Result{Model: "o4-mini", Text: []string{resp.Message.Content}, Stop: resp.StopReason,
		Usage: resp.Usage, Wire: wire, WholeWire: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, part := range []string{`"id":"resp_up"`, `"encrypted_content":"gAAAAB-next=="`, `"cached_tokens":64`, `"service_tier":"default"`,
		`"text":{"format":{"type":"json_schema","name":"answer","strict":true}}`} {
		if !bytes.Contains(body, []byte(part)) {
			t.Errorf("the client did not get %s:\n%s", part, body)
		}
	}
}

// A turn whose calls are each followed by their output, decoded by the
// front and forwarded unchanged, reaches the upstream as the client wrote
// it: the same items in the same order.
func TestInterleavedTurnFidelity(t *testing.T) {
	input := `[{"role":"user","content":"go"},` + reasoningItem + `,` + callItemWire + `,` + outputItem + `,` +
		`{"type":"function_call","id":"fc_2","call_id":"call_2","name":"lookup","arguments":"{\"q\":\"jpg\"}","status":"completed"},` +
		`{"type":"function_call_output","call_id":"call_2","output":"a photo"},{"role":"user","content":"and?"}]`
	call := decodeCall(t, `{"model":"m","store":false,"input":`+input+`}`)
	if n := len(call.Request.Messages); n != 5 || len(call.Request.Messages[1].ToolCalls) != 2 {
		t.Fatalf("decoded %d messages (%+v), want user, one assistant turn with both calls, two results, user", n, call.Request.Messages)
	}
	srv := fakeapi.New(t, fakeapi.JSON(200, upstreamReply))
	p, err := openai.New(openai.Config{API: openai.APIResponses, BaseURL: srv.URL() + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := p.Forward(context.Background(), call.Request, call.Pass, nil); err != nil {
		t.Fatal(err)
	}
	var sent struct {
		Input json.RawMessage `json:"input"`
	}
	if err := json.Unmarshal(srv.Requests()[0].Body, &sent); err != nil {
		t.Fatal(err)
	}
	if string(sent.Input) != input {
		t.Errorf("upstream got input\n%s\nwant\n%s", sent.Input, input)
	}
}

// Across protocols, what only this protocol can carry is named for the
// 400 the gateway gives; a built-in tool is not offered, and counted.
func TestForeignNamesWhatCannotBeTranslated(t *testing.T) {
	call := decodeCall(t, clientBody)
	want := []string{"a_future_field", "text.format", "input[0].content[1] (input_image)"}
	if !sameJSON(call.Foreign, want) {
		t.Errorf("foreign = %q\nwant %q", call.Foreign, want)
	}
	// What cannot change the answer is dropped instead, and counted.
	dropped := []string{"include[]: reasoning.encrypted_content", "metadata", "prompt_cache_key", "reasoning", "store",
		"tools[].strict", "tools[] (built-in)", "input[] (reasoning)", "input[].id", "input[].status"}
	if !sameJSON(call.Dropped, dropped) {
		t.Errorf("dropped = %q\nwant %q", call.Dropped, dropped)
	}
}

func mustMarshal(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func decodeCall(t *testing.T, body string) *dialect.Call {
	t.Helper()
	call, err := responses.New().Decode([]byte(body))
	if err != nil {
		t.Fatalf("Decode: %v\n%s", err, body)
	}
	return call
}

func sameJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}
