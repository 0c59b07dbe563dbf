package llm

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"hash"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// Protocol names one of the public wire protocols that providers speak and
// that the gateway serves.
type Protocol string

// The wire protocols hookhost speaks on either side.
const (
	ProtocolChat      Protocol = "openai-chat"        // POST /v1/chat/completions
	ProtocolResponses Protocol = "openai-responses"   // POST /v1/responses
	ProtocolMessages  Protocol = "anthropic-messages" // POST /v1/messages
)

// Forwarder is implemented by providers that speak a public wire protocol.
// A gateway whose client speaks the same protocol calls Forward instead of
// Complete or Stream, so that what the client sent and the neutral types do
// not model (images, response formats, reasoning settings, cache_control,
// fields added to the API after this code was written) reaches the model,
// and what the model sent back reaches the client.
type Forwarder interface {
	Provider
	// Protocol is the wire protocol this provider sends, as configured.
	Protocol() Protocol
	// Forward makes one model call like Complete, or like Stream when
	// onText is non-nil. The body sent upstream is built from req as
	// Complete builds it, then: every field of pass.Fields the provider
	// does not set itself is added as given; a message or tool of req that
	// pass knows the wire form of (see Passthrough) is sent in that form
	// instead of being encoded from the neutral value. pass may be nil.
	//
	// The WireResponse is the response's wire form. For a streamed call
	// it is built from what the stream carried (content the provider's
	// stream parser does not model is not in it).
	Forward(ctx context.Context, req Request, pass *Passthrough, onText func(string)) (Response, *WireResponse, error)
}

// WireResponse is one model response in its provider's protocol.
type WireResponse struct {
	// Fields are the response's top-level fields as received
	// (Chat Completions: id, created, system_fingerprint, service_tier, …;
	// for Chat Completions the first choice's fields other than message
	// are under the key "choice" as one object).
	Fields map[string]json.RawMessage
	// Message is the assistant message's wire units, in order: Chat
	// Completions, one element (the message object); Responses, the
	// output items; Messages, the content blocks.
	Message []json.RawMessage
}

// Passthrough keeps the wire form of what a client sent, in the protocol
// of a provider that will receive it, for the parts the neutral types do
// not model. The gateway fills one from the client's request and from
// each upstream response it continues, and hands it to Forward.
//
// Messages and tools are matched by value, not by position: a neutral
// message that is still equal to the one decoded from a wire form is sent
// in that form, wherever a hook moved it, and one a hook changed is encoded
// afresh from its neutral value. So a hook that rewrites one message
// cannot make stale wire content reach the model, and one that leaves a
// message alone cannot make an image in it disappear. Equal messages that
// arrived in different wire forms are matched in order of appearance.
//
// A Passthrough is not safe for concurrent use.
type Passthrough struct {
	// Fields are the request's top-level fields that the neutral request
	// does not model, by key, sent as given.
	Fields map[string]json.RawMessage
	// Header holds the client's feature headers (FeatureHeaders of the
	// protocol: anthropic-beta, anthropic-version, openai-beta), which
	// select what the carried fields mean: a beta-gated field sent
	// without its beta header is refused upstream. A Forwarder sends only
	// those names from it, whatever else it holds, so a credential or
	// hop-by-hop header put here by mistake still goes nowhere.
	Header   http.Header
	messages map[[32]byte][][]json.RawMessage
	tools    map[[32]byte]json.RawMessage
}

// FeatureHeaders are the request headers of protocol p that choose API
// features rather than identify anyone: a Forwarder passes them from the
// client to the upstream of the same protocol. Credentials, cookies and
// hop-by-hop headers are never among them.
func FeatureHeaders(p Protocol) []string {
	switch p {
	case ProtocolMessages:
		return []string{"Anthropic-Beta", "Anthropic-Version"}
	case ProtocolChat, ProtocolResponses:
		return []string{"Openai-Beta"}
	}
	return nil
}

// FeatureHeader copies from in the feature headers of protocol p, nil when
// in has none.
func FeatureHeader(p Protocol, in http.Header) http.Header {
	var out http.Header
	for _, name := range FeatureHeaders(p) {
		if v := in.Values(name); len(v) > 0 {
			if out == nil {
				out = http.Header{}
			}
			out[name] = append([]string(nil), v...)
		}
	}
	return out
}

