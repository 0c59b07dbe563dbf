package chat_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/codec/chat"
	"github.com/hookhost/hookhost/internal/dialect"
	"github.com/hookhost/hookhost/internal/streamcheck"
)

// recorder is a ResponseWriter that remembers what was written and when
// it was flushed.
type recorder struct {
	header  http.Header
	status  int
	body    bytes.Buffer
	flushed int // bytes of body flushed so far
	flushes int
}

func newRecorder() *recorder { return &recorder{header: http.Header{}} }

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) WriteHeader(status int) {
	if r.status != 0 {
		panic("WriteHeader called twice")
	}
	r.status = status
}
func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.WriteHeader(http.StatusOK)
	}
	return r.body.Write(b)
}
func (r *recorder) Flush() { r.flushes++; r.flushed = r.body.Len() }

func decode(t *testing.T, body string) *dialect.Call {
	t.Helper()
	call, err := chat.New().Decode([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	return call
}

const streamUsage = `{"model":"gpt-4.1-mini","messages":[{"role":"user","content":"hi"}],"stream":true,"stream_options":{"include_usage":true}}`
const streamPlain = `{"model":"gpt-4.1-mini","messages":[{"role":"user","content":"hi"}],"stream":true}`

func TestStreamWritesNothingBeforeTheFirstEvent(t *testing.T) {
	w := newRecorder()
	s := chat.New().NewStream(w, decode(t, streamUsage), dialect.Meta{Model: "gpt-4.1-mini"})
	if err := s.Text(""); err != nil {
		t.Fatal(err)
	}
	if err := s.EndRound(); err != nil {
		t.Fatal(err)
	}
	if s.Started() || w.status != 0 || w.body.Len() != 0 || len(w.header) != 0 {
		t.Fatalf("written before any event: started=%v status=%d headers=%v body=%q", s.Started(), w.status, w.header, w.body.String())
	}
	if err := s.Text("Hi"); err != nil {
		t.Fatal(err)
	}
	if !s.Started() || w.status != 200 {
		t.Fatalf("started=%v status=%d after the first text", s.Started(), w.status)
	}
	for k, v := range map[string]string{"Content-Type": "text/event-stream", "Cache-Control": "no-cache", "Content-Encoding": ""} {
		if got := w.header.Get(k); got != v {
			t.Errorf("header %s = %q, want %q", k, got, v)
		}
	}
	if w.flushed != w.body.Len() {
		t.Errorf("%d of %d bytes flushed", w.flushed, w.body.Len())
	}
}

func TestStreamOneCompletionOverSeveralRounds(t *testing.T) {
	w := newRecorder()
	s := chat.New().NewStream(w, decode(t, streamUsage), dialect.Meta{Model: "gpt-4.1-mini"})
	steps := []func() error{
		func() error { return s.Text("Let me ") },
		func() error { return s.Text("check. ") },
		s.EndRound,
		s.Ping,
		func() error { return s.Text("Both cities:") },
		func() error {
			return s.ToolCall(hooks.ToolCall{ID: "call_a", Name: "get_weather", Arguments: []byte(`{"city":"Paris"}`)})
		},
		func() error {
			return s.ToolCall(hooks.ToolCall{ID: "call_b", Name: "get_weather", Arguments: []byte(`{"city": "Os`)})
		},
		func() error {
			return s.Finish(hooks.StopToolUse, hooks.Usage{InputTokens: 70, OutputTokens: 21})
		},
	}
	for i, step := range steps {
		if err := step(); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if w.flushed != w.body.Len() {
			t.Fatalf("step %d left %d bytes unflushed", i, w.body.Len()-w.flushed)
		}
	}
	got := checkStream(t, w.body.Bytes(), true)
	if got.Text != "Let me check. Both cities:" || got.Finish != "tool_calls" || got.Comments != 1 || got.Model != "gpt-4.1-mini" {
		t.Errorf("stream = %+v", got)
	}
	wantCalls := []streamcheck.Call{{ID: "call_a", Name: "get_weather", Arguments: `{"city":"Paris"}`}, {ID: "call_b", Name: "get_weather", Arguments: `{"city": "Os`}}
	if len(got.Calls) != 2 || got.Calls[0] != wantCalls[0] || got.Calls[1] != wantCalls[1] {
		t.Errorf("calls = %+v, want %+v", got.Calls, wantCalls)
	}
	if got.Usage["prompt_tokens"] != 70 || got.Usage["completion_tokens"] != 21 || got.Usage["total_tokens"] != 91 {
		t.Errorf("usage = %v", got.Usage)
	}
	n := w.body.Len()
	for name, call := range map[string]func() error{
		"Text": func() error { return s.Text("late") }, "ToolCall": func() error { return s.ToolCall(hooks.ToolCall{ID: "x", Name: "y"}) },
		"Ping": s.Ping, "EndRound": s.EndRound, "Finish": func() error { return s.Finish(hooks.StopEndTurn, hooks.Usage{}) },
		"Fail": func() error { return s.Fail(&dialect.Error{Status: 500, Type: "api_error", Message: "x"}) },
	} {
		if call() == nil {
			t.Errorf("%s after Finish did not fail", name)
		}
	}
	if w.body.Len() != n {
		t.Errorf("written after Finish: %q", w.body.String()[n:])
	}
}

func TestStreamWithoutUsageAndWithoutText(t *testing.T) {
	w := newRecorder()
	s := chat.New().NewStream(w, decode(t, streamPlain), dialect.Meta{Model: "m"})
	// A keepalive while the first round's plugin tools run starts the
	// response; the role still comes on the first chunk.
	if err := s.Ping(); err != nil {
		t.Fatal(err)
	}
	if !s.Started() || w.status != 200 || w.body.String() != ": ping\n\n" {
		t.Fatalf("after a first ping: started=%v status=%d body=%q", s.Started(), w.status, w.body.String())
	}
	if err := s.Finish(hooks.StopMaxTokens, hooks.Usage{InputTokens: 3, OutputTokens: 4}); err != nil {
		t.Fatal(err)
	}
	got := checkStream(t, w.body.Bytes(), false)
	if got.Finish != "length" || got.Text != "" || got.Usage != nil || got.Comments != 1 {
		t.Errorf("stream = %+v\n%s", got, w.body.String())
	}
}

func TestStreamFailsInBand(t *testing.T) {
	w := newRecorder()
	s := chat.New().NewStream(w, decode(t, streamUsage), dialect.Meta{Model: "m"})
	if err := s.Text("partial"); err != nil {
		t.Fatal(err)
	}
	if err := s.Fail(&dialect.Error{Status: 529, Type: "overloaded_error", Message: "provider openai: HTTP 529 overloaded"}); err != nil {
		t.Fatal(err)
	}
	got := checkStream(t, w.body.Bytes(), true)
	if got.Error == nil || got.Error["type"] != "server_error" || got.Error["message"] != "provider openai: HTTP 529 overloaded" {
		t.Errorf("error event = %v\n%s", got.Error, w.body.String())
	}
	if !strings.Contains(w.body.String(), `data: {"error":{`) {
		t.Errorf("error is not a data payload: %s", w.body.String())
	}
	if s.Text("more") == nil {
		t.Error("Text after Fail did not fail")
	}
}

// TestStreamReachesAClientEventByEvent serves a stream over real HTTP and
// makes the handler wait until the client has read the first event: an
// event left in a buffer would never arrive and the test would fail, not
// hang.
func TestStreamReachesAClientEventByEvent(t *testing.T) {
	front := chat.New()
	read := make(chan struct{})
	handlerErr := make(chan error, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		call, err := front.Decode(body)
		if err != nil {
			handlerErr <- err
			return
		}
		s := front.NewStream(w, call, dialect.Meta{Model: call.Request.Model})
		if err := s.Text("first"); err != nil {
			handlerErr <- err
			return
		}
		select {
		case <-read:
		case <-time.After(30 * time.Second):
			handlerErr <- errors.New("the client never read the first event")
			return
		}
		if err := s.Text(" second"); err != nil {
			handlerErr <- err
			return
		}
		handlerErr <- s.Finish(hooks.StopEndTurn, hooks.Usage{InputTokens: 1, OutputTokens: 2})
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, strings.NewReader(streamUsage))
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" || resp.Header.Get("Content-Encoding") != "" {
		t.Fatalf("status %d, headers %v", resp.StatusCode, resp.Header)
	}
	var all bytes.Buffer
	br := bufio.NewReader(io.TeeReader(resp.Body, &all))
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("reading the first events: %v", err)
		}
		if strings.Contains(line, `"content":"first"`) {
			break
		}
	}
	close(read)
	if _, err := io.Copy(io.Discard, br); err != nil {
		t.Fatal(err)
	}
	if err := <-handlerErr; err != nil {
		t.Fatal(err)
	}
	got := checkStream(t, all.Bytes(), true)
	if got.Text != "first second" || got.Usage["total_tokens"] != 3 {
		t.Errorf("stream = %+v", got)
	}
}
