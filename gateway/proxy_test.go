package gateway

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookhost/hookhost"
	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/dialect"
	"github.com/hookhost/hookhost/internal/fakeapi"
)

const (
	upstreamKey = "sk-upstream-9b8a7c6d5e"
	clientKey   = "sk-client-1a2b3c4d5e"
)

// bypassParts are a bypass-route server in front of the fake upstream at
// base, whose runners fail the test: every request must be proxied.
func bypassParts(t *testing.T, provider, base string) parts {
	p := testParts()
	p.route = hooks.RouteBypass
	cred := http.Header{"Authorization": {"Bearer " + upstreamKey}, "X-Team": {"blue"}}
	if provider == "anthropic" {
		cred = http.Header{"X-Api-Key": {upstreamKey}, "X-Team": {"blue"}}
	}
	p.upstream = hookhost.Upstream{Provider: provider, BaseURL: base, Header: cred}
	notHere := runFunc(func(context.Context, dialect.Front, *dialect.Call, dialect.Sink) (*dialect.Result, error) {
		t.Errorf("a bypass request reached the hook loop instead of the proxy")
		return nil, dialect.Invalid("", "not proxied")
	})
	p.hooked, p.plain = notHere, notHere
	return p
}

// The request bytes the upstream receives are the ones the client sent,
// and the response bytes the client receives are the upstream's, streams
// too; only the credentials change.
func TestBypassIsByteForByte(t *testing.T) {
	// Odd spacing, key order, unknown fields and a trailing newline: a
	// proxy that re-encoded anything would change them.
	reqBody := "{ \"zeta\": {\"b\":2, \"a\":1},\"model\" : \"m1\",\n\"messages\":[{\"role\":\"user\",\"content\":\"h\\u00e9\"}],\"response_format\":{\"type\":\"json_object\"},\"seed\":7}\n"
	respBody := "{\"id\":\"x\",  \"object\":\"chat.completion\",\"future_field\":[1,2,{}]}\n"
	frames := []string{fakeapi.Data(`{"id":"c1","choices":[{"index":0,"delta":{"role":"assistant"}}]}`), fakeapi.Keepalive,
		"event: odd\ndata: kept as is\n\n", fakeapi.Data(`[DONE]`)}

	for _, tc := range []struct {
		provider, base, path, wantPath string
		header                         []string
		wantCred                       [2]string
	}{
		{"openai", "/v1", "/v1/chat/completions", "/v1/chat/completions",
			[]string{"Authorization", "Bearer " + clientKey, "OpenAI-Organization", "org-1"}, [2]string{"Authorization", "Bearer " + upstreamKey}},
		{"openai", "/v1", "/v1/responses", "/v1/responses",
			[]string{"x-api-key", clientKey, "OpenAI-Organization", "org-1"}, [2]string{"Authorization", "Bearer " + upstreamKey}},
		{"anthropic", "", "/v1/messages", "/v1/messages",
			[]string{"x-api-key", clientKey, "anthropic-version", "2023-06-01", "anthropic-beta", "tools-2024-04-04"}, [2]string{"X-Api-Key", upstreamKey}},
		// A base URL with a path prefix keeps it.
		{"anthropic", "/proxy/anthropic", "/v1/messages", "/proxy/anthropic/v1/messages",
			[]string{"Authorization", "Bearer " + clientKey, "anthropic-version", "2023-06-01"}, [2]string{"X-Api-Key", upstreamKey}},
	} {
		t.Run(tc.provider+tc.base+tc.path, func(t *testing.T) {
			fake := fakeapi.New(t,
				fakeapi.JSON(200, respBody, "X-Request-Id", "req-1"),
				fakeapi.SSE(frames...),
			)
			s := newTest(t, bypassParts(t, tc.provider, fake.URL()+tc.base))

			resp := post(t, s.url, tc.path+"?beta=true", reqBody, tc.header...)
			got := readAll(t, resp)
			if resp.StatusCode != 200 || string(got) != respBody || resp.Header.Get("X-Request-Id") != "req-1" {
				t.Fatalf("response %d %q, want the upstream's %q", resp.StatusCode, got, respBody)
			}
			resp = post(t, s.url, tc.path, reqBody, tc.header...)
			got = readAll(t, resp)
			if want := strings.Join(frames, ""); string(got) != want || resp.Header.Get("Content-Type") != "text/event-stream" {
				t.Fatalf("stream %q, want %q", got, want)
			}

			seen := fake.Requests()
			if len(seen) != 2 {
				t.Fatalf("upstream saw %d requests", len(seen))
			}
			for _, r := range seen {
				if string(r.Body) != reqBody {
					t.Errorf("upstream got body %q, want the client's %q", r.Body, reqBody)
				}
				if r.Path != tc.wantPath {
					t.Errorf("upstream path %q, want %q", r.Path, tc.wantPath)
				}
				if got := r.Header.Get(tc.wantCred[0]); got != tc.wantCred[1] {
					t.Errorf("upstream %s %q, want the configured credential", tc.wantCred[0], got)
				}
				if r.Header.Get("X-Team") != "blue" {
					t.Errorf("upstream lost the configured llm.headers: %v", r.Header)
				}
				for name, vs := range r.Header {
					if strings.Contains(strings.Join(vs, ","), clientKey) {
						t.Errorf("the client's key reached upstream in %s", name)
					}
				}
				for i := 2; i+1 < len(tc.header); i += 2 {
					if r.Header.Get(tc.header[i]) != tc.header[i+1] {
						t.Errorf("client header %s did not reach upstream", tc.header[i])
					}
				}
			}
			if !strings.Contains(s.logs.String(), "route=bypass") {
				t.Errorf("no log line with route=bypass:\n%s", s.logs)
			}
			metrics := metricsOf(t, s.url)
			for _, k := range []string{upstreamKey, clientKey} {
				if strings.Contains(s.logs.String(), k) || strings.Contains(metrics, k) {
					t.Errorf("a key is in the log or /metrics")
				}
			}
		})
	}
}

