package anthropic_test

import (
	"context"
	"testing"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/fakeapi"
	"github.com/hookhost/hookhost/llm"
	"github.com/hookhost/hookhost/llm/anthropic"
)

// A stream reports its input tokens (cache counts included, as Usage
// counts them) from message_start, before any text is handed out.
func TestStreamReportsInputBeforeText(t *testing.T) {
	f := fakeapi.New(t, fakeapi.SSE(
		fakeapi.Named("message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":40,"cache_read_input_tokens":2,"output_tokens":1}}}`),
		fakeapi.Named("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`),
		fakeapi.Named("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}}`),
		fakeapi.Named("content_block_stop", `{"type":"content_block_stop","index":0}`),
		fakeapi.Named("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":2}}`),
		fakeapi.Named("message_stop", `{"type":"message_stop"}`),
	))
	p, err := anthropic.New(anthropic.Config{BaseURL: f.URL()})
	if err != nil {
		t.Fatal(err)
	}
	reported := 0
	ctx := llm.WithInputReport(context.Background(), func(n int) { reported = n })
	var atText []int
	resp, err := p.Stream(ctx, llm.Request{Model: "m", Messages: []hooks.Message{{Role: hooks.RoleUser, Content: "hi"}}}, func(string) {
		atText = append(atText, reported)
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(atText) != 1 || atText[0] != 42 || resp.Usage.InputTokens != 42 {
		t.Fatalf("reported %v by the first text, usage %+v; want 42 before the text", atText, resp.Usage)
	}
}
