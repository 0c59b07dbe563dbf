package gateway

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/hookhost/hookhost/internal/codec/messages"
	"github.com/hookhost/hookhost/internal/dialect"
	"github.com/hookhost/hookhost/internal/fakeapi"
	"github.com/hookhost/hookhost/internal/streamcheck"
	"github.com/hookhost/hookhost/internal/upstream"
	"github.com/hookhost/hookhost/llm"
	"github.com/hookhost/hookhost/llm/anthropic"
	"github.com/hookhost/hookhost/llm/offline"
	"github.com/hookhost/hookhost/llm/openai"
)

// claudeCode is a request as Claude Code 2.1 sends it by default (see
// WIRE.md, "What real clients send by default"): system blocks and tools
// with cache_control, <system-reminder> text in the user turn, a
// mid-conversation system message, metadata.user_id, and beta body
// fields, streamed.
const claudeCode = `{"model":"MODEL","max_tokens":32000,"stream":true,` +
	`"system":[{"type":"text","text":"You are Claude Code, a CLI for coding.","cache_control":{"type":"ephemeral"}},` +
	`{"type":"text","text":"Answer the weather when asked.","cache_control":{"type":"ephemeral"}}],` +
	`"messages":[{"role":"user","content":[{"type":"text","text":"<system-reminder>\nThe date is 2026-11-27.\n</system-reminder>"},` +
	`{"type":"text","text":"what is the weather in Paris?","cache_control":{"type":"ephemeral"}}]},` +
	`{"role":"system","content":"<system-reminder>Plan mode is off.</system-reminder>"}],` +
	`"tools":[{"name":"Bash","description":"Runs a shell command","input_schema":{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"command":{"type":"string"}},"required":["command"],"additionalProperties":false},"cache_control":{"type":"ephemeral"}},` +
	`{"name":"get_weather","description":"Weather for a city","input_schema":{"type":"object","properties":{"city":{"type":"string"}}},"defer_loading":true}],` +
	`"metadata":{"user_id":"user_4f9a1c_account__session_0b3c9e"},"thinking":{"type":"adaptive"},` +
	`"context_management":{"edits":[{"type":"clear_thinking_20251015","keep":"all"}]},"output_config":{"effort":"high"}}`

// claudeCodeHeaders are the headers it sends beside the key.
var claudeCodeHeaders = []string{
	"anthropic-version", "2023-06-01",
	"anthropic-beta", "claude-code-20250219,context-management-2025-06-27,effort-2025-11-24",
	"x-stainless-lang", "js", "x-stainless-retry-count", "0",
	"user-agent", "claude-cli/2.1.3 (external, cli)",
}

// claudeCodeDrops are the hints its request holds, counted when the
// upstream speaks another protocol.
var claudeCodeDrops = []string{
	"system[].cache_control", "messages[].content[].cache_control", "tools[].cache_control", "tools[].defer_loading",
	"thinking", "context_management", "output_config.effort", "header: anthropic-beta", "header: x-stainless-*",
}

// claudeCodeOn sends Claude Code's default request for model to a gateway
// whose upstream is provider, and returns the server and the stream it
// answered with, failing the test on anything but a 200.
func claudeCodeOn(t *testing.T, provider llm.Provider, model string) (*testServer, []byte) {
	t.Helper()
	p := realParts()
	p.provider, p.models = provider, []string{model}
	s := newTest(t, p)
	resp := post(t, s.url, "/v1/messages", strings.Replace(claudeCode, "MODEL", model, 1), claudeCodeHeaders...)
	got := readAll(t, resp)
	if resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, got)
	}
	return s, got
}

// wantClaudeCodeDrops checks that each of claudeCodeDrops was counted as
// dropped times times on s ("" for never).
func wantClaudeCodeDrops(t *testing.T, s *testServer, times string) {
	t.Helper()
	for _, f := range claudeCodeDrops {
		if n := dropCount(t, s.url, f); n != times {
			t.Errorf("dropped %s counted %q times, want %q", f, n, times)
		}
	}
}

func dropCount(t *testing.T, url, field string) string {
	t.Helper()
	return scrape(t, url, `hookhost_gateway_fields_dropped_total{endpoint="/v1/messages",field="`+field+`"}`)
}

