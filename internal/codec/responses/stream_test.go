package responses

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/dialect"
	"github.com/hookhost/hookhost/internal/streamcheck"
)

// serve runs script against a Sink on a real HTTP server and returns what a
// client received.
func serve(t *testing.T, call *dialect.Call, script func(s dialect.Sink) error) (*http.Response, []byte) {
	t.Helper()
	f := New()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := f.NewStream(w, call, dialect.Meta{Model: "gpt-4.1", InputTokens: 10})
		if err := script(s); err != nil {
			if s.Started() {
				t.Errorf("script: %v", err)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusInternalServerError)
			w.Write(f.ErrorBody(&dialect.Error{Status: 500, Type: "api_error", Message: err.Error()}))
		}
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/v1/responses", strings.NewReader(`{}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

// checkStream fails the test unless raw keeps the rules the official
// clients rely on (streamcheck.Responses), and unless every response it
// carries is for the model the tests serve.
func checkStream(t *testing.T, raw []byte) *streamcheck.ResponsesStream {
	t.Helper()
	c, err := streamcheck.Responses(raw)
	if err != nil {
		t.Fatalf("%v\n%s", err, raw)
	}
	if c.Model != "gpt-4.1" {
		t.Errorf("the responses are for model %q, want gpt-4.1", c.Model)
	}
	return c
}

func equal(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

func usageOf(t *testing.T, r map[string]any) (in, out, total float64) {
	t.Helper()
	u, ok := r["usage"].(map[string]any)
	if !ok {
		t.Fatalf("final response has usage %v", r["usage"])
	}
	return u["input_tokens"].(float64), u["output_tokens"].(float64), u["total_tokens"].(float64)
}

func TestStreamText(t *testing.T) {
	call := decode(t, `{"model":"gpt-4.1","input":"hi","stream":true,"instructions":"be brief"}`)
	resp, body := serve(t, call, func(s dialect.Sink) error {
		for _, d := range []string{"Hel", "", "lo"} {
			if err := s.Text(d); err != nil {
				return err
			}
		}
		if err := s.EndRound(); err != nil {
			return err
		}
		return s.Finish(hooks.StopEndTurn, hooks.Usage{InputTokens: 10, OutputTokens: 2})
	})
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("Content-Type %q", ct)
	}
	c := checkStream(t, body)
	if c.Text != "Hello" || c.Events[len(c.Events)-1].Type != "response.completed" {
		t.Errorf("text %q, last event %s", c.Text, c.Events[len(c.Events)-1].Type)
	}
	if in, out, total := usageOf(t, c.Final); in != 10 || out != 2 || total != 12 {
		t.Errorf("usage %v %v %v", in, out, total)
	}
	if c.Final["instructions"] != "be brief" {
		t.Errorf("instructions echoed as %v", c.Final["instructions"])
	}
}

// Two upstream rounds, the first answered by a plugin tool while the client
// waits, continue one response: one id, one sequence, the second round's
// text a new item, and the client's own call after it.
func TestStreamRoundsContinueOneResponse(t *testing.T) {
	call := decode(t, `{"model":"gpt-4.1","input":"burn?","stream":true}`)
	_, body := serve(t, call, func(s dialect.Sink) error {
		steps := []func() error{
			func() error { return s.Text("Let me check. ") },
			s.EndRound, s.Ping, s.Ping,
			func() error { return s.Text("Burn is low;") },
			func() error { return s.Text(" checking the budget.") },
			func() error {
				return s.ToolCall(hooks.ToolCall{ID: "call_b", Name: "get_budget", Arguments: json.RawMessage(`{"team":"ops"}`)})
			},
			func() error {
				return s.ToolCall(hooks.ToolCall{ID: "call_c", Name: "notify", Arguments: json.RawMessage(`{}`)})
			},
			s.EndRound,
			func() error { return s.Finish(hooks.StopToolUse, hooks.Usage{InputTokens: 50, OutputTokens: 20}) },
		}
		for _, step := range steps {
			if err := step(); err != nil {
				return err
			}
		}
		return nil
	})
	c := checkStream(t, body)
	if c.Comments != 2 || c.Text != "Let me check. Burn is low; checking the budget." {
		t.Errorf("pings %d, text %q", c.Comments, c.Text)
	}
	out := c.Final["output"].([]any)
	var kinds []string
	for _, o := range out {
		m := o.(map[string]any)
		switch m["type"] {
		case "message":
			kinds = append(kinds, "message:"+m["content"].([]any)[0].(map[string]any)["text"].(string))
		case "function_call":
			kinds = append(kinds, fmt.Sprintf("call:%v:%v:%v", m["call_id"], m["name"], m["arguments"]))
		}
	}
	want := []string{"message:Let me check. ", "message:Burn is low; checking the budget.", `call:call_b:get_budget:{"team":"ops"}`, "call:call_c:notify:{}"}
	if strings.Join(kinds, "|") != strings.Join(want, "|") {
		t.Errorf("output = %q\nwant %q", kinds, want)
	}
	if in, outTok, _ := usageOf(t, c.Final); in != 50 || outTok != 20 {
		t.Errorf("usage %v/%v, want the sum over rounds, reported once", in, outTok)
	}
}

func TestStreamPingFirst(t *testing.T) {
	call := decode(t, `{"model":"gpt-4.1","input":"hi","stream":true}`)
	_, body := serve(t, call, func(s dialect.Sink) error {
		if err := s.Ping(); err != nil {
			return err
		}
		if !s.Started() {
			t.Error("a ping did not start the stream")
		}
		if err := s.Text("ok"); err != nil {
			return err
		}
		return s.Finish(hooks.StopEndTurn, hooks.Usage{InputTokens: 1, OutputTokens: 1})
	})
	c := checkStream(t, body)
	if c.Comments != 1 || c.Text != "ok" {
		t.Errorf("pings %d, text %q", c.Comments, c.Text)
	}
	if i := bytes.Index(body, []byte(": ping")); i < bytes.Index(body, []byte("response.in_progress")) {
		t.Errorf("the ping comes before the response was announced:\n%s", body)
	}
}

func TestStreamIncomplete(t *testing.T) {
	call := decode(t, `{"model":"gpt-4.1","input":"hi","stream":true,"max_output_tokens":3}`)
	_, body := serve(t, call, func(s dialect.Sink) error {
		if err := s.Text("It is su"); err != nil {
			return err
		}
		return s.Finish(hooks.StopMaxTokens, hooks.Usage{InputTokens: 1, OutputTokens: 3})
	})
	c := checkStream(t, body)
	if c.Events[len(c.Events)-1].Type != "response.incomplete" {
		t.Fatalf("last event %s", c.Events[len(c.Events)-1].Type)
	}
	if d, _ := c.Final["incomplete_details"].(map[string]any); d["reason"] != "max_output_tokens" {
		t.Errorf("incomplete_details %v", c.Final["incomplete_details"])
	}
	if c.Final["max_output_tokens"] != float64(3) {
		t.Errorf("max_output_tokens echoed as %v", c.Final["max_output_tokens"])
	}
}

func TestStreamFail(t *testing.T) {
	call := decode(t, `{"model":"gpt-4.1","input":"hi","stream":true}`)
	var afterFail error
	_, body := serve(t, call, func(s dialect.Sink) error {
		if err := s.Text("par"); err != nil {
			return err
		}
		if err := s.Fail(&dialect.Error{Status: 529, Type: "overloaded_error", Message: "provider openai: HTTP 529 overloaded"}); err != nil {
			return err
		}
		afterFail = s.Text("more")
		return nil
	})
	c := checkStream(t, body)
	n := len(c.Events)
	if c.Events[n-2].Type != "error" || c.Events[n-1].Type != "response.failed" {
		t.Fatalf("the stream ends with %s, %s", c.Events[n-2].Type, c.Events[n-1].Type)
	}
	if e := c.Events[n-2].Data; e["code"] != "server_error" || e["message"] != "provider openai: HTTP 529 overloaded" {
		t.Errorf("error event %v", e)
	}
	if e, _ := c.Final["error"].(map[string]any); e["code"] != "server_error" || e["message"] == "" {
		t.Errorf("failed response error %v", c.Final["error"])
	}
	if afterFail == nil {
		t.Error("the sink accepted text after it failed")
	}
}

func TestStreamWritesNothingBeforeTheFirstEmit(t *testing.T) {
	call := decode(t, `{"model":"gpt-4.1","input":"hi","stream":true}`)
	resp, body := serve(t, call, func(s dialect.Sink) error {
		if err := s.Text(""); err != nil {
			return err
		}
		if err := s.EndRound(); err != nil {
			return err
		}
		if s.Started() {
			t.Error("Started before anything was emitted")
		}
		return fmt.Errorf("upstream refused")
	})
	if resp.StatusCode != 500 || !strings.Contains(string(body), `"upstream refused"`) || strings.Contains(string(body), "event:") {
		t.Errorf("status %d, body %s: want a plain JSON error", resp.StatusCode, body)
	}
}

func TestStreamEndsOnce(t *testing.T) {
	call := decode(t, `{"model":"gpt-4.1","input":"hi","stream":true}`)
	var errs []error
	_, body := serve(t, call, func(s dialect.Sink) error {
		if err := s.Finish(hooks.StopEndTurn, hooks.Usage{}); err != nil {
			return err
		}
		errs = append(errs, s.Text("x"), s.ToolCall(hooks.ToolCall{ID: "c", Name: "f"}), s.Ping(), s.EndRound(),
			s.Finish(hooks.StopEndTurn, hooks.Usage{}), s.Fail(dialect.Invalid("", "x")))
		return nil
	})
	checkStream(t, body)
	for i, err := range errs {
		if err == nil {
			t.Errorf("call %d after Finish succeeded", i)
		}
	}
}

// The streamed final response and the whole body for the same outcome are
// the same object, ids and times aside.
func TestStreamFinalMatchesEncode(t *testing.T) {
	call := decode(t, `{"model":"gpt-4.1","input":"hi","stream":true,"metadata":{"k":"v"},
		"tools":[{"type":"function","name":"f","parameters":{"type":"object","properties":{}},"strict":false}]}`)
	tc := hooks.ToolCall{ID: "call_1", Name: "f", Arguments: json.RawMessage(`{"a":1}`)}
	usage := hooks.Usage{InputTokens: 7, OutputTokens: 8}
	_, body := serve(t, call, func(s dialect.Sink) error {
		if err := s.Text("one"); err != nil {
			return err
		}
		if err := s.EndRound(); err != nil {
			return err
		}
		if err := s.Text("two"); err != nil {
			return err
		}
		if err := s.ToolCall(tc); err != nil {
			return err
		}
		return s.Finish(hooks.StopToolUse, usage)
	})
	c := checkStream(t, body)
	whole, err := New().Encode(call, &dialect.Result{Model: "gpt-4.1", Text: []string{"one", "two"}, ToolCalls: []hooks.ToolCall{tc}, Stop: hooks.StopToolUse, Usage: usage})
	if err != nil {
		t.Fatal(err)
	}
	final, _ := json.Marshal(c.Final)
	if g, w := normalize(t, final), normalize(t, whole); !equal(g, w) {
		t.Errorf("streamed final response\n%s\nwhole\n%s", final, whole)
	}
}

// A client that goes away mid-stream makes the Sink fail, so the loop
// stops instead of writing into nothing.
func TestStreamClientGone(t *testing.T) {
	call := decode(t, `{"model":"gpt-4.1","input":"hi","stream":true}`)
	gone := make(chan error, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := New().NewStream(w, call, dialect.Meta{Model: "gpt-4.1"})
		var err error
		// Bounded: a Sink that never notices would end the loop here and
		// fail below, not hang the test.
		for i := 0; i < 1_000_000 && err == nil; i++ {
			err = s.Text(strings.Repeat("x", 512))
		}
		gone <- err
	}))
	defer srv.Close()
	resp, err := http.Post(srv.URL, "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 256)
	if _, err := io.ReadFull(resp.Body, buf); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	select {
	case err := <-gone:
		if err == nil {
			t.Error("the Sink kept accepting text after the client went away")
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the handler was still writing a minute after the client went away")
	}
}
