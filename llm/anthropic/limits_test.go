package anthropic_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hookhost/hookhost/internal/fakeapi"
	"github.com/hookhost/hookhost/llm"
	"github.com/hookhost/hookhost/llm/anthropic"
)

// bounded runs a stream under a context far longer than any limit under
// test, so that a stream the provider fails to end makes the test fail
// instead of hanging.
func bounded(t *testing.T, p fakeapi.Provider) error {
	return fakeapi.Bounded(t, p, userReq("hi"))
}

func TestKeepalivesEndAtIdleTimeout(t *testing.T) {
	f := fakeapi.New(t, fakeapi.Endless(20*time.Millisecond, textStream[0], fakeapi.Keepalive))
	err := bounded(t, newProvider(t, f, anthropic.Config{Timeout: time.Second}))
	var pe *llm.ProviderError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "no event") || !strings.Contains(err.Error(), "llm.timeout (1s)") {
		t.Errorf("err = %v, want an idle timeout naming llm.timeout", err)
	}
}

// Pings, and deltas that add nothing, are events but not progress: a
// server sending only them is as idle as one sending only comments.
func TestEventsWithoutContentEndAtIdleTimeout(t *testing.T) {
	for name, frame := range map[string]string{
		"ping":       ev("ping", ""),
		"empty text": ev("content_block_delta", `"index":0,"delta":{"type":"text_delta","text":""}`),
		// The stop reason is news once; told again, it adds nothing.
		"stop reason again": ev("message_delta", `"delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":7}`),
		"usage alone":       ev("message_delta", `"delta":{},"usage":{"output_tokens":7}`),
	} {
		t.Run(name, func(t *testing.T) {
			f := fakeapi.New(t, fakeapi.Endless(20*time.Millisecond, textStream[0], textStream[1], frame))
			err := bounded(t, newProvider(t, f, anthropic.Config{Timeout: time.Second}))
			var pe *llm.ProviderError
			if !errors.As(err, &pe) || !strings.Contains(err.Error(), "no event") || !strings.Contains(err.Error(), "llm.timeout (1s)") {
				t.Errorf("err = %v, want an idle timeout naming llm.timeout", err)
			}
		})
	}
}

// Empty blocks opened and closed one after another add nothing either.
func TestEmptyBlocksEndAtIdleTimeout(t *testing.T) {
	f := fakeapi.New(t, func(w http.ResponseWriter, r fakeapi.Seen) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, textStream[0])
		giveUp := time.After(time.Minute)
		for i := 0; ; i++ {
			select {
			case <-r.Done:
				return
			case <-giveUp:
				return
			case <-time.After(20 * time.Millisecond):
			}
			n := fmt.Sprint(i)
			io.WriteString(w, ev("content_block_start", `"index":`+n+`,"content_block":{"type":"text","text":"","citations":[]}`)+ev("content_block_stop", `"index":`+n))
			w.(http.Flusher).Flush()
		}
	})
	err := bounded(t, newProvider(t, f, anthropic.Config{Timeout: time.Second}))
	var pe *llm.ProviderError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "no event") || !strings.Contains(err.Error(), "llm.timeout (1s)") {
		t.Errorf("err = %v, want an idle timeout naming llm.timeout", err)
	}
}

func TestEventsStopAtCallTimeout(t *testing.T) {
	delta := ev("content_block_delta", `"index":0,"delta":{"type":"text_delta","text":"la "}`)
	f := fakeapi.New(t, fakeapi.Endless(20*time.Millisecond, textStream[0], textStream[1], delta))
	p := newProvider(t, f, anthropic.Config{Timeout: 5 * time.Second, CallTimeout: 400 * time.Millisecond})
	err := bounded(t, p)
	if err == nil || !strings.Contains(err.Error(), "llm.call_timeout (400ms)") {
		t.Errorf("err = %v, want the call deadline naming llm.call_timeout", err)
	}
}

func TestEventOverCap(t *testing.T) {
	// data: lines that never end their event all belong to one event, so
	// only the event cap stops the buffer holding them from growing.
	f := fakeapi.New(t, func(w http.ResponseWriter, r fakeapi.Seen) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, textStream[0])
		chunk := []byte(strings.Repeat("data: {\"type\":\"ping\"}\n", 1<<10))
		for sent := 0; sent < 48<<20; sent += len(chunk) {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := newProvider(t, f, anthropic.Config{}).Stream(ctx, userReq("hi"), nil)
	var pe *llm.ProviderError
	if ctx.Err() != nil || !errors.As(err, &pe) || !strings.Contains(err.Error(), "8 MiB cap on one server-sent event") {
		t.Errorf("err = %v, want the event cap named", err)
	}
}
