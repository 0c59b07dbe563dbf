package openai_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/hookhost/hookhost/internal/fakeapi"
	"github.com/hookhost/hookhost/llm/openai"
)

func TestKeyNeverInErrors(t *testing.T) {
	for shape, body := range fakeapi.ErrorBodies(testKey) {
		for _, status := range []int{400, 401, 429, 500, 503} {
			for _, api := range []string{openai.APIChat, openai.APIResponses} {
				for _, stream := range []bool{false, true} {
					what := fmt.Sprintf("%s, HTTP %d, %s, stream %t", shape, status, api, stream)
					reply := jsonReply(status, body, "X-Echo", testKey)
					// Retried statuses fail three times: the error is the
					// one given up on.
					f := newFake(t, reply, reply, reply)
					p := newProvider(t, f, openai.Config{API: api, APIKey: testKey, MaxRetries: 2})
					var err error
					if stream {
						_, err = p.Stream(context.Background(), hiReq, nil)
					} else {
						_, err = p.Complete(context.Background(), hiReq)
					}
					fakeapi.AssertNoKey(t, what, err, testKey)
				}
			}
		}
	}
}

func TestKeyNeverInStreamErrors(t *testing.T) {
	k := quote(testKey)
	cases := map[string]struct {
		api    string
		frames []string
	}{
		"chat error chunk": {openai.APIChat, []string{firstEvent[openai.APIChat],
			data(`{"error":{"message":` + k + `,"type":` + k + `,"code":` + k + `,"param":` + k + `}}`)}},
		"responses error event": {openai.APIResponses, []string{firstEvent[openai.APIResponses],
			named("error", `{"type":"error","code":`+k+`,"message":`+k+`,"param":`+k+`}`)}},
		"responses failed": {openai.APIResponses, []string{firstEvent[openai.APIResponses],
			named("response.failed", `{"type":"response.failed","response":{"id":"r1","status":"failed","output":[],"error":{"code":`+k+`,"message":`+k+`}}}`)}},
		"chat chunk that is not JSON": {openai.APIChat, []string{firstEvent[openai.APIChat], data(`{"x":` + testKey + `}`)}},
	}
	for name, c := range cases {
		f := newFake(t, sseReply(c.frames...))
		_, err := newProvider(t, f, openai.Config{API: c.api, APIKey: testKey}).Stream(context.Background(), hiReq, nil)
		fakeapi.AssertNoKey(t, name, err, testKey)
	}
	f := newFake(t, jsonReply(200, `{"id":"r1","status":"failed","output":[],"error":{"code":`+k+`,"message":`+k+`}}`))
	_, err := newProvider(t, f, openai.Config{API: openai.APIResponses, APIKey: testKey}).Complete(context.Background(), hiReq)
	fakeapi.AssertNoKey(t, "responses failed, whole", err, testKey)
}
