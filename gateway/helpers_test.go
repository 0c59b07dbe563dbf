package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/hookhost/hookhost/config"
	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/dialect"
	"github.com/hookhost/hookhost/internal/syncbuf"
	"github.com/hookhost/hookhost/llm"
)

// testFront is a dialect.Front for one endpoint whose shapes are easy to
// recognise: its error bodies carry "front":<path>, so a test can tell the
// endpoint's shape from the server's own.
type testFront struct {
	proto llm.Protocol
	path  string
}

var _ dialect.Front = (*testFront)(nil)

func (f *testFront) Protocol() llm.Protocol  { return f.proto }
func (f *testFront) Path() string            { return f.path }
func (f *testFront) Fields() []dialect.Field { return nil }

func (f *testFront) Decode(body []byte) (*dialect.Call, error) {
	var in struct {
		Model    string `json:"model"`
		Stream   bool   `json:"stream"`
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, dialect.Invalid("", "body is not JSON: "+err.Error())
	}
	if in.Messages == nil {
		return nil, dialect.Invalid("messages", "messages is required")
	}
	call := &dialect.Call{Stream: in.Stream}
	call.Request.Model = in.Model
	for _, m := range in.Messages {
		call.Request.Messages = append(call.Request.Messages, hooks.Message{Role: hooks.Role(m.Role), Content: m.Content})
	}
	return call, nil
}

func (f *testFront) Encode(call *dialect.Call, res *dialect.Result) ([]byte, error) {
	return json.Marshal(map[string]any{"front": f.path, "model": res.Model, "text": strings.Join(res.Text, ""), "stop": res.Stop})
}

func (f *testFront) NewStream(w http.ResponseWriter, call *dialect.Call, meta dialect.Meta) dialect.Sink {
	return &testSink{w: w, meta: meta}
}

func (f *testFront) ErrorBody(e *dialect.Error) []byte {
	b, _ := json.Marshal(map[string]any{"front": f.path, "error": map[string]any{"type": e.Type, "message": e.Message, "param": e.Param}})
	return b
}

// testSink writes each event as one SSE frame.
type testSink struct {
	w       http.ResponseWriter
	meta    dialect.Meta
	started bool
}

var _ dialect.Sink = (*testSink)(nil)

func (s *testSink) emit(event string, v any) error {
	if !s.started {
		s.started = true
		s.w.Header().Set("Content-Type", "text/event-stream")
		s.w.WriteHeader(http.StatusOK)
		if err := s.emitRaw("start", map[string]any{"model": s.meta.Model, "input_tokens": s.meta.InputTokens}); err != nil {
			return err
		}
	}
	return s.emitRaw(event, v)
}

func (s *testSink) emitRaw(event string, v any) error {
	b, _ := json.Marshal(v)
	if _, err := fmt.Fprintf(s.w, "event: %s\ndata: %s\n\n", event, b); err != nil {
		return err
	}
	return http.NewResponseController(s.w).Flush()
}

func (s *testSink) Text(d string) error             { return s.emit("text", d) }
func (s *testSink) EndRound() error                 { return s.emit("end_round", nil) }
func (s *testSink) ToolCall(c hooks.ToolCall) error { return s.emit("tool_call", c) }
func (s *testSink) Ping() error                     { return s.emit("ping", nil) }
func (s *testSink) Started() bool                   { return s.started }
func (s *testSink) Fail(e *dialect.Error) error     { return s.emit("error", e) }
func (s *testSink) Finish(stop hooks.StopReason, u hooks.Usage) error {
	return s.emit("finish", map[string]any{"stop": stop, "usage": u})
}

// runFunc is a runner made of a function.
type runFunc func(ctx context.Context, f dialect.Front, call *dialect.Call, sink dialect.Sink) (*dialect.Result, error)

func (r runFunc) Run(ctx context.Context, f dialect.Front, call *dialect.Call, sink dialect.Sink) (*dialect.Result, error) {
	return r(ctx, f, call, sink)
}

// echo answers with the last message's text, streamed in two parts.
var echo = runFunc(func(ctx context.Context, f dialect.Front, call *dialect.Call, sink dialect.Sink) (*dialect.Result, error) {
	text := call.Request.Messages[len(call.Request.Messages)-1].Content
	res := &dialect.Result{Model: call.Request.Model, Text: []string{text}, Stop: hooks.StopEndTurn}
	if sink != nil {
		half := len(text) / 2
		if err := sink.Text(text[:half]); err != nil {
			return nil, err
		}
		if err := sink.Text(text[half:]); err != nil {
			return nil, err
		}
		if err := sink.Finish(res.Stop, res.Usage); err != nil {
			return nil, err
		}
	}
	return res, nil
})

