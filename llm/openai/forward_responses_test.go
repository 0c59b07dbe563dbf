package openai_test

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/upstream"
	"github.com/hookhost/hookhost/llm"
	"github.com/hookhost/hookhost/llm/openai"
)

// An earlier turn of a reasoning model, as a client sends it back: a
// reasoning item with encrypted content, the assistant's message with an
// annotation, and a function call, all one neutral assistant message.
const (
	keptReasoning = `{"type":"reasoning","id":"rs_9","summary":[{"type":"summary_text","text":"think"}],"encrypted_content":"gAAAAB-opaque"}`
	keptMessage   = `{"type":"message","id":"msg_9","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Checking.","annotations":[{"type":"url_citation","url":"https://example.com","start_index":0,"end_index":1,"title":"x"}]}]}`
	keptCall      = `{"type":"function_call","id":"fc_9","call_id":"call_9","name":"get_weather","arguments":"{\"city\":\"Paris\"}","status":"completed"}`
	keptImageUser = `{"type":"message","role":"user","content":[{"type":"input_text","text":"what is this?"},{"type":"input_image","image_url":"data:image/png;base64,iVBORw0KGgo=","detail":"high"}]}`
	keptWebSearch = `{"type":"web_search","search_context_size":"low"}`
	keptTool      = `{"type":"function","name":"get_weather","description":"Current weather for a city","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false},"strict":true}`
)

