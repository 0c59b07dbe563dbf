package httpretry

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookhost/hookhost/llm"
)

// script serves one scripted response per request and records what came.
type script struct {
	mu     sync.Mutex
	steps  []func(w http.ResponseWriter, r *http.Request)
	bodies []string
}

func (s *script) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	n := len(s.bodies)
	s.bodies = append(s.bodies, string(b))
	s.mu.Unlock()
	if n >= len(s.steps) {
		http.Error(w, "unexpected request", http.StatusTeapot)
		return
	}
	s.steps[n](w, r)
}

func (s *script) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.bodies)
}

func status(code int, headers map[string]string, body string) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, _ *http.Request) {
		for k, v := range headers {
			w.Header().Set(k, v)
		}
		w.WriteHeader(code)
		io.WriteString(w, body)
	}
}

// recorder is a Sleep that records waits instead of waiting.
type recorder struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (r *recorder) sleep(ctx context.Context, d time.Duration) error {
	r.mu.Lock()
	r.waits = append(r.waits, d)
	r.mu.Unlock()
	return ctx.Err()
}

func newClient(rec *recorder, retries int) *Client {
	return &Client{
		Provider: "test", MaxRetries: retries, Sleep: rec.sleep,
		Jitter: func() float64 { return 0 },
		Now:    func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) },
	}
}

func do(t *testing.T, c *Client, url string) (*http.Response, error) {
	t.Helper()
	return c.Do(context.Background(), Request{Method: "POST", URL: url, Body: []byte(`{"n":1}`), Header: http.Header{"X-Test": {"1"}}})
}

func TestRetryAfterThenSuccess(t *testing.T) {
	s := &script{steps: []func(http.ResponseWriter, *http.Request){
		status(429, map[string]string{"Retry-After": "2"}, `{"error":{"type":"rate_limit_error","message":"slow down"}}`),
		status(200, nil, `ok`),
	}}
	srv := httptest.NewServer(s)
	defer srv.Close()
	rec := &recorder{}
	resp, err := do(t, newClient(rec, 2), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if s.count() != 2 || s.bodies[0] != `{"n":1}` || s.bodies[1] != `{"n":1}` {
		t.Errorf("bodies = %q, want the same body twice", s.bodies)
	}
	if len(rec.waits) != 1 || rec.waits[0] != 2*time.Second {
		t.Errorf("waits = %v, want [2s]", rec.waits)
	}
}

func TestRetryAfterForms(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name    string
		headers map[string]string
		want    time.Duration
	}{
		{"milliseconds win", map[string]string{"retry-after-ms": "1500", "Retry-After": "9"}, 1500 * time.Millisecond},
		{"fractional seconds", map[string]string{"Retry-After": "0.25"}, 250 * time.Millisecond},
		{"HTTP date", map[string]string{"Retry-After": now.Add(7 * time.Second).Format(http.TimeFormat)}, 7 * time.Second},
		{"past date", map[string]string{"Retry-After": now.Add(-time.Minute).Format(http.TimeFormat)}, 0},
		{"capped", map[string]string{"Retry-After": "3600"}, DefaultMaxWait},
		{"garbage falls back to backoff", map[string]string{"Retry-After": "soon"}, DefaultBaseDelay},
		{"none: backoff", nil, DefaultBaseDelay},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &script{steps: []func(http.ResponseWriter, *http.Request){
				status(503, tt.headers, `{}`),
				status(200, nil, `ok`),
			}}
			srv := httptest.NewServer(s)
			defer srv.Close()
			rec := &recorder{}
			resp, err := do(t, newClient(rec, 1), srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if len(rec.waits) != 1 || rec.waits[0] != tt.want {
				t.Errorf("waits = %v, want [%v]", rec.waits, tt.want)
			}
		})
	}
}

func TestGiveUpAfterRetries(t *testing.T) {
	fail := status(500, nil, `{"error":{"message":"boom","type":"server_error"}}`)
	s := &script{steps: []func(http.ResponseWriter, *http.Request){fail, fail, fail, fail}}
	srv := httptest.NewServer(s)
	defer srv.Close()
	rec := &recorder{}
	_, err := do(t, newClient(rec, 2), srv.URL)
	var pe *llm.ProviderError
	if !errors.As(err, &pe) {
		t.Fatalf("err = %v, want a ProviderError", err)
	}
	if s.count() != 3 {
		t.Errorf("%d requests, want 3 (1 + 2 retries)", s.count())
	}
	if pe.StatusCode != 500 || pe.Type != "server_error" || !strings.Contains(pe.Message, "boom") {
		t.Errorf("error = %+v", pe)
	}
	want := "provider test: HTTP 500 server_error: boom (gave up after 3 attempts)"
	if err.Error() != want {
		t.Errorf("error = %q, want %q", err, want)
	}
	// Exponential backoff without jitter: 500ms, then 1s.
	if len(rec.waits) != 2 || rec.waits[0] != 500*time.Millisecond || rec.waits[1] != time.Second {
		t.Errorf("waits = %v, want [500ms 1s]", rec.waits)
	}
}

