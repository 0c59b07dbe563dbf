package fakeapi

import (
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/hookhost/hookhost/internal/streamcheck"
)

// post sends body to the Upstream's path and returns the status, the
// Content-Type and the body of its answer.
func post(t *testing.T, u *Upstream, path, body string) (int, string, []byte) {
	t.Helper()
	resp, err := http.Post(u.URL()+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), b
}

// TestFakeUpstreamStreamsKeepTheRules holds the fake's streams to the
// rules the SDKs rely on, so what the gateway is tested against is what
// real providers send, and checks they carry the turn they were given.
func TestFakeUpstreamStreamsKeepTheRules(t *testing.T) {
	turn := Turn{Text: "Hello there.", Calls: []Call{{"call_a", "get_time", `{"zone":"CET"}`}, {"call_b", "get_time", `{"zone":"UTC"}`}}, In: 3, Out: 4}
	for _, proto := range []string{Chat, Responses, Messages} {
		for _, usage := range []bool{true, false} {
			if proto != Chat && !usage {
				continue
			}
			raw := Stream(proto, turn, "m", 1, usage)
			var text string
			var calls []streamcheck.Call
			var out int
			var err error
			switch proto {
			case Chat:
				var s *streamcheck.ChatStream
				s, err = streamcheck.Chat(raw, usage)
				text, calls, out = s.Text, s.Calls, s.OutputTokens()
			case Responses:
				var s *streamcheck.ResponsesStream
				s, err = streamcheck.Responses(raw)
				text, calls, out = s.Text, s.Calls, s.OutputTokens
			case Messages:
				var s *streamcheck.MessagesStream
				s, err = streamcheck.Messages(raw)
				text, calls, out = s.Text, s.Calls, s.OutputTokens
			}
			if err != nil {
				t.Errorf("%s (usage %v): the fake's stream breaks the rules: %v\n%s", proto, usage, err, raw)
			}
			wantOut := turn.Out
			if !usage {
				wantOut = 0
			}
			var want []streamcheck.Call
			for _, c := range turn.Calls {
				want = append(want, streamcheck.Call{ID: c.ID, Name: c.Name, Arguments: c.Args})
			}
			if text != turn.Text || !reflect.DeepEqual(calls, want) || out != wantOut {
				t.Errorf("%s (usage %v): the fake streamed text %q, calls %+v, %d tokens out for %+v", proto, usage, text, calls, out, turn)
			}
		}
	}
}

