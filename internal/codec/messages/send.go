package messages

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/codec"
	"github.com/hookhost/hookhost/internal/rawjson"
	"github.com/hookhost/hookhost/internal/upstream"
	"github.com/hookhost/hookhost/internal/upstream/history"
	"github.com/hookhost/hookhost/internal/upstream/sampling"
	"github.com/hookhost/hookhost/llm"
	"github.com/hookhost/hookhost/llm/toolfmt"
)

// Upstream is the protocol as the anthropic provider speaks it.
//
// Its forwarded body (a gateway's call) is written by hand rather than
// encoded, so that every wire form pass kept reaches the model byte for
// byte, whitespace included:
//
//   - model, max_tokens, system, messages, tools, temperature and stream
//     are set from req as Complete sets them; every other key of
//     pass.Fields follows as given (stream never does: the call decides).
//   - top_p, stop_sequences and metadata.user_id: the client's own field,
//     when it says what the neutral request says, is sent as given;
//     otherwise the neutral value is sent in its place (a changed user
//     replaces metadata.user_id and keeps the object's other keys).
//   - pass.Fields["tools"], when present, is an array of tools the neutral
//     request does not model (Anthropic's server tools, such as
//     web_search_20250305); its elements are sent after req's tools.
//   - The system prompt is sent in the form kept for a system message equal
//     to req.System (a string, or text blocks with cache_control). System
//     messages of the conversation are joined in, since Anthropic has no
//     system role inside messages: after the kept blocks as text blocks of
//     their own, or into one string with the prompt when it was a string.
//   - A message's kept form is either one whole message object (it has a
//     "role"), sent as is, or a list of content blocks: for a tool message
//     its tool_result block, for a user or assistant message its blocks.
//     Blocks join the message being built for their role, exactly as
//     freshly encoded blocks do, so consecutive tool results still make
//     ONE user message, and a user text that followed them in the client's
//     message stays in that message.
//
// The client's feature headers kept in pass (anthropic-beta, which the
// beta-gated fields it sent need, and anthropic-version) are sent too;
// betas the configuration sets stay on beside the client's.
//
// The WireResponse of a whole response has every top-level field but
// content in Fields and the content blocks as received in Message. A
// streamed one is built from message_start's message, updated by
// message_delta, and the blocks as their deltas built them: text,
// thinking (with its signature), citations and tool input are carried;
// the deltas of block types newer than this code are not, though the
// blocks themselves are, as content_block_start opened them.
var Upstream = upstream.Codec{
	Protocol: llm.ProtocolMessages, Body: codec.Encoded(request), ForwardBody: forwardBody,
	Decode: decodeResponse, DecodeForward: decodeForward, Read: readStream, ReadForward: readForwardStream,
}

// The request a provider sends upstream: Body for its own calls
// (Complete, Stream), forwardBody for a gateway's (Forward). Errors are
// upstream.Fail's, named by the transport that seals them.

// request builds the body Complete and Stream send, and the name map that
// turns the names the model calls back into tool ids. max_tokens is
// mandatory in this API: s.MaxTokens fills it for a request without one.
func request(req llm.Request, s upstream.Settings, stream bool) (Request, *toolfmt.NameMap, error) {
	names, err := codec.Names(req, s)
	if err != nil {
		return Request{}, nil, err
	}
	body := Request{
		Model: req.Model, MaxTokens: s.MaxTokensFor(req), Temperature: s.TemperatureFor(req), Stream: stream, Messages: []Message{},
		TopP: req.TopP, StopSequences: req.Stop,
	}
	if req.User != "" {
		body.Metadata = &Metadata{UserID: req.User}
	}
	// The API has no seed (see the anthropic provider's Unsupported).
	if body.Tools, err = codec.Tools(req.Tools, toolfmt.ToAnthropic); err != nil {
		return Request{}, nil, err
	}
	system := []string{}
	if req.System != "" {
		system = append(system, req.System)
	}
	msgs, system, err := History(history.Repair(req.Messages), system, names)
	if err != nil {
		return Request{}, nil, upstream.Fail(err.Error(), nil)
	}
	body.Messages = msgs
	body.System = strings.Join(system, "\n\n")
	return body, names, nil
}