func forwardReq() (llm.Request, *upstream.Passthrough) {
	user := hooks.Message{Role: hooks.RoleUser, Content: "what is this?"}
	asst := hooks.Message{Role: hooks.RoleAssistant, Content: "Checking.", ToolCalls: []hooks.ToolCall{
		{ID: "call_9", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)},
	}}
	result := hooks.Message{Role: hooks.RoleTool, ToolCallID: "call_9", ToolName: "get_weather", Content: `{"temp":21}`}
	tool := hooks.ToolSpec{Name: "get_weather", Description: "Current weather for a city",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false}`)}
	pass := &upstream.Passthrough{Fields: map[string]json.RawMessage{
		"metadata":       json.RawMessage(`{"team":"ops","ticket":"T-1"}`),
		"reasoning":      json.RawMessage(`{"effort":"high","summary":"auto"}`),
		"include":        json.RawMessage(`["reasoning.encrypted_content"]`),
		"future_field":   json.RawMessage(`{"nested":[1,2.50,"x"],"flag":null}`),
		"stream":         json.RawMessage(`true`),
		"store":          json.RawMessage(`true`),
		"model":          json.RawMessage(`"client-model"`),
		"stream_options": json.RawMessage(`{"include_obfuscation":false}`),
		"tools":          json.RawMessage(`[` + keptWebSearch + `]`),
	}}
	pass.KeepMessage(user, json.RawMessage(keptImageUser))
	pass.KeepMessage(asst, json.RawMessage(keptReasoning), json.RawMessage(keptMessage), json.RawMessage(keptCall))
	pass.KeepTool(tool, json.RawMessage(keptTool))
	return llm.Request{
		Model: "o4-mini", System: "be brief", MaxTokens: 300,
		Messages: []hooks.Message{user, asst, result, {Role: hooks.RoleUser, Content: "and now?"}},
		Tools:    []hooks.ToolSpec{tool, {Name: "files.read", Description: "Reads a file"}},
	}, pass
}

const forwardedBody = `{"model":"o4-mini","instructions":"be brief","store":true,"max_output_tokens":300,
	"metadata":{"team":"ops","ticket":"T-1"},"reasoning":{"effort":"high","summary":"auto"},
	"include":["reasoning.encrypted_content"],"future_field":{"nested":[1,2.50,"x"],"flag":null},
	"input":[` + keptImageUser + `,` + keptReasoning + `,` + keptMessage + `,` + keptCall + `,
	 {"type":"function_call_output","call_id":"call_9","output":"{\"temp\":21}"},
	 {"type":"message","role":"user","content":"and now?"}],
	"tools":[` + keptTool + `,
	 {"type":"function","name":"files__read","description":"Reads a file","parameters":{"type":"object","properties":{}},"strict":false},
	 ` + keptWebSearch + `]}`

// respReasoning is a reply with fields and item content the neutral
// response does not model.
const respReasoning = `{"id":"resp_77","object":"response","created_at":1761000100,"status":"completed","model":"o4-mini-2025-04-16",
	"service_tier":"default","reasoning":{"effort":"high","summary":"auto"},"metadata":{"team":"ops"},
	"output":[{"type":"reasoning","id":"rs_10","summary":[],"encrypted_content":"gAAAAB-next"},
	 {"type":"message","id":"msg_10","status":"completed","role":"assistant","content":[{"type":"output_text","text":"21 degrees.","annotations":[],"logprobs":[]}]}],
	"usage":{"input_tokens":50,"input_tokens_details":{"cached_tokens":10},"output_tokens":20,"output_tokens_details":{"reasoning_tokens":12},"total_tokens":70}}`

func TestForwardResponsesBody(t *testing.T) {
	f := newFake(t, jsonReply(200, respReasoning))
	p := newProvider(t, f, openai.Config{API: openai.APIResponses})
	req, pass := forwardReq()
	resp, wire, err := p.Forward(context.Background(), req, pass, nil)
	if err != nil {
		t.Fatal(err)
	}
	body := f.Requests()[0].Body
	assertJSON(t, body, forwardedBody)
	// What the client sent reaches the wire as written, not re-encoded.
	for _, raw := range []string{keptWebSearch, keptReasoning, keptMessage, keptCall, keptImageUser, keptTool,
		`"future_field":{"nested":[1,2.50,"x"],"flag":null}`, `"metadata":{"team":"ops","ticket":"T-1"}`} {
		if !bytes.Contains(body, []byte(raw)) {
			t.Errorf("the body does not carry %s byte for byte:\n%s", raw, body)
		}
	}
	want := llm.Response{Model: "o4-mini-2025-04-16", StopReason: hooks.StopEndTurn, Usage: hooks.Usage{InputTokens: 50, OutputTokens: 20},
		Message: hooks.Message{Role: hooks.RoleAssistant, Content: "21 degrees."}}
	if !reflect.DeepEqual(resp, want) {
		t.Errorf("response = %+v\nwant %+v", resp, want)
	}
	if len(wire.Message) != 2 || !strings.Contains(string(wire.Message[0]), "gAAAAB-next") || !strings.Contains(string(wire.Message[1]), `"logprobs":[]`) {
		t.Errorf("wire output items = %s", wire.Message)
	}
	if _, ok := wire.Fields["output"]; ok {
		t.Error("the wire fields repeat the output, which is in Message")
	}
	for k, v := range map[string]string{"id": `"resp_77"`, "service_tier": `"default"`, "created_at": `1761000100`, "metadata": `{"team":"ops"}`} {
		if string(wire.Fields[k]) != v {
			t.Errorf("wire field %s = %s, want %s", k, wire.Fields[k], v)
		}
	}
}

func TestForwardResponsesChangedMessageIsEncodedAfresh(t *testing.T) {
	f := newFake(t, jsonReply(200, respText))
	p := newProvider(t, f, openai.Config{API: openai.APIResponses})
	req, pass := forwardReq()
	// A hook rewrote the user's question: the image it came with must not
	// be sent as though the text were unchanged.
	req.Messages[0].Content = "describe the picture, redacted"
	if _, _, err := p.Forward(context.Background(), req, pass, nil); err != nil {
		t.Fatal(err)
	}
	body := f.Requests()[0].Body
	if bytes.Contains(body, []byte("input_image")) {
		t.Errorf("the stale wire form was sent for a changed message:\n%s", body)
	}
	if !bytes.Contains(body, []byte(`{"type":"message","role":"user","content":"describe the picture, redacted"}`)) {
		t.Errorf("the changed message was not encoded from its neutral value:\n%s", body)
	}
	if !bytes.Contains(body, []byte(keptReasoning)) {
		t.Errorf("the unchanged assistant message lost its reasoning item:\n%s", body)
	}
}

func TestForwardResponsesStream(t *testing.T) {
	emptyFinal := append([]string(nil), respParallelStream...)
	emptyFinal[len(emptyFinal)-1] = respEvent("response.completed", `"sequence_number":11,"response":{"id":"resp_68a2","object":"response","status":"completed","model":"gpt-4.1-mini-2025-04-14","service_tier":"flex","output":[],"usage":{"input_tokens":40,"output_tokens":30,"total_tokens":70}}`)
	tests := []struct {
		name  string
		reply []string
		tier  string
	}{
		{"final event with output", respTextStream, ""},
		{"final event without output", emptyFinal, `"flex"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t, sseReply(tt.reply...))
			p := newProvider(t, f, openai.Config{API: openai.APIResponses})
			req, pass := forwardReq()
			var shown strings.Builder
			resp, wire, err := p.Forward(context.Background(), req, pass, func(s string) { shown.WriteString(s) })
			if err != nil {
				t.Fatal(err)
			}
			var sent map[string]json.RawMessage
			if err := json.Unmarshal(f.Requests()[0].Body, &sent); err != nil {
				t.Fatal(err)
			}
			if string(sent["stream"]) != "true" || string(sent["store"]) != "true" || string(sent["stream_options"]) != `{"include_obfuscation":false}` {
				t.Errorf("stream = %s, store = %s, stream_options = %s", sent["stream"], sent["store"], sent["stream_options"])
			}
			if shown.String() != resp.Message.Content {
				t.Errorf("shown %q, kept %q", shown.String(), resp.Message.Content)
			}
			var want []json.RawMessage
			var final struct {
				Response struct {
					Output []json.RawMessage `json:"output"`
				} `json:"response"`
			}
			last := tt.reply[len(tt.reply)-1]
			if err := json.Unmarshal([]byte(last[strings.Index(last, "data: ")+6:]), &final); err != nil {
				t.Fatal(err)
			}
			want = final.Response.Output
			if len(want) == 0 {
				// The items as the stream finished them.
				for _, fr := range tt.reply {
					if strings.HasPrefix(fr, "event: response.output_item.done") {
						var ev struct{ Item json.RawMessage }
						json.Unmarshal([]byte(fr[strings.Index(fr, "data: ")+6:]), &ev)
						want = append(want, ev.Item)
					}
				}
			}
			if len(want) == 0 || !reflect.DeepEqual(wire.Message, want) {
				t.Errorf("wire items = %s\nwant %s", wire.Message, want)
			}
			if tt.tier != "" && string(wire.Fields["service_tier"]) != tt.tier {
				t.Errorf("service_tier = %s, want %s", wire.Fields["service_tier"], tt.tier)
			}
		})
	}
}

