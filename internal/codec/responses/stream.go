package responses

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/codec"
	"github.com/hookhost/hookhost/internal/dialect"
)

// NewStream returns a Sink writing call's answer to w as Responses
// server-sent events: response.created and response.in_progress when the
// first thing is emitted, each text part and client tool call as an output
// item opened before its deltas and closed after them, and one final
// response.completed (or .incomplete, or .failed) holding every item and
// the usage summed over all rounds. One response id and one increasing
// sequence_number run through the whole stream, whatever number of
// upstream rounds it spans.
func (f *Front) NewStream(w http.ResponseWriter, call *dialect.Call, meta dialect.Meta) dialect.Sink {
	fl, _ := w.(http.Flusher)
	model := meta.Model
	if model == "" && call != nil {
		model = call.Request.Model
	}
	return &stream{
		w: w, flush: fl, st: stateOf(call),
		resp: response{id: mintID("resp_"), createdAt: time.Now().Unix(), model: model, status: "in_progress"},
	}
}

type stream struct {
	w     http.ResponseWriter
	flush http.Flusher
	st    *state
	resp  response
	seq   int
	// started: the status line and response.created are out; ended: a
	// final event is, and nothing more may follow.
	started, ended bool
	// text is the open message item, if any.
	text *openText
}

type openText struct {
	id    string
	index int
	buf   strings.Builder
}

var _ dialect.Sink = (*stream)(nil)

// errEnded is returned by a Sink used after its final event.
var errEnded = errors.New("responses: the stream has already ended (host error)")

func (s *stream) Started() bool { return s.started }

// event writes one event: its type on the event line and in the data,
// with the next sequence number.
func (s *stream) event(typ string, e Event) error {
	e.Type = typ
	e.SequenceNumber = s.seq
	s.seq++
	data, err := json.Marshal(e)
	if err != nil {
		return err
	}
	if _, err := io.WriteString(s.w, "event: "+typ+"\ndata: "+string(data)+"\n\n"); err != nil {
		return err
	}
	if s.flush != nil {
		s.flush.Flush()
	}
	return nil
}

func (s *stream) start() error {
	if s.ended {
		return errEnded
	}
	if s.started {
		return nil
	}
	s.started = true
	h := s.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	s.w.WriteHeader(http.StatusOK)
	snap := s.snapshot()
	if err := s.event("response.created", Event{Response: snap}); err != nil {
		return err
	}
	return s.event("response.in_progress", Event{Response: snap})
}

// snapshot is the response as it stands.
func (s *stream) snapshot() *Response {
	return &Response{Verbatim: mustJSON(s.resp.object(s.st, nil))}
}

func (s *stream) Text(delta string) error {
	if delta == "" {
		return nil
	}
	if err := s.start(); err != nil {
		return err
	}
	if s.text == nil {
		t := &openText{id: mintID("msg_"), index: len(s.resp.output)}
		// Its place in the output is held now, so that items keep the
		// order in which they were opened.
		s.resp.output = append(s.resp.output, nil)
		s.text = t
		if err := s.event("response.output_item.added", Event{
			OutputIndex: &t.index,
			Item:        &Item{Type: "message", ID: t.id, Status: "in_progress", Role: "assistant", Content: []Part{}},
		}); err != nil {
			return err
		}
		if err := s.event("response.content_part.added", Event{
			ItemID: t.id, OutputIndex: &t.index, ContentIndex: 0, Part: textPart(""),
		}); err != nil {
			return err
		}
	}
	s.text.buf.WriteString(delta)
	return s.event("response.output_text.delta", Event{
		ItemID: s.text.id, OutputIndex: &s.text.index, ContentIndex: 0, Delta: &delta, Logprobs: noLogprobs,
	})
}

// closeText ends the open message item, if any.
func (s *stream) closeText() error {
	t := s.text
	if t == nil {
		return nil
	}
	s.text = nil
	text := t.buf.String()
	s.resp.output[t.index] = messageItem(t.id, "completed", text)
	if err := s.event("response.output_text.done", Event{
		ItemID: t.id, OutputIndex: &t.index, ContentIndex: 0, Text: &text, Logprobs: noLogprobs,
	}); err != nil {
		return err
	}
	if err := s.event("response.content_part.done", Event{
		ItemID: t.id, OutputIndex: &t.index, ContentIndex: 0, Part: textPart(text),
	}); err != nil {
		return err
	}
	return s.event("response.output_item.done", Event{OutputIndex: &t.index, Item: &Item{Verbatim: s.resp.output[t.index]}})
}

func (s *stream) EndRound() error {
	if s.ended {
		return errEnded
	}
	return s.closeText()
}

func (s *stream) ToolCall(c hooks.ToolCall) error {
	if err := s.start(); err != nil {
		return err
	}
	if err := s.closeText(); err != nil {
		return err
	}
	id, index := mintID("fc_"), len(s.resp.output)
	args := string(c.Arguments)
	s.resp.output = append(s.resp.output, callItem(id, "completed", c))
	if err := s.event("response.output_item.added", Event{
		OutputIndex: &index,
		Item:        &Item{Verbatim: callItem(id, "in_progress", hooks.ToolCall{ID: c.ID, Name: c.Name})},
	}); err != nil {
		return err
	}
	if err := s.event("response.function_call_arguments.delta", Event{
		ItemID: id, OutputIndex: &index, Delta: &args,
	}); err != nil {
		return err
	}
	if err := s.event("response.function_call_arguments.done", Event{
		ItemID: id, OutputIndex: &index, Name: c.Name, Arguments: &args,
	}); err != nil {
		return err
	}
	return s.event("response.output_item.done", Event{OutputIndex: &index, Item: &Item{Verbatim: s.resp.output[index]}})
}

func (s *stream) Ping() error {
	if err := s.start(); err != nil {
		return err
	}
	if _, err := io.WriteString(s.w, ": ping\n\n"); err != nil {
		return err
	}
	if s.flush != nil {
		s.flush.Flush()
	}
	return nil
}

func (s *stream) Finish(stop hooks.StopReason, usage hooks.Usage) error {
	if err := s.start(); err != nil {
		return err
	}
	if err := s.closeText(); err != nil {
		return err
	}
	s.ended = true
	s.resp.usage = usageJSON(usage)
	typ := "response.completed"
	s.resp.status, s.resp.incomplete = statusOf(stop)
	if s.resp.status == "incomplete" {
		typ = "response.incomplete"
	}
	snap := s.snapshot()
	s.st.finalObject(snap.Verbatim)
	return s.event(typ, Event{Response: snap})
}

// Fail sends an error event, on which the official SDKs raise the error,
// then response.failed with the response so far, so that a client reading
// events by hand also sees the stream end in failure.
func (s *stream) Fail(e *dialect.Error) error {
	if err := s.start(); err != nil {
		return err
	}
	s.ended = true
	oe := codec.ToOpenAI(e)
	code := oe.Type
	if oe.Code != nil {
		code = *oe.Code
	}
	if err := s.event("error", Event{Code: &code, Message: &oe.Message, Param: oe.Param}); err != nil {
		return err
	}
	// An open text item stays in_progress: it did not complete.
	if t := s.text; t != nil {
		s.resp.output[t.index] = messageItem(t.id, "incomplete", t.buf.String())
		s.text = nil
	}
	s.resp.status = "failed"
	s.resp.errObj = mustJSON(Error{Code: code, Message: e.Message})
	return s.event("response.failed", Event{Response: s.snapshot()})
}

// noLogprobs is the empty logprobs list of text events.
var noLogprobs = json.RawMessage(`[]`)
