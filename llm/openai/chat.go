package openai

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/codec"
	"github.com/hookhost/hookhost/internal/codec/chat"
	"github.com/hookhost/hookhost/llm"
	"github.com/hookhost/hookhost/llm/internal/history"
	"github.com/hookhost/hookhost/llm/internal/httpretry"
	"github.com/hookhost/hookhost/llm/toolfmt"
)

func str(s string) *string { return &s }

// chatBody builds the request, and the name map that turns the names the
// model calls back into tool ids.
func (p *Provider) chatBody(req llm.Request, stream bool) (chat.Request, *toolfmt.NameMap, error) {
	names, err := toolfmt.NewNameMap(toolfmt.SpecNames(req.Tools))
	if err != nil {
		return chat.Request{}, nil, p.fail("cannot offer the tools", err)
	}
	if err := p.check(req); err != nil {
		return chat.Request{}, nil, err
	}
	body := chat.Request{
		Model: req.Model, Temperature: p.temperatureFor(req),
		TopP: req.TopP, Seed: req.Seed, Stop: req.Stop, User: req.User,
	}
	if n := p.maxTokensFor(req); n > 0 {
		if p.completionTokens {
			body.MaxCompletionTokens = n
		} else {
			body.MaxTokens = n
		}
	}
	if stream {
		body.Stream = true
		body.StreamOptions = &chat.StreamOptions{IncludeUsage: true}
	}
	for _, s := range req.Tools {
		t, err := toolfmt.ToOpenAIChat(s)
		if err != nil {
			return chat.Request{}, nil, p.fail("cannot offer the tools", err)
		}
		body.Tools = append(body.Tools, t)
	}
	if req.System != "" {
		body.Messages = append(body.Messages, chat.Message{Role: "system", Content: str(req.System)})
	}
	for _, m := range history.Repair(req.Messages) {
		cm, err := p.chatMessageOf(m, names)
		if err != nil {
			return chat.Request{}, nil, err
		}
		body.Messages = append(body.Messages, cm)
	}
	return body, names, nil
}

// chatMessageOf encodes one neutral message of the history (see
// chat.MessageOf).
func (p *Provider) chatMessageOf(m hooks.Message, names *toolfmt.NameMap) (chat.Message, error) {
	cm, err := chat.MessageOf(m, names)
	if err != nil {
		return chat.Message{}, p.fail(err.Error(), nil)
	}
	return cm, nil
}

func (p *Provider) completeChat(ctx context.Context, req llm.Request) (llm.Response, error) {
	body, names, err := p.chatBody(req, false)
	if err != nil {
		return llm.Response{}, err
	}
	var cr chat.Response
	if err := p.fetch(ctx, body, &cr, "a chat completion"); err != nil {
		return llm.Response{}, err
	}
	return p.chatResult(cr, names)
}

// chatResult maps a completion, received whole or assembled from a
// stream, to the neutral response.
func (p *Provider) chatResult(cr chat.Response, names *toolfmt.NameMap) (llm.Response, error) {
	if len(cr.Choices) == 0 {
		return llm.Response{}, p.badResponse("response has no choices")
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
			return llm.Response{}, p.badResponse("tool call %d is of type %q, which hookhost does not model: it can neither hand it on nor continue the conversation after it; offer the model only function tools", i, c.Type)
		}
		if c.Function.Name == "" {
			return llm.Response{}, p.badResponse("tool call %d is missing its name", i)
		}
		msg.ToolCalls = append(msg.ToolCalls, hooks.ToolCall{ID: c.ID, Name: names.ID(c.Function.Name), Arguments: codec.RawArgs(string(c.Function.Arguments))})
	}
	codec.FillCallIDs(msg.ToolCalls)
	out := llm.Response{Model: cr.Model, Message: msg, StopReason: chat.StopOf(ch.FinishReason, len(msg.ToolCalls) > 0, refused)}
	if cr.Usage != nil {
		out.Usage = hooks.Usage{InputTokens: cr.Usage.PromptTokens, OutputTokens: cr.Usage.CompletionTokens}
	}
	return out, nil
}

func (p *Provider) streamChat(ctx context.Context, req llm.Request, onText func(string)) (llm.Response, error) {
	body, names, err := p.chatBody(req, true)
	if err != nil {
		return llm.Response{}, err
	}
	resp, err := p.post(ctx, body, true)
	if err != nil {
		return llm.Response{}, err
	}
	out, _, err := p.readChatStream(resp, names, onText, nil)
	return out, err
}

// readChatStream reads a streamed completion to its end and closes it.
// seen, when not nil, is given every chunk's data as it arrives, after
// the chunk is checked.
func (p *Provider) readChatStream(resp *http.Response, names *toolfmt.NameMap, onText func(string), seen func(data string)) (llm.Response, *chat.Assembler, error) {
	defer resp.Body.Close()
	st := chat.NewAssembler()
	events := p.client.Events(resp)
	for {
		ev, err := events.Next()
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return llm.Response{}, nil, p.truncated(st)
			}
			return llm.Response{}, nil, p.client.ReadError(err)
		}
		if strings.TrimSpace(ev.Data) == "[DONE]" {
			if !st.Finished() {
				return llm.Response{}, nil, p.truncated(st)
			}
			out, err := p.chatResult(st.Result(), names)
			if shown := st.Shown(); err == nil && out.Message.Content != shown {
				return llm.Response{}, nil, p.badResponse("the text streamed differs from the answer it builds (%d bytes shown, %d kept)", len(shown), len(out.Message.Content))
			}
			return out, st, err
		}
		var c chat.Chunk
		if err := json.Unmarshal([]byte(ev.Data), &c); err != nil {
			return llm.Response{}, nil, p.badResponse("stream chunk is not JSON: %v", err)
		}
		if len(c.Error) > 0 && string(c.Error) != "null" {
			typ, msg := httpretry.ParseError([]byte(ev.Data))
			return llm.Response{}, nil, &llm.ProviderError{Provider: Name, Type: typ, Message: "error in stream: " + msg}
		}
		news, err := st.Add(c, onText)
		if err != nil {
			return llm.Response{}, nil, p.badResponse("%v", err)
		}
		if seen != nil {
			seen(ev.Data)
		}
		if news {
			events.Progress()
		}
	}
}

func (p *Provider) truncated(st *chat.Assembler) error {
	if !st.Finished() {
		return p.badResponse("stream ended before the answer was finished (no finish_reason)")
	}
	return p.badResponse("stream ended without its [DONE] marker")
}
