// Package fakeapi is a scriptable stand-in for a model provider's HTTP API.
//
// Server, for the adapters' tests, gives each request the next scripted
// reply (a JSON body, an error status, or a server-sent event stream
// written frame by frame), and keeps every request so a test can check
// what the adapter put on the wire, field by field.
//
// Upstream, for the tests that drive the gateway with real clients,
// speaks one protocol (Chat Completions, Responses or Anthropic Messages)
// in full: a test's Answer decides each turn, a text and tool calls, and
// the Upstream renders it as the provider would, as one body or as a
// stream. Conversation and Tools read what a request of each protocol
// carries.
package fakeapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/hookhost/hookhost/llm"
)

// Seen is one request as the server received it.
type Seen struct {
	Method string
	Path   string
	Header http.Header
	Body   []byte
	// Done is closed when the client has gone away, so a reply that
	// streams without end can stop.
	Done <-chan struct{}
}

// Reply answers one request.
type Reply func(w http.ResponseWriter, r Seen)

// Server answers requests with Replies in order; a request past the end
// gets HTTP 418 with an error body, which no adapter retries.
type Server struct {
	srv     *httptest.Server
	mu      sync.Mutex
	reqs    []Seen
	replies []Reply
}

// New starts a server that is closed when the test ends.
func New(t testing.TB, replies ...Reply) *Server {
	s := &Server{replies: replies}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

// URL is the server's root URL.
func (s *Server) URL() string { return s.srv.URL }

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	seen := Seen{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body, Done: r.Context().Done()}
	s.mu.Lock()
	n := len(s.reqs)
	s.reqs = append(s.reqs, seen)
	var reply Reply
	if n < len(s.replies) {
		reply = s.replies[n]
	}
	s.mu.Unlock()
	if reply == nil {
		w.WriteHeader(http.StatusTeapot)
		fmt.Fprintf(w, `{"type":"error","error":{"message":"fake server: no reply scripted for request %d","type":"test_error"}}`, n+1)
		return
	}
	reply(w, seen)
}

// Requests returns what the server has received so far.
func (s *Server) Requests() []Seen {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Seen(nil), s.reqs...)
}

// JSON answers with status and body; headers are name, value pairs.
func JSON(status int, body string, headers ...string) Reply {
	return func(w http.ResponseWriter, _ Seen) {
		for i := 0; i+1 < len(headers); i += 2 {
			w.Header().Set(headers[i], headers[i+1])
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

// SSE streams frames, flushing after each one as a server would.
func SSE(frames ...string) Reply {
	return func(w http.ResponseWriter, _ Seen) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		for _, f := range frames {
			io.WriteString(w, f)
			w.(http.Flusher).Flush()
		}
	}
}

// Gated streams before, then waits until gate is closed (or the client
// went away, or a minute has passed, so that a failed test cannot keep the
// server up), then streams after: a test closes gate once it has seen
// what must arrive before the upstream's answer is whole.
func Gated(gate <-chan struct{}, before, after []string) Reply {
	return func(w http.ResponseWriter, r Seen) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		for _, f := range before {
			io.WriteString(w, f)
			w.(http.Flusher).Flush()
		}
		select {
		case <-gate:
		case <-r.Done:
			return
		case <-time.After(time.Minute):
			return
		}
		for _, f := range after {
			io.WriteString(w, f)
			w.(http.Flusher).Flush()
		}
	}
}

// ChatText is an OpenAI Chat Completions stream of text, in deltas of at
// most n bytes (whole characters), ending with finish_reason "stop" and
// usage: the frames for SSE or Gated.
func ChatText(text string, n int) []string {
	var frames []string
	chunk := func(delta, finish string) string {
		f := "null"
		if finish != "" {
			f = Quote(finish)
		}
		return Data(`{"id":"cw","object":"chat.completion.chunk","created":1,"model":"gpt-test","choices":[{"index":0,"delta":` + delta + `,"finish_reason":` + f + `}]}`)
	}
	frames = append(frames, chunk(`{"role":"assistant","content":""}`, ""))
	for len(text) > 0 {
		k := min(n, len(text))
		for k < len(text) && !utf8.RuneStart(text[k]) {
			k++
		}
		frames = append(frames, chunk(`{"content":`+Quote(text[:k])+`}`, ""))
		text = text[k:]
	}
	frames = append(frames, chunk(`{}`, "stop"),
		Data(`{"id":"cw","object":"chat.completion.chunk","created":1,"model":"gpt-test","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":20,"total_tokens":30}}`),
		Data(`[DONE]`))
	return frames
}

// Endless streams frames, then repeats the last one every interval until
// the client goes away (or a minute has passed, so a broken client cannot
// keep the test server up).
func Endless(interval time.Duration, frames ...string) Reply {
	return func(w http.ResponseWriter, r Seen) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		for _, f := range frames {
			io.WriteString(w, f)
		}
		w.(http.Flusher).Flush()
		if len(frames) == 0 {
			return
		}
		tick := time.NewTicker(interval)
		defer tick.Stop()
		giveUp := time.After(time.Minute)
		for {
			select {
			case <-r.Done:
				return
			case <-giveUp:
				return
			case <-tick.C:
			}
			if _, err := io.WriteString(w, frames[len(frames)-1]); err != nil {
				return
			}
			w.(http.Flusher).Flush()
		}
	}
}