func TestBypassForwardsTheClientsKeyWhenAsked(t *testing.T) {
	fake := fakeapi.New(t, fakeapi.JSON(200, `{}`), fakeapi.JSON(200, `{}`))
	p := bypassParts(t, "anthropic", fake.URL())
	p.server.ForwardClientKey = true
	s := newTest(t, p)
	readAll(t, post(t, s.url, "/v1/messages", chatBody, "x-api-key", clientKey))
	readAll(t, post(t, s.url, "/v1/messages", chatBody, "Authorization", "Bearer "+clientKey))
	seen := fake.Requests()
	if seen[0].Header.Get("X-Api-Key") != clientKey || seen[0].Header.Get("X-Team") != "blue" {
		t.Fatalf("upstream headers %v: want the client's x-api-key and the configured X-Team", seen[0].Header)
	}
	if seen[1].Header.Get("Authorization") != "Bearer "+clientKey || seen[1].Header.Get("X-Api-Key") != "" {
		t.Fatalf("upstream headers %v: want only the client's Authorization", seen[1].Header)
	}
}

func TestBypassPassesUpstreamErrorsThrough(t *testing.T) {
	e429 := `{"error":{"message":"Rate limit reached","type":"requests","param":null,"code":"rate_limit_exceeded"}}`
	e500 := `{"error":{"message":"The server had an error","type":"server_error","param":null,"code":null}}`
	fake := fakeapi.New(t, fakeapi.JSON(429, e429, "Retry-After", "20"), fakeapi.JSON(500, e500))
	s := newTest(t, bypassParts(t, "openai", fake.URL()+"/v1"))
	resp := post(t, s.url, "/v1/chat/completions", chatBody)
	if got := readAll(t, resp); resp.StatusCode != 429 || string(got) != e429 || resp.Header.Get("Retry-After") != "20" {
		t.Fatalf("429: %d %s retry-after %q", resp.StatusCode, got, resp.Header.Get("Retry-After"))
	}
	resp = post(t, s.url, "/v1/chat/completions", chatBody)
	if got := readAll(t, resp); resp.StatusCode != 500 || string(got) != e500 {
		t.Fatalf("500: %d %s", resp.StatusCode, got)
	}
}

func TestBypassChecksTheModel(t *testing.T) {
	fake := fakeapi.New(t)
	s := newTest(t, bypassParts(t, "openai", fake.URL()+"/v1"))
	wantFrontError(t, post(t, s.url, "/v1/chat/completions", `{"model":"gpt-x","messages":[]}`), 404, "/v1/chat/completions", "not_found_error")
	wantFrontError(t, post(t, s.url, "/v1/chat/completions", `{"model":7}`), 400, "/v1/chat/completions", "invalid_request_error")
	wantFrontError(t, post(t, s.url, "/v1/chat/completions", `{"model":"m1"`), 400, "/v1/chat/completions", "invalid_request_error")
	wantFrontError(t, post(t, s.url, "/v1/chat/completions", `{"messages":[]}`), 400, "/v1/chat/completions", "invalid_request_error")
	if n := len(fake.Requests()); n != 0 {
		t.Fatalf("upstream got %d refused requests", n)
	}
}

func TestBypassUpstreamUnreachable(t *testing.T) {
	gone := httptest.NewServer(http.NotFoundHandler())
	base := gone.URL
	gone.Close()
	s := newTest(t, bypassParts(t, "anthropic", base))
	msg := wantFrontError(t, post(t, s.url, "/v1/messages", chatBody), 502, "/v1/messages", "api_error")
	if !strings.Contains(msg, "could not be reached") {
		t.Fatalf("502 message %q", msg)
	}
}

// Where the upstream does not speak the endpoint's protocol over HTTP,
// the bypass route runs the loop with no Bus instead of proxying.
func TestBypassTranslatesWhenTheUpstreamCannotProxy(t *testing.T) {
	for _, tc := range []struct{ provider, base, path string }{
		{"offline", "", "/v1/chat/completions"},
		{"anthropic", "http://127.0.0.1:1", "/v1/chat/completions"},
		{"openai", "http://127.0.0.1:1/v1", "/v1/messages"},
	} {
		t.Run(tc.provider+tc.path, func(t *testing.T) {
			p := bypassParts(t, tc.provider, tc.base)
			p.plain = echo
			s := newTest(t, p)
			resp := post(t, s.url, tc.path, chatBody)
			if got := readAll(t, resp); resp.StatusCode != 200 || !strings.Contains(string(got), `"text":"hello there"`) {
				t.Fatalf("%d %s", resp.StatusCode, got)
			}
		})
	}
}

