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
	"github.com/hookhost/hookhost/internal/codec/responses"
	"github.com/hookhost/hookhost/internal/upstream"
	"github.com/hookhost/hookhost/llm"
	"github.com/hookhost/hookhost/llm/internal/history"
	"github.com/hookhost/hookhost/llm/toolfmt"
)

func (p *Provider) responsesBody(req llm.Request, stream bool) (responses.Request, *toolfmt.NameMap, error) {
	names, err := toolfmt.NewNameMap(toolfmt.SpecNames(req.Tools))
	if err != nil {
		return responses.Request{}, nil, p.fail("cannot offer the tools", err)
	}
	if err := p.check(req); err != nil {
		return responses.Request{}, nil, err
	}
	// The API has no stop sequences and no seed (see Unsupported).
	body := responses.Request{
		Model: req.Model, Instructions: req.System, Input: []responses.Input{},
		MaxOutputTokens: p.maxTokensFor(req), Temperature: p.temperatureFor(req), Stream: stream,
		TopP: req.TopP, User: req.User,
	}
	for _, s := range req.Tools {
		t, err := toolfmt.ToResponses(s)
		if err != nil {
			return responses.Request{}, nil, p.fail("cannot offer the tools", err)
		}
		body.Tools = append(body.Tools, t)
	}
	for _, m := range history.Repair(req.Messages) {
		items, err := p.inputItems(m, names)
		if err != nil {
			return responses.Request{}, nil, err
		}
		body.Input = append(body.Input, items...)
	}
	return body, names, nil
}

// inputItems encodes one neutral message as the input items it becomes
// (see responses.InputOf).
func (p *Provider) inputItems(m hooks.Message, names *toolfmt.NameMap) ([]responses.Input, error) {
	items, err := responses.InputOf(m, names)
	if err != nil {
		return nil, p.fail(err.Error(), nil)
	}
	return items, nil
}

func (p *Provider) completeResponses(ctx context.Context, req llm.Request) (llm.Response, error) {
	body, names, err := p.responsesBody(req, false)
	if err != nil {
		return llm.Response{}, err
	}
	var rr responses.Response
	if err := p.fetch(ctx, body, &rr, "a Responses API object", "status", "output"); err != nil {
		return llm.Response{}, err
	}
	return p.responsesResult(rr, names)
}

// responsesResult maps a response object, received whole or as the final
// event of a stream, to the neutral response.
func (p *Provider) responsesResult(rr responses.Response, names *toolfmt.NameMap) (llm.Response, error) {
	if rr.Status == "failed" || rr.Status == "cancelled" {
		pe := &llm.ProviderError{Provider: Name, Message: "response " + rr.Status}
		if rr.Error != nil {
			pe.Type, pe.Message = rr.Error.Code, rr.Error.Message
		}
		return llm.Response{}, pe
	}
	switch rr.Status {
	case "completed", "incomplete":
	default:
		return llm.Response{}, p.badResponse("response status %q is not a final one (want completed, incomplete, failed or cancelled)", rr.Status)
	}
	if rr.Output == nil {
		return llm.Response{}, p.badResponse("response is missing output, which a Responses API object must have")
	}
	msg := hooks.Message{Role: hooks.RoleAssistant}
	var text strings.Builder
	refused := false
	var unmodelled, other string
	for i, it := range rr.Output {
		if it.Type == "" {
			return llm.Response{}, p.badResponse("output item %d has no type", i)
		}
		if it.Type == "function_call" {
			if it.Name == "" {
				return llm.Response{}, p.badResponse("function_call output item %d is missing name", i)
			}
		}
		switch it.Type {
		case "message":
			for _, c := range it.Content {
				switch c.Type {
				case "output_text":
					text.WriteString(c.Text)
				case "refusal":
					text.WriteString(c.Refusal)
					refused = true
				}
			}
		case "function_call":
			msg.ToolCalls = append(msg.ToolCalls, hooks.ToolCall{ID: it.CallID, Name: names.ID(it.Name), Arguments: codec.RawArgs(it.Args())})
		default:
			if responses.ClientRun[it.Type] && unmodelled == "" {
				unmodelled = fmt.Sprintf("output item %d is a %s", i, it.Type)
			}
			if !responses.ProviderRun[it.Type] && other == "" {
				other = fmt.Sprintf("output item %d is a %s", i, it.Type)
			}
		}
		// Reasoning and built-in tool items have no neutral form; with
		// store=false they are not needed again.
	}
	// A call the client must run and answer that the neutral message
	// cannot hold would vanish, and the next request would lack its
	// answer (which the API refuses). An item of a kind not known here is
	// refused only when the conversation goes on upstream with it, since
	// hookhost cannot tell whether it needs an answer.
	if unmodelled == "" && len(msg.ToolCalls) > 0 {
		unmodelled = other
	}
	if unmodelled != "" {
		return llm.Response{}, p.badResponse("%s, which hookhost does not model: it can neither hand the call on nor continue the conversation after it; offer the model only function tools and tools the provider runs itself", unmodelled)
	}
	codec.FillCallIDs(msg.ToolCalls)
	msg.Content = text.String()
	out := llm.Response{Model: rr.Model, Message: msg}
	if rr.Usage != nil {
		out.Usage = hooks.Usage{InputTokens: rr.Usage.InputTokens, OutputTokens: rr.Usage.OutputTokens}
	}
	reason := ""
	if rr.IncompleteDetails != nil {
		reason = rr.IncompleteDetails.Reason
	}
	switch {
	case refused || reason == "content_filter":
		out.StopReason = hooks.StopRefusal
	case len(msg.ToolCalls) > 0:
		out.StopReason = hooks.StopToolUse
	case rr.Status == "incomplete" && reason == "max_output_tokens":
		out.StopReason = hooks.StopMaxTokens
	case rr.Status == "completed":
		out.StopReason = hooks.StopEndTurn
	default:
		out.StopReason = hooks.StopOther
	}
	return out, nil
}

