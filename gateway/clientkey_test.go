package gateway

import (
	"net/http"
	"strings"
	"testing"

	"github.com/hookhost/hookhost/internal/fakeapi"
	"github.com/hookhost/hookhost/llm/anthropic"
	"github.com/hookhost/hookhost/llm/openai"
)

// gatewayKeyParts are a gateway-route server over the real fronts and
// relay, calling the fake upstream with hookhost's own key configured.
func gatewayKeyParts(t *testing.T, provider string, fake *fakeapi.Server) parts {
	t.Helper()
	p := testParts()
	p.fronts, p.hooked, p.plain = nil, nil, nil
	var err error
	if provider == "anthropic" {
		p.provider, err = anthropic.New(anthropic.Config{BaseURL: fake.URL(), APIKey: upstreamKey})
	} else {
		p.provider, err = openai.New(openai.Config{BaseURL: fake.URL() + "/v1", APIKey: upstreamKey})
	}
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// With server.forward_client_key on, the gateway route calls upstream
// with the client's key, never hookhost's, and the client's key is in no
// error, log line or metric.
func TestGatewayForwardsTheClientsKey(t *testing.T) {
	chatOK := `{"id":"c","object":"chat.completion","created":1,"model":"m1","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"hi"}}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`
	msgOK := `{"id":"msg_1","type":"message","role":"assistant","model":"m1","content":[{"type":"text","text":"hi"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}`
	echoed := `{"error":{"message":"Incorrect API key provided: ` + clientKey + `","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`
	for _, tc := range []struct {
		provider, path, body, ok, header, value string
	}{
		{"openai", "/v1/chat/completions", `{"model":"m1","messages":[{"role":"user","content":"hi"}]}`, chatOK, "Authorization", "Bearer " + clientKey},
		{"anthropic", "/v1/messages", `{"model":"m1","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`, msgOK, "x-api-key", clientKey},
	} {
		t.Run(tc.provider, func(t *testing.T) {
			fake := fakeapi.New(t, fakeapi.JSON(200, tc.ok), fakeapi.JSON(401, echoed, "X-Echo", clientKey))
			p := gatewayKeyParts(t, tc.provider, fake)
			p.server.ForwardClientKey = true
			s := newTest(t, p)
			resp := post(t, s.url, tc.path, tc.body, tc.header, tc.value)
			if ok := readAll(t, resp); resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d: %s", resp.StatusCode, ok)
			}
			resp = post(t, s.url, tc.path, tc.body, tc.header, tc.value)
			failed := string(readAll(t, resp))
			if resp.StatusCode != http.StatusUnauthorized || strings.Contains(failed, clientKey) {
				t.Errorf("the upstream's 401 reached the client as %d %s; want 401 without the key", resp.StatusCode, failed)
			}
			seen := fake.Requests()
			if len(seen) != 2 {
				t.Fatalf("upstream got %d requests, want 2", len(seen))
			}
			for i, r := range seen {
				var got string
				if tc.provider == "anthropic" {
					got = r.Header.Get("X-Api-Key")
				} else {
					got = strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
				}
				if got != clientKey {
					t.Errorf("request %d: upstream got key %q, want the client's", i, got)
				}
				for name, vs := range r.Header {
					if strings.Contains(strings.Join(vs, ","), upstreamKey) {
						t.Errorf("request %d: hookhost's key reached upstream in %s", i, name)
					}
				}
			}
			if metrics := metricsOf(t, s.url); strings.Contains(metrics, clientKey) || strings.Contains(s.logs.String(), clientKey) {
				t.Errorf("the client's key is in the log or /metrics")
			}
			if strings.Contains(s.logs.String(), "forward_client_key") {
				t.Errorf("the server warns that server.forward_client_key does not apply:\n%s", s.logs)
			}
		})
	}
}

// With server.forward_client_key on, a client with no key of its own is
// refused: the request must not run on hookhost's account.
func TestGatewayForwardClientKeyNeedsAKey(t *testing.T) {
	fake := fakeapi.New(t)
	p := gatewayKeyParts(t, "openai", fake)
	p.server.ForwardClientKey = true
	s := newTest(t, p)
	resp := post(t, s.url, "/v1/chat/completions", `{"model":"m1","messages":[{"role":"user","content":"hi"}]}`)
	body := string(readAll(t, resp))
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(body, "forward_client_key") {
		t.Errorf("status %d %s, want 401 naming server.forward_client_key", resp.StatusCode, body)
	}
	if n := len(fake.Requests()); n != 0 {
		t.Errorf("upstream got %d requests", n)
	}
}

// Off, hookhost's own key is sent, whatever the client presented.
func TestGatewayKeepsItsKeyByDefault(t *testing.T) {
	fake := fakeapi.New(t, fakeapi.JSON(200, `{"id":"c","object":"chat.completion","created":1,"model":"m1","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"hi"}}]}`))
	s := newTest(t, gatewayKeyParts(t, "openai", fake))
	readAll(t, post(t, s.url, "/v1/chat/completions", `{"model":"m1","messages":[{"role":"user","content":"hi"}]}`, "Authorization", "Bearer "+clientKey))
	if got := fake.Requests()[0].Header.Get("Authorization"); got != "Bearer "+upstreamKey {
		t.Errorf("upstream got %q, want hookhost's key", got)
	}
}
