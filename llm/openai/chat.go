package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
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

// chatMessageOf encodes one neutral message of the history.
func (p *Provider) chatMessageOf(m hooks.Message, names *toolfmt.NameMap) (chat.Message, error) {
	switch m.Role {
	case hooks.RoleSystem, hooks.RoleUser:
		return chat.Message{Role: string(m.Role), Content: str(m.Content)}, nil
	case hooks.RoleAssistant:
		cm := chat.Message{Role: "assistant"}
		if m.Content != "" || len(m.ToolCalls) == 0 {
			cm.Content = str(m.Content)
		}
		for _, c := range m.ToolCalls {
			cm.ToolCalls = append(cm.ToolCalls, chat.ToolCall{
				ID: c.ID, Type: "function",
				Function: chat.Function{Name: names.Wire(c.Name), Arguments: codec.WireArgs(c.Arguments)},
			})
		}
		return cm, nil
	case hooks.RoleTool:
		return chat.Message{Role: "tool", ToolCallID: m.ToolCallID, Content: str(m.Content)}, nil
	}
	return chat.Message{}, p.fail(fmt.Sprintf("message with unknown role %q", m.Role), nil)
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
	fillCallIDs(msg.ToolCalls)
	out := llm.Response{Model: cr.Model, Message: msg, StopReason: chatStop(ch.FinishReason, len(msg.ToolCalls) > 0, refused)}
	if cr.Usage != nil {
		out.Usage = hooks.Usage{InputTokens: cr.Usage.PromptTokens, OutputTokens: cr.Usage.CompletionTokens}
	}
	return out, nil
}

func chatStop(reason *string, calls, refused bool) hooks.StopReason {
	r := ""
	if reason != nil {
		r = *reason
	}
	switch {
	case refused || r == "content_filter":
		return hooks.StopRefusal
	case r == "tool_calls" || r == "function_call" || (calls && r == "stop"):
		// Some compatible servers finish a tool call with "stop"; what
		// matters to the loop is that tools were called.
		return hooks.StopToolUse
	case r == "length":
		return hooks.StopMaxTokens
	case r == "stop":
		return hooks.StopEndTurn
	}
	return hooks.StopOther
}

// chatStream assembles chunks into the completion a non-streaming call
// would have returned.
type chatStream struct {
	resp    chat.Response
	content strings.Builder
	refusal strings.Builder
	hasText bool
	hasRef  bool
	finish  *string
	calls   map[int]*chat.ToolCall
	args    map[int]*strings.Builder
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
func (p *Provider) readChatStream(resp *http.Response, names *toolfmt.NameMap, onText func(string), seen func(data string)) (llm.Response, *chatStream, error) {
	defer resp.Body.Close()
	st := &chatStream{calls: map[int]*chat.ToolCall{}, args: map[int]*strings.Builder{}}
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
			if st.finish == nil {
				return llm.Response{}, nil, p.truncated(st)
			}
			out, err := p.chatResult(st.result(), names)
			if shown := st.content.String() + st.refusal.String(); err == nil && out.Message.Content != shown {
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
		news, err := st.add(c, onText)
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

func (p *Provider) truncated(st *chatStream) error {
	if st.finish == nil {
		return p.badResponse("stream ended before the answer was finished (no finish_reason)")
	}
	return p.badResponse("stream ended without its [DONE] marker")
}

// add folds one chunk into the answer. news reports whether the chunk
// carried anything the answer did not have (text, a tool call's part,
// reasoning, the finish reason or the usage, each the first time): only
// such a chunk restarts the idle timeout, so that a server sending empty
// chunks is as idle as one sending nothing.
func (st *chatStream) add(c chat.Chunk, onText func(string)) (news bool, err error) {
	if st.resp.ID == "" {
		st.resp.ID = c.ID
	}
	if c.Model != "" {
		st.resp.Model = c.Model
	}
	if c.Usage != nil {
		news = news || st.resp.Usage == nil
		st.resp.Usage = c.Usage
	}
	for i, ch := range c.Choices {
		// hookhost asks for one choice; any other is ignored, as
		// Complete ignores it.
		if ch.Index != 0 {
			continue
		}
		d := ch.Delta
		// The answer keeps either text or a refusal, so a stream that
		// shows both would keep less than it showed.
		if (st.hasRef && d.Content != nil && *d.Content != "") || (st.hasText && d.Refusal != nil && *d.Refusal != "") ||
			(d.Content != nil && *d.Content != "" && d.Refusal != nil && *d.Refusal != "") {
			return false, fmt.Errorf("stream chunk %d mixes answer text and a refusal", i)
		}
		if (d.ReasoningContent != nil && *d.ReasoningContent != "") || (d.Reasoning != nil && *d.Reasoning != "") {
			news = true
		}
		if d.Content != nil && *d.Content != "" {
			news = true
			st.content.WriteString(*d.Content)
			st.hasText = true
			onText(*d.Content)
		}
		if d.Refusal != nil && *d.Refusal != "" {
			news = true
			st.refusal.WriteString(*d.Refusal)
			st.hasRef = true
			onText(*d.Refusal)
		}
		for j, tc := range d.ToolCalls {
			idx := j
			if tc.Index != nil {
				idx = *tc.Index
			}
			if idx < 0 || idx > 1024 {
				return false, fmt.Errorf("stream chunk %d: tool call index %d out of range", i, idx)
			}
			call := st.calls[idx]
			if call == nil {
				call = &chat.ToolCall{Type: "function"}
				st.calls[idx] = call
				st.args[idx] = &strings.Builder{}
			}
			if tc.ID != "" && call.ID == "" {
				call.ID = tc.ID
			}
			if tc.Type != "" {
				call.Type = tc.Type
			}
			switch name := tc.Function.Name; {
			case name == "" || name == call.Function.Name:
			case len(call.Function.Name)+len(name) > maxToolName:
				// Refused before it is joined: a hostile stream of
				// one-byte fragments would otherwise cost quadratic time.
				return false, fmt.Errorf("stream chunk %d: tool call %d's name grows past %d characters, the most a tool name may have", i, idx, maxToolName)
			case call.Function.Name == "":
				call.Function.Name = name
			default:
				call.Function.Name += name
			}
			if tc.ID != "" || tc.Function.Name != "" || len(tc.Function.Arguments) > 0 {
				news = true
			}
			st.args[idx].WriteString(string(tc.Function.Arguments))
		}
		if ch.FinishReason != nil && *ch.FinishReason != "" {
			news = news || st.finish == nil
			st.finish = ch.FinishReason
		}
	}
	return news, nil
}

func (st *chatStream) result() chat.Response {
	r := st.resp
	ch := chat.Choice{FinishReason: st.finish}
	ch.Message.Role = "assistant"
	if st.hasText {
		ch.Message.Content = str(st.content.String())
	}
	if st.hasRef {
		ch.Message.Refusal = str(st.refusal.String())
	}
	idx := make([]int, 0, len(st.calls))
	for i := range st.calls {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	for _, i := range idx {
		c := *st.calls[i]
		c.Function.Arguments = codec.Args(st.args[i].String())
		ch.Message.ToolCalls = append(ch.Message.ToolCalls, c)
	}
	r.Choices = []chat.Choice{ch}
	return r
}
