package gateway

import (
	"net/http"
	"strings"
	"testing"

	"github.com/hookhost/hookhost/internal/fakeapi"
)

// claudeCodeBody is the shape of Claude Code's requests: beta-gated body
// fields that Anthropic refuses without the anthropic-beta header naming
// them, and metadata.user_id.
const claudeCodeBody = `{"model":"m1","max_tokens":256,"messages":[{"role":"user","content":"hi"}],
"metadata":{"user_id":"user_abc_account__session_1"},
"context_management":{"edits":[{"type":"clear_tool_uses_20250919"}]},
"thinking":{"type":"enabled","budget_tokens":1024}}`

// injected are headers a client may send that must never reach the
// upstream: its credentials, its cookies, hop-by-hop headers and a header
// that Connection names as hop-by-hop.
var injected = []string{
	"Authorization", "Bearer " + clientKey,
	"X-Api-Key", clientKey,
	"Cookie", "session=client-cookie",
	"Connection", "keep-alive, X-Hop-Secret",
	"X-Hop-Secret", "hop-secret",
	"Te", "deflate",
	"Proxy-Authorization", "Basic " + clientKey,
}

func checkNoInjected(t *testing.T, h http.Header) {
	t.Helper()
	for name, vs := range h {
		v := strings.Join(vs, ",")
		for _, bad := range []string{clientKey, "client-cookie", "hop-secret"} {
			if strings.Contains(v, bad) {
				t.Errorf("the client's %q reached the upstream in %s", bad, name)
			}
		}
	}
	if h.Get("Cookie") != "" || h.Get("X-Hop-Secret") != "" || h.Get("Te") != "" || h.Get("Proxy-Authorization") != "" {
		t.Errorf("upstream headers carry what they must not: %v", h)
	}
}

// Same protocol on the gateway route: the beta-gated fields reach the
// Anthropic upstream together with the anthropic-beta header that turns
// them on; nothing else the client sent in its headers does.
func TestGatewayForwardsFeatureHeaders(t *testing.T) {
	msgOK := `{"id":"msg_1","type":"message","role":"assistant","model":"m1","content":[{"type":"text","text":"hi"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}`
	fake := fakeapi.New(t, fakeapi.JSON(200, msgOK))
	s := newTest(t, gatewayKeyParts(t, "anthropic", fake))
	beta := "context-management-2025-06-27,interleaved-thinking-2025-05-14"
	hdr := append([]string{"anthropic-version", "2023-06-01", "anthropic-beta", beta}, injected...)
	resp := post(t, s.url, "/v1/messages", claudeCodeBody, hdr...)
	if got := readAll(t, resp); resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, got)
	}
	r := fake.Requests()[0]
	if got := r.Header.Get("anthropic-beta"); got != beta {
		t.Errorf("anthropic-beta = %q, want the client's %q", got, beta)
	}
	if got := r.Header.Get("anthropic-version"); got != "2023-06-01" {
		t.Errorf("anthropic-version = %q", got)
	}
	if got := r.Header.Get("X-Api-Key"); got != upstreamKey {
		t.Errorf("x-api-key = %q, want hookhost's own", got)
	}
	for _, field := range []string{`"context_management":{"edits":[{"type":"clear_tool_uses_20250919"}]}`, `"metadata":{"user_id":"user_abc_account__session_1"}`} {
		if !strings.Contains(string(r.Body), field) {
			t.Errorf("body lacks %s: %s", field, r.Body)
		}
	}
	checkNoInjected(t, r.Header)
}

func TestGatewayForwardsOpenAIBeta(t *testing.T) {
	chatOK := `{"id":"c","object":"chat.completion","created":1,"model":"m1","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"hi"}}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`
	fake := fakeapi.New(t, fakeapi.JSON(200, chatOK))
	s := newTest(t, gatewayKeyParts(t, "openai", fake))
	resp := post(t, s.url, "/v1/chat/completions", `{"model":"m1","messages":[{"role":"user","content":"hi"}]}`,
		append([]string{"OpenAI-Beta", "assistants=v2"}, injected...)...)
	if got := readAll(t, resp); resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, got)
	}
	r := fake.Requests()[0]
	if got := r.Header.Get("OpenAI-Beta"); got != "assistants=v2" {
		t.Errorf("openai-beta = %q", got)
	}
	if got := r.Header.Get("Authorization"); got != "Bearer "+upstreamKey {
		t.Errorf("authorization = %q, want hookhost's own", got)
	}
	checkNoInjected(t, r.Header)
}

// The bypass route is a transparent proxy: feature headers pass as every
// other header does, and credentials, cookies and hop-by-hop headers do
// not.
func TestBypassPassesFeatureHeadersOnly(t *testing.T) {
	fake := fakeapi.New(t, fakeapi.JSON(200, `{}`))
	s := newTest(t, bypassParts(t, "anthropic", fake.URL()))
	beta := "context-management-2025-06-27"
	resp := post(t, s.url, "/v1/messages", claudeCodeBody, append([]string{"anthropic-version", "2023-06-01", "anthropic-beta", beta}, injected...)...)
	if got := readAll(t, resp); resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, got)
	}
	r := fake.Requests()[0]
	if r.Header.Get("anthropic-beta") != beta || r.Header.Get("anthropic-version") != "2023-06-01" {
		t.Errorf("feature headers lost on bypass: %v", r.Header)
	}
	if got := r.Header.Get("X-Api-Key"); got != upstreamKey {
		t.Errorf("x-api-key = %q, want hookhost's own", got)
	}
	checkNoInjected(t, r.Header)
}
