package anthropic_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/hookhost/hookhost/internal/fakeapi"
	"github.com/hookhost/hookhost/llm/anthropic"
)

func TestKeyNeverInErrors(t *testing.T) {
	for shape, body := range fakeapi.ErrorBodies(testKey) {
		for _, status := range []int{400, 401, 429, 500, 529} {
			for _, stream := range []bool{false, true} {
				what := fmt.Sprintf("%s, HTTP %d, stream %t", shape, status, stream)
				reply := jsonReply(status, body, "X-Echo", testKey)
				// Retried statuses fail three times: the error is the one
				// given up on.
				f := fakeapi.New(t, reply, reply, reply)
				p := newProvider(t, f, anthropic.Config{APIKey: testKey, MaxRetries: 2})
				var err error
				if stream {
					_, err = p.Stream(context.Background(), userReq("hi"), nil)
				} else {
					_, err = p.Complete(context.Background(), userReq("hi"))
				}
				fakeapi.AssertNoKey(t, what, err, testKey)
			}
		}
	}
}

func TestKeyNeverInStreamErrors(t *testing.T) {
	k := quote(testKey)
	for name, frames := range map[string][]string{
		"error event":            {textStream[0], ev("error", `"error":{"type":`+k+`,"message":`+k+`}`)},
		"event that is not JSON": {textStream[0], "event: ping\ndata: {" + testKey + "\n\n"},
	} {
		f := fakeapi.New(t, sseReply(frames...))
		_, err := newProvider(t, f, anthropic.Config{APIKey: testKey}).Stream(context.Background(), userReq("hi"), nil)
		fakeapi.AssertNoKey(t, name, err, testKey)
	}
	f := fakeapi.New(t, jsonReply(200, `{"type":"error","error":{"type":`+k+`,"message":`+k+`}}`))
	_, err := newProvider(t, f, anthropic.Config{APIKey: testKey}).Complete(context.Background(), userReq("hi"))
	fakeapi.AssertNoKey(t, "error object with status 200", err, testKey)
}
