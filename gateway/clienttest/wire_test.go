package clienttest

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/hookhost/hookhost/internal/streamcheck"
)

// visible is what a client ends up with, from a stream or a body: the
// answer's text, the calls it must run, why it stopped and the usage.
type visible struct {
	ID      string
	Text    string
	Calls   []call
	Stop    string
	In, Out int
}

// visibleOf reads the same facts from a whole response object: a
// non-streamed body, or what an SDK helper accumulated.
func visibleOf(t testing.TB, sdk string, body []byte) visible {
	t.Helper()
	var v visible
	switch sdk {
	case chat:
		var r struct {
			ID      string `json:"id"`
			Choices []struct {
				FinishReason string `json:"finish_reason"`
				Message      struct {
					Content   *string `json:"content"`
					ToolCalls []struct {
						ID       string `json:"id"`
						Function struct{ Name, Arguments string }
					} `json:"tool_calls"`
				} `json:"message"`
			} `json:"choices"`
			Usage *struct {
				P int `json:"prompt_tokens"`
				C int `json:"completion_tokens"`
			} `json:"usage"`
		}
		mustDecode(t, body, &r)
		v.ID = r.ID
		if len(r.Choices) != 1 {
			t.Fatalf("chat completion with %d choices, want 1: %s", len(r.Choices), body)
		}
		c := r.Choices[0]
		if c.Message.Content != nil {
			v.Text = *c.Message.Content
		}
		for _, tc := range c.Message.ToolCalls {
			v.Calls = append(v.Calls, call{ID: tc.ID, Name: tc.Function.Name, Args: tc.Function.Arguments})
		}
		v.Stop = c.FinishReason
		if r.Usage != nil {
			v.In, v.Out = r.Usage.P, r.Usage.C
		}
	case responses:
		var r struct {
			ID     string `json:"id"`
			Status string `json:"status"`
			Output []struct {
				Type    string `json:"type"`
				Content []struct {
					Type string `json:"type"`
					Text string `json:"text"`
				} `json:"content"`
				CallID    string `json:"call_id"`
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"output"`
			Usage *struct {
				In  int `json:"input_tokens"`
				Out int `json:"output_tokens"`
			} `json:"usage"`
		}
		mustDecode(t, body, &r)
		v.ID, v.Stop = r.ID, r.Status
		for _, it := range r.Output {
			switch it.Type {
			case "message":
				for _, p := range it.Content {
					if p.Type == "output_text" {
						v.Text += p.Text
					}
				}
			case "function_call":
				v.Calls = append(v.Calls, call{ID: it.CallID, Name: it.Name, Args: it.Arguments})
			}
		}
		if r.Usage != nil {
			v.In, v.Out = r.Usage.In, r.Usage.Out
		}
	case messages:
		var r struct {
			ID      string `json:"id"`
			Content []struct {
				Type  string          `json:"type"`
				Text  string          `json:"text"`
				ID    string          `json:"id"`
				Name  string          `json:"name"`
				Input json.RawMessage `json:"input"`
			} `json:"content"`
			StopReason string `json:"stop_reason"`
			Usage      struct {
				In  int `json:"input_tokens"`
				Out int `json:"output_tokens"`
			} `json:"usage"`
		}
		mustDecode(t, body, &r)
		v.ID, v.Stop = r.ID, r.StopReason
		for _, b := range r.Content {
			switch b.Type {
			case "text":
				v.Text += b.Text
			case "tool_use":
				v.Calls = append(v.Calls, call{ID: b.ID, Name: b.Name, Args: string(b.Input)})
			}
		}
		v.In, v.Out = r.Usage.In, r.Usage.Out
	default:
		t.Fatalf("visibleOf: unknown protocol %q", sdk)
	}
	return v
}

func mustDecode(t testing.TB, body []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(body, v); err != nil {
		t.Fatalf("not the JSON expected: %v\n%s", err, body)
	}
}

// checkStream holds a raw stream of protocol sdk to the rules the SDKs'
// accumulators rely on (streamcheck) and returns what it carried. The
// streams here are answers the scenarios expect to succeed, so an in-band
// error fails the test too.
func checkStream(t testing.TB, sdk string, raw []byte, includeUsage bool) visible {
	t.Helper()
	var v visible
	var err error
	var failed map[string]any
	switch sdk {
	case chat:
		var s *streamcheck.ChatStream
		s, err = streamcheck.Chat(raw, includeUsage)
		v = visible{ID: s.ID, Text: s.Text, Calls: calls(s.Calls), Stop: s.Finish, In: s.InputTokens(), Out: s.OutputTokens()}
		failed = s.Error
	case responses:
		var s *streamcheck.ResponsesStream
		s, err = streamcheck.Responses(raw)
		v = visible{ID: s.ID, Text: s.Text, Calls: calls(s.Calls), Stop: s.Status, In: s.InputTokens, Out: s.OutputTokens}
		if s.Status == "failed" {
			failed = s.Final
		}
	case messages:
		var s *streamcheck.MessagesStream
		s, err = streamcheck.Messages(raw)
		v = visible{ID: s.ID, Text: s.Text, Calls: calls(s.Calls), Stop: s.StopReason, In: s.InputTokens, Out: s.OutputTokens}
		failed = s.Error
	default:
		panic(fmt.Sprintf("checkStream: unknown protocol %q", sdk))
	}
	if err != nil {
		t.Errorf("%v\n%s", err, raw)
	}
	if failed != nil {
		t.Errorf("%s stream: in-stream error: %v", sdk, failed)
	}
	return v
}

func calls(cs []streamcheck.Call) []call {
	var out []call
	for _, c := range cs {
		out = append(out, call{ID: c.ID, Name: c.Name, Args: c.Arguments})
	}
	return out
}

// sameJSON reports whether two JSON texts hold the same value.
func sameJSON(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return a == b
	}
	return reflect.DeepEqual(x, y)
}
