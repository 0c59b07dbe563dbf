package gateway

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookhost/hookhost/internal/dialect"
	"github.com/hookhost/hookhost/llm"
)

// openRequest sends a request's head and the start of its body on a raw
// connection and never reads the answer; the connection closes when the
// test ends.
func openRequest(t *testing.T, base, head string) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if _, err := io.WriteString(conn, head); err != nil {
		t.Fatal(err)
	}
	return conn
}

func rawPost(path, body string, contentLength int) string {
	return fmt.Sprintf("POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", path, contentLength, body)
}

// A client that stops reading a stream is cut at request_timeout, and the
// concurrency slot it held serves the next request.
func TestStalledReaderIsCutAtRequestTimeout(t *testing.T) {
	p := testParts()
	p.server.MaxConcurrent = 1
	p.server.RequestTimeout = time.Second
	chunk := strings.Repeat("x", 64<<10)
	var returned atomic.Bool
	p.hooked = runFunc(func(ctx context.Context, f dialect.Front, call *dialect.Call, sink dialect.Sink) (*dialect.Result, error) {
		defer returned.Store(true)
		if sink == nil {
			return echo(ctx, f, call, sink)
		}
		for {
			if err := sink.Text(chunk); err != nil {
				return nil, err
			}
		}
	})
	ts := newTest(t, p)
	body := `{"model":"m1","stream":true,"messages":[{"role":"user","content":"hi"}]}`
	openRequest(t, ts.url, rawPost("/v1/chat/completions", body, len(body)))
	eventually(t, "the stalled stream's handler to return", returned.Load)
	if a := postAside(ts.url, "/v1/chat/completions", chatBody); a.code != http.StatusOK {
		t.Fatalf("the next request got %d %s %v", a.code, a.body, a.err)
	}
}

// The same on the bypass route: the proxy's copy to a client that stopped
// reading is cut too.
func TestStalledReaderIsCutOnTheProxy(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		frame := []byte("data: " + strings.Repeat("x", 64<<10) + "\n\n")
		for {
			if _, err := w.Write(frame); err != nil {
				return
			}
			w.(http.Flusher).Flush()
		}
	}))
	t.Cleanup(up.Close)
	p := bypassParts(t, "openai", up.URL+"/v1")
	p.server.MaxConcurrent = 1
	p.server.RequestTimeout = time.Second
	ts := newTest(t, p)
	openRequest(t, ts.url, rawPost("/v1/chat/completions", chatBody, len(chatBody)))
	eventually(t, "the stalled reader's slot to be freed", func() bool {
		req, _ := http.NewRequest(http.MethodPost, ts.url+"/v1/chat/completions", strings.NewReader(`{"model":"m1"}`))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false
		}
		// The answer streams without end; its status is all that counts.
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
}

// Request bodies held at once are bounded by server.max_body_bytes_in_flight:
// past it a request gets 429 with retry-after in its endpoint's shape, and
// the budget comes back when the holder ends.
func TestBodyBudgetRefusesPastItsLimit(t *testing.T) {
	p := testParts()
	p.server.MaxBodySize = 1000
	p.server.MaxBodyBytesInFlight = 1000
	ts := newTest(t, p)

	// The budget is held for what arrived, not for what was announced.
	conn := openRequest(t, ts.url, rawPost("/v1/chat/completions", "{"+strings.Repeat(" ", 949), 1000))
	eventually(t, "the first body's bytes to be reserved", func() bool { return ts.budget.inUse() == 950 })

	resp := post(t, ts.url, "/v1/messages", chatBody)
	if resp.Header.Get("Retry-After") == "" {
		t.Errorf("429 without retry-after")
	}
	msg := wantFrontError(t, resp, http.StatusTooManyRequests, "/v1/messages", "rate_limit_error")
	if !strings.Contains(msg, "server.max_body_bytes_in_flight") {
		t.Errorf("429 message %q does not name the limit", msg)
	}

	// A chunked body has no length to reserve: it is counted as it is read.
	req, _ := http.NewRequest(http.MethodPost, ts.url+"/v1/chat/completions", io.MultiReader(strings.NewReader(chatBody)))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	wantFrontError(t, resp, http.StatusTooManyRequests, "/v1/chat/completions", "rate_limit_error")

	conn.Close()
	eventually(t, "the budget to come back", func() bool { return ts.budget.inUse() == 0 })
	if a := postAside(ts.url, "/v1/chat/completions", chatBody); a.code != http.StatusOK {
		t.Fatalf("after the holder left: %d %s %v", a.code, a.body, a.err)
	}
	if n := ts.budget.inUse(); n != 0 {
		t.Fatalf("%d bytes still reserved after every request ended", n)
	}
	m := metricsOf(t, ts.url)
	if !strings.Contains(m, `hookhost_gateway_rejected_total{reason="body_budget"} 2`) {
		t.Fatalf("metrics do not count the two refusals:\n%s", m)
	}
}

