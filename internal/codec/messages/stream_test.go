package messages_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/codec/messages"
	"github.com/hookhost/hookhost/internal/dialect"
	"github.com/hookhost/hookhost/internal/streamcheck"
)

// checkStream fails the test unless raw keeps the rules the official
// clients rely on (streamcheck.Messages), and unless the message it starts
// has an Anthropic-style id; it returns the message the events build.
func checkStream(t *testing.T, raw string) *streamcheck.MessagesStream {
	t.Helper()
	s, err := streamcheck.Messages([]byte(raw))
	if err != nil {
		t.Fatalf("%v\n%s", err, raw)
	}
	if s.ID != "" && !strings.HasPrefix(s.ID, "msg_") {
		t.Errorf("message id %q", s.ID)
	}
	return s
}

func newSink(t *testing.T, w http.ResponseWriter, input int) dialect.Sink {
	t.Helper()
	return messages.New().NewStream(w, call(t), dialect.Meta{Model: "claude-haiku-4-5", InputTokens: input})
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestStreamRoundsMakeOneMessage(t *testing.T) {
	rec := httptest.NewRecorder()
	s := newSink(t, rec, 42)
	// Round 1: text, then a plugin tool the client never sees; round 2:
	// more text and a call for the client.
	must(t, s.Text("Let me "))
	must(t, s.Text("look."))
	must(t, s.EndRound())
	must(t, s.Ping())
	must(t, s.Ping())
	must(t, s.Text("Paris is sunny. "))
	must(t, s.EndRound())
	must(t, s.ToolCall(hooks.ToolCall{ID: "toolu_9", Name: "notify", Arguments: json.RawMessage(`{"msg": "sunny"}`)}))
	must(t, s.Text("Done."))
	must(t, s.Finish(hooks.StopToolUse, hooks.Usage{InputTokens: 300, OutputTokens: 27}))
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Errorf("content type %q", ct)
	}
	got := checkStream(t, rec.Body.String())
	want := []map[string]any{
		{"type": "text", "text": "Let me look."},
		{"type": "text", "text": "Paris is sunny. "},
		{"type": "tool_use", "id": "toolu_9", "name": "notify", "input": map[string]any{"msg": "sunny"}},
		{"type": "text", "text": "Done."},
	}
	if !reflect.DeepEqual(got.Content, want) {
		t.Errorf("content = %v\nwant %v", got.Content, want)
	}
	if got.StopReason != "tool_use" || got.Model != "claude-haiku-4-5" || !reflect.DeepEqual(got.Usage, map[string]float64{"input_tokens": 300, "output_tokens": 27}) {
		t.Errorf("stop %q, model %q, usage %v", got.StopReason, got.Model, got.Usage)
	}
	if !strings.Contains(rec.Body.String(), `"usage":{"input_tokens":42,"output_tokens":1}`) {
		t.Errorf("message_start does not announce the estimated input tokens:\n%s", rec.Body.String())
	}
	if err := s.Text("late"); err == nil {
		t.Error("Text after Finish succeeded")
	}
	if err := s.Finish(hooks.StopEndTurn, hooks.Usage{}); err == nil {
		t.Error("a second Finish succeeded")
	}
}

// headerWatch records whether anything reached the client.
type headerWatch struct {
	*httptest.ResponseRecorder
	wroteHeader bool
}

func (h *headerWatch) WriteHeader(code int) {
	h.wroteHeader = true
	h.ResponseRecorder.WriteHeader(code)
}

func TestStreamWritesNothingBeforeItEmits(t *testing.T) {
	w := &headerWatch{ResponseRecorder: httptest.NewRecorder()}
	s := newSink(t, w, 0)
	must(t, s.EndRound())
	must(t, s.Text(""))
	if s.Started() || w.wroteHeader || w.Body.Len() > 0 {
		t.Fatalf("written before anything was emitted: started %v, header %v, body %q", s.Started(), w.wroteHeader, w.Body.String())
	}
	must(t, s.Finish(hooks.StopEndTurn, hooks.Usage{InputTokens: 5, OutputTokens: 0}))
	if !s.Started() {
		t.Error("Started is false after Finish")
	}
	got := checkStream(t, w.Body.String())
	if len(got.Content) != 0 || got.StopReason != "end_turn" {
		t.Errorf("empty answer = %+v", got)
	}
	// An estimate of 0 input tokens is announced as 1: the SDKs take 0/0
	// for a broken stream.
	if !strings.Contains(w.Body.String(), `"usage":{"input_tokens":1,"output_tokens":1}`) {
		t.Errorf("message_start usage:\n%s", w.Body.String())
	}
}

func TestStreamPingStartsTheMessage(t *testing.T) {
	rec := httptest.NewRecorder()
	s := newSink(t, rec, 10)
	must(t, s.Ping())
	must(t, s.ToolCall(hooks.ToolCall{ID: "toolu_1", Name: "f", Arguments: json.RawMessage(`not json`)}))
	must(t, s.Finish(hooks.StopToolUse, hooks.Usage{InputTokens: 10, OutputTokens: 3}))
	body := rec.Body.String()
	if !strings.HasPrefix(body, "event: message_start\n") || !strings.Contains(body, "event: ping\n") {
		t.Errorf("stream:\n%s", body)
	}
	got := checkStream(t, body)
	if in := got.Content[0]["input"]; !reflect.DeepEqual(in, map[string]any{"invalid_arguments": "not json"}) {
		t.Errorf("input of a call with invalid arguments = %v", in)
	}
}