// Keepalive is the comment frame servers send to keep a stream open.
const Keepalive = ": keepalive\n\n"

// Data is one "data:" frame. JSON is put on one line, as servers send it.
func Data(s string) string { return "data: " + oneLine(s) + "\n\n" }

// Named is one frame with an event name.
func Named(event, s string) string { return "event: " + event + "\ndata: " + oneLine(s) + "\n\n" }

func oneLine(s string) string {
	var b bytes.Buffer
	if json.Compact(&b, []byte(s)) != nil {
		return s
	}
	return b.String()
}

// Sleeper records backoff waits instead of waiting.
type Sleeper struct {
	mu    sync.Mutex
	waits []time.Duration
}

// Sleep records d and returns at once.
func (s *Sleeper) Sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.waits = append(s.waits, d)
	s.mu.Unlock()
	return ctx.Err()
}

// Waits returns the recorded waits.
func (s *Sleeper) Waits() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.waits...)
}

// Redirect is a transport that sends every request to the server whatever
// its URL says, to test behaviour that depends on the configured host.
func (s *Server) Redirect() *http.Client {
	to, _ := url.Parse(s.srv.URL)
	return &http.Client{Transport: redirect{to}}
}

type redirect struct{ to *url.URL }

func (r redirect) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.URL.Scheme, req.URL.Host = r.to.Scheme, r.to.Host
	return http.DefaultTransport.RoundTrip(req)
}

// AssertJSON compares a request body with the expected JSON as values, so
// every field is checked and key order does not matter.
func AssertJSON(t testing.TB, got []byte, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("request body is not JSON: %v\n%s", err, got)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad expectation: %v\n%s", err, want)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("request body =\n%s\nwant\n%s", indent(got), indent([]byte(want)))
	}
}

func indent(b []byte) string {
	var out bytes.Buffer
	if json.Indent(&out, b, "", "  ") != nil {
		return string(b)
	}
	return out.String()
}

// Quote is s as a JSON string.
func Quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// Itoa is n in JSON.
func Itoa(n int) string { return fmt.Sprint(n) }

// ErrorBodies are error responses with key planted in every field of every
// error shape the providers send, and in the places a proxy echoes it.
func ErrorBodies(key string) map[string]string {
	k := Quote(key)
	return map[string]string{
		"openai message":     `{"error":{"message":` + k + `,"type":"invalid_request_error","param":null,"code":null}}`,
		"openai type":        `{"error":{"message":"rate limited","type":` + k + `,"param":null,"code":null}}`,
		"openai code":        `{"error":{"message":"rate limited","type":null,"param":null,"code":` + k + `}}`,
		"openai param":       `{"error":{"message":"bad","type":"invalid_request_error","param":` + k + `,"code":"x"}}`,
		"openai every field": `{"error":{"message":` + k + `,"type":` + k + `,"param":` + k + `,"code":` + k + `}}`,
		"anthropic type":     `{"type":"error","error":{"type":` + k + `,"message":"Overloaded"}}`,
		"anthropic message":  `{"type":"error","error":{"type":"overloaded_error","message":` + k + `}}`,
		"anthropic both":     `{"type":"error","error":{"type":` + k + `,"message":` + k + `}}`,
		"top-level fields":   `{"type":` + k + `,"code":` + k + `,"message":` + k + `}`,
		"bare string":        `{"error":` + k + `}`,
		"plain text":         "upstream said: " + key,
		"echoed headers":     "Authorization: Bearer " + key + "\r\nx-api-key: " + key + "\r\n",
		// The key straddles the point where a long body is cut short.
		"cut short": strings.Repeat("x", 190) + key + strings.Repeat("y", 300),
	}
}