// wireMessage is one message of a forwarded body: a kept whole message
// object, or a role with string content or blocks.
type wireMessage struct {
	whole  json.RawMessage
	role   string
	text   *string
	blocks []json.RawMessage
}

func (m wireMessage) encode() []byte {
	if m.whole != nil {
		return m.whole
	}
	var b bytes.Buffer
	b.WriteString(`{"role":`)
	b.Write(rawjson.MustMarshal(m.role))
	b.WriteString(`,"content":`)
	if m.text != nil {
		b.Write(rawjson.MustMarshal(*m.text))
	} else {
		b.Write(rawjson.Array(m.blocks))
	}
	b.WriteByte('}')
	return b.Bytes()
}

// forwardBody writes the request body of a gateway's call (see the
// comment above Upstream).
func forwardBody(req llm.Request, s upstream.Settings, pass *upstream.Passthrough, stream bool) ([]byte, *toolfmt.NameMap, error) {
	// Checked before anything is encoded: a NaN would make the encoder
	// panic, the body being written by hand.
	names, err := codec.Names(req, s)
	if err != nil {
		return nil, nil, err
	}
	temperature := s.TemperatureFor(req)
	forms := pass.Messages()
	var msgs []wireMessage
	add := func(role string, blocks ...json.RawMessage) {
		if len(blocks) == 0 {
			return
		}
		if n := len(msgs); n > 0 && msgs[n-1].role == role && msgs[n-1].whole == nil {
			prev := &msgs[n-1]
			if prev.text != nil {
				prev.blocks = []json.RawMessage{rawjson.MustMarshal(Block{Type: "text", Text: prev.text})}
				prev.text = nil
			}
			prev.blocks = append(prev.blocks, blocks...)
			return
		}
		msgs = append(msgs, wireMessage{role: role, blocks: blocks})
	}
	var system []string
	systemInline := false
	for _, m := range history.Repair(req.Messages) {
		if m.Role == hooks.RoleSystem {
			system = append(system, m.Content)
			systemInline = true
			continue
		}
		if m.Role != hooks.RoleUser && m.Role != hooks.RoleAssistant && m.Role != hooks.RoleTool {
			return nil, nil, upstream.Fail(fmt.Sprintf("message with unknown role %q", m.Role), nil)
		}
		role := string(m.Role)
		if m.Role == hooks.RoleTool {
			role = "user"
		}
		if units, ok := forms.Take(m); ok && len(units) > 0 {
			if len(units) == 1 && isWholeMessage(units[0]) {
				msgs = append(msgs, wireMessage{whole: units[0]})
			} else {
				add(role, units...)
			}
			continue
		}
		switch m.Role {
		case hooks.RoleUser:
			if n := len(msgs); n > 0 && msgs[n-1].role == "user" && msgs[n-1].whole == nil {
				add("user", rawjson.MustMarshal(Block{Type: "text", Text: ptr(m.Content)}))
				continue
			}
			msgs = append(msgs, wireMessage{role: "user", text: ptr(m.Content)})
		case hooks.RoleAssistant:
			var bs []json.RawMessage
			if m.Content != "" {
				bs = append(bs, rawjson.MustMarshal(Block{Type: "text", Text: ptr(m.Content)}))
			}
			for _, c := range m.ToolCalls {
				bs = append(bs, rawjson.MustMarshal(Block{Type: "tool_use", ID: c.ID, Name: names.Wire(c.Name), Input: RequestInput.Of(c.Arguments)}))
			}
			add("assistant", bs...)
		case hooks.RoleTool:
			b := Block{Type: "tool_result", ToolUseID: m.ToolCallID, IsError: m.IsError}
			if m.Content != "" {
				b.Content = ptr(m.Content)
			}
			add("user", rawjson.MustMarshal(b))
		}
	}

	var out rawjson.Object
	out.Set("model", rawjson.MustMarshal(req.Model))
	out.Set("max_tokens", rawjson.MustMarshal(s.MaxTokensFor(req)))
	if req.System != "" || len(system) > 0 {
		kept, ok := forms.Take(hooks.Message{Role: hooks.RoleSystem, Content: req.System})
		if ok && len(kept) == 1 && !systemInline && req.System != "" {
			out.Set("system", kept[0])
		} else if blocks, ok := withTextBlocks(kept, system); ok && req.System != "" {
			// The conversation's system messages follow the client's
			// blocks, whose cache_control then still marks the prefix
			// Anthropic caches.
			out.Set("system", blocks)
		} else {
			all := system
			if req.System != "" {
				all = append([]string{req.System}, system...)
			}
			out.Set("system", rawjson.MustMarshal(strings.Join(all, "\n\n")))
		}
	}
	encoded := make([]json.RawMessage, len(msgs))
	for i, m := range msgs {
		encoded[i] = m.encode()
	}
	out.SetArray("messages", encoded)
	var tools []json.RawMessage
	for _, s := range req.Tools {
		if w, ok := pass.Tool(s); ok {
			tools = append(tools, w)
			continue
		}
		t, err := toolfmt.ToAnthropic(s)
		if err != nil {
			return nil, nil, upstream.Fail("cannot offer the tools", err)
		}
		tools = append(tools, rawjson.MustMarshal(t))
	}
	if pass != nil {
		if extra, ok := pass.Fields["tools"]; ok {
			var more []json.RawMessage
			if err := json.Unmarshal(extra, &more); err != nil {
				return nil, nil, upstream.Fail("the request's tools field is not a list", err)
			}
			tools = append(tools, more...)
		}
	}
	if len(tools) > 0 {
		out.Set("tools", rawjson.Array(tools))
	}
	if temperature != nil {
		out.Set("temperature", rawjson.MustMarshal(*temperature))
	}
	// A setting the client's own field already says goes as the client
	// wrote it (added with the other fields below); one the neutral
	// request changed, or that the client did not send, goes from it.
	if req.TopP != nil && !sampling.SameFloat(pass, "top_p", req.TopP) {
		out.Set("top_p", rawjson.MustMarshal(*req.TopP))
	}
	if len(req.Stop) > 0 && !sampling.SameStrings(pass, "stop_sequences", req.Stop) {
		out.Set("stop_sequences", rawjson.MustMarshal(req.Stop))
	}
	if m, ok := metadataFor(req.User, pass); ok {
		out.Set("metadata", m)
	}
	if stream {
		out.Set("stream", json.RawMessage("true"))
	}
	if pass != nil {
		for _, k := range slices.Sorted(maps.Keys(pass.Fields)) {
			if k == "stream" || k == "tools" || out.Has(k) {
				continue
			}
			out.Set(k, pass.Fields[k])
		}
	}
	return out.Bytes(), names, nil
}

