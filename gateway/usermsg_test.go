package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	anthropicoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/hookhost/hookhost/internal/fakeapi"
)

// What gateway/internal/contextplugin answers.
const (
	ctxBlockMessage = "That request is not allowed here."
	ctxUserContext  = "ticket ACME-7 is open"
	ctxToolContext  = "checked by ctx: "
	contextMarker   = "<additional_context>"
)

// contextPlugin builds gateway/internal/contextplugin into the test's
// temporary directory.
func contextPlugin(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "ctx")
	if out, err := exec.Command("go", "build", "-o", bin, "./internal/contextplugin").CombinedOutput(); err != nil {
		t.Fatalf("building the context plugin: %v\n%s", err, out)
	}
	return bin
}

// contextServer is a real host with the context plugin in front of up, a
// fake Chat Completions upstream: /v1/chat/completions is forwarded,
// /v1/responses and /v1/messages are translated.
func contextServer(t *testing.T, up *fakeapi.Upstream) string {
	t.Helper()
	_, url := hostServer(t, upstreamConfig(up.BaseURL(), true)+fmt.Sprintf(`
[plugins]
enabled = ["ctx"]
[plugins.entries.ctx]
path = %q
`, contextPlugin(t)))
	return url
}

// endpointCase is one front: its path, a request body for one user
// message (and tools), and how to read the answer's text.
type endpointCase struct {
	path string
	body func(text string, stream bool) string
	// streamEnd is what a whole stream of the endpoint ends with.
	streamEnd string
}

var endpointCases = []endpointCase{
	{"/v1/chat/completions", func(text string, stream bool) string {
		return fmt.Sprintf(`{"model":"gpt-test","stream":%v,"messages":[{"role":"user","content":%q}]}`, stream, text)
	}, "data: [DONE]\n\n"},
	{"/v1/responses", func(text string, stream bool) string {
		return fmt.Sprintf(`{"model":"gpt-test","stream":%v,"input":[{"role":"user","content":%q}]}`, stream, text)
	}, "response.completed"},
	{"/v1/messages", func(text string, stream bool) string {
		return fmt.Sprintf(`{"model":"gpt-test","max_tokens":100,"stream":%v,"messages":[{"role":"user","content":%q}]}`, stream, text)
	}, "message_stop"},
}

func postEndpoint(t *testing.T, url, path, body string) (int, string) {
	t.Helper()
	resp := post(t, url, path, body, "anthropic-version", "2023-06-01")
	return resp.StatusCode, string(readAll(t, resp))
}