// AssertNoKey fails the test if key appears in err's text, in the text of
// any error it wraps, or in any string field of a ProviderError among
// them. what names the case.
func AssertNoKey(t testing.TB, what string, err error, key string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: no error", what)
		return
	}
	for e := err; e != nil; e = errors.Unwrap(e) {
		if strings.Contains(e.Error(), key) {
			t.Errorf("%s: the key is in the error text: %s", what, e.Error())
			return
		}
		if strings.Contains(fmt.Sprintf("%+v", e), key) {
			t.Errorf("%s: the key is in a field of the error: %+v", what, e)
			return
		}
	}
}

// Fuzz is a server for fuzz targets: every request gets the body and status
// last given to Set, so one server serves a whole fuzzing run.
type Fuzz struct {
	srv    *httptest.Server
	mu     sync.Mutex
	status int
	body   string
	stream bool
}

// NewFuzz starts a Fuzz server that is closed when the fuzz target ends.
func NewFuzz(f *testing.F) *Fuzz {
	z := &Fuzz{}
	z.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		z.mu.Lock()
		status, body, stream := z.status, z.body, z.stream
		z.mu.Unlock()
		if stream && status == http.StatusOK {
			w.Header().Set("Content-Type", "text/event-stream")
		} else {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(status)
		io.WriteString(w, body)
	}))
	f.Cleanup(z.srv.Close)
	return z
}

// URL is the server's root URL.
func (z *Fuzz) URL() string { return z.srv.URL }

// Statuses are the statuses a fuzz input picks from by index.
var Statuses = []int{200, 400, 401, 429, 500, 529}

// Set makes the next replies status (Statuses[pick], wrapped) with body,
// as an event stream when stream is set.
func (z *Fuzz) Set(pick uint8, body string, stream bool) {
	z.mu.Lock()
	z.status, z.body, z.stream = Statuses[int(pick)%len(Statuses)], body, stream
	z.mu.Unlock()
}

// CheckStream fails when a stream that succeeded kept other text than it
// showed.
func CheckStream(t testing.TB, shown, kept string) {
	t.Helper()
	if shown != kept {
		t.Fatalf("shown %q, kept %q", shown, kept)
	}
}

// Provider is what the fuzz and limit helpers call: a provider that
// streams.
type Provider interface {
	llm.Provider
	llm.Streamer
}

// Run is the body of a provider parser's fuzz target: each input is served
// by z as the answer to req, and the call must not panic, must keep key
// out of every error, and, for a stream that succeeds, must show exactly
// the text it keeps.
func (z *Fuzz) Run(f *testing.F, p Provider, req llm.Request, key string, stream bool) {
	f.Fuzz(func(t *testing.T, pick uint8, body string) {
		z.Set(pick, body, stream)
		if !stream {
			if _, err := p.Complete(context.Background(), req); err != nil {
				AssertNoKey(t, "complete", err, key)
			}
			return
		}
		var shown strings.Builder
		resp, err := p.Stream(context.Background(), req, func(s string) { shown.WriteString(s) })
		if err != nil {
			AssertNoKey(t, "stream", err, key)
			return
		}
		CheckStream(t, shown.String(), resp.Message.Content)
	})
}

// Bounded streams req through p and returns its error, failing the test
// if the stream is still running after 30 s: a limit that does not fire
// shows as a failure, never as a hung test.
func Bounded(t testing.TB, p llm.Streamer, req llm.Request) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := p.Stream(ctx, req, nil)
	if ctx.Err() != nil {
		t.Fatalf("Stream was still running when the test gave up: %v", err)
	}
	return err
}