// held is an upstream that answers each request only when released, and
// says when one has arrived.
type held struct {
	arrived chan struct{}
	release chan struct{}
}

func newHeld() *held { return &held{arrived: make(chan struct{}, 100), release: make(chan struct{})} }

func (h *held) reply(w http.ResponseWriter, r fakeapi.Seen) {
	h.arrived <- struct{}{}
	select {
	case <-h.release:
	case <-r.Done:
		return
	}
	fakeapi.JSON(200, `{"ok":true}`)(w, r)
}

func TestConcurrencyLimit(t *testing.T) {
	h := newHeld()
	fake := fakeapi.New(t, h.reply, h.reply, h.reply)
	p := bypassParts(t, "openai", fake.URL()+"/v1")
	p.server.MaxConcurrent = 2
	s := newTest(t, p)

	var wg sync.WaitGroup
	answers := make(chan answer, 2)
	for range 2 {
		wg.Go(func() { answers <- postAside(s.url, "/v1/chat/completions", chatBody) })
	}
	<-h.arrived
	<-h.arrived
	resp := post(t, s.url, "/v1/chat/completions", chatBody)
	if ra := resp.Header.Get("Retry-After"); ra != "1" {
		t.Errorf("retry-after %q", ra)
	}
	msg := wantFrontError(t, resp, 429, "/v1/chat/completions", "rate_limit_error")
	if !strings.Contains(msg, "server.max_concurrent") {
		t.Errorf("429 message %q", msg)
	}
	// Probes are not requests to the model and are never refused.
	if r, err := http.Get(s.url + "/healthz"); err != nil || r.StatusCode != 200 {
		t.Fatalf("healthz while full: %v", err)
	}
	if got := scrape(t, s.url, "hookhost_gateway_in_flight"); got != "2" {
		t.Errorf("in flight %q while two requests are held", got)
	}
	close(h.release)
	wg.Wait()
	close(answers)
	for a := range answers {
		if a.code != 200 || a.err != nil {
			t.Fatalf("a held request got %d %v", a.code, a.err)
		}
	}
	// The slots are free again.
	resp = post(t, s.url, "/v1/chat/completions", chatBody)
	if b := readAll(t, resp); resp.StatusCode != 200 {
		t.Fatalf("after release: %d %s", resp.StatusCode, b)
	}
}

// A client that leaves a proxied stream cancels the upstream request and
// leaves nothing running behind.
func TestClientLeavingAProxiedStream(t *testing.T) {
	before := runtime.NumGoroutine()
	fake := fakeapi.New(t, fakeapi.Endless(5*time.Millisecond, fakeapi.Data(`{"n":1}`)))
	s := newTest(t, bypassParts(t, "openai", fake.URL()+"/v1"))
	resp := post(t, s.url, "/v1/chat/completions", chatBody)
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil || line != "data: {\"n\":1}\n" {
		t.Fatalf("first line %q, %v", line, err)
	}
	resp.Body.Close()
	select {
	case <-fake.Requests()[0].Done:
	case <-time.After(30 * time.Second):
		t.Fatal("the upstream request was not cancelled when the client left")
	}
	eventually(t, "the in-flight gauge to drop", func() bool {
		return scrape(t, s.url, "hookhost_gateway_in_flight") == "0"
	})
	http.DefaultClient.CloseIdleConnections()
	s.proxy.Transport.(*http.Transport).CloseIdleConnections()
	eventually(t, "the request's goroutines to end", func() bool {
		// The two test servers started after the baseline keep their
		// accept loops; nothing of the request may remain.
		return runtime.NumGoroutine() <= before+2
	})
}

// The proxy flushes each event as it comes: the client reads the first
// while the upstream is still holding the second.
func TestBypassStreamsAsItComes(t *testing.T) {
	second := make(chan struct{})
	fake := fakeapi.New(t, func(w http.ResponseWriter, r fakeapi.Seen) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, fakeapi.Data(`{"n":1}`))
		w.(http.Flusher).Flush()
		<-second
		io.WriteString(w, fakeapi.Data(`[DONE]`))
	})
	s := newTest(t, bypassParts(t, "openai", fake.URL()+"/v1"))
	resp := post(t, s.url, "/v1/chat/completions", chatBody)
	rd := bufio.NewReader(resp.Body)
	if line, err := rd.ReadString('\n'); err != nil || line != "data: {\"n\":1}\n" {
		t.Fatalf("first event %q, %v", line, err)
	}
	close(second)
	rest, _ := io.ReadAll(rd)
	resp.Body.Close()
	if string(rest) != "\ndata: [DONE]\n\n" {
		t.Fatalf("rest %q", rest)
	}
}