func TestForwardResponsesNonStreamDropsStreamOptions(t *testing.T) {
	f := newFake(t, jsonReply(200, respText))
	p := newProvider(t, f, openai.Config{API: openai.APIResponses})
	req, pass := forwardReq()
	if _, _, err := p.Forward(context.Background(), req, pass, nil); err != nil {
		t.Fatal(err)
	}
	var sent map[string]json.RawMessage
	if err := json.Unmarshal(f.Requests()[0].Body, &sent); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"stream", "stream_options"} {
		if v, ok := sent[k]; ok {
			t.Errorf("a call that does not stream sent %s = %s", k, v)
		}
	}
}

func TestForwardResponsesStoreIsTheClients(t *testing.T) {
	f := newFake(t, jsonReply(200, respText))
	p := newProvider(t, f, openai.Config{API: openai.APIResponses})
	req, pass := forwardReq()
	delete(pass.Fields, "store")
	if _, _, err := p.Forward(context.Background(), req, pass, nil); err != nil {
		t.Fatal(err)
	}
	var sent map[string]json.RawMessage
	if err := json.Unmarshal(f.Requests()[0].Body, &sent); err != nil {
		t.Fatal(err)
	}
	if v, ok := sent["store"]; ok {
		t.Errorf("store = %s sent for a client that sent none: the provider's default must apply", v)
	}
}

