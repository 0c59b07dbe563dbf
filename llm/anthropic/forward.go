package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/codec/messages"
	"github.com/hookhost/hookhost/internal/rawjson"
	"github.com/hookhost/hookhost/llm"
	"github.com/hookhost/hookhost/llm/internal/history"
	"github.com/hookhost/hookhost/llm/internal/sampling"
	"github.com/hookhost/hookhost/llm/toolfmt"
)

var _ llm.Forwarder = (*Provider)(nil)

// Protocol returns llm.ProtocolMessages.
func (p *Provider) Protocol() llm.Protocol { return llm.ProtocolMessages }

// Forward makes one call for a gateway whose client speaks Anthropic
// Messages; see llm.Forwarder.
//
// The body is written by hand rather than encoded, so that every wire form
// pass kept reaches the model byte for byte, whitespace included:
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
func (p *Provider) Forward(ctx context.Context, req llm.Request, pass *llm.Passthrough, onText func(string)) (llm.Response, *llm.WireResponse, error) {
	resp, wire, err := p.forward(ctx, req, pass, onText)
	return resp, wire, p.client.SealFor(ctx, err)
}

func (p *Provider) forward(ctx context.Context, req llm.Request, pass *llm.Passthrough, onText func(string)) (llm.Response, *llm.WireResponse, error) {
	stream := onText != nil
	body, names, err := p.forwardBody(req, pass, stream)
	if err != nil {
		return llm.Response{}, nil, err
	}
	header := llm.WithFeatureHeaders(llm.ProtocolMessages, p.headerFor(ctx), pass)
	resp, err := p.client.Post(ctx, p.endpoint, header, body, stream)
	if err != nil {
		return llm.Response{}, nil, err
	}
	if stream {
		w := &wireStream{}
		out, err := p.read(resp, names, onText, w)
		if err != nil {
			return llm.Response{}, nil, err
		}
		return out, w.result(), nil
	}
	data, err := p.client.ReadAll(resp)
	if err != nil {
		return llm.Response{}, nil, err
	}
	out, err := p.parse(data, names)
	if err != nil {
		return llm.Response{}, nil, err
	}
	obj, ok := rawjson.ParseObject(data)
	if !ok {
		return llm.Response{}, nil, p.badResponse("response is not a JSON object")
	}
	wire := &llm.WireResponse{Fields: map[string]json.RawMessage{}}
	for _, k := range obj.Keys() {
		if k != "content" {
			wire.Fields[k] = obj.Get(k)
		}
	}
	if err := json.Unmarshal(obj.Get("content"), &wire.Message); err != nil {
		return llm.Response{}, nil, p.badResponse("response content is not a list of blocks: %v", err)
	}
	return out, wire, nil
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

// forwardBody writes the request body Forward sends (see Forward).
func (p *Provider) forwardBody(req llm.Request, pass *llm.Passthrough, stream bool) ([]byte, *toolfmt.NameMap, error) {
	names, err := toolfmt.NewNameMap(toolfmt.SpecNames(req.Tools))
	if err != nil {
		return nil, nil, p.fail("cannot offer the tools", err)
	}
	// Checked before anything is encoded: a NaN would make the encoder
	// panic, the body being written by hand.
	temperature := req.Temperature
	if temperature == nil {
		temperature = p.temperature
	}
	if err := sampling.Check(llm.Request{Temperature: temperature, TopP: req.TopP}); err != nil {
		return nil, nil, p.fail("request not sent", err)
	}
	forms := pass.Messages()
	var msgs []wireMessage
	add := func(role string, blocks ...json.RawMessage) {
		if len(blocks) == 0 {
			return
		}
		if n := len(msgs); n > 0 && msgs[n-1].role == role && msgs[n-1].whole == nil {
			prev := &msgs[n-1]
			if prev.text != nil {
				prev.blocks = []json.RawMessage{rawjson.MustMarshal(messages.Block{Type: "text", Text: prev.text})}
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
			return nil, nil, p.fail(fmt.Sprintf("message with unknown role %q", m.Role), nil)
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
				add("user", rawjson.MustMarshal(messages.Block{Type: "text", Text: str(m.Content)}))
				continue
			}
			msgs = append(msgs, wireMessage{role: "user", text: str(m.Content)})
		case hooks.RoleAssistant:
			var bs []json.RawMessage
			if m.Content != "" {
				bs = append(bs, rawjson.MustMarshal(messages.Block{Type: "text", Text: str(m.Content)}))
			}
			for _, c := range m.ToolCalls {
				bs = append(bs, rawjson.MustMarshal(messages.Block{Type: "tool_use", ID: c.ID, Name: names.Wire(c.Name), Input: inputOf(c.Arguments)}))
			}
			add("assistant", bs...)
		case hooks.RoleTool:
			b := messages.Block{Type: "tool_result", ToolUseID: m.ToolCallID, IsError: m.IsError}
			if m.Content != "" {
				b.Content = str(m.Content)
			}
			add("user", rawjson.MustMarshal(b))
		}
	}

	var out rawjson.Object
	out.Set("model", rawjson.MustMarshal(req.Model))
	maxTokens := p.maxTokens
	if req.MaxTokens > 0 {
		maxTokens = req.MaxTokens
	}
	out.Set("max_tokens", rawjson.MustMarshal(maxTokens))
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
			return nil, nil, p.fail("cannot offer the tools", err)
		}
		tools = append(tools, rawjson.MustMarshal(t))
	}
	if pass != nil {
		if extra, ok := pass.Fields["tools"]; ok {
			var more []json.RawMessage
			if err := json.Unmarshal(extra, &more); err != nil {
				return nil, nil, p.fail("the request's tools field is not a list", err)
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
func metadataFor(user string, pass *llm.Passthrough) (json.RawMessage, bool) {
	if user == "" {
		return nil, false
	}
	var kept json.RawMessage
	if pass != nil {
		kept = pass.Fields["metadata"]
	}
	obj, ok := rawjson.ParseObject(kept)
	if !ok || obj == nil {
		return rawjson.MustMarshal(messages.Metadata{UserID: user}), true
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
		blocks = append(blocks, rawjson.MustMarshal(messages.Block{Type: "text", Text: str(t)}))
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

// wireStream collects a streamed message's wire form beside the parser in
// read, which has already checked every event it is handed: the message
// has started, a block's index is that of a started, open block.
// Its methods do nothing on a nil receiver, so read need not ask.
type wireStream struct {
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

func (w *wireStream) start(data []byte) {
	if w == nil {
		return
	}
	var e struct {
		Message json.RawMessage `json:"message"`
	}
	json.Unmarshal(data, &e)
	w.message, _ = rawjson.ParseObject(e.Message)
}

func (w *wireStream) open(data []byte) {
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

func (w *wireStream) delta(i int, raw json.RawMessage) {
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

func (w *wireStream) messageDelta(data []byte) {
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

func (w *wireStream) result() *llm.WireResponse {
	out := &llm.WireResponse{Fields: map[string]json.RawMessage{}}
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
				b.obj.Set("input", inputOf(json.RawMessage(in)))
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
