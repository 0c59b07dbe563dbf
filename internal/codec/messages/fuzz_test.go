package messages_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/codec/messages"
	"github.com/hookhost/hookhost/internal/dialect"
	"github.com/hookhost/hookhost/llm"
	"github.com/hookhost/hookhost/llm/anthropic"
)

// FuzzDecode checks that no request body panics the front, that every
// refusal is a 400 naming what is wrong, and that whatever it accepts is a
// complete neutral request whose answer encodes and streams validly.
func FuzzDecode(f *testing.F) {
	for _, seed := range []string{
		richBody,
		`{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"hi"}]}`,
		`{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":[{"type":"text","text":"x"}]}]}]}`,
		`{"model":"m","max_tokens":1,"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"b","input":{}}]}],"tools":[{"name":"b","input_schema":{}}]}`,
		`{"model":"m","max_tokens":1e3,"messages":[],"system":[{"type":"text"}]}`,
		`{"model":"","max_tokens":"1"}`, `[]`, `null`, `{`, `"x"`,
	} {
		f.Add([]byte(seed))
	}
	front := messages.New()
	// The upstream refuses a body that is not a JSON object, so a
	// forwarded request that kept some wire form badly shows as an error.
	reply := `{"id":"msg_u","type":"message","role":"assistant","model":"m","content":[],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}`
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var m map[string]json.RawMessage
		if json.Unmarshal(body, &m) != nil {
			w.WriteHeader(http.StatusTeapot)
			io.WriteString(w, `{"type":"error","error":{"type":"invalid_request_error","message":"forwarded body is not a JSON object"}}`)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, reply)
	}))
	f.Cleanup(upstream.Close)
	p, err := anthropic.New(anthropic.Config{BaseURL: upstream.URL})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		call, err := front.Decode(body)
		if err != nil {
			var e *dialect.Error
			if !errors.As(err, &e) || e.Status != 400 || e.Message == "" {
				t.Fatalf("refusal %v is not a 400 with a message", err)
			}
			if !json.Valid(front.ErrorBody(e)) {
				t.Fatalf("error body is not JSON: %s", front.ErrorBody(e))
			}
			return
		}
		r := call.Request
		if r.Model == "" || r.MaxTokens < 1 || len(r.Messages) == 0 {
			t.Fatalf("accepted an incomplete request: %+v", r)
		}
		if _, _, err := p.Forward(context.Background(), r, call.Pass, nil); err != nil {
			var pe *llm.ProviderError
			// The provider refuses tool names it cannot send; anything
			// else is a broken forward.
			if !errors.As(err, &pe) || pe.StatusCode != 0 {
				t.Fatalf("forwarding an accepted request failed: %v", err)
			}
		}
		var calls []hooks.ToolCall
		for _, m := range r.Messages {
			calls = append(calls, m.ToolCalls...)
		}
		res := &dialect.Result{Model: r.Model, Text: []string{r.System}, ToolCalls: calls, Stop: hooks.StopToolUse}
		out, err := front.Encode(call, res)
		if err != nil || !json.Valid(out) {
			t.Fatalf("encode: %v %s", err, out)
		}
		rec := httptest.NewRecorder()
		s := front.NewStream(rec, call, dialect.Meta{Model: r.Model})
		s.Text(r.System)
		for _, c := range calls {
			s.ToolCall(c)
		}
		s.Finish(hooks.StopToolUse, hooks.Usage{})
		checkStream(t, rec.Body.String())
	})
}
