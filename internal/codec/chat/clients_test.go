package chat_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/hookhost/hookhost/internal/codec/chat"
	"github.com/hookhost/hookhost/internal/dialect"
)

// The requests below are what the clients send on their default settings,
// turn after turn, as they build the history themselves; the upstream
// speaks Anthropic Messages, so every field crosses protocols.

// clientCall is the one tool call of a completion the client got.
func clientCall(t *testing.T, out []byte) (id, name, args string) {
	t.Helper()
	var resp struct {
		Choices []struct {
			FinishReason string `json:"finish_reason"`
			Message      struct {
				ToolCalls []struct {
					ID       string `json:"id"`
					Function struct {
						Name      string `json:"name"`
						Arguments string `json:"arguments"`
					} `json:"function"`
				} `json:"tool_calls"`
			} `json:"message"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(out, &resp); err != nil || len(resp.Choices) != 1 || len(resp.Choices[0].Message.ToolCalls) != 1 || resp.Choices[0].FinishReason != "tool_calls" {
		t.Fatalf("want one completion with one tool call, got %s", out)
	}
	c := resp.Choices[0].Message.ToolCalls[0]
	return c.ID, c.Function.Name, c.Function.Arguments
}

func answerText(t *testing.T, out []byte) string {
	t.Helper()
	var resp struct {
		Choices []struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(out, &resp); err != nil || len(resp.Choices) != 1 {
		t.Fatalf("want one completion, got %s", out)
	}
	return resp.Choices[0].Message.Content
}

// toolResults are the tool_result blocks of an Anthropic request, by the
// id of the call they answer.
func toolResults(t *testing.T, body map[string]json.RawMessage) map[string]string {
	t.Helper()
	var msgs []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(body["messages"], &msgs); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, m := range msgs {
		var blocks []struct {
			Type      string          `json:"type"`
			ToolUseID string          `json:"tool_use_id"`
			Content   json.RawMessage `json:"content"`
		}
		if json.Unmarshal(m.Content, &blocks) != nil {
			continue
		}
		for _, b := range blocks {
			if b.Type == "tool_result" {
				out[b.ToolUseID] = string(b.Content)
			}
		}
	}
	return out
}

const weatherTool = `{"type":"function","function":{"name":"get_weather","description":"Get the weather for a city","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}`

// LangChain.js ChatOpenAI (and LangGraph's ToolNode) put the tool's name on
// every tool message, and a HumanMessage's name on the user message.
func TestLangChainChatOpenAIToolMessageWithName(t *testing.T) {
	g := newCrossGateway(t,
		anthropicToolUse("toolu_up1", "get_weather", `{"city":"Paris"}`),
		anthropicText("It is sunny in Paris."),
	)
	human := `{"role":"user","content":"What is the weather in Paris?","name":"alice"}`
	_, out := g.run(t, `{"model":"gpt-4o-mini","stream":false,"messages":[`+human+`],"tools":[`+weatherTool+`]}`)
	id, name, args := clientCall(t, out)
	if name != "get_weather" || args != `{"city":"Paris"}` {
		t.Fatalf("call %s %s", name, args)
	}

	second := `{"model":"gpt-4o-mini","stream":false,"messages":[` + human + `,` +
		`{"role":"assistant","content":"","tool_calls":[{"id":"` + id + `","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},` +
		`{"role":"tool","content":"sunny, 24°C","tool_call_id":"` + id + `","name":"get_weather"}],"tools":[` + weatherTool + `]}`
	call, out := g.run(t, second)
	if got := answerText(t, out); got != "It is sunny in Paris." {
		t.Errorf("answer %q", got)
	}
	if tm := call.Request.Messages[2]; tm.ToolName != "get_weather" {
		t.Errorf("the tool message's tool = %q", tm.ToolName)
	}
	// The upstream got the result, answering the call it is named after.
	if res := toolResults(t, g.upstreamBody(t, 1)); len(res) != 1 || !strings.Contains(res[id], "sunny") {
		t.Errorf("upstream tool results %v, want the result for %s", res, id)
	}
	if n := g.drops.count("/v1/chat/completions", "messages[].name"); n != 2 {
		t.Errorf("the user's name dropped %d times, want once per request", n)
	}
}

// A tool message whose name differs from its call's: the call's name is
// the tool's, and the request is answered.
func TestToolMessageNameMismatchUsesTheCalls(t *testing.T) {
	call, err := decodeBody(msgs(user, asstCall, `{"role":"tool","tool_call_id":"c1","name":"weather_tool","content":"sunny"}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := call.Request.Messages[2].ToolName; got != "get_weather" {
		t.Errorf("tool name = %q, want the call's", got)
	}
	if len(call.Foreign) != 0 || len(call.Dropped) != 0 {
		t.Errorf("foreign %q, dropped %q", call.Foreign, call.Dropped)
	}
}

// The OpenAI Agents SDK (JS) with a Chat Completions model: every zod tool
// is strict, and a later run replays the assistant's text as parts that
// carry the message's role, refusal and annotations.
func TestAgentsSDKChatCompletionsDefaults(t *testing.T) {
	g := newCrossGateway(t,
		anthropicToolUse("toolu_up1", "get_weather", `{"city":"Paris"}`),
		anthropicText("It is sunny."),
		anthropicText("You are welcome."),
	)
	tool := `{"type":"function","function":{"name":"get_weather","description":"Get the weather for a city","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false,"$schema":"http://json-schema.org/draft-07/schema#"},"strict":true}}`
	system := `{"role":"system","content":"You are a helpful assistant."}`
	ask := `{"role":"user","content":"What is the weather in Paris?"}`
	req := func(messages ...string) string {
		return `{"model":"gpt-4.1","messages":[` + strings.Join(messages, ",") + `],"tools":[` + tool + `],"stream":false}`
	}
	_, out := g.run(t, req(system, ask))
	id, _, _ := clientCall(t, out)

	asst := `{"role":"assistant","tool_calls":[{"id":"` + id + `","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]}`
	result := `{"role":"tool","tool_call_id":"` + id + `","content":"sunny"}`
	_, out = g.run(t, req(system, ask, asst, result))
	if got := answerText(t, out); got != "It is sunny." {
		t.Errorf("answer %q", got)
	}

	replayed := `{"role":"assistant","content":[{"type":"text","text":"It is sunny.","role":"assistant","refusal":null,"annotations":[]}]}`
	call, out := g.run(t, req(system, ask, asst, result, replayed, `{"role":"user","content":"Thanks!"}`))
	if got := answerText(t, out); got != "You are welcome." {
		t.Errorf("answer %q", got)
	}
	if got := call.Request.Messages[3].Content; got != "It is sunny." {
		t.Errorf("the replayed answer reads %q", got)
	}
	if n := g.drops.count("/v1/chat/completions", "tools[].function.strict"); n != 3 {
		t.Errorf("strict dropped %d times, want once per request", n)
	}
	if n := g.drops.count("/v1/chat/completions", "messages[].content[].role"); n != 1 {
		t.Errorf("the replayed part's role dropped %d times, want 1", n)
	}
	// Anthropic's tools have no strict: the upstream got the schema only.
	var tools []map[string]json.RawMessage
	if err := json.Unmarshal(g.upstreamBody(t, 2)["tools"], &tools); err != nil || len(tools) != 1 {
		t.Fatalf("upstream tools %s", g.upstreamBody(t, 2)["tools"])
	}
	if _, ok := tools[0]["strict"]; ok || tools[0]["input_schema"] == nil {
		t.Errorf("upstream tool %v", tools[0])
	}
}

// LangChain and the Agents SDK stream with include_usage and send top_p,
// seed, stop and user when the application sets them: they are mapped
// onto the neutral request (each provider adapter sends those its API
// has), nothing is refused, and the stream is answered. Anthropic has no
// seed: it alone is dropped, and counted.
func TestSamplingAndIdentityFieldsMappedAcross(t *testing.T) {
	g := newCrossGateway(t, anthropicStreamText("ok"))
	call, out := g.run(t, `{"model":"gpt-4o-mini","messages":[`+user+`],"stream":true,"stream_options":{"include_usage":true},`+
		`"top_p":0.9,"seed":42,"stop":["END"],"user":"user-7","temperature":0.2}`)
	s := checkStream(t, out, true)
	if s.Text != "ok" || s.Usage == nil {
		t.Errorf("streamed %q, usage %v", s.Text, s.Usage)
	}
	r := call.Request
	if r.TopP == nil || *r.TopP != 0.9 || r.Seed == nil || *r.Seed != 42 || len(r.Stop) != 1 || r.Stop[0] != "END" || r.User != "user-7" {
		t.Errorf("neutral request %+v", r)
	}
	if !slices.Equal(call.Dropped, []string{"seed"}) || len(call.Foreign) != 0 {
		t.Errorf("dropped %q, foreign %q", call.Dropped, call.Foreign)
	}
}

func decodeBody(body string) (*dialect.Call, error) { return chat.New().Decode([]byte(body)) }
