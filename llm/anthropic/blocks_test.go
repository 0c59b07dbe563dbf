package anthropic_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/hookhost/hookhost/internal/fakeapi"
	"github.com/hookhost/hookhost/llm"
	"github.com/hookhost/hookhost/llm/anthropic"
)

// blockStream is a whole stream around the given block events.
func blockStream(blocks ...string) []string {
	out := []string{textStream[0]}
	out = append(out, blocks...)
	return append(out,
		ev("message_delta", `"delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":7}`),
		ev("message_stop", ""))
}

func textDelta(i, text string) string {
	return ev("content_block_delta", `"index":`+i+`,"delta":{"type":"text_delta","text":`+quote(text)+`}`)
}

func TestMalformedBlocksAreErrors(t *testing.T) {
	start := func(i, block string) string {
		return ev("content_block_start", `"index":`+i+`,"content_block":`+block)
	}
	stop := func(i string) string { return ev("content_block_stop", `"index":`+i) }
	jsonDelta := ev("content_block_delta", `"index":0,"delta":{"type":"input_json_delta","partial_json":"{}"}`)
	tests := []struct {
		name   string
		blocks []string
		want   string
	}{
		{"block without a type", []string{start("0", `{"text":""}`), textDelta("0", "shown"), stop("0")}, "no type"},
		{"text delta for a block of unknown type", []string{start("0", `{"type":"bogus"}`), textDelta("0", "shown"), stop("0")}, "text_delta"},
		{"input_json delta for a block of unknown type", []string{start("0", `{"type":"bogus"}`), jsonDelta, stop("0")}, "input_json_delta"},
		{"text delta for a tool_use block", []string{start("0", `{"type":"tool_use","id":"t","name":"get_weather","input":{}}`), textDelta("0", "shown"), stop("0")}, "text_delta"},
		{"input_json delta for a text block", []string{start("0", `{"type":"text","text":""}`), jsonDelta, stop("0")}, "input_json_delta"},
		{"delta for a block of unknown type after it stopped", []string{start("0", `{"type":"bogus"}`), stop("0"),
			ev("content_block_delta", `"index":0,"delta":{"type":"bogus_delta"}`)}, "stopped"},
		{"delta for a block never started", []string{textDelta("0", "shown")}, "not started"},
		{"delta after the block stopped", []string{start("0", `{"type":"text","text":""}`), stop("0"), textDelta("0", "late")}, "stopped"},
		{"blocks out of order", []string{start("1", `{"type":"text","text":""}`), textDelta("1", "x"), stop("1")}, "index 1"},
		{"stop for a block never started", []string{stop("0")}, "not started"},
		{"tool_use without id or name", []string{start("0", `{"type":"tool_use","input":{}}`), stop("0")}, "id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := fakeapi.New(t, sseReply(blockStream(tt.blocks...)...))
			var shown strings.Builder
			_, err := newProvider(t, f, anthropic.Config{}).Stream(context.Background(), userReq("hi"), func(s string) { shown.WriteString(s) })
			var pe *llm.ProviderError
			if !errors.As(err, &pe) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want a ProviderError naming %s", err, tt.want)
			}
			if shown.Len() > 0 {
				t.Errorf("%q was shown from a stream that failed before any valid text", shown.String())
			}
		})
	}
}

// Blocks that have no neutral form are accepted and kept out of the text,
// and what was shown is exactly what was kept.
func TestShownIsKept(t *testing.T) {
	frames := blockStream(
		ev("content_block_start", `"index":0,"content_block":{"type":"thinking","thinking":""}`),
		ev("content_block_delta", `"index":0,"delta":{"type":"thinking_delta","thinking":"hmm"}`),
		ev("content_block_delta", `"index":0,"delta":{"type":"signature_delta","signature":"sig"}`),
		ev("content_block_stop", `"index":0`),
		ev("content_block_start", `"index":1,"content_block":{"type":"text","text":"It "}`),
		textDelta("1", "is sunny."),
		ev("content_block_stop", `"index":1`),
	)
	f := fakeapi.New(t, sseReply(frames...))
	var shown strings.Builder
	resp, err := newProvider(t, f, anthropic.Config{}).Stream(context.Background(), userReq("hi"), func(s string) { shown.WriteString(s) })
	if err != nil {
		t.Fatal(err)
	}
	if shown.String() != "It is sunny." || resp.Message.Content != shown.String() {
		t.Errorf("shown %q, kept %q; want both %q", shown.String(), resp.Message.Content, "It is sunny.")
	}
}

// Anthropic adds block and delta types over time. One hookhost does not
// know is passed over as the whole-response path passes it over: none of
// it is shown and none of it kept, and the stream goes on.
func TestUnknownBlocksAndDeltasAreOpaque(t *testing.T) {
	frames := blockStream(
		ev("content_block_start", `"index":0,"content_block":{"type":"fancy_new_block","text":"hidden","data":{"x":1}}`),
		ev("content_block_delta", `"index":0,"delta":{"type":"fancy_delta","text":"hidden too"}`),
		ev("content_block_delta", `"index":0,"delta":{"type":"thinking_delta","thinking":"not this block's kind, and not shown"}`),
		ev("content_block_stop", `"index":0`),
		ev("content_block_start", `"index":1,"content_block":{"type":"text","text":"It "}`),
		ev("content_block_delta", `"index":1,"delta":{"type":"shout","text":"NOT SHOWN"}`),
		ev("content_block_delta", `"index":1,"delta":{"text":"nor this"}`),
		textDelta("1", "is sunny."),
		ev("content_block_stop", `"index":1`),
	)
	f := fakeapi.New(t, sseReply(frames...))
	var shown strings.Builder
	resp, err := newProvider(t, f, anthropic.Config{}).Stream(context.Background(), userReq("hi"), func(s string) { shown.WriteString(s) })
	if err != nil {
		t.Fatalf("err = %v, want unknown blocks and deltas passed over", err)
	}
	if shown.String() != "It is sunny." || resp.Message.Content != shown.String() {
		t.Errorf("shown %q, kept %q; want both %q", shown.String(), resp.Message.Content, "It is sunny.")
	}
	if len(resp.Message.ToolCalls) != 0 {
		t.Errorf("tool calls %+v from blocks that have none", resp.Message.ToolCalls)
	}
}
