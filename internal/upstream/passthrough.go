// Package upstream is the passthrough plumbing between the gateway and
// the providers that speak a public wire protocol: Forwarder, which such a
// provider implements, the wire forms a client sent (Passthrough) and the
// wire form of an answer (WireResponse), and the feature headers passed
// from a client to the upstream of the same protocol. Only the gateway,
// its relay and codecs, and hookhost's own providers use it; package llm
// keeps what a provider author and a Go program need.
package upstream

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"hash"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/hookhost/hookhost/llm"
)

// Forwarder is implemented by providers that speak a public wire protocol.
// A gateway whose client speaks the same protocol calls Forward instead of
// Complete or Stream, so that what the client sent and the neutral types do
// not model (images, response formats, reasoning settings, cache_control,
// fields added to the API after this code was written) reaches the model,
// and what the model sent back reaches the client.
type Forwarder interface {
	llm.Provider
	// Protocol is the wire protocol this provider sends, as configured.
	Protocol() llm.Protocol
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
	Forward(ctx context.Context, req llm.Request, pass *Passthrough, onText func(string)) (llm.Response, *WireResponse, error)
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
// A Passthrough is not safe for concurrent use, nor are the WireMessages
// it hands out.
//
// A gateway keeps one wire form for every message of a request, which may
// hold a million of them, so the forms are stored compactly: the units in
// one slice, and per message its digest and where its units are, sorted
// by digest when an encoding starts. That costs about 70 bytes a message
// beside the wire bytes themselves, where a map of slices cost several
// times that.
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
	Header http.Header
	units  []json.RawMessage
	kept   []keptForm // sorted by digest, then by order kept, up to sorted
	sorted int
	tools  map[[32]byte]json.RawMessage
	h      hasher
}

// keptForm is where the wire form of one kept message is: units[at:at+n].
type keptForm struct {
	digest [32]byte
	seq    int32 // order kept, so that equal messages match in order
	at, n  int32
}

// FeatureHeaders are the request headers of protocol p that choose API
// features rather than identify anyone: a Forwarder passes them from the
// client to the upstream of the same protocol. Credentials, cookies and
// hop-by-hop headers are never among them.
func FeatureHeaders(p llm.Protocol) []string {
	switch p {
	case llm.ProtocolMessages:
		return []string{"Anthropic-Beta", "Anthropic-Version"}
	case llm.ProtocolChat, llm.ProtocolResponses:
		return []string{"Openai-Beta"}
	}
	return nil
}

