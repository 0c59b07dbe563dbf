package openai_test

import (
	"strings"
	"testing"
	"time"

	"github.com/hookhost/hookhost/internal/fakeapi"
	"github.com/hookhost/hookhost/llm/openai"
)

// fuzzProvider is a provider for one fuzz target, with the key configured
// so that its absence from errors can be checked.
func fuzzProvider(f *testing.F, z *fakeapi.Fuzz, api string) *openai.Provider {
	p, err := openai.New(openai.Config{API: api, BaseURL: z.URL() + "/v1", APIKey: testKey, Timeout: 10 * time.Second})
	if err != nil {
		f.Fatal(err)
	}
	return p
}

func addSeeds(f *testing.F, stream bool, seeds ...string) {
	k := quote(testKey)
	for _, s := range seeds {
		f.Add(uint8(0), s)
	}
	for _, s := range fakeapi.ErrorBodies(testKey) {
		f.Add(uint8(1), s)
		f.Add(uint8(3), s)
	}
	if stream {
		f.Add(uint8(0), data(`{"error":{"message":`+k+`,"type":`+k+`}}`))
		f.Add(uint8(0), named("error", `{"type":"error","code":`+k+`,"message":"x"}`))
	}
	f.Add(uint8(0), `{"error":{"message":`+k+`}}`)
	f.Add(uint8(0), "")
	f.Add(uint8(0), "{"+testKey)
}

// run fuzzes one parser: no panic, no key in any error, and a stream
// shows exactly the text it keeps.
func run(f *testing.F, api string, stream bool) {
	z := fakeapi.NewFuzz(f)
	z.Run(f, fuzzProvider(f, z, api), hiReq, testKey, stream)
}

func FuzzChatComplete(f *testing.F) {
	addSeeds(f, false,
		`{"id":"c","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"hi"}}],"usage":{"prompt_tokens":1}}`,
		`{"id":"c","choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":null,"tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"{}"}}]}}]}`,
		`{"id":"c","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","refusal":"no"}}]}`)
	run(f, openai.APIChat, false)
}

func FuzzChatStream(f *testing.F) {
	addSeeds(f, true,
		data(`{"id":"c","choices":[{"index":0,"delta":{"role":"assistant","content":"It "}}]}`)+
			data(`{"id":"c","choices":[{"index":0,"delta":{"content":"is."},"finish_reason":"stop"}]}`)+
			data(`{"id":"c","choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2}}`)+data(`[DONE]`),
		data(`{"id":"c","choices":[{"index":0,"delta":{"refusal":"no"}}]}`)+
			data(`{"id":"c","choices":[{"index":0,"delta":{"content":"yes"},"finish_reason":"stop"}]}`)+data(`[DONE]`),
		data(`{"id":"c","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","type":"function","function":{"name":"f","arguments":"{\"x\""}}]}}]}`)+
			data(`{"id":"c","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":":1}"}}]},"finish_reason":"tool_calls"}]}`)+data(`[DONE]`))
	run(f, openai.APIChat, true)
}

func FuzzResponsesComplete(f *testing.F) {
	addSeeds(f, false, respText, respParallel,
		`{"id":"r","status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"output":[]}`,
		`{"id":"r","status":"failed","output":[],"error":{"code":"x","message":"y"}}`)
	run(f, openai.APIResponses, false)
}

func FuzzResponsesStream(f *testing.F) {
	addSeeds(f, true, strings.Join(respTextStream, ""), strings.Join(respParallelStream, ""),
		strings.Join(respTextStream[:5], "")+respEvent("response.completed", `"response":{"id":"x","status":"completed","output":[]}`))
	run(f, openai.APIResponses, true)
}
