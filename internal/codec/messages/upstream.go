package messages

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/hookhost/hookhost/internal/rawjson"
	"github.com/hookhost/hookhost/internal/upstream"
)

// The upstream side: what the anthropic provider needs to turn a message
// it received, whole or streamed, into the wire form the front sends on
// (upstream.WireResponse).

// ResponseWire is the wire form of a whole message: its top-level fields
// but content, and the content blocks as received.
func ResponseWire(data []byte) (*upstream.WireResponse, error) {
	obj, ok := rawjson.ParseObject(data)
	if !ok {
		return nil, errors.New("response is not a JSON object")
	}
	wire := &upstream.WireResponse{Fields: map[string]json.RawMessage{}}
	for _, k := range obj.Keys() {
		if k != "content" {
			wire.Fields[k] = obj.Get(k)
		}
	}
	if err := json.Unmarshal(obj.Get("content"), &wire.Message); err != nil {
		return nil, fmt.Errorf("response content is not a list of blocks: %v", err)
	}
	return wire, nil
}

// ToolInput is how a tool call's arguments are written as a tool_use
// block's input, which must be an object: arguments that are not one (a
// model of another provider, a hook or a plugin wrote them) are written
// as {"invalid_arguments": "<the text>"}, so that the model or the client
// sees what was written; no arguments at all are {}. The one thing the
// two sides write differently is the option: see RequestInput and
// AnswerInput.
type ToolInput struct {
	// answer compacts an object and writes the wrapper without HTML
	// escaping, as the front writes everything; otherwise an object is
	// kept as it came, trimmed, and the wrapper written as encoding/json
	// does, escaping <, > and &.
	answer bool
}

var (
	// RequestInput is the form a request sent upstream carries.
	RequestInput = ToolInput{}
	// AnswerInput is the form of the front's answers, whole and streamed.
	AnswerInput = ToolInput{answer: true}
)

// Of is raw as a tool_use input in the form f.
func (f ToolInput) Of(raw json.RawMessage) json.RawMessage {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 {
		return json.RawMessage("{}")
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(t, &obj) == nil && obj != nil {
		if !f.answer {
			return t
		}
		var b bytes.Buffer
		json.Compact(&b, t)
		return b.Bytes()
	}
	wrap := map[string]string{"invalid_arguments": string(raw)}
	if f.answer {
		return rawjson.MustMarshal(wrap)
	}
	w, _ := json.Marshal(wrap)
	return w
}

// WireStream collects a streamed message's wire form beside the anthropic
// provider's stream parser, which has already checked every event it
// hands on: the message has started, a block's index is that of a
// started, open block. Its methods do nothing on a nil receiver, so the
// parser need not ask.
type WireStream struct {
	message *rawjson.Object
	blocks  []*wireBlock
}

type wireBlock struct {
	obj    *rawjson.Object
	grow   map[string]*strings.Builder // text, thinking, signature
	input  strings.Builder
	inputs bool
	cites  []json.RawMessage
}

func (w *WireStream) Start(data []byte) {
	if w == nil {
		return
	}
	var e struct {
		Message json.RawMessage `json:"message"`
	}
	json.Unmarshal(data, &e)
	w.message, _ = rawjson.ParseObject(e.Message)
}

func (w *WireStream) Open(data []byte) {
	if w == nil {
		return
	}
	var e struct {
		ContentBlock json.RawMessage `json:"content_block"`
	}
	json.Unmarshal(data, &e)
	obj, _ := rawjson.ParseObject(e.ContentBlock)
	w.blocks = append(w.blocks, &wireBlock{obj: obj, grow: map[string]*strings.Builder{}})
}

func (w *WireStream) Delta(i int, raw json.RawMessage) {
	if w == nil || i < 0 || i >= len(w.blocks) {
		return
	}
	b := w.blocks[i]
	var d struct {
		Type        string          `json:"type"`
		Text        string          `json:"text"`
		Thinking    string          `json:"thinking"`
		Signature   string          `json:"signature"`
		PartialJSON string          `json:"partial_json"`
		Citation    json.RawMessage `json:"citation"`
	}
	if json.Unmarshal(raw, &d) != nil {
		return
	}
	appendTo := func(key, s string) {
		g := b.grow[key]
		if g == nil {
			g = &strings.Builder{}
			b.grow[key] = g
		}
		g.WriteString(s)
	}
	switch d.Type {
	case "text_delta":
		appendTo("text", d.Text)
	case "thinking_delta":
		appendTo("thinking", d.Thinking)
	case "signature_delta":
		appendTo("signature", d.Signature)
	case "input_json_delta":
		b.input.WriteString(d.PartialJSON)
		b.inputs = true
	case "citations_delta":
		if d.Citation != nil {
			b.cites = append(b.cites, d.Citation)
		}
	}
}

func (w *WireStream) MessageDelta(data []byte) {
	if w == nil || w.message == nil {
		return
	}
	var e struct {
		Delta json.RawMessage `json:"delta"`
		Usage json.RawMessage `json:"usage"`
	}
	json.Unmarshal(data, &e)
	d, _ := rawjson.ParseObject(e.Delta)
	for _, k := range d.Keys() {
		w.message.Set(k, d.Get(k))
	}
	if e.Usage != nil {
		u, _ := rawjson.ParseObject(w.message.Get("usage"))
		more, _ := rawjson.ParseObject(e.Usage)
		for _, k := range more.Keys() {
			u.Set(k, more.Get(k))
		}
		w.message.Set("usage", u.Bytes())
	}
}

func (w *WireStream) Result() *upstream.WireResponse {
	out := &upstream.WireResponse{Fields: map[string]json.RawMessage{}}
	if w.message != nil {
		for _, k := range w.message.Keys() {
			if k != "content" {
				out.Fields[k] = w.message.Get(k)
			}
		}
	}
	for _, b := range w.blocks {
		for _, k := range []string{"text", "thinking", "signature"} {
			g := b.grow[k]
			if g == nil {
				continue
			}
			var s string
			json.Unmarshal(b.obj.Get(k), &s)
			b.obj.Set(k, rawjson.MustMarshal(s+g.String()))
		}
		if b.inputs {
			if in := strings.TrimSpace(b.input.String()); in != "" {
				// Fragments that do not join into an object are wrapped,
				// as for a call sent back in a later request.
				b.obj.Set("input", RequestInput.Of(json.RawMessage(in)))
			}
		}
		if len(b.cites) > 0 {
			var cites []json.RawMessage
			json.Unmarshal(b.obj.Get("citations"), &cites)
			b.obj.Set("citations", rawjson.Array(append(cites, b.cites...)))
		}
		out.Message = append(out.Message, b.obj.Bytes())
	}
	return out
}
