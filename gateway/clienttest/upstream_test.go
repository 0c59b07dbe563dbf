package clienttest

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/hookhost/hookhost/internal/fakeapi"
)

// The three upstream protocols a fake speaks, named as client.mjs names
// the SDK call that speaks each.
const (
	chat      = fakeapi.Chat
	responses = fakeapi.Responses
	messages  = fakeapi.Messages
)

// call is one tool call a scripted round makes.
type call = fakeapi.Call

// round is one scripted upstream answer, rendered in whichever protocol the
// fake speaks, as one JSON body or, when the request asks for a stream, as
// several frames per text and per call. A Status other than 0 or 200 makes
// it an error answer with Message in the protocol's error shape.
type round = fakeapi.Turn

// upstream is a fake provider of one protocol whose script is replaced per
// test, so one hookhost serve process can stay pointed at it. It streams
// Chat Completions usage only to a client that asks for it, as OpenAI does.
type upstream struct {
	*fakeapi.Upstream
	proto string
}

func newUpstream(t testing.TB, proto string) *upstream {
	u := &upstream{Upstream: fakeapi.NewUpstream(t, proto), proto: proto}
	u.script()
	return u
}

// script makes the next requests get rounds in order and forgets what was
// received before.
func (u *upstream) script(rounds ...round) {
	u.Use(func(r fakeapi.Request) round {
		if r.N >= len(rounds) {
			return round{Status: http.StatusTeapot, Message: fmt.Sprintf("fake upstream: no round scripted for request %d", r.N+1)}
		}
		return rounds[r.N]
	})
}

// requests returns what the fake received since the last script.
func (u *upstream) requests() []fakeapi.Seen { return u.Requests() }

// responses returns the bodies the fake sent since the last script, byte
// for byte.
func (u *upstream) responses() [][]byte { return u.Sent() }

type obj = map[string]any

func mustJSON(v any) []byte { return fakeapi.Marshal(v) }
