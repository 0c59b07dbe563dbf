package responses

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/codec"
	"github.com/hookhost/hookhost/internal/upstream"
	"github.com/hookhost/hookhost/llm"
	"github.com/hookhost/hookhost/llm/toolfmt"
)

// What a provider reads upstream: a response object, whole or streamed,
// as the neutral response (and, for a gateway's call, its wire form).
// Errors are upstream.Bad's, named by the transport that seals them.

// decodeResponse reads a whole response object.
func decodeResponse(data []byte, names *toolfmt.NameMap) (llm.Response, error) {
	var rr Response
	if err := json.Unmarshal(data, &rr); err != nil {
		return llm.Response{}, upstream.Bad("response is not a Responses API object: %v", err)
	}
	if missing := upstream.Missing(data, "status", "output"); len(missing) > 0 {
		return llm.Response{}, upstream.Bad("response is missing %s, which a Responses API object must have", strings.Join(missing, ", "))
	}
	return result(rr, names)
}

// decodeForward reads a whole response object and its wire form.
func decodeForward(data []byte, names *toolfmt.NameMap) (llm.Response, *upstream.WireResponse, error) {
	out, err := decodeResponse(data, names)
	if err != nil {
		return llm.Response{}, nil, err
	}
	wire, err := ResponseWire(data, nil)
	if err != nil {
		return llm.Response{}, nil, upstream.Bad("response is not a Responses API object: %v", err)
	}
	return out, wire, nil
}

// result maps a response object, received whole or as the final event of
// a stream, to the neutral response.
func result(rr Response, names *toolfmt.NameMap) (llm.Response, error) {
	if rr.Status == "failed" || rr.Status == "cancelled" {
		pe := &llm.ProviderError{Message: "response " + rr.Status}
		if rr.Error != nil {
			pe.Type, pe.Message = rr.Error.Code, rr.Error.Message
		}
		return llm.Response{}, pe
	}
	switch rr.Status {
	case "completed", "incomplete":
	default:
		return llm.Response{}, upstream.Bad("response status %q is not a final one (want completed, incomplete, failed or cancelled)", rr.Status)
	}
	if rr.Output == nil {
		return llm.Response{}, upstream.Bad("response is missing output, which a Responses API object must have")
	}
	msg := hooks.Message{Role: hooks.RoleAssistant}
	var text strings.Builder
	refused := false
	var unmodelled, other string
	for i, it := range rr.Output {
		if it.Type == "" {
			return llm.Response{}, upstream.Bad("output item %d has no type", i)
		}
		if it.Type == "function_call" {
			if it.Name == "" {
				return llm.Response{}, upstream.Bad("function_call output item %d is missing name", i)
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
			if ClientRun[it.Type] && unmodelled == "" {
				unmodelled = fmt.Sprintf("output item %d is a %s", i, it.Type)
			}
			if !ProviderRun[it.Type] && other == "" {
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
		return llm.Response{}, upstream.Bad("%s, which hookhost does not model: it can neither hand the call on nor continue the conversation after it; offer the model only function tools and tools the provider runs itself", unmodelled)
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

func readStream(ctx context.Context, events upstream.Events, names *toolfmt.NameMap, onText func(string)) (llm.Response, error) {
	out, _, err := readForwardStream(ctx, events, names, onText)
	return out, err
}

// readForwardStream reads a stream's events. The WireResponse is the
// final event's response as received, with the items the stream finished
// as its output when the final event leaves it out.
func readForwardStream(_ context.Context, events upstream.Events, names *toolfmt.NameMap, onText func(string)) (llm.Response, *upstream.WireResponse, error) {
	// Items are kept as they finish, in case a server's final event
	// leaves its output list out.
	items := map[int]Item{}
	rawItems := map[int]json.RawMessage{}
	started := false
	var shown strings.Builder
	for {
		name, data, err := events.Next()
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return llm.Response{}, nil, upstream.Bad("stream ended before response.completed")
			}
			return llm.Response{}, nil, err
		}
		var e Event
		if err := json.Unmarshal([]byte(data), &e); err != nil {
			return llm.Response{}, nil, upstream.Bad("stream event is not JSON: %v", err)
		}
		if e.Type == "" {
			e.Type = name
		}
		if Progresses(e) {
			events.Progress()
		}
		switch e.Type {
		case "response.created":
			started = true
		case "response.output_text.delta", "response.refusal.delta":
			if delta := Value(e.Delta); delta != "" {
				shown.WriteString(delta)
				onText(delta)
			}
		case "response.output_item.done":
			if e.Item != nil {
				index := Value(e.OutputIndex)
				items[index] = *e.Item
				var raw struct{ Item json.RawMessage }
				if json.Unmarshal([]byte(data), &raw) == nil {
					rawItems[index] = raw.Item
				}
			}
		case "response.completed", "response.incomplete", "response.failed":
			if !started || e.Response == nil {
				return llm.Response{}, nil, upstream.Bad("stream event %s without a response.created before it or a response in it", e.Type)
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
			out, err := result(rr, names)
			if err == nil && out.Message.Content != shown.String() {
				return llm.Response{}, nil, upstream.Bad("the text streamed differs from the text of the final response (%d bytes shown, %d kept)", shown.Len(), len(out.Message.Content))
			}
			if err != nil {
				return llm.Response{}, nil, err
			}
			return out, StreamedWire(data, rawItems), nil
		case "error":
			return llm.Response{}, nil, &llm.ProviderError{Type: Value(e.Code), Message: "error in stream: " + Value(e.Message)}
		}
	}
}
