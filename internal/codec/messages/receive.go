package messages

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/upstream"
	"github.com/hookhost/hookhost/llm"
	"github.com/hookhost/hookhost/llm/toolfmt"
)

// What a provider reads upstream: a message, whole or streamed, as the
// neutral response (and, for a gateway's call, its wire form). Errors are
// upstream.Bad's, named by the transport that seals them.

// decodeResponse reads a whole (non-streamed) response body.
func decodeResponse(data []byte, names *toolfmt.NameMap) (llm.Response, error) {
	var r Response
	if err := json.Unmarshal(data, &r); err != nil {
		return llm.Response{}, upstream.Bad("response is not a message: %v", err)
	}
	if r.Type == "error" {
		typ, msg := upstream.ParseError(data)
		return llm.Response{}, &llm.ProviderError{Type: typ, Message: msg}
	}
	if missing := upstream.Missing(data, "type", "content", "stop_reason"); len(missing) > 0 {
		return llm.Response{}, upstream.Bad("response is missing %s, which a message must have", strings.Join(missing, ", "))
	}
	if r.Type != "message" {
		return llm.Response{}, upstream.Bad("response has type %q, not \"message\"", r.Type)
	}
	return result(r, names)
}

// result maps a message, received whole or assembled from a stream, to the
// neutral response. Text blocks are joined as they are, which is also how
// their deltas were printed.
func result(r Response, names *toolfmt.NameMap) (llm.Response, error) {
	msg := hooks.Message{Role: hooks.RoleAssistant}
	var text strings.Builder
	var other string
	for i, b := range r.Content {
		switch {
		case b.Type == "":
			return llm.Response{}, upstream.Bad("content block %d has no type", i)
		case b.Type == "tool_use" && (b.ID == "" || b.Name == ""):
			return llm.Response{}, upstream.Bad("tool_use content block %d needs an id and a name (got id %q, name %q)", i, b.ID, b.Name)
		}
		switch b.Type {
		case "text":
			text.WriteString(b.Text)
		case "tool_use":
			msg.ToolCalls = append(msg.ToolCalls, hooks.ToolCall{ID: b.ID, Name: names.ID(b.Name), Arguments: ArgsOf(b.Input)})
		default:
			if !ProviderRun(b.Type) && other == "" {
				other = fmt.Sprintf("content block %d is a %s", i, b.Type)
			}
		}
		// thinking and server tool blocks have no neutral form.
	}
	// A block of a kind not known here might be a call that needs an
	// answer; the conversation must not go on upstream without it.
	if other != "" && len(msg.ToolCalls) > 0 {
		return llm.Response{}, upstream.Bad("%s, beside tool calls, which hookhost does not model: it cannot tell whether the block needs an answer in the next request, so it cannot continue the conversation after it", other)
	}
	msg.Content = text.String()
	out := llm.Response{
		Model: r.Model, Message: msg,
		Usage: hooks.Usage{
			InputTokens:  r.Usage.InputTokens + r.Usage.CacheCreationInputTokens + r.Usage.CacheReadInputTokens,
			OutputTokens: r.Usage.OutputTokens,
		},
	}
	out.StopReason = StopOf(r.StopReason)
	return out, nil
}

// decodeForward reads a whole message and its wire form: every
// top-level field but content in Fields and the content blocks as
// received in Message.
func decodeForward(data []byte, names *toolfmt.NameMap) (llm.Response, *upstream.WireResponse, error) {
	out, err := decodeResponse(data, names)
	if err != nil {
		return llm.Response{}, nil, err
	}
	wire, err := ResponseWire(data)
	if err != nil {
		return llm.Response{}, nil, upstream.Bad("%v", err)
	}
	return out, wire, nil
}

func readStream(ctx context.Context, events upstream.Events, names *toolfmt.NameMap, onText func(string)) (llm.Response, error) {
	return readEvents(ctx, events, names, onText, nil)
}

// readForwardStream is readStream that also builds the message's wire
// form: message_start's message, updated by message_delta, and the
// blocks as their deltas built them (see WireStream).
func readForwardStream(ctx context.Context, events upstream.Events, names *toolfmt.NameMap, onText func(string)) (llm.Response, *upstream.WireResponse, error) {
	w := &WireStream{}
	out, err := readEvents(ctx, events, names, onText, w)
	if err != nil {
		return llm.Response{}, nil, err
	}
	return out, w.Result(), nil
}