func TestStreamFailAfterStart(t *testing.T) {
	rec := httptest.NewRecorder()
	s := newSink(t, rec, 10)
	must(t, s.Text("partial"))
	must(t, s.Fail(&dialect.Error{Status: 529, Type: "overloaded_error", Message: "upstream overloaded; retry later"}))
	got := checkStream(t, rec.Body.String())
	if got.Error["type"] != "overloaded_error" || got.Error["message"] != "upstream overloaded; retry later" {
		t.Errorf("error = %v", got.Error)
	}
	if !strings.HasSuffix(rec.Body.String(), "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"upstream overloaded; retry later\"}}\n\n") {
		t.Errorf("stream ends %q", rec.Body.String())
	}
	for name, err := range map[string]error{
		"Text": s.Text("x"), "ToolCall": s.ToolCall(hooks.ToolCall{ID: "a", Name: "b"}), "Ping": s.Ping(),
		"Finish": s.Finish(hooks.StopEndTurn, hooks.Usage{}), "Fail": s.Fail(&dialect.Error{Message: "again"}),
		"EndRound": s.EndRound(),
	} {
		if err == nil {
			t.Errorf("%s after Fail succeeded", name)
		}
	}
	checkStream(t, rec.Body.String())
}

func TestStreamFailBeforeStart(t *testing.T) {
	rec := httptest.NewRecorder()
	s := newSink(t, rec, 10)
	must(t, s.Fail(&dialect.Error{Status: 502, Type: "api_error", Message: "upstream unreachable"}))
	got := checkStream(t, rec.Body.String())
	if got.Error["type"] != "api_error" || !strings.HasPrefix(rec.Body.String(), "event: error\n") {
		t.Errorf("stream %q", rec.Body.String())
	}
}

// failWriter fails every write, as a connection the client closed does.
type failWriter struct {
	header http.Header
	writes int
}

func (f *failWriter) Header() http.Header { return f.header }
func (f *failWriter) WriteHeader(int)     {}
func (f *failWriter) Write([]byte) (int, error) {
	f.writes++
	return 0, errors.New("connection reset by peer")
}

func TestStreamStopsAtTheFirstWriteError(t *testing.T) {
	w := &failWriter{header: http.Header{}}
	s := newSink(t, w, 1)
	if err := s.Text("hi"); err == nil {
		t.Fatal("Text to a broken connection succeeded")
	}
	if err := s.Finish(hooks.StopEndTurn, hooks.Usage{}); err == nil {
		t.Error("Finish after a write error succeeded")
	}
	if w.writes != 1 {
		t.Errorf("%d writes to a broken connection, want 1", w.writes)
	}
}

// Over a real connection, each event reaches the client when it is
// written, not when the handler returns.
func TestStreamFlushesEachEvent(t *testing.T) {
	release := make(chan struct{})
	handlerDone := make(chan error, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := messages.New().NewStream(w, call(t), dialect.Meta{Model: "m", InputTokens: 3})
		if err := s.Text("first"); err != nil {
			handlerDone <- err
			return
		}
		select {
		case <-release:
		case <-r.Context().Done():
			handlerDone <- r.Context().Err()
			return
		case <-time.After(30 * time.Second):
			handlerDone <- errors.New("the client never saw the first text")
			return
		}
		handlerDone <- s.Finish(hooks.StopEndTurn, hooks.Usage{InputTokens: 3, OutputTokens: 1})
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	var all strings.Builder
	for !strings.Contains(all.String(), `"text_delta","text":"first"`) {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("stream ended before the first text arrived: %v\n%s", err, all.String())
		}
		all.WriteString(line)
	}
	close(release)
	for {
		line, err := r.ReadString('\n')
		all.WriteString(line)
		if err != nil {
			break
		}
	}
	if err := <-handlerDone; err != nil {
		t.Fatal(err)
	}
	got := checkStream(t, all.String())
	if fmt.Sprint(got.Content) != "[map[text:first type:text]]" {
		t.Errorf("content = %v", got.Content)
	}
}

// The first round's real input count replaces the estimate while the
// message has not started; after message_start it changes nothing, and a
// count of 0 never reaches the client.
func TestMessageStartCarriesTheAnnouncedInput(t *testing.T) {
	w := httptest.NewRecorder()
	sink := newSink(t, w, 300)
	a, ok := sink.(dialect.InputAnnouncer)
	if !ok {
		t.Fatal("the messages sink does not take the real input count")
	}
	a.InputTokens(0)
	a.InputTokens(4321)
	sink.Text("hi")
	a.InputTokens(99)
	sink.Finish(hooks.StopEndTurn, hooks.Usage{InputTokens: 4321, OutputTokens: 2})
	raw := w.Body.String()
	checkStream(t, raw)
	start := raw[:strings.Index(raw, "\n\n")]
	if !strings.Contains(start, `"usage":{"input_tokens":4321,`) {
		t.Errorf("message_start = %s, want input_tokens 4321", start)
	}
}