// messageStartInput is the input_tokens of a stream's message_start.
func messageStartInput(t *testing.T, raw []byte) int {
	t.Helper()
	for _, frame := range strings.Split(string(raw), "\n\n") {
		if !strings.HasPrefix(frame, "event: message_start\n") {
			continue
		}
		var e struct {
			Message struct {
				Usage struct {
					InputTokens int `json:"input_tokens"`
				} `json:"usage"`
			} `json:"message"`
		}
		if err := json.Unmarshal([]byte(strings.TrimPrefix(frame, "event: message_start\ndata: ")), &e); err != nil {
			t.Fatalf("message_start: %v", err)
		}
		return e.Message.Usage.InputTokens
	}
	t.Fatalf("no message_start in %s", raw)
	return 0
}

func checkedStream(t *testing.T, raw []byte) *streamcheck.MessagesStream {
	t.Helper()
	s, err := streamcheck.Messages(raw)
	if err != nil {
		t.Fatalf("the stream breaks what the SDKs rely on: %v\n%s", err, raw)
	}
	return s
}

// Claude Code's default request is served by the offline model, its hints
// counted.
func TestClaudeCodeRequestOnOffline(t *testing.T) {
	s, got := claudeCodeOn(t, offline.New(), "offline-small")
	st := checkedStream(t, got)
	if len(st.Calls) != 1 || st.Calls[0].Name != "get_weather" {
		t.Errorf("the offline model did not call get_weather for the user's question: %+v", st.Calls)
	}
	wantClaudeCodeDrops(t, s, "1")
	if n := dropCount(t, s.url, "metadata"); n != "" {
		t.Errorf("metadata holding only user_id is mapped, not dropped; counted %s", n)
	}
}

// On an OpenAI Chat Completions upstream the mid-conversation system
// message goes in place, metadata.user_id is the neutral user, and a round
// of tool calls only starts the client's stream with the upstream's real
// input count.
func TestClaudeCodeRequestOnOpenAIChat(t *testing.T) {
	fake := fakeapi.New(t, fakeapi.SSE(
		fakeapi.Data(`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-test","choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"Bash","arguments":""}}]},"finish_reason":null}],"usage":null}`),
		fakeapi.Data(`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-test","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"command\":\"ls\"}"}}]},"finish_reason":null}],"usage":null}`),
		fakeapi.Data(`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-test","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}],"usage":null}`),
		fakeapi.Data(`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-test","choices":[],"usage":{"prompt_tokens":4321,"completion_tokens":12,"total_tokens":4333}}`),
		"data: [DONE]\n\n",
	))
	prov, err := openai.New(openai.Config{BaseURL: fake.URL() + "/v1", APIKey: upstreamKey})
	if err != nil {
		t.Fatal(err)
	}
	s, got := claudeCodeOn(t, prov, "gpt-test")
	st := checkedStream(t, got)
	if len(st.Calls) != 1 || st.Calls[0].Name != "Bash" || st.Calls[0].Arguments != `{"command":"ls"}` {
		t.Errorf("calls = %+v", st.Calls)
	}
	if n := messageStartInput(t, got); n != 4321 {
		t.Errorf("message_start.usage.input_tokens = %d, want the upstream's 4321", n)
	}
	var sent struct {
		Messages []struct {
			Role    string `json:"role"`
			Content any    `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(fake.Requests()[0].Body, &sent); err != nil {
		t.Fatal(err)
	}
	var roles []string
	for _, m := range sent.Messages {
		roles = append(roles, m.Role)
	}
	if strings.Join(roles, ",") != "system,user,system" || sent.Messages[2].Content != "<system-reminder>Plan mode is off.</system-reminder>" {
		t.Errorf("upstream messages = %+v, want the system prompt, the user turn, then the system message in place", sent.Messages)
	}
	wantClaudeCodeDrops(t, s, "1")
}

// Forwarded to an Anthropic upstream, which refuses a system message
// inside messages as the real API does, the system message joins the
// system prompt; nothing is dropped, and message_start carries the
// upstream's own input count.
func TestClaudeCodeRequestForwardedToAnthropic(t *testing.T) {
	fake := fakeapi.New(t, fakeapi.MessagesChecked(fakeapi.SSE(
		fakeapi.Named("message_start", `{"type":"message_start","message":{"id":"msg_u1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":5678,"output_tokens":1}}}`),
		fakeapi.Named("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`),
		fakeapi.Named("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Sunny in Paris."}}`),
		fakeapi.Named("content_block_stop", `{"type":"content_block_stop","index":0}`),
		fakeapi.Named("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":5}}`),
		fakeapi.Named("message_stop", `{"type":"message_stop"}`),
	)))
	prov, err := anthropic.New(anthropic.Config{BaseURL: fake.URL(), APIKey: upstreamKey})
	if err != nil {
		t.Fatal(err)
	}
	s, got := claudeCodeOn(t, prov, "claude-sonnet-4-5")
	if st := checkedStream(t, got); st.Text != "Sunny in Paris." {
		t.Errorf("text = %q", st.Text)
	}
	if n := messageStartInput(t, got); n != 5678 {
		t.Errorf("message_start.usage.input_tokens = %d, want the upstream's 5678", n)
	}
	var sent map[string]json.RawMessage
	if err := json.Unmarshal(fake.Requests()[0].Body, &sent); err != nil {
		t.Fatal(err)
	}
	// The client's blocks stay as sent, so their cache_control still
	// marks the prefix Anthropic caches; the system message follows.
	wantSystem := `[{"type":"text","text":"You are Claude Code, a CLI for coding.","cache_control":{"type":"ephemeral"}},` +
		`{"type":"text","text":"Answer the weather when asked.","cache_control":{"type":"ephemeral"}},` +
		`{"type":"text","text":"<system-reminder>Plan mode is off.</system-reminder>"}]`
	if string(sent["system"]) != wantSystem || strings.Contains(string(sent["messages"]), "Plan mode is off.") {
		t.Errorf("the system message did not join the system prompt:\nsystem %s\nwant   %s\nmessages %s", sent["system"], wantSystem, sent["messages"])
	}
	for _, k := range []string{"metadata", "thinking", "context_management", "output_config"} {
		if len(sent[k]) == 0 {
			t.Errorf("%s did not reach the Anthropic upstream", k)
		}
	}
	if !strings.Contains(string(sent["tools"]), `"defer_loading":true`) || !strings.Contains(string(sent["tools"]), `"cache_control"`) {
		t.Errorf("the tools' hints did not reach the Anthropic upstream: %s", sent["tools"])
	}
	wantClaudeCodeDrops(t, s, "")
}

