package anthropic_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/hookhost/hookhost/internal/fakeapi"
	"github.com/hookhost/hookhost/llm"
	"github.com/hookhost/hookhost/llm/anthropic"
)

const clientKey = "sk-ant-client-31b7e2a9d4"

// A call whose context carries a key (a gateway forwarding its client's)
// sends that key as x-api-key, never the configured one.
func TestContextKeyReplacesTheConfiguredOne(t *testing.T) {
	ctx := llm.WithAPIKey(context.Background(), clientKey)
	for _, how := range []string{"complete", "stream", "forward", "forward stream"} {
		var f *fakeapi.Server
		if how == "stream" || how == "forward stream" {
			f = fakeapi.New(t, sseReply(textStream...))
		} else {
			f = fakeapi.New(t, jsonReply(200, msgText))
		}
		p := newProvider(t, f, anthropic.Config{APIKey: testKey})
		var err error
		switch how {
		case "complete":
			_, err = p.Complete(ctx, userReq("hi"))
		case "stream":
			_, err = p.Stream(ctx, userReq("hi"), nil)
		case "forward":
			_, _, err = p.Forward(ctx, userReq("hi"), nil, nil)
		case "forward stream":
			_, _, err = p.Forward(ctx, userReq("hi"), nil, func(string) {})
		}
		if err != nil {
			t.Fatalf("%s: %v", how, err)
		}
		h := f.Requests()[0].Header
		if got := h.Get("X-Api-Key"); got != clientKey {
			t.Errorf("%s: x-api-key = %q, want the context's key", how, got)
		}
		if containsKey(h, testKey) {
			t.Errorf("%s: the configured key was sent too: %v", how, h)
		}
	}
}

func containsKey(h map[string][]string, key string) bool {
	for _, vs := range h {
		for _, v := range vs {
			if v == key {
				return true
			}
		}
	}
	return false
}

// The context's key is blanked out of errors as the configured one is.
func TestContextKeyNeverInErrors(t *testing.T) {
	ctx := llm.WithAPIKey(context.Background(), clientKey)
	for shape, body := range fakeapi.ErrorBodies(clientKey) {
		for _, status := range []int{401, 529} {
			for _, stream := range []bool{false, true} {
				what := fmt.Sprintf("%s, HTTP %d, stream %t", shape, status, stream)
				reply := jsonReply(status, body, "X-Echo", clientKey)
				f := fakeapi.New(t, reply, reply)
				p := newProvider(t, f, anthropic.Config{APIKey: testKey, MaxRetries: 1})
				var err error
				if stream {
					_, _, err = p.Forward(ctx, userReq("hi"), nil, func(string) {})
				} else {
					_, err = p.Complete(ctx, userReq("hi"))
				}
				fakeapi.AssertNoKey(t, what, err, clientKey)
			}
		}
	}
}