// answerText is the text of a non-streamed answer of the endpoint at path.
func answerText(t *testing.T, path, body string) string {
	t.Helper()
	var v struct {
		Choices []struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
		Output []struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"output"`
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		t.Fatalf("%s: the answer is not JSON: %v\n%s", path, err, body)
	}
	var b strings.Builder
	for _, c := range v.Choices {
		b.WriteString(c.Message.Content)
	}
	for _, o := range v.Output {
		for _, c := range o.Content {
			b.WriteString(c.Text)
		}
	}
	for _, c := range v.Content {
		b.WriteString(c.Text)
	}
	return b.String()
}

// A blocked user message is answered with the plugin's message, in the
// endpoint's shape, streamed or not, and the upstream is never called.
func TestOnUserMessageBlockIsTheAnswerOnEveryEndpoint(t *testing.T) {
	up := fakeapi.NewUpstream(t, fakeapi.Chat)
	up.Use(func(fakeapi.Request) fakeapi.Turn { return fakeapi.Turn{Text: "the model answered", In: 1, Out: 1} })
	url := contextServer(t, up)
	for _, e := range endpointCases {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s stream=%v", e.path, stream), func(t *testing.T) {
				code, body := postEndpoint(t, url, e.path, e.body("tell me something forbidden", stream))
				if code != 200 {
					t.Fatalf("got %d:\n%s", code, body)
				}
				if stream {
					if !strings.Contains(body, "That request") || !strings.Contains(body, e.streamEnd) {
						t.Fatalf("the stream does not carry the block's message as a whole answer:\n%s", body)
					}
				} else if got := answerText(t, e.path, body); got != ctxBlockMessage {
					t.Fatalf("answer %q, want the block's message:\n%s", got, body)
				}
				if strings.Contains(body, "the model answered") {
					t.Fatalf("the model's answer reached the client:\n%s", body)
				}
				if n := len(up.Requests()); n != 0 {
					t.Fatalf("the upstream was called %d times for a blocked message", n)
				}
			})
		}
	}
}

// The block's message, streamed, is one well-formed message to the
// official SDKs' stream accumulators.
func TestOnUserMessageBlockThroughSDKAccumulators(t *testing.T) {
	up := fakeapi.NewUpstream(t, fakeapi.Chat)
	up.Use(func(fakeapi.Request) fakeapi.Turn { return fakeapi.Turn{Text: "the model answered", In: 1, Out: 1} })
	url := contextServer(t, up)
	ctx := context.Background()

	oc := openai.NewClient(option.WithBaseURL(url+"/v1"), option.WithAPIKey("k"), option.WithMaxRetries(0))
	stream := oc.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{
		Model:    "gpt-test",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("something forbidden")},
	})
	acc := openai.ChatCompletionAccumulator{}
	for stream.Next() {
		acc.AddChunk(stream.Current())
	}
	if err := stream.Err(); err != nil {
		t.Fatalf("openai-go stream: %v", err)
	}
	if len(acc.Choices) != 1 || acc.Choices[0].Message.Content != ctxBlockMessage || acc.Choices[0].FinishReason != "stop" {
		t.Fatalf("openai-go accumulated %+v, want the block's message, finish_reason stop", acc.Choices)
	}

	ac := anthropic.NewClient(anthropicoption.WithBaseURL(url), anthropicoption.WithAPIKey("k"), anthropicoption.WithMaxRetries(0))
	as := ac.Messages.NewStreaming(ctx, anthropic.MessageNewParams{
		Model: "gpt-test", MaxTokens: 100,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("something forbidden"))},
	})
	m := anthropic.Message{}
	for as.Next() {
		if err := m.Accumulate(as.Current()); err != nil {
			t.Fatalf("anthropic-sdk-go accumulate: %v", err)
		}
	}
	if err := as.Err(); err != nil {
		t.Fatalf("anthropic-sdk-go stream: %v", err)
	}
	if len(m.Content) != 1 || m.Content[0].Text != ctxBlockMessage || m.StopReason != anthropic.StopReasonEndTurn {
		t.Fatalf("anthropic-sdk-go accumulated %+v, want the block's message, stop_reason end_turn", m)
	}
	if n := len(up.Requests()); n != 0 {
		t.Fatalf("the upstream was called %d times for blocked messages", n)
	}
}

// Context reaches the model beside the user's message, in a marked user
// message of its own, and never the client.
func TestOnUserMessageContextGoesUpstreamOnly(t *testing.T) {
	up := fakeapi.NewUpstream(t, fakeapi.Chat)
	url := contextServer(t, up)
	for _, e := range endpointCases {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s stream=%v", e.path, stream), func(t *testing.T) {
				up.Use(func(fakeapi.Request) fakeapi.Turn { return fakeapi.Turn{Text: "Ticket is open.", In: 3, Out: 2} })
				code, body := postEndpoint(t, url, e.path, e.body("what is the status?", stream))
				if code != 200 || !strings.Contains(body, "Ticket") {
					t.Fatalf("got %d:\n%s", code, body)
				}
				if strings.Contains(body, ctxUserContext) || strings.Contains(body, "additional_context") {
					t.Fatalf("the context reached the client:\n%s", body)
				}
				seen := up.Requests()
				if len(seen) != 1 {
					t.Fatalf("the upstream got %d requests, want 1", len(seen))
				}
				conv, err := fakeapi.Conversation(fakeapi.Chat, seen[0].Body)
				if err != nil {
					t.Fatal(err)
				}
				var texts []string
				for _, it := range conv {
					if it.Role == "user" {
						texts = append(texts, it.Content)
					}
				}
				if len(texts) != 2 || texts[0] != "what is the status?" ||
					texts[1] != contextMarker+"\n"+ctxUserContext+"\n</additional_context>" {
					t.Fatalf("the upstream's user messages are %q, want the user's then the marked context:\n%s", texts, seen[0].Body)
				}
			})
		}
	}
}

// A request that continues with tool results brings no new user message:
// on_user_message does not fire (no context is added, nothing blocked),
// even when the earlier user message would be blocked.
func TestOnUserMessageNotFiredForAContinuation(t *testing.T) {
	up := fakeapi.NewUpstream(t, fakeapi.Chat)
	up.Use(func(fakeapi.Request) fakeapi.Turn { return fakeapi.Turn{Text: "Done.", In: 1, Out: 1} })
	url := contextServer(t, up)
	body := `{"model":"gpt-test","tools":[{"type":"function","function":{"name":"get_time","parameters":{"type":"object"}}}],"messages":[
		{"role":"user","content":"something forbidden"},
		{"role":"assistant","content":null,"tool_calls":[{"id":"call_9","type":"function","function":{"name":"get_time","arguments":"{}"}}]},
		{"role":"tool","tool_call_id":"call_9","content":"12:00"}]}`
	code, got := postEndpoint(t, url, "/v1/chat/completions", body)
	if code != 200 || answerText(t, "/v1/chat/completions", got) != "Done." {
		t.Fatalf("got %d:\n%s", code, got)
	}
	seen := up.Requests()
	if len(seen) != 1 || strings.Contains(string(seen[0].Body), "additional_context") {
		t.Fatalf("the upstream got %d requests; the continuation must go as it came:\n%s", len(seen), seen[len(seen)-1].Body)
	}
}

// post_tool_call_can_add_context appends its context to a plugin tool's
// result as the model sees it, and to the client's own tool's result
// before it goes upstream.
func TestToolContextOnPluginAndClientTools(t *testing.T) {
	up := fakeapi.NewUpstream(t, fakeapi.Chat)
	url := contextServer(t, up)

	// A plugin tool: hookhost runs it, the upstream's next round sees the
	// result with the context after it.
	up.Use(func(r fakeapi.Request) fakeapi.Turn {
		if r.N == 0 {
			return fakeapi.Turn{Calls: []fakeapi.Call{{ID: "call_1", Name: "ctx__lookup", Args: "{}"}}, In: 1, Out: 1}
		}
		return fakeapi.Turn{Text: "It is open.", In: 1, Out: 1}
	})
	code, body := postEndpoint(t, url, "/v1/chat/completions", `{"model":"gpt-test","messages":[{"role":"user","content":"status?"}]}`)
	if code != 200 || answerText(t, "/v1/chat/completions", body) != "It is open." {
		t.Fatalf("got %d:\n%s", code, body)
	}
	seen := up.Requests()
	if len(seen) != 2 {
		t.Fatalf("the upstream got %d requests, want 2", len(seen))
	}
	want := `{"status":"open"}` + "\n\n" + contextMarker + "\n" + ctxToolContext + "ctx__lookup\n</additional_context>"
	if got := toolResultOf(t, seen[1].Body, "call_1"); got != want {
		t.Fatalf("the model saw the plugin tool's result as\n%q\nwant\n%q", got, want)
	}
	if strings.Contains(body, "additional_context") {
		t.Fatalf("the tool's context reached the client:\n%s", body)
	}

	// A client tool: its call is handed to the client; the client's
	// result goes upstream with the context after it.
	up.Use(func(r fakeapi.Request) fakeapi.Turn {
		if r.N == 0 {
			return fakeapi.Turn{Calls: []fakeapi.Call{{ID: "call_7", Name: "get_time", Args: "{}"}}, In: 1, Out: 1}
		}
		return fakeapi.Turn{Text: "It is noon.", In: 1, Out: 1}
	})
	tools := `"tools":[{"type":"function","function":{"name":"get_time","parameters":{"type":"object","properties":{}}}}]`
	code, body = postEndpoint(t, url, "/v1/chat/completions", `{"model":"gpt-test",`+tools+`,"messages":[{"role":"user","content":"time?"}]}`)
	if code != 200 {
		t.Fatalf("got %d:\n%s", code, body)
	}
	var first struct {
		Choices []struct {
			Message json.RawMessage `json:"message"`
		} `json:"choices"`
	}
	if err := json.Unmarshal([]byte(body), &first); err != nil || len(first.Choices) != 1 {
		t.Fatalf("the first answer: %v\n%s", err, body)
	}
	var handed struct {
		ToolCalls []struct {
			ID string `json:"id"`
		} `json:"tool_calls"`
	}
	if err := json.Unmarshal(first.Choices[0].Message, &handed); err != nil || len(handed.ToolCalls) != 1 {
		t.Fatalf("no call handed to the client: %v\n%s", err, body)
	}
	id := handed.ToolCalls[0].ID
	cont := fmt.Sprintf(`{"model":"gpt-test",%s,"messages":[{"role":"user","content":"time?"},{"role":"assistant","content":null,"tool_calls":[{"id":%q,"type":"function","function":{"name":"get_time","arguments":"{}"}}]},{"role":"tool","tool_call_id":%q,"content":"12:00"}]}`, tools, id, id)
	code, body = postEndpoint(t, url, "/v1/chat/completions", cont)
	if code != 200 || answerText(t, "/v1/chat/completions", body) != "It is noon." {
		t.Fatalf("got %d:\n%s", code, body)
	}
	seen = up.Requests()
	if len(seen) != 2 {
		t.Fatalf("the upstream got %d requests, want 2", len(seen))
	}
	want = "12:00\n\n" + contextMarker + "\n" + ctxToolContext + "get_time\n</additional_context>"
	if got := toolResultOf(t, seen[1].Body, "call_7"); got != want {
		t.Fatalf("the model saw the client's result as\n%q\nwant\n%q", got, want)
	}
}

// toolResultOf is the content of the tool result for call id in a Chat
// Completions request body.
func toolResultOf(t *testing.T, body []byte, id string) string {
	t.Helper()
	conv, err := fakeapi.Conversation(fakeapi.Chat, body)
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range conv {
		if it.Kind == "result" && it.ID == id {
			return it.Content
		}
	}
	t.Fatalf("no result for %s in\n%s", id, body)
	return ""
}