func TestBackoffJitterAndCap(t *testing.T) {
	c := &Client{Jitter: func() float64 { return 0.999 }, BaseDelay: time.Second, MaxDelay: 4 * time.Second}
	for n, want := range map[int]time.Duration{1: time.Second, 2: 2 * time.Second, 3: 4 * time.Second, 9: 4 * time.Second} {
		got := c.backoff(n)
		if got > want || got < want*3/4 {
			t.Errorf("backoff(%d) = %v, want within [%v, %v]", n, got, want*3/4, want)
		}
	}
}

func TestWhichStatusesRetry(t *testing.T) {
	tests := []struct {
		code    int
		headers map[string]string
		retry   bool
	}{
		{400, nil, false}, {401, nil, false}, {403, nil, false}, {404, nil, false}, {422, nil, false},
		{408, nil, true}, {409, nil, true}, {429, nil, true}, {500, nil, true}, {502, nil, true},
		{503, nil, true}, {529, nil, true},
		{500, map[string]string{"x-should-retry": "false"}, false},
		{400, map[string]string{"x-should-retry": "true"}, true},
	}
	for _, tt := range tests {
		s := &script{steps: []func(http.ResponseWriter, *http.Request){
			status(tt.code, tt.headers, `{"type":"error","error":{"type":"x_error","message":"m"}}`),
			status(200, nil, `ok`),
		}}
		srv := httptest.NewServer(s)
		rec := &recorder{}
		resp, err := do(t, newClient(rec, 1), srv.URL)
		if tt.retry {
			if err != nil {
				t.Errorf("%d %v: err = %v, want a retry then success", tt.code, tt.headers, err)
			} else {
				resp.Body.Close()
			}
		} else {
			var pe *llm.ProviderError
			if !errors.As(err, &pe) || pe.StatusCode != tt.code || pe.Type != "x_error" || s.count() != 1 {
				t.Errorf("%d %v: err = %v after %d requests, want the error after 1", tt.code, tt.headers, err, s.count())
			}
		}
		srv.Close()
	}
}

func TestNetworkErrorIsRetried(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			// Drop the connection without answering.
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
			return
		}
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	rec := &recorder{}
	resp, err := do(t, newClient(rec, 2), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if n.Load() != 2 || len(rec.waits) != 1 {
		t.Errorf("%d requests, %d waits; want 2 and 1", n.Load(), len(rec.waits))
	}
}

func TestNetworkErrorGivesUp(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	rec := &recorder{}
	_, err := do(t, newClient(rec, 1), url)
	var pe *llm.ProviderError
	if !errors.As(err, &pe) || pe.StatusCode != 0 || pe.Err == nil || !strings.Contains(err.Error(), "gave up after 2 attempts") {
		t.Errorf("err = %v, want a network ProviderError after 2 attempts", err)
	}
}

func TestCancelStopsTheRequest(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	c := &Client{Provider: "test", MaxRetries: 5}
	_, err := c.Do(ctx, Request{Method: "POST", URL: srv.URL})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	var pe *llm.ProviderError
	if !errors.As(err, &pe) || pe.Provider != "test" {
		t.Errorf("err = %#v, want a ProviderError", err)
	}
}

func TestCancelDuringBackoff(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "20")
		w.WriteHeader(429)
	}))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	c := &Client{Provider: "test", MaxRetries: 3, Sleep: func(ctx context.Context, d time.Duration) error {
		cancel()
		<-ctx.Done()
		return ctx.Err()
	}}
	_, err := c.Do(ctx, Request{Method: "POST", URL: srv.URL})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestTimeoutPerAttempt(t *testing.T) {
	release := make(chan struct{})
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			select {
			case <-r.Context().Done():
			case <-release:
			}
			return
		}
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	defer close(release)
	rec := &recorder{}
	c := newClient(rec, 1)
	c.Timeout = 50 * time.Millisecond
	resp, err := do(t, c, srv.URL)
	if err != nil {
		t.Fatalf("err = %v, want the timed-out attempt retried", err)
	}
	resp.Body.Close()

	c.MaxRetries = 0
	n.Store(0)
	_, err = do(t, c, srv.URL)
	if err == nil || !strings.Contains(err.Error(), "no response within llm.timeout (50ms)") {
		t.Errorf("err = %v, want a timeout naming the limit", err)
	}
}

