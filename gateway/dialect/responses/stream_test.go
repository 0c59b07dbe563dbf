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

	"github.com/hookhost/hookhost/gateway/dialect"
	"github.com/hookhost/hookhost/hooks"
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

type event struct {
	Type string
	Data map[string]any
	Raw  string
}

// checked is what a valid stream showed.
type checked struct {
	events []event
	final  map[string]any // the response of the last event
	text   string         // every text delta, in order
	pings  int
}

// checkStream fails the test unless raw is a Responses stream that the
// official SDKs' accumulators accept: named events whose type matches,
// sequence_number 0, 1, 2, …; response.created then response.in_progress
// first; every item opened (output_item.added, at the next output index,
// with an id) before a part, delta or done refers to it, and a message's
// content part opened before its deltas; done events repeating what the
// deltas built; one response id throughout; and a final response.completed,
// .incomplete or .failed, last, holding exactly the items the stream
// finished.
func checkStream(t *testing.T, raw []byte) checked {
	t.Helper()
	var c checked
	frames := strings.Split(string(raw), "\n\n")
	if last := frames[len(frames)-1]; last != "" {
		t.Fatalf("the stream does not end with a blank line: %q", last)
	}
	for _, fr := range frames[:len(frames)-1] {
		var name, data string
		comment := true
		for _, line := range strings.Split(fr, "\n") {
			switch {
			case strings.HasPrefix(line, ":"):
			case strings.HasPrefix(line, "event: "):
				name, comment = strings.TrimPrefix(line, "event: "), false
			case strings.HasPrefix(line, "data: "):
				data, comment = strings.TrimPrefix(line, "data: "), false
			default:
				t.Fatalf("unexpected line %q in frame %q", line, fr)
			}
		}
		if comment {
			c.pings++
			continue
		}
		var d map[string]any
		if err := json.Unmarshal([]byte(data), &d); err != nil {
			t.Fatalf("data is not a JSON object: %q", data)
		}
		if name == "" || d["type"] != name {
			t.Fatalf("event line %q, data type %v", name, d["type"])
		}
		c.events = append(c.events, event{Type: name, Data: d, Raw: data})
	}
	if len(c.events) < 3 {
		t.Fatalf("only %d events", len(c.events))
	}
	if c.events[0].Type != "response.created" || c.events[1].Type != "response.in_progress" {
		t.Fatalf("the stream starts with %s, %s", c.events[0].Type, c.events[1].Type)
	}
	type item struct {
		id, typ  string
		done     bool
		parts    int
		text     string
		args     string
		finished any
	}
	var items []*item
	callIDs := map[string]bool{}
	respID := ""
	getItem := func(e event) *item {
		i, ok := e.Data["output_index"].(float64)
		if !ok || int(i) < 0 || int(i) >= len(items) {
			t.Fatalf("%s refers to output %v, which is not open: %s", e.Type, e.Data["output_index"], e.Raw)
		}
		it := items[int(i)]
		if id, ok := e.Data["item_id"]; ok && id != it.id {
			t.Fatalf("%s has item_id %v, the item at its index is %s", e.Type, id, it.id)
		}
		if it.done && e.Type != "response.output_item.done" {
			t.Fatalf("%s after the item was done: %s", e.Type, e.Raw)
		}
		return it
	}
	for n, e := range c.events {
		if seq, ok := e.Data["sequence_number"].(float64); !ok || int(seq) != n {
			t.Fatalf("event %d (%s) has sequence_number %v", n, e.Type, e.Data["sequence_number"])
		}
		if r, ok := e.Data["response"].(map[string]any); ok {
			if respID == "" {
				respID, _ = r["id"].(string)
			}
			if r["id"] != respID || respID == "" {
				t.Fatalf("%s has response id %v, the stream began with %q", e.Type, r["id"], respID)
			}
			if r["object"] != "response" || r["model"] != "gpt-4.1" {
				t.Fatalf("%s response has object %v, model %v", e.Type, r["object"], r["model"])
			}
		}
		terminal := false
		switch e.Type {
		case "response.created", "response.in_progress":
			r := e.Data["response"].(map[string]any)
			if n > 1 || r["status"] != "in_progress" || len(r["output"].([]any)) != 0 {
				t.Fatalf("%s at %d with status %v and output %v", e.Type, n, r["status"], r["output"])
			}
		case "response.output_item.added":
			if int(e.Data["output_index"].(float64)) != len(items) {
				t.Fatalf("item added at output_index %v, want %d", e.Data["output_index"], len(items))
			}
			it := e.Data["item"].(map[string]any)
			id, _ := it["id"].(string)
			if id == "" || it["status"] != "in_progress" {
				t.Fatalf("item added with id %q, status %v", id, it["status"])
			}
			typ := it["type"].(string)
			if typ == "function_call" {
				cid, _ := it["call_id"].(string)
				if cid == "" || callIDs[cid] || it["arguments"] != "" || it["name"] == "" {
					t.Fatalf("function_call added with call_id %q (seen before: %v), arguments %v, name %v", cid, callIDs[cid], it["arguments"], it["name"])
				}
				callIDs[cid] = true
			}
			items = append(items, &item{id: id, typ: typ})
		case "response.content_part.added":
			it := getItem(e)
			if it.typ != "message" || int(e.Data["content_index"].(float64)) != it.parts {
				t.Fatalf("content part %v added to a %s with %d parts", e.Data["content_index"], it.typ, it.parts)
			}
			it.parts++
		case "response.output_text.delta":
			it := getItem(e)
			if it.typ != "message" || int(e.Data["content_index"].(float64)) >= it.parts {
				t.Fatalf("text delta before its content part: %s", e.Raw)
			}
			d := e.Data["delta"].(string)
			it.text += d
			c.text += d
		case "response.output_text.done":
			if it := getItem(e); e.Data["text"] != it.text {
				t.Fatalf("output_text.done text %q, deltas built %q", e.Data["text"], it.text)
			}
		case "response.content_part.done":
			if it := getItem(e); e.Data["part"].(map[string]any)["text"] != it.text {
				t.Fatalf("content_part.done %v, deltas built %q", e.Data["part"], it.text)
			}
		case "response.function_call_arguments.delta":
			it := getItem(e)
			if it.typ != "function_call" {
				t.Fatalf("arguments delta on a %s", it.typ)
			}
			it.args += e.Data["delta"].(string)
		case "response.function_call_arguments.done":
			if it := getItem(e); e.Data["arguments"] != it.args {
				t.Fatalf("arguments done %q, deltas built %q", e.Data["arguments"], it.args)
			}
		case "response.output_item.done":
			it := getItem(e)
			if it.done {
				t.Fatalf("item %s done twice", it.id)
			}
			fin := e.Data["item"].(map[string]any)
			if fin["id"] != it.id || fin["type"] != it.typ {
				t.Fatalf("item done as %v %v, added as %s %s", fin["type"], fin["id"], it.typ, it.id)
			}
			if it.typ == "function_call" && fin["arguments"] != it.args {
				t.Fatalf("call done with arguments %v, deltas built %q", fin["arguments"], it.args)
			}
			it.done, it.finished = true, fin
		case "error":
			if n+1 >= len(c.events) || c.events[n+1].Type != "response.failed" {
				t.Fatalf("an error event not followed by response.failed")
			}
		case "response.completed", "response.incomplete", "response.failed":
			terminal = true
			r := e.Data["response"].(map[string]any)
			if want := strings.TrimPrefix(e.Type, "response."); r["status"] != want {
				t.Fatalf("%s with status %v", e.Type, r["status"])
			}
			out := r["output"].([]any)
			if len(out) != len(items) {
				t.Fatalf("%s holds %d items, the stream opened %d", e.Type, len(out), len(items))
			}
			for i, it := range items {
				if e.Type != "response.failed" && !it.done {
					t.Fatalf("%s while item %s is still open", e.Type, it.id)
				}
				if it.done && !equal(out[i], it.finished) {
					t.Fatalf("%s item %d = %v, it was done as %v", e.Type, i, out[i], it.finished)
				}
			}
			c.final = r
		default:
			t.Fatalf("unexpected event %s", e.Type)
		}
		if terminal != (n == len(c.events)-1) {
			t.Fatalf("event %d of %d is %s", n, len(c.events), e.Type)
		}
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
	if c.text != "Hello" || c.events[len(c.events)-1].Type != "response.completed" {
		t.Errorf("text %q, last event %s", c.text, c.events[len(c.events)-1].Type)
	}
	if in, out, total := usageOf(t, c.final); in != 10 || out != 2 || total != 12 {
		t.Errorf("usage %v %v %v", in, out, total)
	}
	if c.final["instructions"] != "be brief" {
		t.Errorf("instructions echoed as %v", c.final["instructions"])
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
	if c.pings != 2 || c.text != "Let me check. Burn is low; checking the budget." {
		t.Errorf("pings %d, text %q", c.pings, c.text)
	}
	out := c.final["output"].([]any)
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
	if in, outTok, _ := usageOf(t, c.final); in != 50 || outTok != 20 {
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
	if c.pings != 1 || c.text != "ok" {
		t.Errorf("pings %d, text %q", c.pings, c.text)
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
	if c.events[len(c.events)-1].Type != "response.incomplete" {
		t.Fatalf("last event %s", c.events[len(c.events)-1].Type)
	}
	if d, _ := c.final["incomplete_details"].(map[string]any); d["reason"] != "max_output_tokens" {
		t.Errorf("incomplete_details %v", c.final["incomplete_details"])
	}
	if c.final["max_output_tokens"] != float64(3) {
		t.Errorf("max_output_tokens echoed as %v", c.final["max_output_tokens"])
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
	n := len(c.events)
	if c.events[n-2].Type != "error" || c.events[n-1].Type != "response.failed" {
		t.Fatalf("the stream ends with %s, %s", c.events[n-2].Type, c.events[n-1].Type)
	}
	if e := c.events[n-2].Data; e["code"] != "server_error" || e["message"] != "provider openai: HTTP 529 overloaded" {
		t.Errorf("error event %v", e)
	}
	if e, _ := c.final["error"].(map[string]any); e["code"] != "server_error" || e["message"] == "" {
		t.Errorf("failed response error %v", c.final["error"])
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
	final, _ := json.Marshal(c.final)
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
