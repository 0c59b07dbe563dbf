package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/codec/chat"
	"github.com/hookhost/hookhost/internal/rawjson"
	"github.com/hookhost/hookhost/internal/upstream"
	"github.com/hookhost/hookhost/llm"
	"github.com/hookhost/hookhost/llm/internal/history"
	"github.com/hookhost/hookhost/llm/internal/sampling"
	"github.com/hookhost/hookhost/llm/toolfmt"
)

// Forwarding a Chat Completions request.
//
// The body is the one Complete or Stream would send, with the client's
// wire forms put back where the neutral request still matches them:
//
//   - the system prompt: the client's leading system and developer
//     messages are kept under the neutral message {system, System}; while
//     req.System still equals it, they are sent as they came (developer
//     roles, content parts and names included) instead of one fresh
//     system message;
//   - each history message with a kept form is sent in that form;
//   - each tool with a kept form is sent in it (strict survives);
//   - max_tokens and max_completion_tokens: when pass.Fields holds one of
//     them, the client's choice of field is kept and the neutral MaxTokens
//     is sent under it (servers differ in which one they accept);
//   - top_p, seed, stop and user: the client's own field, when pass.Fields
//     holds one that says what the neutral request says, is sent as
//     given; otherwise the neutral value is (a changed one replaces the
//     client's field, never joins it);
//   - every pass.Fields key the adapter does not set is added as given.
//
// The client's openai-beta header, kept in pass, is sent too.
//
// stream and stream_options are always the adapter's own: a client's
// stream_options never reaches a non-streamed call, which OpenAI refuses.

// forwardOwned are the top-level keys only the adapter writes. Both
// token-limit keys are among them, so the one it does not send is never
// added beside the one it does.
var forwardOwned = map[string]bool{"stream": true, "stream_options": true, "max_tokens": true, "max_completion_tokens": true}

func (p *Provider) forwardChat(ctx context.Context, req llm.Request, pass *upstream.Passthrough, onText func(string)) (llm.Response, *upstream.WireResponse, error) {
	stream := onText != nil
	// The body's messages are replaced below: encoding each one here only
	// to drop it would cost more than the request itself when it holds
	// many.
	bare := req
	bare.Messages = nil
	body, names, err := p.chatBody(bare, stream)
	if err != nil {
		return llm.Response{}, nil, err
	}
	raw, err := p.forwardChatBody(req, body, names, pass)
	if err != nil {
		return llm.Response{}, nil, err
	}
	resp, err := p.client.Post(ctx, p.endpoint, upstream.WithFeatureHeaders(llm.ProtocolChat, p.headerFor(ctx), pass), raw, stream)
	if err != nil {
		return llm.Response{}, nil, err
	}
	if stream {
		return p.forwardChatStream(resp, names, onText)
	}
	data, err := p.client.ReadAll(resp)
	if err != nil {
		return llm.Response{}, nil, err
	}
	var cr chat.Response
	if err := json.Unmarshal(data, &cr); err != nil {
		return llm.Response{}, nil, p.badResponse("response is not a chat completion: %v", err)
	}
	out, err := p.chatResult(cr, names)
	if err != nil {
		return llm.Response{}, nil, err
	}
	wire, err := chat.ResponseWire(data)
	if err != nil {
		return llm.Response{}, nil, p.badResponse("response is not a chat completion: %v", err)
	}
	wire.Message = chat.WithCallIDs(wire.Message, out.Message.ToolCalls)
	return out, wire, nil
}

