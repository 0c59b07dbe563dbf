package responses_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hookhost/hookhost/hookbus"
	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/codec/responses"
	"github.com/hookhost/hookhost/internal/fakeapi"
	"github.com/hookhost/hookhost/internal/relay"
	"github.com/hookhost/hookhost/llm"
	"github.com/hookhost/hookhost/llm/openai"
)

// gateway is the Responses front, the relay with one plugin tool
// (kora__burn) and the forwarding OpenAI provider against a fake upstream.
type gateway struct {
	front *responses.Front
	r     *relay.Relay
	up    *fakeapi.Server
}

func newGateway(t *testing.T, replies ...fakeapi.Reply) *gateway {
	t.Helper()
	up := fakeapi.New(t, replies...)
	prov, err := openai.New(openai.Config{API: openai.APIResponses, BaseURL: up.URL() + "/v1", APIKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	kora := &hooks.Funcs{
		Name:  "kora",
		Tools: []hooks.ToolSpec{{Name: "kora__burn", Description: "burn", InputSchema: json.RawMessage(`{"type":"object"}`)}},
		PreToolCallCanProvideResultFunc: func(_ context.Context, req hooks.ToolCallRequest) (*hooks.ToolResult, error) {
			if req.Name != "kora__burn" {
				return nil, nil
			}
			return &hooks.ToolResult{Content: `{"burnt":true}`}, nil
		},
	}
	bus, err := hookbus.New([]hookbus.Member{{Plugin: kora}}, hookbus.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		bus.Close(ctx)
	})
	r := relay.New(relay.Config{Provider: prov, Bus: bus, Store: relay.NewStore(time.Minute, 100)})
	return &gateway{front: responses.New(), r: r, up: up}
}

func (g *gateway) do(t *testing.T, body string) []byte {
	t.Helper()
	call, err := g.front.Decode([]byte(body))
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := g.r.Run(ctx, g.front, call, nil)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	out, err := g.front.Encode(call, res)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func reply(output ...string) fakeapi.Reply {
	return fakeapi.JSON(200, `{"id":"resp_1","object":"response","created_at":1,"status":"completed","model":"m","output":[`+
		strings.Join(output, ",")+`],"usage":{"input_tokens":3,"output_tokens":2,"total_tokens":5}}`)
}

func fcall(id, name string) string {
	return `{"type":"function_call","id":"fc_` + id + `","call_id":"` + id + `","name":"` + name + `","arguments":"{}","status":"completed"}`
}

const readFile = `{"type":"function","name":"read_file","parameters":{"type":"object"}}`

// A mixed response hides a plugin round behind the client's two calls; a
// client that answers them each after its call (as OpenAI's
// function-calling guide builds the next request) still continues that
// conversation, so the model gets the hidden round back.
func TestInterleavedContinuationKeepsHiddenRound(t *testing.T) {
	g := newGateway(t,
		reply(fcall("c1", "read_file"), fcall("c2", "read_file"), fcall("k1", "kora__burn")),
		reply(`{"type":"message","id":"msg_2","status":"completed","role":"assistant","content":[{"type":"output_text","text":"done","annotations":[]}]}`),
	)
	out := g.do(t, `{"model":"m","input":[{"role":"user","content":"go"}],"tools":[`+readFile+`]}`)
	var resp struct {
		Output []json.RawMessage `json:"output"`
	}
	if err := json.Unmarshal(out, &resp); err != nil || len(resp.Output) != 2 {
		t.Fatalf("the client should get its two calls, got %s", out)
	}
	next := `{"model":"m","input":[{"role":"user","content":"go"},` +
		string(resp.Output[0]) + `,{"type":"function_call_output","call_id":"c1","output":"A"},` +
		string(resp.Output[1]) + `,{"type":"function_call_output","call_id":"c2","output":"B"}],"tools":[` + readFile + `]}`
	g.do(t, next)
	reqs := g.up.Requests()
	if len(reqs) != 2 {
		t.Fatalf("upstream got %d requests, want 2", len(reqs))
	}
	var sent struct {
		Input []json.RawMessage `json:"input"`
	}
	if err := json.Unmarshal(reqs[1].Body, &sent); err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, it := range sent.Input {
		var x struct {
			Type   string `json:"type"`
			CallID string `json:"call_id"`
		}
		_ = json.Unmarshal(it, &x)
		types = append(types, x.Type+":"+x.CallID)
	}
	body := string(reqs[1].Body)
	if !strings.Contains(body, `"call_id":"k1"`) || !strings.Contains(body, `burnt`) {
		t.Fatalf("the hidden plugin round (kora__burn and its result) is missing upstream: %q", types)
	}
	// Every call goes up once and is answered once.
	count := map[string]int{}
	for _, s := range types {
		count[s]++
	}
	for _, id := range []string{"c1", "c2", "k1"} {
		if count["function_call:"+id] != 1 || count["function_call_output:"+id] != 1 {
			t.Errorf("call %s goes up %d times with %d outputs: %q", id, count["function_call:"+id], count["function_call_output:"+id], types)
		}
	}
}

// A client's custom tool is refused up front; should a model call one
// anyway beside a plugin tool, the round fails with a provider error
// instead of going on upstream without the call's answer.
func TestCustomToolCallBesidePluginCall(t *testing.T) {
	if _, err := responses.New().Decode([]byte(`{"model":"m","input":"run it","tools":[{"type":"custom","name":"code_exec"}]}`)); err == nil {
		t.Fatal("a custom tool was accepted")
	}
	g := newGateway(t,
		reply(`{"type":"custom_tool_call","id":"ctc_1","call_id":"x1","name":"code_exec","input":"print(1)","status":"completed"}`, fcall("k1", "kora__burn")),
		reply(`{"type":"message","id":"msg_2","status":"completed","role":"assistant","content":[{"type":"output_text","text":"done","annotations":[]}]}`),
	)
	call, err := g.front.Decode([]byte(`{"model":"m","input":"run it","tools":[` + readFile + `]}`))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err = g.r.Run(ctx, g.front, call, nil)
	var pe *llm.ProviderError
	if !errors.As(err, &pe) || !strings.Contains(pe.Message, "custom_tool_call") {
		t.Errorf("Run: %v, want a provider error naming the custom_tool_call", err)
	}
	if n := len(g.up.Requests()); n != 1 {
		t.Errorf("upstream got %d requests, want 1: the round must not go on without the call", n)
	}
}
