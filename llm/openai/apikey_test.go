package openai_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/hookhost/hookhost/internal/fakeapi"
	"github.com/hookhost/hookhost/llm"
	"github.com/hookhost/hookhost/llm/openai"
)

const clientKey = "sk-client-77e1d0c5b3"

// A call whose context carries a key (a gateway forwarding its client's)
// sends that key, never the configured one, by every way of calling.
func TestContextKeyReplacesTheConfiguredOne(t *testing.T) {
	ctx := llm.WithAPIKey(context.Background(), clientKey)
	for _, api := range []string{openai.APIChat, openai.APIResponses} {
		reply, stream := jsonReply(200, chatText), sseReply(firstEvent[api], data(`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`), "data: [DONE]\n\n")
		if api == openai.APIResponses {
			reply = jsonReply(200, respText)
			stream = sseReply(respTextStream...)
		}
		for _, how := range []string{"complete", "stream", "forward", "forward stream"} {
			f := newFake(t, reply)
			if how == "stream" || how == "forward stream" {
				f = newFake(t, stream)
			}
			p := newProvider(t, f, openai.Config{API: api, APIKey: testKey})
			var err error
			switch how {
			case "complete":
				_, err = p.Complete(ctx, hiReq)
			case "stream":
				_, err = p.Stream(ctx, hiReq, nil)
			case "forward":
				_, _, err = p.Forward(ctx, hiReq, nil, nil)
			case "forward stream":
				_, _, err = p.Forward(ctx, hiReq, nil, func(string) {})
			}
			if err != nil {
				t.Fatalf("%s %s: %v", api, how, err)
			}
			if got := f.Requests()[0].Header.Get("Authorization"); got != "Bearer "+clientKey {
				t.Errorf("%s %s: Authorization = %q, want the context's key", api, how, got)
			}
		}
	}
	// Without one, the configured key is sent.
	f := newFake(t, jsonReply(200, chatText))
	if _, err := newProvider(t, f, openai.Config{APIKey: testKey}).Complete(context.Background(), hiReq); err != nil {
		t.Fatal(err)
	}
	if got := f.Requests()[0].Header.Get("Authorization"); got != "Bearer "+testKey {
		t.Errorf("Authorization = %q, want the configured key", got)
	}
}

// The context's key is blanked out of errors as the configured one is.
func TestContextKeyNeverInErrors(t *testing.T) {
	ctx := llm.WithAPIKey(context.Background(), clientKey)
	for shape, body := range fakeapi.ErrorBodies(clientKey) {
		for _, status := range []int{401, 500} {
			for _, api := range []string{openai.APIChat, openai.APIResponses} {
				for _, stream := range []bool{false, true} {
					what := fmt.Sprintf("%s, HTTP %d, %s, stream %t", shape, status, api, stream)
					reply := jsonReply(status, body, "X-Echo", clientKey)
					f := newFake(t, reply, reply)
					p := newProvider(t, f, openai.Config{API: api, APIKey: testKey, MaxRetries: 1})
					var err error
					if stream {
						_, _, err = p.Forward(ctx, hiReq, nil, func(string) {})
					} else {
						_, err = p.Complete(ctx, hiReq)
					}
					fakeapi.AssertNoKey(t, what, err, clientKey)
				}
			}
		}
	}
}