// forwardChatBody writes the request body: the adapter's fields in their
// usual order, then the passed-through ones sorted by key, each value byte
// for byte as the client sent it.
func (p *Provider) forwardChatBody(req llm.Request, body chat.Request, names *toolfmt.NameMap, pass *upstream.Passthrough) ([]byte, error) {
	forms := pass.Messages()
	msgs := make([]json.RawMessage, 0, len(req.Messages)+1)
	if req.System != "" {
		if raws, ok := forms.Take(hooks.Message{Role: hooks.RoleSystem, Content: req.System}); ok {
			msgs = append(msgs, raws...)
		} else {
			m, err := rawjson.Marshal(chat.Message{Role: "system", Content: str(req.System)})
			if err != nil {
				return nil, p.fail("cannot encode the system prompt", err)
			}
			msgs = append(msgs, m)
		}
	}
	for _, m := range history.Repair(req.Messages) {
		if raws, ok := forms.Take(m); ok {
			msgs = append(msgs, raws...)
			continue
		}
		cm, err := p.chatMessageOf(m, names)
		if err != nil {
			return nil, err
		}
		b, err := rawjson.Marshal(cm)
		if err != nil {
			return nil, p.fail("cannot encode a message", err)
		}
		msgs = append(msgs, b)
	}
	var tools []json.RawMessage
	for i, s := range req.Tools {
		if w, ok := pass.Tool(s); ok {
			tools = append(tools, w)
			continue
		}
		b, err := rawjson.Marshal(body.Tools[i])
		if err != nil {
			return nil, p.fail("cannot offer the tools", err)
		}
		tools = append(tools, b)
	}
	var fields map[string]json.RawMessage
	if pass != nil {
		fields = pass.Fields
	}

	if n := body.MaxTokens + body.MaxCompletionTokens; n > 0 {
		if _, ok := fields["max_completion_tokens"]; ok {
			body.MaxTokens, body.MaxCompletionTokens = 0, n
		} else if _, ok := fields["max_tokens"]; ok {
			body.MaxTokens, body.MaxCompletionTokens = n, 0
		}
	}
	// A setting the client's own field already says goes as the client
	// wrote it (the loop below adds it); one the neutral request changed,
	// or that the client did not send, goes from the neutral value.
	if sampling.SameFloat(pass, "top_p", body.TopP) {
		body.TopP = nil
	}
	if sampling.SameInt(pass, "seed", body.Seed) {
		body.Seed = nil
	}
	if sampling.SameStrings(pass, "stop", body.Stop) {
		body.Stop = nil
	}
	if sampling.SameString(pass, "user", body.User) {
		body.User = ""
	}
	// The adapter's own fields come from the body Complete would send, so
	// the two paths cannot drift apart; messages and tools are replaced.
	body.Messages, body.Tools = nil, nil
	own, err := rawjson.Marshal(body)
	if err != nil {
		return nil, p.fail("cannot encode the request", err)
	}
	out, ok := rawjson.ParseObject(own)
	if !ok {
		return nil, p.fail("cannot encode the request", fmt.Errorf("the encoded request is not a JSON object: %s", own))
	}
	out.SetArray("messages", msgs)
	if len(tools) > 0 {
		out.Set("tools", rawjson.Array(tools))
	}
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		if out.Has(k) || forwardOwned[k] {
			continue
		}
		v := fields[k]
		if !json.Valid(v) {
			return nil, p.fail(fmt.Sprintf("the request field %q to pass through is not valid JSON", k), nil)
		}
		out.Set(k, v)
	}
	return out.Bytes(), nil
}

func (p *Provider) forwardChatStream(resp *http.Response, names *toolfmt.NameMap, onText func(string)) (llm.Response, *upstream.WireResponse, error) {
	fields := map[string]json.RawMessage{}
	keep := func(key string, v json.RawMessage) {
		if _, done := fields[key]; !done && len(v) > 0 && string(v) != "null" {
			fields[key] = v
		}
	}
	out, st, err := p.readChatStream(resp, names, onText, func(data string) {
		var m chat.ChunkMeta
		if json.Unmarshal([]byte(data), &m) != nil {
			return
		}
		if m.ID != "" {
			keep("id", chat.QuoteJSON(m.ID))
		}
		keep("created", m.Created)
		keep("system_fingerprint", m.SystemFingerprint)
		keep("service_tier", m.ServiceTier)
		if len(m.Usage) > 0 && string(m.Usage) != "null" {
			fields["usage"] = m.Usage // the last one counts
		}
		if m.Model != "" {
			fields["model"] = chat.QuoteJSON(m.Model)
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
		return llm.Response{}, nil, p.fail("cannot encode the streamed choice", err)
	}
	fields["choice"] = choice
	msg, err := rawjson.Marshal(chat.StreamedMessage(ch))
	if err != nil {
		return llm.Response{}, nil, p.fail("cannot encode the streamed message", err)
	}
	return out, &upstream.WireResponse{Fields: fields, Message: chat.WithCallIDs([]json.RawMessage{msg}, out.Message.ToolCalls)}, nil
}