// endless serves n events 20 ms apart, then the frame given forever.
func endless(n int, then string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i < n; i++ {
			io.WriteString(w, "data: x\n\n")
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
		for {
			io.WriteString(w, then)
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
}

// readEvents reads events until an error, reporting each as progress
// when progress is set, and returns how many it read and the error.
func readEvents(t *testing.T, c *Client, url string, progress bool) (int, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	resp, err := c.Do(ctx, Request{Method: "POST", URL: url, Stream: true})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	events := c.Events(resp)
	n := 0
	for {
		if _, err = events.Next(); err != nil {
			break
		}
		if progress {
			events.Progress()
		}
		n++
	}
	if ctx.Err() != nil {
		t.Fatalf("the stream was still open when the test gave up: %v", err)
	}
	return n, err
}

func TestStreamIdleTimeout(t *testing.T) {
	// Events reported as progress keep the stream open for longer than
	// the idle timeout; the comments after them do not.
	srv := httptest.NewServer(endless(150, ": keepalive\n\n"))
	defer srv.Close()
	c := &Client{Provider: "test", Timeout: 2 * time.Second}
	n, err := readEvents(t, c, srv.URL, true)
	if n != 150 {
		t.Errorf("read %d events, want all 150 before the keep-alives", n)
	}
	if err == nil || !strings.Contains(err.Error(), "no event from the stream") || !strings.Contains(err.Error(), "within llm.timeout (2s)") {
		t.Errorf("err = %v, want an idle timeout", err)
	}
}

func TestEventsWithoutProgressAreIdle(t *testing.T) {
	// A server sending events the adapter does not count as progress
	// (pings) is cut off like one sending comments.
	srv := httptest.NewServer(endless(0, "event: ping\ndata: {}\n\n"))
	defer srv.Close()
	c := &Client{Provider: "test", Timeout: time.Second}
	n, err := readEvents(t, c, srv.URL, false)
	if n == 0 || err == nil || !strings.Contains(err.Error(), "no event from the stream") {
		t.Errorf("read %d events, then err = %v; want events, then an idle timeout", n, err)
	}
}

func TestSecretsAreRedacted(t *testing.T) {
	const key = "sk-test-0123456789"
	s := &script{steps: []func(http.ResponseWriter, *http.Request){
		status(401, nil, `{"error":{"type":"invalid_api_key","message":"Incorrect API key provided: `+key+`"}}`),
	}}
	srv := httptest.NewServer(s)
	defer srv.Close()
	c := newClient(&recorder{}, 2)
	c.Secrets = []string{key}
	_, err := do(t, c, srv.URL)
	if err == nil || strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), "[redacted]") {
		t.Errorf("err = %v, want the key redacted", err)
	}
}

func TestNonJSONErrorBody(t *testing.T) {
	s := &script{steps: []func(http.ResponseWriter, *http.Request){
		status(404, nil, "<html>"+strings.Repeat("x", 500)+"</html>"),
		status(405, nil, ""),
	}}
	srv := httptest.NewServer(s)
	defer srv.Close()
	c := newClient(&recorder{}, 0)
	_, err := do(t, c, srv.URL)
	if err == nil || !strings.HasPrefix(err.Error(), "provider test: HTTP 404: <html>xxx") || len(err.Error()) > 260 {
		t.Errorf("err = %v, want a short quote of the body", err)
	}
	_, err = do(t, c, srv.URL)
	if err == nil || err.Error() != "provider test: HTTP 405: Method Not Allowed" {
		t.Errorf("err = %v, want the status text", err)
	}
}