// readEvents parses an event stream into the answer it builds, passing text to
// onText as it arrives. A non-nil wire also collects the message's wire
// form (see Forward).
func readEvents(ctx context.Context, events upstream.Events, names *toolfmt.NameMap, onText func(string), wire *WireStream) (llm.Response, error) {
	var (
		msg    *Response
		blocks []*StreamBlock
		shown  strings.Builder
	)
	show := func(s string) {
		if s != "" {
			shown.WriteString(s)
			onText(s)
		}
	}
	for {
		evName, evData, err := events.Next()
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return llm.Response{}, upstream.Bad("stream ended before message_stop")
			}
			return llm.Response{}, err
		}
		var e Event
		if err := json.Unmarshal([]byte(evData), &e); err != nil {
			return llm.Response{}, upstream.Bad("stream event %q is not JSON: %v", evName, err)
		}
		name := evName
		if name == "" {
			name = e.Type
		}
		if msg == nil && name != "message_start" && name != "ping" && name != "error" {
			return llm.Response{}, upstream.Bad("stream event %s came before message_start", name)
		}
		switch name {
		case "ping":
		case "error":
			typ, m := upstream.ParseError([]byte(evData))
			return llm.Response{}, &llm.ProviderError{Type: typ, Message: "error in stream: " + m}
		case "message_start":
			if e.Message == nil {
				return llm.Response{}, upstream.Bad("message_start without a message")
			}
			if msg != nil {
				return llm.Response{}, upstream.Bad("second message_start in one stream")
			}
			msg = e.Message
			// Blocks come from the block events; a non-empty list here
			// would be counted twice.
			msg.Content = nil
			// Counted as Usage counts them, cache reads included.
			u := msg.Usage
			llm.ReportInput(ctx, u.InputTokens+u.CacheCreationInputTokens+u.CacheReadInputTokens)
			wire.Start([]byte(evData))
			events.Progress()
		case "content_block_start":
			if e.ContentBlock == nil {
				return llm.Response{}, upstream.Bad("content_block_start without a block")
			}
			if e.BlockIndex() != len(blocks) {
				return llm.Response{}, upstream.Bad("content_block_start for index %d, expected %d (blocks open in order)", e.BlockIndex(), len(blocks))
			}
			b := NewStreamBlock(*e.ContentBlock)
			if err := b.Check(e.BlockIndex()); err != nil {
				return llm.Response{}, upstream.Bad("%v", err)
			}
			blocks = append(blocks, b)
			wire.Open([]byte(evData))
			if first := b.Started(); first.Type == "text" {
				show(first.Text)
			}
			// A block opened empty (text "") is no news yet; a tool
			// call's name, or text already in it, is.
			var raw struct {
				ContentBlock json.RawMessage `json:"content_block"`
			}
			if json.Unmarshal([]byte(evData), &raw) == nil && Carries(raw.ContentBlock, Delta{}) {
				events.Progress()
			}
		case "content_block_delta":
			b, err := OpenBlock(blocks, e.BlockIndex())
			if err != nil {
				return llm.Response{}, upstream.Bad("content_block_delta: %v", err)
			}
			var d Delta
			if err := json.Unmarshal(e.Delta, &d); err != nil {
				return llm.Response{}, upstream.Bad("content_block_delta: %v", err)
			}
			if err := b.Apply(e.BlockIndex(), d); err != nil {
				return llm.Response{}, upstream.Bad("content_block_delta: %v", err)
			}
			wire.Delta(e.BlockIndex(), e.Delta)
			if d.Type == "text_delta" {
				show(d.Text)
			}
			if Carries(e.Delta, d) {
				events.Progress()
			}
		case "content_block_stop":
			b, err := OpenBlock(blocks, e.BlockIndex())
			if err != nil {
				return llm.Response{}, upstream.Bad("content_block_stop: %v", err)
			}
			// Closing a block adds nothing to it.
			b.Stop()
		case "message_delta":
			var d Delta
			if len(e.Delta) > 0 {
				if err := json.Unmarshal(e.Delta, &d); err != nil {
					return llm.Response{}, upstream.Bad("message_delta: %v", err)
				}
			}
			wire.MessageDelta([]byte(evData))
			if d.StopReason != nil {
				// News once; told again, it adds nothing.
				if msg.StopReason == nil {
					events.Progress()
				}
				msg.StopReason = d.StopReason
			}
			if d.StopSequence != nil {
				msg.StopSequence = d.StopSequence
			}
			if e.Usage != nil {
				// Counts here are cumulative; input counts appear only
				// when the server revises them.
				msg.Usage.OutputTokens = e.Usage.OutputTokens
				if e.Usage.InputTokens > 0 {
					msg.Usage.InputTokens = e.Usage.InputTokens
				}
				if e.Usage.CacheCreationInputTokens > 0 {
					msg.Usage.CacheCreationInputTokens = e.Usage.CacheCreationInputTokens
				}
				if e.Usage.CacheReadInputTokens > 0 {
					msg.Usage.CacheReadInputTokens = e.Usage.CacheReadInputTokens
				}
			}
		case "message_stop":
			if msg.StopReason == nil {
				return llm.Response{}, upstream.Bad("stream ended without a stop_reason")
			}
			for _, sb := range blocks {
				msg.Content = append(msg.Content, sb.Block())
			}
			out, err := result(*msg, names)
			if err == nil && out.Message.Content != shown.String() {
				return llm.Response{}, upstream.Bad("the text streamed differs from the message it builds (%d bytes shown, %d kept)", shown.Len(), len(out.Message.Content))
			}
			return out, err
		}
	}
}
