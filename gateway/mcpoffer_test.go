package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/hookhost/hookhost/internal/fakeapi"
	"github.com/hookhost/hookhost/internal/mcpgate"
)

// mcpFake builds the MCP server of cmd/hookhost/testdata/mcpfake (echo
// returns "echo: " and its text) and returns its path.
func mcpFake(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "mcpfake")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/hookhost/hookhost/cmd/hookhost/testdata/mcpfake").CombinedOutput(); err != nil {
		t.Fatalf("building the fake MCP server: %v\n%s", err, out)
	}
	return bin
}

// offeredMCPConfig is an OpenAI upstream at base on the gateway route with
// the fake MCP server "fake" offering echo to the model.
func offeredMCPConfig(base, fake string) string {
	return upstreamConfig(base, true) + fmt.Sprintf(`
[mcp.servers.fake]
command = %q
tools = ["echo"]
offer_to_model = true
`, fake)
}

// fakeCall is one tool call a fake upstream makes.
type fakeCall struct{ id, name, args string }

// chatCalls answers a Chat Completions request with tool calls, streamed
// when the request streams.
func chatCalls(calls ...fakeCall) fakeapi.Reply {
	return func(w http.ResponseWriter, r fakeapi.Seen) {
		if !streams(r) {
			var tcs []string
			for _, c := range calls {
				tcs = append(tcs, fmt.Sprintf(`{"id":%q,"type":"function","function":{"name":%q,"arguments":%s}}`, c.id, c.name, quoteJSON(c.args)))
			}
			fakeapi.JSON(200, `{"id":"chatcmpl-t","object":"chat.completion","created":1,"model":"gpt-test","choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":null,"tool_calls":[`+
				strings.Join(tcs, ",")+`]}}],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}`)(w, r)
			return
		}
		chunk := `{"id":"chatcmpl-t","object":"chat.completion.chunk","created":1,"model":"gpt-test","choices":[%s],"usage":%s}`
		frames := []string{fakeapi.Data(fmt.Sprintf(chunk, `{"index":0,"delta":{"role":"assistant","content":null},"finish_reason":null}`, "null"))}
		for i, c := range calls {
			frames = append(frames,
				fakeapi.Data(fmt.Sprintf(chunk, fmt.Sprintf(`{"index":0,"delta":{"tool_calls":[{"index":%d,"id":%q,"type":"function","function":{"name":%q,"arguments":""}}]},"finish_reason":null}`, i, c.id, c.name), "null")),
				fakeapi.Data(fmt.Sprintf(chunk, fmt.Sprintf(`{"index":0,"delta":{"tool_calls":[{"index":%d,"function":{"arguments":%s}}]},"finish_reason":null}`, i, quoteJSON(c.args)), "null")))
		}
		frames = append(frames,
			fakeapi.Data(fmt.Sprintf(chunk, `{"index":0,"delta":{},"finish_reason":"tool_calls"}`, "null")),
			fakeapi.Data(fmt.Sprintf(chunk, "", `{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}`)),
			"data: [DONE]\n\n")
		fakeapi.SSE(frames...)(w, r)
	}
}

var clientTimeTool = openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
	Name: "get_time", Description: openai.String("the time in a zone"),
	Parameters: map[string]any{"type": "object", "properties": map[string]any{"zone": map[string]any{"type": "string"}}, "required": []string{"zone"}},
})

// askOpenAIGo sends params through openai-go, streamed through its
// ChatCompletionAccumulator or not, and returns the one message.
func askOpenAIGo(t *testing.T, client openai.Client, params openai.ChatCompletionNewParams, stream bool) (openai.ChatCompletionMessage, string) {
	t.Helper()
	ctx := context.Background()
	var cc *openai.ChatCompletion
	if stream {
		params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
		s := client.Chat.Completions.NewStreaming(ctx, params)
		acc := openai.ChatCompletionAccumulator{}
		for s.Next() {
			if !acc.AddChunk(s.Current()) {
				t.Fatalf("the accumulator refused a chunk: %s", s.Current().RawJSON())
			}
		}
		if err := s.Err(); err != nil {
			t.Fatal(err)
		}
		cc = &acc.ChatCompletion
	} else {
		var err error
		if cc, err = client.Chat.Completions.New(ctx, params); err != nil {
			t.Fatal(err)
		}
	}
	if len(cc.Choices) != 1 {
		t.Fatalf("%d choices, want 1", len(cc.Choices))
	}
	return cc.Choices[0].Message, string(cc.Choices[0].FinishReason)
}