// WithFeatureHeaders is h with pass's feature headers of protocol p: a
// beta header's values (a comma-separated list) are added to the ones h
// has, without repeats, so that betas the configuration turns on stay on;
// any other feature header (a version) is the client's. h itself is not
// changed.
func WithFeatureHeaders(p Protocol, h http.Header, pass *Passthrough) http.Header {
	if pass == nil || len(pass.Header) == 0 {
		return h
	}
	var out http.Header
	for _, name := range FeatureHeaders(p) {
		vals := pass.Header.Values(name)
		if len(vals) == 0 {
			continue
		}
		if out == nil {
			out = h.Clone()
		}
		if !strings.HasSuffix(name, "-Beta") {
			out.Set(name, strings.Join(vals, ", "))
			continue
		}
		var list []string
		for _, v := range append(out.Values(name), vals...) {
			for _, item := range strings.Split(v, ",") {
				if item = strings.TrimSpace(item); item != "" && !slices.Contains(list, item) {
					list = append(list, item)
				}
			}
		}
		out.Set(name, strings.Join(list, ","))
	}
	if out == nil {
		return h
	}
	return out
}

// KeepMessage records wire as the wire form of m: one or more units in the
// provider's protocol (Chat Completions, the message object; Responses,
// its input items; Messages, the whole message object for a user or
// assistant message, or the tool_result block for a tool message).
func (p *Passthrough) KeepMessage(m Message, wire ...json.RawMessage) {
	if p.messages == nil {
		p.messages = map[[32]byte][][]json.RawMessage{}
	}
	d := digest(m)
	p.messages[d] = append(p.messages[d], wire)
}

// KeepTool records wire as the wire form of the tool t.
func (p *Passthrough) KeepTool(t ToolSpec, wire json.RawMessage) {
	if p.tools == nil {
		p.tools = map[[32]byte]json.RawMessage{}
	}
	p.tools[digest(t)] = wire
}

// Tool returns the wire form of t, if t is unchanged since it was kept.
func (p *Passthrough) Tool(t ToolSpec) (json.RawMessage, bool) {
	if p == nil {
		return nil, false
	}
	w, ok := p.tools[digest(t)]
	return w, ok
}

// Messages starts one encoding of a request's messages: each call to
// WireMessages.Take consumes the next wire form recorded for an equal
// message.
func (p *Passthrough) Messages() *WireMessages {
	w := &WireMessages{used: map[[32]byte]int{}}
	if p != nil {
		w.forms = p.messages
	}
	return w
}

// WireMessages hands out recorded wire forms during one encoding.
type WireMessages struct {
	forms map[[32]byte][][]json.RawMessage
	used  map[[32]byte]int
}

// Take returns the wire form of m, if one was kept for a message equal to
// it and not yet taken in this encoding.
func (w *WireMessages) Take(m Message) ([]json.RawMessage, bool) {
	d := digest(m)
	forms := w.forms[d]
	n := w.used[d]
	if n >= len(forms) {
		return nil, false
	}
	w.used[d] = n + 1
	return forms[n], true
}

// digest identifies a neutral value by its fields, each length-prefixed
// so that no two different values write the same bytes.
func digest(v any) [32]byte {
	h := sha256.New()
	put := lengthPrefixed(h)
	switch v := v.(type) {
	case Message:
		put("message")
		HashMessage(h, v)
	case ToolSpec:
		put("tool")
		put(v.Name)
		put(v.Description)
		put(string(v.InputSchema))
	}
	var d [32]byte
	h.Sum(d[:0])
	return d
}

// HashMessage writes every field of m to h, each length-prefixed, so that
// no two different messages write the same bytes: a hash of what it wrote
// identifies the message. Tool-call arguments are taken byte for byte:
// they may be invalid JSON (a model's can be), and then they still
// identify themselves.
func HashMessage(h hash.Hash, m Message) {
	put := lengthPrefixed(h)
	put(string(m.Role))
	put(m.Content)
	put(m.ToolCallID)
	put(m.ToolName)
	put(strconv.FormatBool(m.IsError))
	put(strconv.Itoa(len(m.ToolCalls)))
	for _, c := range m.ToolCalls {
		put(c.ID)
		put(c.Name)
		put(string(c.Arguments))
	}
}

// lengthPrefixed returns a writer of strings to h, each after its length.
// Strings go through one small buffer rather than a []byte copy each: a
// message can be tens of megabytes, and the gateway hashes every one.
func lengthPrefixed(h hash.Hash) func(string) {
	buf := make([]byte, 256)
	return func(s string) {
		binary.BigEndian.PutUint64(buf[:8], uint64(len(s)))
		h.Write(buf[:8])
		for len(s) > 0 {
			n := copy(buf, s)
			h.Write(buf[:n])
			s = s[n:]
		}
	}
}