func TestBodyBudgetBelowMaxBodySizeIsRefused(t *testing.T) {
	p := testParts()
	p.server.MaxBodySize = 1000
	p.server.MaxBodyBytesInFlight = 999
	_, err := newServer(p)
	if err == nil || !strings.Contains(err.Error(), "server.max_body_bytes_in_flight") || !strings.Contains(err.Error(), "server.max_body_size") {
		t.Fatalf("newServer: %v", err)
	}
}

// A client sending its body slowly does not hold the concurrency slot
// while it does.
func TestSlowBodyDoesNotHoldASlot(t *testing.T) {
	p := testParts()
	p.server.MaxConcurrent = 1
	ts := newTest(t, p)
	openRequest(t, ts.url, rawPost("/v1/chat/completions", "{", 100))
	eventually(t, "the slow body to be read", func() bool { return ts.budget.inUse() == 1 })
	if a := postAside(ts.url, "/v1/chat/completions", chatBody); a.code != http.StatusOK {
		t.Fatalf("a request while another's body trickles in got %d %s %v", a.code, a.body, a.err)
	}
}

// The bypass route reads "model" as the upstream will: a key that differs
// only in case, or a second "model", is refused rather than letting a
// model outside the allow-list through.
func TestBypassModelIsReadExactly(t *testing.T) {
	var hits atomic.Int32
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"id":"x"}`))
	}))
	t.Cleanup(up.Close)
	ts := newTest(t, bypassParts(t, "openai", up.URL+"/v1"))
	for _, body := range []string{
		`{"model":"not-served","MODEL":"m1","messages":[]}`,
		`{"MODEL":"m1","model":"not-served","messages":[]}`,
		`{"Model":"m1","messages":[]}`,
		`{"model":"m1","model":"m1","messages":[]}`,
		`{"model":"m1"} {"model":"m2"}`,
		`["model","m1"]`,
	} {
		wantFrontError(t, post(t, ts.url, "/v1/chat/completions", body), http.StatusBadRequest, "/v1/chat/completions", "invalid_request_error")
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the upstream got %d refused requests", n)
	}
	if resp := post(t, ts.url, "/v1/chat/completions", `{"messages":[{"model":"x"}],"model":"m1","extra":{"MODEL":1}}`); resp.StatusCode != http.StatusOK {
		t.Fatalf("a body with nested model keys: %d %s", resp.StatusCode, readAll(t, resp))
	}
}

// Forwarding the client's key while also requiring an inbound key would
// put hookhost's inbound key on the way upstream: refused at start.
func TestForwardClientKeyWithInboundKeyIsRefused(t *testing.T) {
	p := bypassParts(t, "openai", "http://127.0.0.1:1/v1")
	p.server.ForwardClientKey = true
	p.server.APIKeyEnv = "K"
	p.getenv = func(string) string { return "hookhost-inbound-secret" }
	_, err := newServer(p)
	if err == nil || !strings.Contains(err.Error(), "server.forward_client_key") || !strings.Contains(err.Error(), "server.api_key_env") {
		t.Fatalf("newServer: %v", err)
	}
}

// Expect: 100-continue is not passed upstream and the 200 that follows is
// what the metrics count; cookies stay with hookhost.
func TestExpectContinueCountsTheFinalStatus(t *testing.T) {
	var got atomic.Value
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.Store(r.Header.Clone())
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"id":"x"}`))
	}))
	t.Cleanup(up.Close)
	ts := newTest(t, bypassParts(t, "openai", up.URL+"/v1"))
	resp := post(t, ts.url, "/v1/chat/completions", chatBody, "Expect", "100-continue", "Cookie", "session=abc")
	if b := readAll(t, resp); resp.StatusCode != http.StatusOK {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	h, _ := got.Load().(http.Header)
	if h == nil || h.Get("Expect") != "" || h.Get("Cookie") != "" {
		t.Fatalf("upstream headers %v", h)
	}
	m := metricsOf(t, ts.url)
	if !strings.Contains(m, `hookhost_gateway_requests_total{code="200",endpoint="/v1/chat/completions",route="bypass"} 1`) || strings.Contains(m, `code="100"`) {
		t.Fatalf("metrics:\n%s", m)
	}
}