// FeatureHeader copies from in the feature headers of protocol p, nil when
// in has none.
func FeatureHeader(p llm.Protocol, in http.Header) http.Header {
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
func WithFeatureHeaders(p llm.Protocol, h http.Header, pass *Passthrough) http.Header {
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
func (p *Passthrough) KeepMessage(m llm.Message, wire ...json.RawMessage) {
	p.kept = append(p.kept, keptForm{digest: p.h.digest(m), seq: int32(len(p.kept)), at: int32(len(p.units)), n: int32(len(wire))})
	p.units = append(p.units, wire...)
}

// KeepTool records wire as the wire form of the tool t.
func (p *Passthrough) KeepTool(t llm.ToolSpec, wire json.RawMessage) {
	if p.tools == nil {
		p.tools = map[[32]byte]json.RawMessage{}
	}
	p.tools[p.h.digest(t)] = wire
}

// Tool returns the wire form of t, if t is unchanged since it was kept.
func (p *Passthrough) Tool(t llm.ToolSpec) (json.RawMessage, bool) {
	if p == nil || p.tools == nil {
		return nil, false
	}
	w, ok := p.tools[p.h.digest(t)]
	return w, ok
}

// Messages starts one encoding of a request's messages: each call to
// WireMessages.Take consumes the next wire form recorded for an equal
// message.
func (p *Passthrough) Messages() *WireMessages {
	if p == nil || len(p.kept) == 0 {
		return &WireMessages{}
	}
	p.sort()
	// The forms as sorted now: forms kept during the encoding are for a
	// later one.
	return &WireMessages{p: p, kept: p.kept[:p.sorted:p.sorted]}
}

// sort puts the forms kept since the last sort in their place: the new
// ones are sorted alone and merged in, so that a gateway keeping a few
// more forms each round does not sort the whole request again.
func (p *Passthrough) sort() {
	if p.sorted == len(p.kept) {
		return
	}
	cmp := func(a, b keptForm) int {
		if c := bytes.Compare(a.digest[:], b.digest[:]); c != 0 {
			return c
		}
		return int(a.seq) - int(b.seq)
	}
	fresh := p.kept[p.sorted:]
	slices.SortFunc(fresh, cmp)
	if p.sorted > 0 {
		merged := make([]keptForm, 0, len(p.kept))
		old := p.kept[:p.sorted]
		for len(old) > 0 && len(fresh) > 0 {
			if cmp(old[0], fresh[0]) <= 0 {
				merged, old = append(merged, old[0]), old[1:]
			} else {
				merged, fresh = append(merged, fresh[0]), fresh[1:]
			}
		}
		merged = append(append(merged, old...), fresh...)
		p.kept = merged
	}
	p.sorted = len(p.kept)
}

// WireMessages hands out recorded wire forms during one encoding.
type WireMessages struct {
	p    *Passthrough
	kept []keptForm
	// taken counts, per run of equal digests (by where it starts), the
	// forms of the run already handed out: in a map while few runs have
	// been taken from (an encoding often takes one), then in a slice as
	// long as the forms kept, which costs less than a map of many.
	few  map[int]int32
	many []int32
}

// fewTakes is how many runs WireMessages counts in a map.
const fewTakes = 64

func (w *WireMessages) taken(run int) int32 {
	if w.many != nil {
		return w.many[run]
	}
	return w.few[run]
}

func (w *WireMessages) take(run int) {
	switch {
	case w.many != nil:
		w.many[run]++
	case len(w.few) >= fewTakes:
		w.many = make([]int32, len(w.kept))
		for r, n := range w.few {
			w.many[r] = n
		}
		w.few = nil
		w.many[run]++
	default:
		if w.few == nil {
			w.few = map[int]int32{}
		}
		w.few[run]++
	}
}

// Take returns the wire form of m, if one was kept for a message equal to
// it and not yet taken in this encoding.
func (w *WireMessages) Take(m llm.Message) ([]json.RawMessage, bool) {
	if w.p == nil {
		return nil, false
	}
	kept := w.kept
	d := w.p.h.digest(m)
	first, found := slices.BinarySearchFunc(kept, d, func(f keptForm, d [32]byte) int { return bytes.Compare(f.digest[:], d[:]) })
	if !found {
		return nil, false
	}
	i := first + int(w.taken(first))
	if i >= len(kept) || kept[i].digest != d {
		return nil, false
	}
	w.take(first)
	f := kept[i]
	return w.p.units[f.at : f.at+f.n : f.at+f.n], true
}

// hasher digests neutral values with one sha256 state and one buffer,
// reused: a request's every message is digested, and a fresh state and
// buffer each would cost more than the message itself.
type hasher struct {
	h   hash.Hash
	buf []byte
}

// digest identifies a neutral value by its fields, each length-prefixed
// so that no two different values write the same bytes.
func (x *hasher) digest(v any) [32]byte {
	if x.h == nil {
		x.h, x.buf = sha256.New(), make([]byte, 256)
	}
	x.h.Reset()
	put := func(s string) { writePrefixed(x.h, x.buf, s) }
	switch v := v.(type) {
	case llm.Message:
		put("message")
		hashMessage(put, v)
	case llm.ToolSpec:
		put("tool")
		put(v.Name)
		put(v.Description)
		put(string(v.InputSchema))
	}
	var d [32]byte
	x.h.Sum(d[:0])
	return d
}

// HashMessage writes every field of m to h, each length-prefixed, so that
// no two different messages write the same bytes: a hash of what it wrote
// identifies the message. Tool-call arguments are taken byte for byte:
// they may be invalid JSON (a model's can be), and then they still
// identify themselves.
func HashMessage(h hash.Hash, m llm.Message) {
	bp := prefixBuffers.Get().(*[]byte)
	defer prefixBuffers.Put(bp)
	hashMessage(func(s string) { writePrefixed(h, *bp, s) }, m)
}

func hashMessage(put func(string), m llm.Message) {
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

// prefixBuffers lend HashMessage its buffer: callers hash every message
// of a request, and a buffer each would cost more than most messages.
var prefixBuffers = sync.Pool{New: func() any { b := make([]byte, 256); return &b }}

// writePrefixed writes s to h after its length, through buf rather than a
// []byte copy of s: a message can be tens of megabytes.
func writePrefixed(h hash.Hash, buf []byte, s string) {
	binary.BigEndian.PutUint64(buf[:8], uint64(len(s)))
	h.Write(buf[:8])
	for len(s) > 0 {
		n := copy(buf, s)
		h.Write(buf[:n])
		s = s[n:]
	}
}
