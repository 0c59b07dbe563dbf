package chat

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/codec"
	"github.com/hookhost/hookhost/internal/dialect"
	"github.com/hookhost/hookhost/internal/rawjson"
)

// chunkObject is every chunk's object.
var chunkObject = json.RawMessage(`"chat.completion.chunk"`)

// errEnded is returned by a Sink's methods after Finish or Fail.
var errEnded = errors.New("chat stream: the stream has already ended")

// stream writes one completion as chunks. Every chunk has the same id,
// created and model, since openai-node starts a new completion when the
// id changes; the first chunk with content carries the assistant role;
// tool calls are numbered from 0 across every round; with include_usage
// every chunk says "usage": null but the one before [DONE], which has no
// choices and the usage of the whole request.
type stream struct {
	w            http.ResponseWriter
	rc           *http.ResponseController
	id           string
	created      int64
	model        string
	includeUsage bool

	started bool // headers written
	opened  bool // role chunk written
	ended   bool
	calls   int
}

var _ dialect.Sink = (*stream)(nil)

func newStream(w http.ResponseWriter, call *dialect.Call, meta dialect.Meta) *stream {
	s := &stream{w: w, rc: http.NewResponseController(w), id: dialect.NewID("chatcmpl-"), created: time.Now().Unix(), model: meta.Model}
	if call != nil {
		if st, ok := call.State.(*state); ok && st != nil {
			s.includeUsage = st.includeUsage
		}
		if s.model == "" {
			s.model = call.Request.Model
		}
	}
	return s
}

// start writes the status line and headers, once.
func (s *stream) start() {
	if s.started {
		return
	}
	s.started = true
	h := s.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	h.Del("Content-Length")
	h.Del("Content-Encoding")
	s.w.WriteHeader(http.StatusOK)
}

// write sends one event and flushes it.
func (s *stream) write(frame []byte) error {
	s.start()
	if _, err := s.w.Write(frame); err != nil {
		return err
	}
	if err := s.rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return err
	}
	return nil
}

func (s *stream) chunk(choices []ChunkChoice, usage *Usage) error {
	c := Chunk{ID: s.id, Object: chunkObject, Created: rawjson.MustMarshal(s.created), Model: s.model, Choices: choices, Usage: usage}
	b := rawjson.MustMarshal(c)
	if s.includeUsage && usage == nil {
		// "usage": null on every chunk but the last, as OpenAI sends it:
		// openai-python overwrites the usage it read with every chunk's.
		b = append(b[:len(b)-1], []byte(`,"usage":null}`)...)
	}
	var f bytes.Buffer
	f.WriteString("data: ")
	f.Write(b)
	f.WriteString("\n\n")
	return s.write(f.Bytes())
}

// choice sends one chunk for the completion's one choice, after the
// chunk that opens it.
func (s *stream) choice(d Delta, finish *string) error {
	if s.ended {
		return errEnded
	}
	if !s.opened {
		s.opened = true
		empty := ""
		if err := s.chunk([]ChunkChoice{{Delta: Delta{Role: "assistant", Content: &empty}}}, nil); err != nil {
			return err
		}
	}
	return s.chunk([]ChunkChoice{{Delta: d, FinishReason: finish}}, nil)
}

// Text sends a content delta. An empty one sends nothing.
func (s *stream) Text(text string) error {
	if s.ended {
		return errEnded
	}
	if text == "" {
		return nil
	}
	return s.choice(Delta{Content: &text}, nil)
}

// EndRound shows nothing: Chat Completions has one content, which the
// next round continues.
func (s *stream) EndRound() error {
	if s.ended {
		return errEnded
	}
	return nil
}

// ToolCall sends a whole call as the first and only delta of its index.
func (s *stream) ToolCall(c hooks.ToolCall) error {
	if s.ended {
		return errEnded
	}
	index := s.calls
	d := Delta{ToolCalls: []DeltaToolCall{{Index: &index, ToolCall: wireCalls([]hooks.ToolCall{c})[0]}}}
	s.calls++
	return s.choice(d, nil)
}

// Ping writes a comment line, which every client ignores.
func (s *stream) Ping() error {
	if s.ended {
		return errEnded
	}
	return s.write([]byte(": ping\n\n"))
}

// Finish sends the finish reason, the usage chunk when the client asked
// for one, and [DONE].
func (s *stream) Finish(stop hooks.StopReason, usage hooks.Usage) error {
	if s.ended {
		return errEnded
	}
	reason := finishReason(stop)
	if err := s.choice(Delta{}, &reason); err != nil {
		s.ended = true
		return err
	}
	s.ended = true
	if s.includeUsage {
		u := usageOf(usage)
		if err := s.chunk([]ChunkChoice{}, &u); err != nil {
			return err
		}
	}
	return s.write([]byte("data: [DONE]\n\n"))
}

// Fail sends OpenAI's in-stream error event and ends the stream; no
// [DONE] follows, so no client mistakes the answer for a whole one.
func (s *stream) Fail(e *dialect.Error) error {
	if s.ended {
		return errEnded
	}
	s.ended = true
	if e == nil {
		e = &dialect.Error{Status: http.StatusInternalServerError, Type: "api_error", Message: "the gateway failed"}
	}
	body := rawjson.MustMarshal(struct {
		Error codec.OpenAIError `json:"error"`
	}{codec.ToOpenAI(e)})
	var f bytes.Buffer
	f.WriteString("data: ")
	f.Write(body)
	f.WriteString("\n\n")
	return s.write(f.Bytes())
}

// Started reports whether the status line has been written.
func (s *stream) Started() bool { return s.started }