// A tool of an MCP server with offer_to_model is offered to the upstream
// model beside the client's tools; the model's call to it is run by
// hookhost on the server, the model is called again inside the same
// response, and the client (openai-go, streamed and not) sees only the
// final answer. /metrics counts the call.
func TestOfferedMCPToolRunsInsideOneResponse(t *testing.T) {
	fake := fakeapi.New(t,
		chatCalls(fakeCall{"call_up1", "fake__echo", `{"text":"streamed"}`}), chatText("The server said: streamed."),
		chatCalls(fakeCall{"call_up2", "fake__echo", `{"text":"whole"}`}), chatText("The server said: whole."),
	)
	_, url := hostServer(t, offeredMCPConfig(fake.URL()+"/v1", mcpFake(t)))
	client := openai.NewClient(option.WithBaseURL(url+"/v1"), option.WithAPIKey("none"), option.WithMaxRetries(0))
	for i, stream := range []bool{true, false} {
		word := map[bool]string{true: "streamed", false: "whole"}[stream]
		params := openai.ChatCompletionNewParams{
			Model:    "gpt-test",
			Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("echo " + word)},
			Tools:    []openai.ChatCompletionToolUnionParam{clientTimeTool},
		}
		msg, finish := askOpenAIGo(t, client, params, stream)
		if msg.Content != "The server said: "+word+"." || len(msg.ToolCalls) != 0 || finish != "stop" {
			t.Fatalf("stream=%v: the client got %q, %d tool calls, finish %q; want only the final answer", stream, msg.Content, len(msg.ToolCalls), finish)
		}
		seen := fake.Requests()
		if len(seen) != 2*(i+1) {
			t.Fatalf("the upstream got %d requests, want 2 per client request", len(seen))
		}
		first, second := string(seen[2*i].Body), string(seen[2*i+1].Body)
		if !strings.Contains(first, `"name":"fake__echo"`) || !strings.Contains(first, `"name":"get_time"`) || !strings.Contains(first, `"text"`) {
			t.Errorf("stream=%v: the first round did not offer both tools with the server's schema:\n%s", stream, first)
		}
		// Tool results reach the model as JSON, a text as a JSON string,
		// as a plugin tool's do.
		if want := `"content":"\"echo: ` + word + `\""`; !strings.Contains(second, want) || !strings.Contains(second, `"tool_call_id":"call_up`) {
			t.Errorf("stream=%v: the second round lacks the server's result %s:\n%s", stream, want, second)
		}
	}

	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{
		`hookhost_mcp_calls_total{outcome="ok",server="fake",tool="echo"} 2`,
		`hookhost_mcp_call_duration_seconds_count{server="fake",tool="echo"} 2`,
		`hookhost_mcp_call_duration_seconds_bucket{server="fake",tool="echo",le="+Inf"} 2`,
		`hookhost_mcp_server_state{server="fake",state="running"} 1`,
		`hookhost_mcp_server_state{server="fake",state="restarting"} 0`,
		`hookhost_mcp_server_restarts_total{server="fake"} 0`,
		`hookhost_gateway_tool_calls_total{how="mcp"} 2`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

// Mixed with a client tool: hookhost runs the MCP tool, hands the client
// only its own call, and when the client answers it the model sees both
// results under the upstream's ids.
func TestOfferedMCPToolMixedWithAClientTool(t *testing.T) {
	fake := fakeapi.New(t,
		chatCalls(fakeCall{"call_mcp", "fake__echo", `{"text":"mixed"}`}, fakeCall{"call_time", "get_time", `{"zone":"Europe/Paris"}`}),
		chatText("It is noon, and the server said mixed."),
	)
	_, url := hostServer(t, offeredMCPConfig(fake.URL()+"/v1", mcpFake(t)))
	client := openai.NewClient(option.WithBaseURL(url+"/v1"), option.WithAPIKey("none"), option.WithMaxRetries(0))
	params := openai.ChatCompletionNewParams{
		Model:    "gpt-test",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("echo mixed, and what time is it in Paris?")},
		Tools:    []openai.ChatCompletionToolUnionParam{clientTimeTool},
	}
	msg, finish := askOpenAIGo(t, client, params, true)
	if len(msg.ToolCalls) != 1 || msg.ToolCalls[0].Function.Name != "get_time" || finish != "tool_calls" {
		t.Fatalf("the client got %+v (finish %q), want its get_time call alone", msg.ToolCalls, finish)
	}
	id := msg.ToolCalls[0].ID
	if id == "call_time" || !strings.HasPrefix(id, "call_") {
		t.Errorf("the client's call id %q is not one hookhost minted", id)
	}
	params.Messages = append(params.Messages, msg.ToParam(), openai.ToolMessage("12:00", id))
	msg, finish = askOpenAIGo(t, client, params, true)
	if msg.Content != "It is noon, and the server said mixed." || finish != "stop" {
		t.Fatalf("the client got %q (finish %q)", msg.Content, finish)
	}
	seen := fake.Requests()
	if len(seen) != 2 {
		t.Fatalf("the upstream got %d requests, want 2", len(seen))
	}
	var second struct {
		Messages []struct {
			Role       string `json:"role"`
			Content    any    `json:"content"`
			ToolCallID string `json:"tool_call_id"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(seen[1].Body, &second); err != nil {
		t.Fatal(err)
	}
	results := map[string]string{}
	for _, m := range second.Messages {
		if m.Role == "tool" {
			results[m.ToolCallID] = fmt.Sprint(m.Content)
		}
	}
	if results["call_mcp"] != `"echo: mixed"` || results["call_time"] != "12:00" || len(results) != 2 {
		t.Errorf("the model got the results %v, want the server's and the client's under the upstream's ids:\n%s", results, seen[1].Body)
	}
}

// /metrics shows each MCP server's state and restarts, and every tool's
// calls by outcome with their latency histogram, as the host reports them.
func TestMetricsExposeMCPServers(t *testing.T) {
	p := testParts()
	p.mcpServers = func() []mcpgate.Status {
		return []mcpgate.Status{
			{Name: "fs", State: mcpgate.StateRestarting, Restarts: 4},
			{Name: "broken", State: mcpgate.StateStopped, Reason: "not found"},
		}
	}
	buckets := make([]uint64, len(mcpgate.LatencyBuckets))
	for i, le := range mcpgate.LatencyBuckets {
		if le >= 0.5 {
			buckets[i] = 2
		}
		if le >= 60 {
			buckets[i] = 3
		}
	}
	p.mcpStats = func() []mcpgate.ToolStats {
		return []mcpgate.ToolStats{{Server: "fs", Tool: "read_file", Count: 3, Sum: 61.2, Buckets: buckets,
			Outcomes: map[string]uint64{mcpgate.OutcomeOK: 2, mcpgate.OutcomeTimeout: 1}}}
	}
	s := newTest(t, p)
	resp, err := http.Get(s.url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{
		`hookhost_mcp_calls_total{outcome="ok",server="fs",tool="read_file"} 2`,
		`hookhost_mcp_calls_total{outcome="timeout",server="fs",tool="read_file"} 1`,
		`hookhost_mcp_call_duration_seconds_bucket{server="fs",tool="read_file",le="0.25"} 0`,
		`hookhost_mcp_call_duration_seconds_bucket{server="fs",tool="read_file",le="0.5"} 2`,
		`hookhost_mcp_call_duration_seconds_bucket{server="fs",tool="read_file",le="60"} 3`,
		`hookhost_mcp_call_duration_seconds_sum{server="fs",tool="read_file"} 61.2`,
		`hookhost_mcp_call_duration_seconds_count{server="fs",tool="read_file"} 3`,
		`hookhost_mcp_server_state{server="fs",state="restarting"} 1`,
		`hookhost_mcp_server_state{server="fs",state="running"} 0`,
		`hookhost_mcp_server_state{server="broken",state="stopped"} 1`,
		`hookhost_mcp_server_restarts_total{server="fs"} 4`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}