func (p *Provider) streamResponses(ctx context.Context, req llm.Request, onText func(string)) (llm.Response, error) {
	body, names, err := p.responsesBody(req, true)
	if err != nil {
		return llm.Response{}, err
	}
	out, _, err := p.streamResponsesBody(ctx, p.headerFor(ctx), body, names, onText)
	return out, err
}

// streamResponsesBody sends a streaming request and reads its events. The
// WireResponse is the final event's response as received, with the items
// the stream finished as its output when the final event leaves it out.
func (p *Provider) streamResponsesBody(ctx context.Context, header http.Header, body any, names *toolfmt.NameMap, onText func(string)) (llm.Response, *upstream.WireResponse, error) {
	resp, err := p.client.PostJSON(ctx, p.endpoint, header, body, true)
	if err != nil {
		return llm.Response{}, nil, err
	}
	defer resp.Body.Close()
	// Items are kept as they finish, in case a server's final event
	// leaves its output list out.
	items := map[int]responses.Item{}
	rawItems := map[int]json.RawMessage{}
	started := false
	var shown strings.Builder
	events := p.client.Events(resp)
	for {
		ev, err := events.Next()
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return llm.Response{}, nil, p.badResponse("stream ended before response.completed")
			}
			return llm.Response{}, nil, p.client.ReadError(err)
		}
		var e responses.Event
		if err := json.Unmarshal([]byte(ev.Data), &e); err != nil {
			return llm.Response{}, nil, p.badResponse("stream event is not JSON: %v", err)
		}
		if e.Type == "" {
			e.Type = ev.Name
		}
		if responses.Progresses(e) {
			events.Progress()
		}
		switch e.Type {
		case "response.created":
			started = true
		case "response.output_text.delta", "response.refusal.delta":
			if delta := responses.Value(e.Delta); delta != "" {
				shown.WriteString(delta)
				onText(delta)
			}
		case "response.output_item.done":
			if e.Item != nil {
				index := responses.Value(e.OutputIndex)
				items[index] = *e.Item
				var raw struct{ Item json.RawMessage }
				if json.Unmarshal([]byte(ev.Data), &raw) == nil {
					rawItems[index] = raw.Item
				}
			}
		case "response.completed", "response.incomplete", "response.failed":
			if !started || e.Response == nil {
				return llm.Response{}, nil, p.badResponse("stream event %s without a response.created before it or a response in it", e.Type)
			}
			rr := *e.Response
			if rr.Status == "" {
				rr.Status = strings.TrimPrefix(e.Type, "response.")
			}
			if len(rr.Output) == 0 && len(items) > 0 {
				idx := make([]int, 0, len(items))
				for i := range items {
					idx = append(idx, i)
				}
				sort.Ints(idx)
				for _, i := range idx {
					rr.Output = append(rr.Output, items[i])
				}
			}
			out, err := p.responsesResult(rr, names)
			if err == nil && out.Message.Content != shown.String() {
				return llm.Response{}, nil, p.badResponse("the text streamed differs from the text of the final response (%d bytes shown, %d kept)", shown.Len(), len(out.Message.Content))
			}
			if err != nil {
				return llm.Response{}, nil, err
			}
			return out, responses.StreamedWire(ev.Data, rawItems), nil
		case "error":
			return llm.Response{}, nil, &llm.ProviderError{Provider: Name, Type: responses.Value(e.Code), Message: "error in stream: " + responses.Value(e.Message)}
		}
	}
}
