package responses

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/dialect"
)

// FuzzDecode checks that no request body makes Decode panic, that every
// refusal is a 400 saying what is wrong, and that whatever it accepts can
// be answered.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		conversation,
		`{"model":"m","input":"hi"}`,
		`{"model":"m","input":[{"role":"user","content":[{"type":"input_text","text":"a"},{"type":"input_file","file_id":"f"}]}]}`,
		`{"model":"m","input":[{"type":"function_call","call_id":"c","name":"f","arguments":"{"},{"type":"function_call_output","call_id":"c","output":"x"}]}`,
		`{"model":"m","input":[{"type":"function_call","call_id":"a","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"a","output":"1"},{"type":"function_call","call_id":"b","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"b","output":"2"},{"type":"reasoning","id":"r"}]}`,
		`{"model":"m","input":"x","previous_response_id":"resp_1"}`,
		`{"model":"m","input":[{"type":"item_reference","id":"msg_1"}],"tools":[{"type":"mcp","server_label":"x"}]}`,
		`{"model":"m","input":[],"max_output_tokens":1e9,"temperature":-0}`,
		`[]`, `"x"`, `{}`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		call, err := New().Decode(body)
		if err != nil {
			var e *dialect.Error
			if !errors.As(err, &e) || e.Status != 400 || e.Message == "" {
				t.Fatalf("refusal %v is not a 400 with a message", err)
			}
			return
		}
		if call.Request.Model == "" || call.Pass == nil {
			t.Fatalf("accepted without a model or a Passthrough: %+v", call)
		}
		kept := call.Pass.Messages()
		for _, m := range call.Request.Messages {
			wire, _ := kept.Take(m)
			for _, w := range wire {
				if !json.Valid(w) {
					t.Fatalf("kept wire form is not JSON: %q", w)
				}
			}
		}
		if _, err := New().Encode(call, &dialect.Result{Model: call.Request.Model, Text: []string{"ok"}, Stop: hooks.StopEndTurn}); err != nil {
			t.Fatalf("cannot answer an accepted request: %v", err)
		}
	})
}
