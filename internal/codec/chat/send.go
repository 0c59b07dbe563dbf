package chat

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/codec"
	"github.com/hookhost/hookhost/internal/rawjson"
	"github.com/hookhost/hookhost/internal/upstream"
	"github.com/hookhost/hookhost/internal/upstream/history"
	"github.com/hookhost/hookhost/internal/upstream/sampling"
	"github.com/hookhost/hookhost/llm"
	"github.com/hookhost/hookhost/llm/toolfmt"
)

// Upstream is the protocol as the openai provider speaks it (api chat).
var Upstream = upstream.Codec{
	Protocol: llm.ProtocolChat, Body: codec.Encoded(request), ForwardBody: forwardBody,
	Decode: decodeResponse, DecodeForward: decodeForward, Read: readStream, ReadForward: readForwardStream,
}

// The request a provider sends upstream: Body for its own calls
// (Complete, Stream), forwardBody for a gateway's (Forward). Errors are
// upstream.Fail's, named by the transport that seals them.

// request builds the body Complete and Stream send, and the name map that
// turns the names the model calls back into tool ids. The system prompt
// is the first message; MaxTokens goes as max_completion_tokens or
// max_tokens as s says.
func request(req llm.Request, s upstream.Settings, stream bool) (Request, *toolfmt.NameMap, error) {
	names, err := codec.Names(req, s)
	if err != nil {
		return Request{}, nil, err
	}
	body := Request{
		Model: req.Model, Temperature: s.TemperatureFor(req),
		TopP: req.TopP, Seed: req.Seed, Stop: req.Stop, User: req.User,
	}
	if n := s.MaxTokensFor(req); n > 0 {
		if s.CompletionTokens {
			body.MaxCompletionTokens = n
		} else {
			body.MaxTokens = n
		}
	}
	if stream {
		body.Stream = true
		body.StreamOptions = &StreamOptions{IncludeUsage: true}
	}
	if body.Tools, err = codec.Tools(req.Tools, toolfmt.ToOpenAIChat); err != nil {
		return Request{}, nil, err
	}
	if req.System != "" {
		body.Messages = append(body.Messages, Message{Role: "system", Content: ptr(req.System)})
	}
	for _, m := range history.Repair(req.Messages) {
		cm, err := messageOf(m, names)
		if err != nil {
			return Request{}, nil, err
		}
		body.Messages = append(body.Messages, cm)
	}
	return body, names, nil
}

// messageOf is MessageOf with its error as a request's.
func messageOf(m hooks.Message, names *toolfmt.NameMap) (Message, error) {
	cm, err := MessageOf(m, names)
	if err != nil {
		return Message{}, upstream.Fail(err.Error(), nil)
	}
	return cm, nil
}

// Forwarding a Chat Completions request.
//
// The body is the one Body writes, with the client's wire forms
// put back where the neutral request still matches them:
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
// stream and stream_options are always the adapter's own: a client's
// stream_options never reaches a non-streamed call, which OpenAI refuses.

// forwardOwned are the top-level keys only the adapter writes. Both
// token-limit keys are among them, so the one it does not send is never
// added beside the one it does.
var forwardOwned = map[string]bool{"stream": true, "stream_options": true, "max_tokens": true, "max_completion_tokens": true}

// forwardBody writes the body of a forwarded request: the adapter's
// fields in their usual order, then the passed-through ones sorted by
// key, each value byte for byte as the client sent it.
func forwardBody(req llm.Request, s upstream.Settings, pass *upstream.Passthrough, stream bool) ([]byte, *toolfmt.NameMap, error) {
	// The body's messages are replaced below: encoding each one here only
	// to drop it would cost more than the request itself when it holds
	// many.
	bare := req
	bare.Messages = nil
	body, names, err := request(bare, s, stream)
	if err != nil {
		return nil, nil, err
	}
	forms := pass.Messages()
	msgs := make([]json.RawMessage, 0, len(req.Messages)+1)
	if req.System != "" {
		if raws, ok := forms.Take(hooks.Message{Role: hooks.RoleSystem, Content: req.System}); ok {
			msgs = append(msgs, raws...)
		} else {
			m, err := rawjson.Marshal(Message{Role: "system", Content: ptr(req.System)})
			if err != nil {
				return nil, nil, upstream.Fail("cannot encode the system prompt", err)
			}
			msgs = append(msgs, m)
		}
	}
	for _, m := range history.Repair(req.Messages) {
		if raws, ok := forms.Take(m); ok {
			msgs = append(msgs, raws...)
			continue
		}
		cm, err := messageOf(m, names)
		if err != nil {
			return nil, nil, err
		}
		b, err := rawjson.Marshal(cm)
		if err != nil {
			return nil, nil, upstream.Fail("cannot encode a message", err)
		}
		msgs = append(msgs, b)
	}
	var tools []json.RawMessage
	for i, t := range req.Tools {
		if w, ok := pass.Tool(t); ok {
			tools = append(tools, w)
			continue
		}
		b, err := rawjson.Marshal(body.Tools[i])
		if err != nil {
			return nil, nil, upstream.Fail("cannot offer the tools", err)
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
	// The adapter's own fields come from the body Body writes, so
	// the two paths cannot drift apart; messages and tools are replaced.
	body.Messages, body.Tools = nil, nil
	own, err := rawjson.Marshal(body)
	if err != nil {
		return nil, nil, upstream.Fail("cannot encode the request", err)
	}
	out, ok := rawjson.ParseObject(own)
	if !ok {
		return nil, nil, upstream.Fail("cannot encode the request", fmt.Errorf("the encoded request is not a JSON object: %s", own))
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
			return nil, nil, upstream.Fail(fmt.Sprintf("the request field %q to pass through is not valid JSON", k), nil)
		}
		out.Set(k, v)
	}
	return out.Bytes(), names, nil
}
