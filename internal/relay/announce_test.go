package relay

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/hookhost/hookhost/internal/dialect"
	"github.com/hookhost/hookhost/llm"
)

// announcing is a recorded stream that takes the real input count, as
// Anthropic's does for message_start.
type announcing struct{ recSink }

var _ dialect.InputAnnouncer = (*announcing)(nil)

func (s *announcing) InputTokens(n int) { s.add(fmt.Sprintf("input:%d", n)) }

// early reports its input count during the call, before any text, as an
// Anthropic stream does from its message_start.
type early struct {
	scripted
	input int
}

func (e *early) Stream(ctx context.Context, req llm.Request, onText func(string)) (llm.Response, error) {
	llm.ReportInput(ctx, e.input)
	return e.scripted.Stream(ctx, req, onText)
}

// The first round's input count reaches the stream before its first text
// when the upstream announces it early, and when the round ends otherwise;
// later rounds announce nothing.
func TestFirstRoundAnnouncesItsInput(t *testing.T) {
	t.Run("announced during the round", func(t *testing.T) {
		up := &early{input: 42, scripted: scripted{steps: []step{{resp: text("", 42, 3).resp, chunks: []string{"hi"}}}}}
		sink := &announcing{}
		call := userCall("hello")
		call.Stream = true
		runOK(t, New(Config{Provider: up}), testFront{llm.ProtocolMessages}, call, sink)
		want := []string{"input:42", "text:hi", "input:42", "finish:end_turn:42/3"}
		if ev := sink.list(); !reflect.DeepEqual(ev, want) {
			t.Errorf("stream = %q, want %q", ev, want)
		}
	})
	t.Run("a round of calls, then text", func(t *testing.T) {
		bus := newBus(t, kora(`{"usd":3}`))
		up := &scripted{steps: []step{
			calls("", 7, 1, tc("k1", "kora__burn", `{}`)),
			{resp: text("", 9, 2).resp, chunks: []string{"done"}},
		}}
		sink := &announcing{}
		call := userCall("burn")
		call.Stream = true
		runOK(t, New(Config{Provider: up, Bus: bus}), testFront{llm.ProtocolMessages}, call, sink)
		want := []string{"input:7", "end", "text:done", "finish:end_turn:16/3"}
		if ev := sink.list(); !reflect.DeepEqual(ev, want) {
			t.Errorf("stream = %q, want %q", ev, want)
		}
	})
}