func TestResponseCap(t *testing.T) {
	// The server would send 16 MiB; the client stops at 1 MiB.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		chunk := []byte(strings.Repeat(": padding\n", 1<<10))
		for sent := 0; sent < 16<<20; sent += len(chunk) {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	defer srv.Close()
	c := &Client{Provider: "test", MaxResponse: 1 << 20}
	for _, stream := range []bool{false, true} {
		resp, err := c.Do(context.Background(), Request{Method: "POST", URL: srv.URL, Stream: stream})
		if err != nil {
			t.Fatal(err)
		}
		if stream {
			_, err = c.Events(resp).Next()
			resp.Body.Close()
		} else {
			_, err = c.ReadAll(resp)
		}
		var pe *llm.ProviderError
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), "larger than the 1 MiB cap on one response") {
			t.Errorf("stream %t: err = %v, want the response cap named", stream, err)
		}
	}
}

func TestSealCutsSecretsFromWrappedErrors(t *testing.T) {
	const key = "sk-test-0123456789"
	c := &Client{Provider: "test", Secrets: []string{key}}
	err := c.Seal(&llm.ProviderError{Provider: "test", Type: key, Message: "m " + key,
		Err: fmt.Errorf("dial https://h/?k=%s: %w", key, context.Canceled)})
	for e := err; e != nil; e = errors.Unwrap(e) {
		if strings.Contains(e.Error(), key) {
			t.Fatalf("the key is in %q", e.Error())
		}
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want it still recognised as cancelled", err)
	}
	if err := c.Seal(errors.New("plain " + key)); strings.Contains(err.Error(), key) || !strings.HasPrefix(err.Error(), "provider test") {
		t.Errorf("err = %v, want a ProviderError without the key", err)
	}
}

// A key a call carries in its context (llm.WithAPIKey) is blanked out
// like the configured ones, by SealFor and by Do.
func TestSealForCutsTheContextKey(t *testing.T) {
	const key = "sk-client-0123456789"
	ctx := llm.WithAPIKey(context.Background(), key)
	c := &Client{Provider: "test", Secrets: []string{"sk-configured-000"}}
	err := c.SealFor(ctx, &llm.ProviderError{Provider: "test", Type: key, Message: "m " + key, Err: errors.New("e " + key)})
	for e := err; e != nil; e = errors.Unwrap(e) {
		if strings.Contains(fmt.Sprintf("%+v", e), key) {
			t.Fatalf("the key is in %+v", e)
		}
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, `{"error":{"message":"bad key `+key+`"}}`)
	}))
	defer srv.Close()
	_, err = c.Do(ctx, Request{Method: "POST", URL: srv.URL})
	if err == nil || strings.Contains(err.Error(), key) {
		t.Errorf("Do: %v, want an error without the key", err)
	}
}

func TestReadsPastTheCapKeepFailing(t *testing.T) {
	// A caller that reads on after the cap error, directly or through a
	// bufio.Reader, gets the same error and never a negative count.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, strings.Repeat("x", 4<<10))
	}))
	defer srv.Close()
	c := &Client{Provider: "test", MaxResponse: 1 << 10}
	open := func() io.ReadCloser {
		t.Helper()
		resp, err := c.Do(context.Background(), Request{Method: "POST", URL: srv.URL})
		if err != nil {
			t.Fatal(err)
		}
		return resp.Body
	}

	rc := open()
	defer rc.Close()
	buf := make([]byte, 8<<10)
	total := 0
	var first error
	for i := 0; i < 100 && first == nil; i++ {
		n, err := rc.Read(buf)
		total += n
		first = err
	}
	if first == nil || !strings.Contains(first.Error(), "cap on one response") {
		t.Fatalf("err = %v, want the response cap", first)
	}
	if total != 1<<10 {
		t.Errorf("read %d bytes before the cap error, want the 1024 under it", total)
	}
	for i := 0; i < 2; i++ {
		n, err := rc.Read(buf)
		if n != 0 || err == nil || err.Error() != first.Error() {
			t.Errorf("read %d past the cap = %d, %v; want 0, %v", i+2, n, err, first)
		}
	}

	rc2 := open()
	defer rc2.Close()
	br := bufio.NewReaderSize(rc2, 100)
	var err error
	func() {
		defer func() {
			if p := recover(); p != nil {
				t.Fatalf("bufio.Reader over the body panicked: %v", p)
			}
		}()
		for i := 0; i < 100 && err == nil; i++ {
			_, err = br.Read(buf[:100])
		}
		for i := 0; i < 2; i++ {
			if _, again := br.Read(buf[:100]); again == nil {
				t.Errorf("bufio read %d past the cap succeeded", i+2)
			}
		}
		_, _ = br.ReadString('\n')
	}()
	if err == nil || !strings.Contains(err.Error(), "cap on one response") {
		t.Errorf("bufio: err = %v, want the response cap", err)
	}
}