func testFronts() []dialect.Front {
	return []dialect.Front{
		&testFront{llm.ProtocolChat, "/v1/chat/completions"},
		&testFront{llm.ProtocolResponses, "/v1/responses"},
		&testFront{llm.ProtocolMessages, "/v1/messages"},
	}
}

// testServerConfig is config.Server's defaults, as the config package
// fills them in.
func testServerConfig() config.Server {
	return config.Server{
		Listen:         "127.0.0.1:0",
		MaxBodySize:    1 << 20,
		MaxConcurrent:  16,
		HeaderTimeout:  10 * time.Second,
		ReadTimeout:    60 * time.Second,
		IdleTimeout:    120 * time.Second,
		RequestTimeout: time.Minute,
		DrainTimeout:   30 * time.Second,
		StateTTL:       time.Hour,
		StateEntries:   100,

		ResponsesEntries:  1000,
		ResponsesMaxBytes: 16 << 20,
	}
}

// testParts are parts for a gateway-route server over the test fronts, a
// runner that echoes, and one model, "m1"; edit them before newTest.
func testParts() parts {
	return parts{
		route:   hooks.RouteGateway,
		models:  []string{"m1", "m2"},
		server:  testServerConfig(),
		fronts:  testFronts(),
		hooked:  echo,
		plain:   echo,
		getenv:  func(string) string { return "" },
		plugins: nil,
	}
}

type testServer struct {
	*Server
	url  string
	logs *syncbuf.Buffer
}

// newTest builds a server from p and serves its handler on a loopback
// httptest server closed when the test ends.
func newTest(t *testing.T, p parts) *testServer {
	t.Helper()
	logs := &syncbuf.Buffer{}
	if p.logger == nil {
		p.logger = hclog.New(&hclog.LoggerOptions{Output: logs, Level: hclog.Debug})
	}
	s, err := newServer(p)
	if err != nil {
		t.Fatalf("newServer: %v", err)
	}
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(hs.Close)
	return &testServer{Server: s, url: hs.URL, logs: logs}
}

// post sends body as JSON to path with the given header pairs.
func post(t *testing.T, url, path, body string, header ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	return resp
}

// do sends a request with no body; header holds name, value pairs.
func do(t *testing.T, method, url string, header ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// readAll reads and closes a response body.
func readAll(t *testing.T, resp *http.Response) []byte {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading the response: %v", err)
	}
	return b
}

// metricsOf is what the server at url serves on /metrics.
func metricsOf(t *testing.T, url string) string {
	t.Helper()
	return string(readAll(t, do(t, http.MethodGet, url+"/metrics")))
}

// wantMetrics checks that text, as /metrics served it, holds each of
// lines whole, and shows all of it when one is missing.
func wantMetrics(t *testing.T, text string, lines ...string) {
	t.Helper()
	missing := false
	for _, want := range lines {
		if !strings.Contains(text, want+"\n") {
			t.Errorf("/metrics lacks %s", want)
			missing = true
		}
	}
	if missing {
		t.Logf("/metrics:\n%s", text)
	}
}

// frontError is an error body written by a testFront.
type frontError struct {
	Front string `json:"front"`
	Error struct {
		Type    string `json:"type"`
		Message string `json:"message"`
		Param   string `json:"param"`
	} `json:"error"`
}

// wantFrontError checks that resp is status with a body in path's front
// shape of type typ, and returns its message.
func wantFrontError(t *testing.T, resp *http.Response, status int, path, typ string) string {
	t.Helper()
	body := readAll(t, resp)
	if resp.StatusCode != status {
		t.Fatalf("status %d, want %d; body %s", resp.StatusCode, status, body)
	}
	var e frontError
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatalf("error body is not JSON: %v: %s", err, body)
	}
	if e.Front != path || e.Error.Type != typ {
		t.Fatalf("error body %s: want front %q and type %q", body, path, typ)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	return e.Error.Message
}

// eventually polls cond until it holds, failing the test after a generous
// bound so that a broken server shows as a failure, never as a hang.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting: %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

const chatBody = `{"model":"m1","messages":[{"role":"user","content":"hello there"}]}`

// answer is a response read whole, or why there was none.
type answer struct {
	code int
	body string
	err  error
}

// postAside posts body as JSON like post, but from any goroutine: a
// failure comes back in the answer instead of stopping the test.
func postAside(url, path, body string) answer {
	resp, err := http.Post(url+path, "application/json", strings.NewReader(body))
	if err != nil {
		return answer{err: err}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return answer{code: resp.StatusCode, body: string(b), err: err}
}
