package openai_test

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/fakeapi"
	"github.com/hookhost/hookhost/llm"
	"github.com/hookhost/hookhost/llm/openai"
)

var hiReq = llm.Request{Model: "gpt-4.1-mini", Messages: []hooks.Message{{Role: hooks.RoleUser, Content: "hi"}}}

// bounded runs a stream under a context far longer than any limit under
// test, so that a stream the provider fails to end makes the test fail
// instead of hanging.
func bounded(t *testing.T, p fakeapi.Provider) error {
	return fakeapi.Bounded(t, p, hiReq)
}

// firstEvent is a first event of each API, after which the server only
// keeps the connection alive.
var firstEvent = map[string]string{
	openai.APIChat:      data(`{"id":"c1","model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"It "}}]}`),
	openai.APIResponses: named("response.created", `{"type":"response.created","response":{"id":"r1","status":"in_progress","output":[]}}`),
}

// textEvent is an event carrying text, repeated to keep a stream busy.
var textEvent = map[string]string{
	openai.APIChat:      data(`{"id":"c1","model":"m","choices":[{"index":0,"delta":{"content":"la "}}]}`),
	openai.APIResponses: named("response.output_text.delta", `{"type":"response.output_text.delta","output_index":0,"delta":"la "}`),
}

func TestKeepalivesEndAtIdleTimeout(t *testing.T) {
	for _, api := range []string{openai.APIChat, openai.APIResponses} {
		t.Run(api, func(t *testing.T) {
			f := newFake(t, fakeapi.Endless(20*time.Millisecond, firstEvent[api], fakeapi.Keepalive))
			err := bounded(t, newProvider(t, f, openai.Config{API: api, Timeout: time.Second}))
			var pe *llm.ProviderError
			if !errors.As(err, &pe) || !strings.Contains(err.Error(), "no event") || !strings.Contains(err.Error(), "llm.timeout (1s)") {
				t.Errorf("err = %v, want an idle timeout naming llm.timeout", err)
			}
		})
	}
}

// Chunks and events that add nothing to the answer are events but not
// progress: a server sending only them is as idle as one sending only
// comments.
func TestEmptyEventsEndAtIdleTimeout(t *testing.T) {
	for _, tc := range []struct{ api, name, frame string }{
		{openai.APIChat, "no choices", data(`{"id":"c1","model":"m","choices":[],"usage":null}`)},
		{openai.APIChat, "empty delta", data(`{"id":"c1","model":"m","choices":[{"index":0,"delta":{}}]}`)},
		{openai.APIChat, "empty content", data(`{"id":"c1","model":"m","choices":[{"index":0,"delta":{"content":""},"finish_reason":null}]}`)},
		{openai.APIChat, "role again", data(`{"id":"c1","model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":null}}]}`)},
		{openai.APIChat, "empty arguments", data(`{"id":"c1","model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":""}}]}}]}`)},
		{openai.APIResponses, "in progress", named("response.in_progress", `{"type":"response.in_progress","response":{"id":"r1","status":"in_progress","output":[]}}`)},
		{openai.APIResponses, "empty delta", named("response.output_text.delta", `{"type":"response.output_text.delta","output_index":0,"delta":""}`)},
		{openai.APIResponses, "keepalive event", named("keepalive", `{"type":"keepalive","sequence_number":3}`)},
	} {
		t.Run(tc.api+" "+tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFake(t, fakeapi.Endless(20*time.Millisecond, firstEvent[tc.api], tc.frame))
			err := bounded(t, newProvider(t, f, openai.Config{API: tc.api, Timeout: time.Second}))
			var pe *llm.ProviderError
			if !errors.As(err, &pe) || !strings.Contains(err.Error(), "no event") || !strings.Contains(err.Error(), "llm.timeout (1s)") {
				t.Errorf("err = %v, want an idle timeout naming llm.timeout", err)
			}
		})
	}
}

func TestEventsStopAtCallTimeout(t *testing.T) {
	for _, api := range []string{openai.APIChat, openai.APIResponses} {
		t.Run(api, func(t *testing.T) {
			f := newFake(t, fakeapi.Endless(20*time.Millisecond, firstEvent[api], textEvent[api]))
			p := newProvider(t, f, openai.Config{API: api, Timeout: 5 * time.Second, CallTimeout: 400 * time.Millisecond})
			err := bounded(t, p)
			if err == nil || !strings.Contains(err.Error(), "llm.call_timeout (400ms)") {
				t.Errorf("err = %v, want the call deadline naming llm.call_timeout", err)
			}
		})
	}
}

func TestStreamOverResponseCap(t *testing.T) {
	// Comments cost a server nothing to send, so the response cap must
	// count them as well as events, or a fast flood of them is read forever.
	f := newFake(t, func(w http.ResponseWriter, r fakeapi.Seen) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, firstEvent[openai.APIChat])
		chunk := []byte(strings.Repeat(": keepalive\n", 1<<12))
		for sent := 0; sent < 80<<20; sent += len(chunk) {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
	err := bounded(t, newProvider(t, f, openai.Config{}))
	var pe *llm.ProviderError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "larger than the 64 MiB cap on one response") {
		t.Errorf("err = %v, want the response cap named", err)
	}
}
