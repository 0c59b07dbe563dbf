package agenttest

import (
	"net/http"
	"testing"

	"github.com/hookhost/hookhost/internal/fakeapi"
)

// The three upstream protocols a fake speaks.
const (
	chat      = fakeapi.Chat
	responses = fakeapi.Responses
	messages  = fakeapi.Messages
)

// paths are the endpoints of each protocol as the provider serves them.
var paths = map[string]string{
	chat:      fakeapi.Path(chat),
	responses: fakeapi.Path(responses),
	messages:  fakeapi.Path(messages),
}

// call is one tool call the fake model makes.
type call struct{ ID, Name, Args string }

// reply is one answer of the fake model: a text, or tool calls.
type reply struct {
	Text  string
	Calls []call
}

// seen is one request the fake received.
type seen = fakeapi.Seen

// model decides the fake's reply to one request from the conversation in
// it and the tools it offers. An agent CLI makes requests of its own
// (titles, summaries, warm-ups) besides the turns a scenario drives, so a
// reply is chosen by what the request holds, never by how many came before.
type model func(conv []item, tools []string) reply

// upstream is a fake provider of one protocol that answers every request
// with what its model decides, as one JSON body or as a stream when asked.
// A Chat Completions stream always ends with usage, asked for or not: some
// OpenAI-compatible servers always send it, and a client must cope.
type upstream struct {
	*fakeapi.Upstream
	proto string
}

func newUpstream(t testing.TB, proto string) *upstream {
	u := &upstream{Upstream: fakeapi.NewUpstream(t, proto), proto: proto}
	u.AlwaysStreamUsage()
	return u
}

// baseURL is the API root as hookhost's [llm] base_url wants it.
func (u *upstream) baseURL() string { return u.BaseURL() }

// Usage the fake reports for every reply.
const tokensIn, tokensOut = 11, 7

// use makes the next requests answered by m and forgets what was received
// before.
func (u *upstream) use(m model) {
	u.Use(func(r fakeapi.Request) fakeapi.Turn {
		fail := func(err error) fakeapi.Turn {
			return fakeapi.Turn{Status: http.StatusBadRequest, Message: "fake upstream: " + err.Error()}
		}
		conv, err := conversationOf(u.proto, r.Body)
		if err != nil {
			return fail(err)
		}
		tools, err := toolsOf(u.proto, r.Body)
		if err != nil {
			return fail(err)
		}
		if m == nil {
			return fakeapi.Turn{Status: http.StatusTeapot, Message: "fake upstream: no model set"}
		}
		rp := m(conv, tools)
		turn := fakeapi.Turn{Text: rp.Text, In: tokensIn, Out: tokensOut}
		for _, c := range rp.Calls {
			turn.Calls = append(turn.Calls, fakeapi.Call(c))
		}
		return turn
	})
}

// requests returns what the fake received since the last use.
func (u *upstream) requests() []seen { return u.Requests() }

type obj = map[string]any

func mustJSON(v any) []byte { return fakeapi.Marshal(v) }
