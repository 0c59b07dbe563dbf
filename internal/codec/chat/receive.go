package chat

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/codec"
	"github.com/hookhost/hookhost/internal/rawjson"
	"github.com/hookhost/hookhost/internal/upstream"
	"github.com/hookhost/hookhost/llm"
	"github.com/hookhost/hookhost/llm/toolfmt"
)

// What a provider reads upstream: a completion, whole or streamed, as the
// neutral response (and, for a gateway's call, its wire form). Errors are
// upstream.Bad's, named by the transport that seals them.

// decodeResponse reads a whole completion.
func decodeResponse(data []byte, names *toolfmt.NameMap) (llm.Response, error) {
	var cr Response
	if err := json.Unmarshal(data, &cr); err != nil {
		return llm.Response{}, upstream.Bad("response is not a chat completion: %v", err)
	}
	return result(cr, names)
}

// decodeForward reads a whole completion and its wire form.
func decodeForward(data []byte, names *toolfmt.NameMap) (llm.Response, *upstream.WireResponse, error) {
	out, err := decodeResponse(data, names)
	if err != nil {
		return llm.Response{}, nil, err
	}
	wire, err := ResponseWire(data)
	if err != nil {
		return llm.Response{}, nil, upstream.Bad("response is not a chat completion: %v", err)
	}
	wire.Message = WithCallIDs(wire.Message, out.Message.ToolCalls)
	return out, wire, nil
}

// result maps a completion, received whole or assembled from a stream,
// to the neutral response.
func result(cr Response, names *toolfmt.NameMap) (llm.Response, error) {
	if len(cr.Choices) == 0 {
		return llm.Response{}, upstream.Bad("response has no choices")
	}
	ch := cr.Choices[0]
	msg := hooks.Message{Role: hooks.RoleAssistant}
	refused := false
	switch {
	case ch.Message.Content != nil && *ch.Message.Content != "":
		msg.Content = *ch.Message.Content
	case ch.Message.Refusal != nil && *ch.Message.Refusal != "":
		msg.Content = *ch.Message.Refusal
		refused = true
	}
	for i, c := range ch.Message.ToolCalls {
		if c.Type != "" && c.Type != "function" {
			// A call hookhost cannot model (a custom tool's free text)
			// would vanish from the answer, and from the next round.
			return llm.Response{}, upstream.Bad("tool call %d is of type %q, which hookhost does not model: it can neither hand it on nor continue the conversation after it; offer the model only function tools", i, c.Type)
		}
		if c.Function.Name == "" {
			return llm.Response{}, upstream.Bad("tool call %d is missing its name", i)
		}
		msg.ToolCalls = append(msg.ToolCalls, hooks.ToolCall{ID: c.ID, Name: names.ID(c.Function.Name), Arguments: codec.RawArgs(string(c.Function.Arguments))})
	}
	codec.FillCallIDs(msg.ToolCalls)
	out := llm.Response{Model: cr.Model, Message: msg, StopReason: StopOf(ch.FinishReason, len(msg.ToolCalls) > 0, refused)}
	if cr.Usage != nil {
		out.Usage = hooks.Usage{InputTokens: cr.Usage.PromptTokens, OutputTokens: cr.Usage.CompletionTokens}
	}
	return out, nil
}

// readStream reads a streamed completion to its end, passing text to
// onText as it arrives.
func readStream(_ context.Context, events upstream.Events, names *toolfmt.NameMap, onText func(string)) (llm.Response, error) {
	out, _, err := readChunks(events, names, onText, nil)
	return out, err
}

// readChunks is readStream that also hands every chunk's data to seen,
// when not nil, as it arrives, after the chunk is checked.
func readChunks(events upstream.Events, names *toolfmt.NameMap, onText func(string), seen func(data string)) (llm.Response, *Assembler, error) {
	st := NewAssembler()
	for {
		_, data, err := events.Next()
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return llm.Response{}, nil, truncated(st)
			}
			return llm.Response{}, nil, err
		}
		if strings.TrimSpace(data) == "[DONE]" {
			if !st.Finished() {
				return llm.Response{}, nil, truncated(st)
			}
			out, err := result(st.Result(), names)
			if shown := st.Shown(); err == nil && out.Message.Content != shown {
				return llm.Response{}, nil, upstream.Bad("the text streamed differs from the answer it builds (%d bytes shown, %d kept)", len(shown), len(out.Message.Content))
			}
			return out, st, err
		}
		var c Chunk
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			return llm.Response{}, nil, upstream.Bad("stream chunk is not JSON: %v", err)
		}
		if len(c.Error) > 0 && string(c.Error) != "null" {
			typ, msg := upstream.ParseError([]byte(data))
			return llm.Response{}, nil, &llm.ProviderError{Type: typ, Message: "error in stream: " + msg}
		}
		news, err := st.Add(c, onText)
		if err != nil {
			return llm.Response{}, nil, upstream.Bad("%v", err)
		}
		if seen != nil {
			seen(data)
		}
		if news {
			events.Progress()
		}
	}
}

func truncated(st *Assembler) error {
	if !st.Finished() {
		return upstream.Bad("stream ended before the answer was finished (no finish_reason)")
	}
	return upstream.Bad("stream ended without its [DONE] marker")
}

// readForwardStream is readStream for a gateway's call: it also builds
// the completion's wire form from the chunks, shaped as a whole one's.
func readForwardStream(_ context.Context, events upstream.Events, names *toolfmt.NameMap, onText func(string)) (llm.Response, *upstream.WireResponse, error) {
	fields := map[string]json.RawMessage{}
	keep := func(key string, v json.RawMessage) {
		if _, done := fields[key]; !done && len(v) > 0 && string(v) != "null" {
			fields[key] = v
		}
	}
	out, st, err := readChunks(events, names, onText, func(data string) {
		var m ChunkMeta
		if json.Unmarshal([]byte(data), &m) != nil {
			return
		}
		if m.ID != "" {
			keep("id", QuoteJSON(m.ID))
		}
		keep("created", m.Created)
		keep("system_fingerprint", m.SystemFingerprint)
		keep("service_tier", m.ServiceTier)
		if len(m.Usage) > 0 && string(m.Usage) != "null" {
			fields["usage"] = m.Usage // the last one counts
		}
		if m.Model != "" {
			fields["model"] = QuoteJSON(m.Model)
		}
	})
	if err != nil {
		return llm.Response{}, nil, err
	}
	fields["object"] = json.RawMessage(`"chat.completion"`)
	res := st.Result()
	ch := res.Choices[0]
	choice, err := json.Marshal(map[string]any{"index": 0, "finish_reason": ch.FinishReason, "logprobs": nil})
	if err != nil {
		return llm.Response{}, nil, upstream.Fail("cannot encode the streamed choice", err)
	}
	fields["choice"] = choice
	msg, err := rawjson.Marshal(StreamedMessage(ch))
	if err != nil {
		return llm.Response{}, nil, upstream.Fail("cannot encode the streamed message", err)
	}
	return out, &upstream.WireResponse{Fields: fields, Message: WithCallIDs([]json.RawMessage{msg}, out.Message.ToolCalls)}, nil
}