func TestForwardResponsesNilPass(t *testing.T) {
	f := newFake(t, jsonReply(200, respText))
	p := newProvider(t, f, openai.Config{API: openai.APIResponses, MaxTokens: 200})
	if _, _, err := p.Forward(context.Background(), historyReq(), nil, nil); err != nil {
		t.Fatal(err)
	}
	g := newFake(t, jsonReply(200, respText))
	if _, err := newProvider(t, g, openai.Config{API: openai.APIResponses, MaxTokens: 200}).Complete(context.Background(), historyReq()); err != nil {
		t.Fatal(err)
	}
	assertJSON(t, f.Requests()[0].Body, string(g.Requests()[0].Body))
}

// A client that sent each call followed by its output gets its turn
// forwarded as it came while nothing in it changed; once a hook changed an
// output, the turn goes up with all calls before their outputs, which the
// API accepts too, and never with an output twice.
func TestForwardResponsesInterleavedTurn(t *testing.T) {
	const (
		c1 = `{"type":"function_call","call_id":"c1","name":"f","arguments":"{}"}`
		o1 = `{"type":"function_call_output","call_id":"c1","output":"A"}`
		c2 = `{"type":"function_call","call_id":"c2","name":"f","arguments":"{}"}`
		o2 = `{"type":"function_call_output","call_id":"c2","output":"B"}`
	)
	user := hooks.Message{Role: hooks.RoleUser, Content: "go"}
	asst := hooks.Message{Role: hooks.RoleAssistant, ToolCalls: []hooks.ToolCall{
		{ID: "c1", Name: "f", Arguments: json.RawMessage(`{}`)}, {ID: "c2", Name: "f", Arguments: json.RawMessage(`{}`)}}}
	r1 := hooks.Message{Role: hooks.RoleTool, ToolCallID: "c1", ToolName: "f", Content: "A"}
	r2 := hooks.Message{Role: hooks.RoleTool, ToolCallID: "c2", ToolName: "f", Content: "B"}
	kept := func() *upstream.Passthrough {
		pass := &upstream.Passthrough{Fields: map[string]json.RawMessage{}}
		pass.KeepMessage(user, json.RawMessage(`{"role":"user","content":"go"}`))
		pass.KeepMessage(asst, json.RawMessage(c1), json.RawMessage(o1), json.RawMessage(c2), json.RawMessage(o2))
		pass.KeepMessage(r1, json.RawMessage(o1))
		pass.KeepMessage(r2, json.RawMessage(o2))
		return pass
	}
	changed := r2
	changed.Content = "B, checked"
	tests := []struct {
		name   string
		result hooks.Message
		want   string
	}{
		{"unchanged", r2, `{"role":"user","content":"go"},` + c1 + `,` + o1 + `,` + c2 + `,` + o2},
		{"an output changed", changed, `{"role":"user","content":"go"},` + c1 + `,` + c2 + `,` + o1 + `,{"type":"function_call_output","call_id":"c2","output":"B, checked"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t, jsonReply(200, respText))
			p := newProvider(t, f, openai.Config{API: openai.APIResponses})
			req := llm.Request{Model: "m", Messages: []hooks.Message{user, asst, r1, tt.result}}
			if _, _, err := p.Forward(context.Background(), req, kept(), nil); err != nil {
				t.Fatal(err)
			}
			var body struct {
				Input json.RawMessage `json:"input"`
			}
			if err := json.Unmarshal(f.Requests()[0].Body, &body); err != nil {
				t.Fatal(err)
			}
			if string(body.Input) != "["+tt.want+"]" {
				t.Errorf("input =\n%s\nwant\n[%s]", body.Input, tt.want)
			}
		})
	}
}