// metadataFor is the metadata to send for the neutral user, and false
// when the client's own metadata (sent as given) already names that user
// or there is no user to name. A changed user replaces the client's
// user_id and keeps its other keys.
func metadataFor(user string, pass *upstream.Passthrough) (json.RawMessage, bool) {
	if user == "" {
		return nil, false
	}
	var kept json.RawMessage
	if pass != nil {
		kept = pass.Fields["metadata"]
	}
	obj, ok := rawjson.ParseObject(kept)
	if !ok || obj == nil {
		return rawjson.MustMarshal(Metadata{UserID: user}), true
	}
	var was string
	if json.Unmarshal(obj.Get("user_id"), &was) == nil && was == user {
		return nil, false
	}
	obj.Set("user_id", rawjson.MustMarshal(user))
	return obj.Bytes(), true
}

// withTextBlocks is the kept system prompt, when it is a list of blocks,
// followed by one text block per text; ok is false when the prompt was
// kept as a string or not at all.
func withTextBlocks(kept []json.RawMessage, texts []string) (json.RawMessage, bool) {
	if len(kept) != 1 {
		return nil, false
	}
	var blocks []json.RawMessage
	if json.Unmarshal(kept[0], &blocks) != nil {
		return nil, false
	}
	for _, t := range texts {
		blocks = append(blocks, rawjson.MustMarshal(Block{Type: "text", Text: ptr(t)}))
	}
	return rawjson.Array(blocks), true
}

// isWholeMessage reports whether a kept unit is a message object rather
// than a content block.
func isWholeMessage(raw json.RawMessage) bool {
	var m struct {
		Role *string `json:"role"`
	}
	return json.Unmarshal(raw, &m) == nil && m.Role != nil
}