// The Anthropic fake refuses what the real API refuses, so the test above
// would see a system message left inside messages.
func TestAnthropicFakeRefusesASystemMessage(t *testing.T) {
	fake := fakeapi.New(t, fakeapi.MessagesChecked(fakeapi.JSON(200, `{}`)))
	resp, err := http.Post(fake.URL()+"/v1/messages", "application/json",
		strings.NewReader(`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"},{"role":"system","content":"x"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 400 || !strings.Contains(string(b), "messages.1.role") {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
}

// @ai-sdk/anthropic's streamText puts eager_input_streaming on every tool:
// accepted on an upstream of another protocol, and counted.
func TestEagerInputStreamingAcrossProtocols(t *testing.T) {
	p := offlineParts()
	s := newTest(t, p)
	body := `{"model":"offline-small","max_tokens":4096,"stream":true,"messages":[{"role":"user","content":[{"type":"text","text":"weather in Oslo?"}]}],` +
		`"tools":[{"name":"weather","description":"Weather for a city","input_schema":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false,"$schema":"http://json-schema.org/draft-07/schema#"},"eager_input_streaming":true}],` +
		`"tool_choice":{"type":"auto"}}`
	resp := post(t, s.url, "/v1/messages", body, "anthropic-version", "2023-06-01")
	got := readAll(t, resp)
	if resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, got)
	}
	checkedStream(t, got)
	if n := dropCount(t, s.url, "tools[].eager_input_streaming"); n != "1" {
		t.Errorf("eager_input_streaming counted %q times, want 1", n)
	}
}

var _ upstream.Forwarder = (*anthropic.Provider)(nil)

// Every hint header of the messages front's table is accepted on an
// upstream of another protocol, and counted.
func TestMessagesHintHeadersAreCounted(t *testing.T) {
	p := offlineParts()
	s := newTest(t, p)
	for _, row := range messages.New().Fields() {
		name, ok := strings.CutPrefix(row.Path, "header: ")
		if !ok || row.Handling != dialect.Hint {
			continue
		}
		name = strings.Replace(name, "*", "os", 1) // x-stainless-* → x-stainless-os
		resp := post(t, s.url, "/v1/messages", `{"model":"offline-small","max_tokens":50,"messages":[{"role":"user","content":"hi"}]}`, name, "v1")
		if got := readAll(t, resp); resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", name, resp.StatusCode, got)
		}
		if n := dropCount(t, s.url, row.Path); n != "1" {
			t.Errorf("%s counted %q times, want 1", row.Path, n)
		}
	}
}
