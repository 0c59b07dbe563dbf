package anthropic_test

import (
	"strings"
	"testing"
	"time"

	"github.com/hookhost/hookhost/internal/fakeapi"
	"github.com/hookhost/hookhost/llm/anthropic"
)

// run fuzzes one parser: no panic, no key in any error, and a stream
// shows exactly the text it keeps.
func run(f *testing.F, stream bool, seeds ...string) {
	k := quote(testKey)
	for _, s := range seeds {
		f.Add(uint8(0), s)
	}
	for _, s := range fakeapi.ErrorBodies(testKey) {
		f.Add(uint8(1), s)
		f.Add(uint8(5), s)
	}
	f.Add(uint8(0), `{"type":"error","error":{"type":`+k+`,"message":`+k+`}}`)
	f.Add(uint8(0), ev("error", `"error":{"type":`+k+`,"message":`+k+`}`))
	f.Add(uint8(0), "{"+testKey)
	z := fakeapi.NewFuzz(f)
	p, err := anthropic.New(anthropic.Config{BaseURL: z.URL(), APIKey: testKey, Timeout: 10 * time.Second})
	if err != nil {
		f.Fatal(err)
	}
	z.Run(f, p, userReq("hi"), testKey, stream)
}

func FuzzComplete(f *testing.F) {
	run(f, false, msgText, msgOneCall, msgParallel, `{"id":"x"}`)
}

func FuzzStream(f *testing.F) {
	run(f, true, strings.Join(textStream, ""), strings.Join(parallelStream, ""),
		strings.Join(blockStream(
			ev("content_block_start", `"index":0,"content_block":{"type":"thinking","thinking":""}`),
			ev("content_block_delta", `"index":0,"delta":{"type":"thinking_delta","thinking":"hmm"}`),
			ev("content_block_stop", `"index":0`),
			ev("content_block_start", `"index":1,"content_block":{"text":""}`),
			textDelta("1", "shown"),
		), ""))
}
