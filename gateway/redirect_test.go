package gateway

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/fakeapi"
)

// An upstream that answers with a redirect is a 502 that says so, on both
// routes: the conversation and the key never go where it points, and the
// client is not sent there either.
func TestUpstreamRedirectIsA502(t *testing.T) {
	var elsewhere atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
		w.Write([]byte(`{}`))
	}))
	t.Cleanup(other.Close)
	redirect := func(w http.ResponseWriter, r fakeapi.Seen) {
		w.Header().Set("Location", other.URL+"/v1/chat/completions")
		w.WriteHeader(http.StatusTemporaryRedirect)
	}
	for _, route := range []hooks.Route{hooks.RouteGateway, hooks.RouteBypass} {
		t.Run(string(route), func(t *testing.T) {
			fake := fakeapi.New(t, redirect, redirect, redirect)
			p := gatewayKeyParts(t, "openai", fake)
			p.upstream.Provider, p.upstream.BaseURL = "openai", fake.URL()+"/v1"
			p.upstream.Header = http.Header{"Authorization": {"Bearer " + upstreamKey}}
			p.route = route
			s := newTest(t, p)
			resp := post(t, s.url, "/v1/chat/completions", chatBody)
			if loc := resp.Header.Get("Location"); loc != "" {
				t.Errorf("the client is sent to %s", loc)
			}
			msg := wantOpenAIError(t, resp, http.StatusBadGateway)
			if !strings.Contains(msg, "redirect") || strings.Contains(msg, other.URL) {
				t.Errorf("502 message %q does not say the upstream redirected, or says where", msg)
			}
			if n := elsewhere.Load(); n != 0 {
				t.Fatalf("the redirect was followed %d times", n)
			}
		})
	}
}

// wantOpenAIError checks that resp is status with an error in OpenAI's
// shape, and returns its message.
func wantOpenAIError(t *testing.T, resp *http.Response, status int) string {
	t.Helper()
	body := readAll(t, resp)
	var e struct {
		Error struct {
			Message string `json:"message"`
			Type    string `json:"type"`
		} `json:"error"`
	}
	if resp.StatusCode != status || json.Unmarshal(body, &e) != nil || e.Error.Message == "" {
		t.Fatalf("got %d %s, want %d with an OpenAI error", resp.StatusCode, body, status)
	}
	return e.Error.Message
}