func TestRecorderIgnoresInformationalStatus(t *testing.T) {
	w := &recorder{ResponseWriter: httptest.NewRecorder()}
	w.WriteHeader(http.StatusContinue)
	w.WriteHeader(http.StatusCreated)
	if w.status != http.StatusCreated {
		t.Fatalf("status %d", w.status)
	}
}

// A 502 tells the client what kind of failure it was, not the upstream's
// internal URL; the log has the whole error.
func TestUpstreamFailureHidesItsURL(t *testing.T) {
	const internal = "http://10.1.2.3:35225/v1/chat/completions"
	p := testParts()
	p.hooked = runFunc(func(context.Context, dialect.Front, *dialect.Call, dialect.Sink) (*dialect.Result, error) {
		return nil, &llm.ProviderError{Provider: "openai", Message: "request failed", Err: &url.Error{Op: "Post", URL: internal, Err: io.EOF}}
	})
	ts := newTest(t, p)
	msg := wantFrontError(t, post(t, ts.url, "/v1/chat/completions", chatBody), http.StatusBadGateway, "/v1/chat/completions", "api_error")
	if strings.Contains(msg, "10.1.2.3") || !strings.Contains(msg, "request failed: the connection closed before a complete answer") {
		t.Fatalf("502 message %q", msg)
	}
	if !strings.Contains(ts.logs.String(), internal) {
		t.Fatalf("the log lacks the whole error:\n%s", ts.logs.String())
	}

	gone := httptest.NewServer(http.NotFoundHandler())
	base := gone.URL
	gone.Close()
	ps := newTest(t, bypassParts(t, "openai", base+"/v1"))
	msg = wantFrontError(t, post(t, ps.url, "/v1/chat/completions", chatBody), http.StatusBadGateway, "/v1/chat/completions", "api_error")
	host := strings.TrimPrefix(base, "http://")
	if strings.Contains(msg, host) || !strings.Contains(msg, "connection refused") {
		t.Fatalf("proxy 502 message %q", msg)
	}
	if !strings.Contains(ps.logs.String(), host) {
		t.Fatalf("the log lacks the whole error:\n%s", ps.logs.String())
	}
}

// CloseNow ends a drain at once, and ListenAndServe returns only once the
// handlers it cut have returned.
func TestCloseNowCutsTheDrainAndWaitsForHandlers(t *testing.T) {
	p := testParts()
	p.server.DrainTimeout = time.Hour
	arrived, release := make(chan struct{}), make(chan struct{})
	var returned atomic.Bool
	p.hooked = runFunc(func(ctx context.Context, f dialect.Front, call *dialect.Call, sink dialect.Sink) (*dialect.Result, error) {
		close(arrived)
		<-ctx.Done()
		// Still calling into the host after the cut, as a plugin call
		// would.
		<-release
		returned.Store(true)
		return nil, ctx.Err()
	})
	s, err := newServer(p)
	if err != nil {
		t.Fatal(err)
	}
	addr, stop, done := serve(t, s)
	go postAside("http://"+addr, "/v1/chat/completions", chatBody)
	<-arrived
	stop()
	eventually(t, "the drain to start", s.draining.Load)
	s.CloseNow()
	select {
	case err := <-done:
		t.Fatalf("ListenAndServe returned (%v) while a handler it cut still ran", err)
	case <-time.After(time.Second):
	}
	close(release)
	wantReturned(t, done, "CloseNow")
	if !returned.Load() {
		t.Fatal("ListenAndServe returned before the handler it cut")
	}
}
