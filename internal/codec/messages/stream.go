package messages

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/dialect"
	"github.com/hookhost/hookhost/internal/rawjson"
)

// sink writes one streamed message as Anthropic's named events. It keeps
// the invariants the SDKs' accumulators rely on: message_start first and
// once, blocks numbered in the order they are opened, every delta inside
// an open block, and nothing after message_stop or an error.
type sink struct {
	w     http.ResponseWriter
	rc    *http.ResponseController
	model string
	input int
	id    string

	started bool
	ended   bool
	next    int  // index of the next block
	text    bool // a text block is open, at index next-1
	err     error
}

var _ dialect.Sink = (*sink)(nil)

var errEnded = errors.New("messages stream: the message has already ended")

// event writes one frame, named after its data's type, and flushes it.
func (s *sink) event(typ string, data json.RawMessage) error {
	if s.err != nil {
		return s.err
	}
	var b bytes.Buffer
	b.WriteString("event: ")
	b.WriteString(typ)
	b.WriteString("\ndata: ")
	b.Write(data)
	b.WriteString("\n\n")
	if _, err := s.w.Write(b.Bytes()); err != nil {
		s.err = err
		return err
	}
	if err := s.rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		s.err = err
		return err
	}
	return nil
}

func (s *sink) head() {
	h := s.w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	h.Del("Content-Length")
	s.w.WriteHeader(http.StatusOK)
	s.started = true
}

var _ dialect.InputAnnouncer = (*sink)(nil)

// InputTokens makes message_start carry n, the first round's real input
// tokens, when it has not been written yet.
func (s *sink) InputTokens(n int) {
	if !s.started && n > 0 {
		s.input = n
	}
}

// begin writes the headers and message_start, once.
func (s *sink) begin() error {
	if s.ended {
		return errEnded
	}
	if s.started {
		return s.err
	}
	s.head()
	return s.event("message_start", envelope(Event{
		Type: "message_start",
		Message: &Response{
			ID: s.id, Type: "message", Role: "assistant", Model: s.model,
			Content: []ResponseBlock{}, Usage: Usage{InputTokens: s.input, OutputTokens: 1},
		},
	}))
}

func (s *sink) closeText() error {
	if !s.text {
		return nil
	}
	s.text = false
	return s.event("content_block_stop", envelope(Event{Type: "content_block_stop", Index: new(s.next - 1)}))
}

// Text appends to the open text block, opening one first if needed.
func (s *sink) Text(delta string) error {
	if delta == "" {
		if s.ended {
			return errEnded
		}
		return s.err
	}
	if err := s.begin(); err != nil {
		return err
	}
	if !s.text {
		if err := s.event("content_block_start", envelope(Event{
			Type: "content_block_start", Index: new(s.next),
			ContentBlock: &ResponseBlock{Verbatim: rawjson.MustMarshal(Block{Type: "text", Text: new(string)})},
		})); err != nil {
			return err
		}
		s.text = true
		s.next++
	}
	return s.event("content_block_delta", envelope(Event{
		Type: "content_block_delta", Index: new(s.next - 1),
		Delta: rawjson.MustMarshal(Delta{Type: "text_delta", Text: delta}),
	}))
}

// EndRound closes the open text block, so the next round's text starts a
// block of its own.
func (s *sink) EndRound() error {
	if s.ended {
		return errEnded
	}
	return s.closeText()
}

// ToolCall writes a whole tool_use block: its start with an empty input,
// the arguments as one input_json_delta, and its stop.
func (s *sink) ToolCall(c hooks.ToolCall) error {
	if err := s.begin(); err != nil {
		return err
	}
	if err := s.closeText(); err != nil {
		return err
	}
	i := s.next
	s.next++
	if err := s.event("content_block_start", envelope(Event{
		Type: "content_block_start", Index: &i,
		ContentBlock: &ResponseBlock{Verbatim: rawjson.MustMarshal(Block{Type: "tool_use", ID: c.ID, Name: c.Name, Input: json.RawMessage("{}")})},
	})); err != nil {
		return err
	}
	if err := s.event("content_block_delta", envelope(Event{
		Type: "content_block_delta", Index: &i,
		Delta: rawjson.MustMarshal(Delta{Type: "input_json_delta", PartialJSON: string(AnswerInput.Of(c.Arguments))}),
	})); err != nil {
		return err
	}
	return s.event("content_block_stop", envelope(Event{Type: "content_block_stop", Index: &i}))
}

// Ping sends Anthropic's ping event, starting the message first: the SDKs
// drop anything before message_start.
func (s *sink) Ping() error {
	if err := s.begin(); err != nil {
		return err
	}
	return s.event("ping", envelope(Event{Type: "ping"}))
}

// Finish closes the open block and ends the message with the usage summed
// over every round (Anthropic's message_delta usage is cumulative).
func (s *sink) Finish(stop hooks.StopReason, u hooks.Usage) error {
	if err := s.begin(); err != nil {
		return err
	}
	if err := s.closeText(); err != nil {
		return err
	}
	s.ended = true
	if err := s.event("message_delta", envelope(Event{
		Type:  "message_delta",
		Delta: rawjson.MustMarshal(Delta{StopReason: new(stopReason(stop))}),
		Usage: &Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens},
	})); err != nil {
		return err
	}
	return s.event("message_stop", envelope(Event{Type: "message_stop"}))
}

// Fail ends the stream with an error event. Before anything was written
// it still answers with a stream, because the client asked for one; the
// caller that wants a plain HTTP error checks Started first.
func (s *sink) Fail(e *dialect.Error) error {
	if s.ended {
		return errEnded
	}
	if !s.started {
		s.head()
	}
	s.ended = true
	return s.event("error", json.RawMessage(New().ErrorBody(e)))
}

// envelope is e as the front writes it: without HTML escaping, as its
// ordered objects were.
func envelope(e Event) json.RawMessage { return rawjson.MustMarshal(e) }

// Started reports whether anything has been written.
func (s *sink) Started() bool { return s.started }