// TestUpstreamAnswersAndKeeps: each request reaches the Answer with its
// number and fields, is kept with what was sent for it, and Use starts
// afresh; a wrong path, a body that is not JSON and an error turn are
// answered in the protocol's error shape.
func TestUpstreamAnswersAndKeeps(t *testing.T) {
	for _, proto := range []string{Chat, Responses, Messages} {
		t.Run(proto, func(t *testing.T) {
			u := NewUpstream(t, proto)
			if status, _, _ := post(t, u, Path(proto), `{}`); status != http.StatusTeapot {
				t.Errorf("with no Answer: status %d, want 418", status)
			}
			var mu sync.Mutex
			var got []Request
			u.Use(func(r Request) Turn {
				mu.Lock()
				defer mu.Unlock()
				got = append(got, r)
				if r.N == 1 {
					return Turn{Status: http.StatusTooManyRequests, ErrorType: "rate_limit_error", Message: "slow down"}
				}
				return Turn{Text: "hi", In: 2, Out: 1}
			})
			status, ctype, body := post(t, u, Path(proto), `{"model":"m1"}`)
			if status != http.StatusOK || ctype != "application/json" || !strings.Contains(string(body), `"m1"`) || !strings.Contains(string(body), "fake1") {
				t.Errorf("first answer: %d %s %s", status, ctype, body)
			}
			status, _, body = post(t, u, Path(proto), `{"model":"m2","stream":true}`)
			var e struct {
				Error struct{ Type, Message string }
			}
			json.Unmarshal(body, &e)
			if status != http.StatusTooManyRequests || e.Error.Type != "rate_limit_error" || e.Error.Message != "slow down" {
				t.Errorf("error turn: %d %s", status, body)
			}
			if status, _, _ := post(t, u, "/v2/elsewhere", `{}`); status != http.StatusNotFound {
				t.Errorf("wrong path: status %d, want 404", status)
			}
			if status, _, _ := post(t, u, Path(proto), `not json`); status != http.StatusBadRequest {
				t.Errorf("a body that is not JSON: status %d, want 400", status)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(got) != 2 || got[0].N != 0 || got[0].Model != "m1" || got[0].Stream || got[1].N != 1 || got[1].Model != "m2" || !got[1].Stream {
				t.Errorf("the Answer got %+v", got)
			}
			reqs, sent := u.Requests(), u.Sent()
			if len(reqs) != 4 || len(sent) != 4 || reqs[2].Path != "/v2/elsewhere" || string(reqs[3].Body) != "not json" {
				t.Errorf("kept %d requests and %d answers: %+v", len(reqs), len(sent), reqs)
			}
			u.Use(nil)
			if len(u.Requests()) != 0 || len(u.Sent()) != 0 {
				t.Error("Use kept what came before")
			}
		})
	}
}

// TestAlwaysStreamUsage: a Chat Completions stream carries usage when the
// request asks for it, and always once AlwaysStreamUsage is set.
func TestAlwaysStreamUsage(t *testing.T) {
	u := NewUpstream(t, Chat)
	u.Use(func(Request) Turn { return Turn{Text: "hi", In: 5, Out: 6} })
	for _, c := range []struct {
		always, asked, want bool
	}{{false, false, false}, {false, true, true}, {true, false, true}} {
		if c.always {
			u.AlwaysStreamUsage()
		}
		body := `{"stream":true}`
		if c.asked {
			body = `{"stream":true,"stream_options":{"include_usage":true}}`
		}
		_, ctype, raw := post(t, u, Path(Chat), body)
		s, err := streamcheck.Chat(raw, c.want)
		if err != nil || ctype != "text/event-stream" {
			t.Errorf("%+v: %s stream breaks the rules: %v\n%s", c, ctype, err, raw)
			continue
		}
		if got := s.OutputTokens(); (got == 6) != c.want {
			t.Errorf("%+v: usage %v", c, s.Usage)
		}
	}
}

// TestConversationOfEachProtocol reads the same conversation from a
// request body of each protocol.
func TestConversationOfEachProtocol(t *testing.T) {
	conversation := func(resultRole string) []Item {
		return []Item{
			{Kind: "text", Role: "system", Content: "be brief"},
			{Kind: "text", Role: "user", Content: "weather?"},
			{Kind: "call", Role: "assistant", ID: "c1", Name: "weather", Content: `{"city":"Paris"}`},
			{Kind: "result", Role: resultRole, ID: "c1", Content: "sunny"},
		}
	}
	bodies := map[string]string{
		Chat: `{"messages":[{"role":"system","content":"be brief"},{"role":"user","content":[{"type":"text","text":"weather?"}]},
			{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"weather","arguments":"{\"city\":\"Paris\"}"}}]},
			{"role":"tool","tool_call_id":"c1","content":"sunny"}],
			"tools":[{"type":"function","function":{"name":"weather"}},{"type":"function","function":{}}]}`,
		Responses: `{"input":[{"role":"system","content":"be brief"},{"type":"message","role":"user","content":[{"type":"input_text","text":"weather?"}]},
			{"type":"function_call","call_id":"c1","name":"weather","arguments":"{\"city\":\"Paris\"}"},
			{"type":"function_call_output","call_id":"c1","output":"sunny"}],
			"tools":[{"type":"function","name":"weather"},{"type":"function"}]}`,
		Messages: `{"messages":[{"role":"system","content":"be brief"},{"role":"user","content":"weather?"},
			{"role":"assistant","content":[{"type":"tool_use","id":"c1","name":"weather","input":{"city":"Paris"}}]},
			{"role":"user","content":[{"type":"tool_result","tool_use_id":"c1","content":[{"type":"text","text":"sunny"}]}]}],
			"tools":[{"name":"weather"},{}]}`,
	}
	for proto, body := range bodies {
		resultRole := "tool" // Anthropic's tool results come in a user message
		if proto == Messages {
			resultRole = "user"
		}
		want := conversation(resultRole)
		got, err := Conversation(proto, []byte(body))
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: conversation %v (error %v), want %v", proto, got, err, want)
		}
		if tools, err := Tools(proto, []byte(body)); err != nil || !reflect.DeepEqual(tools, []string{"weather", ""}) {
			t.Errorf("%s: tools %q (error %v)", proto, tools, err)
		}
		if _, err := Conversation(proto, []byte(`{"messages":7,"input":7}`)); err == nil {
			t.Errorf("%s: no error for a body of the wrong shape", proto)
		}
	}
}
