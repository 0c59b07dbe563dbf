package responses

import (
	"bytes"
	"encoding/json"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/codec"
	"github.com/hookhost/hookhost/internal/rawjson"
	"github.com/hookhost/hookhost/internal/upstream"
	"github.com/hookhost/hookhost/internal/upstream/history"
	"github.com/hookhost/hookhost/internal/upstream/sampling"
	"github.com/hookhost/hookhost/llm"
	"github.com/hookhost/hookhost/llm/toolfmt"
)

// Upstream is the protocol as the openai provider speaks it (api
// responses).
var Upstream = upstream.Codec{
	Protocol: llm.ProtocolResponses, Body: codec.Encoded(request), ForwardBody: forwardBody,
	Decode: decodeResponse, DecodeForward: decodeForward, Read: readStream, ReadForward: readForwardStream,
}

// The request a provider sends upstream: Body for its own calls
// (Complete, Stream), forwardBody for a gateway's (Forward). Errors are
// upstream.Fail's, named by the transport that seals them.

// request builds the body Complete and Stream send: the system prompt is
// the instructions, the history input items. Requests are sent with
// store=false: hookhost sends the whole conversation every time.
func request(req llm.Request, s upstream.Settings, stream bool) (Request, *toolfmt.NameMap, error) {
	names, err := codec.Names(req, s)
	if err != nil {
		return Request{}, nil, err
	}
	// The API has no stop sequences and no seed (see the openai
	// provider's Unsupported).
	body := Request{
		Model: req.Model, Instructions: req.System, Input: []Input{},
		MaxOutputTokens: s.MaxTokensFor(req), Temperature: s.TemperatureFor(req), Stream: stream,
		TopP: req.TopP, User: req.User,
	}
	if body.Tools, err = codec.Tools(req.Tools, toolfmt.ToResponses); err != nil {
		return Request{}, nil, err
	}
	for _, m := range history.Repair(req.Messages) {
		items, err := inputItems(m, names)
		if err != nil {
			return Request{}, nil, err
		}
		body.Input = append(body.Input, items...)
	}
	return body, names, nil
}

// inputItems is InputOf with its error as a request's.
func inputItems(m hooks.Message, names *toolfmt.NameMap) ([]Input, error) {
	items, err := InputOf(m, names)
	if err != nil {
		return nil, upstream.Fail(err.Error(), nil)
	}
	return items, nil
}

// forwardBody is the body of a forwarded request: the one Body
// writes, with the client's own wire forms put back: kept input items
// (reasoning items, images, built-in tool calls an earlier turn returned)
// are sent as they came, kept tools likewise, and top-level fields the
// adapter does not set are added unchanged. It is built as a map of raw
// fields, so that what the client sent reaches the wire byte for byte.
func forwardBody(req llm.Request, s upstream.Settings, pass *upstream.Passthrough, stream bool) ([]byte, *toolfmt.NameMap, error) {
	// The base body's input is replaced below: encoding each message here
	// only to drop it would cost more than the request when it holds many.
	bare := req
	bare.Messages = nil
	base, names, err := request(bare, s, stream)
	if err != nil {
		return nil, nil, err
	}
	// The base body's input and tools are replaced below; encoding them
	// here only to drop them would be wasted work.
	base.Input, base.Tools = nil, nil
	// A setting the client's own field already says goes as the client
	// wrote it (added with the other fields below).
	if sampling.SameFloat(pass, "top_p", base.TopP) {
		base.TopP = nil
	}
	if sampling.SameString(pass, "user", base.User) {
		base.User = ""
	}
	b, err := json.Marshal(base)
	if err != nil {
		return nil, nil, upstream.Fail("cannot encode the request", err)
	}
	body := map[string]json.RawMessage{}
	if err := json.Unmarshal(b, &body); err != nil {
		return nil, nil, upstream.Fail("cannot encode the request", err)
	}

	input := make([]json.RawMessage, 0, len(req.Messages))
	kept := pass.Messages()
	// turn is an assistant turn whose kept items hold its outputs too
	// (a client that sent each call followed by its output): it is sent
	// as it came once every output has followed unchanged, and split
	// into its own items and the outputs as they now are otherwise.
	var turn *interleaved
	for _, m := range history.Repair(req.Messages) {
		wire, ok := kept.Take(m)
		if turn != nil {
			if ok && turn.follows(m, wire) {
				if turn.complete() {
					input = append(input, turn.all...)
					turn = nil
				}
				continue
			}
			input = turn.split(input)
			turn = nil
		}
		if ok {
			if t := newInterleaved(m, wire); t != nil {
				turn = t
				continue
			}
			input = append(input, wire...)
			continue
		}
		items, err := inputItems(m, names)
		if err != nil {
			return nil, nil, err
		}
		for _, it := range items {
			raw, err := json.Marshal(it)
			if err != nil {
				return nil, nil, upstream.Fail("cannot encode the request", err)
			}
			input = append(input, raw)
		}
	}
	if turn != nil {
		input = turn.split(input)
	}
	// Every item is JSON already (the client's, or encoded above): joined
	// as they are, not checked and copied again by encoding/json.
	body["input"] = rawjson.Array(input)

	// Tools the provider runs itself (web_search, file_search, mcp, …)
	// have no neutral form: the gateway's Responses front keeps them, as
	// the client sent them, in the "tools" field, and they follow the
	// function tools.
	var builtin []json.RawMessage
	if raw, ok := passField(pass, "tools"); ok {
		if err := json.Unmarshal(raw, &builtin); err != nil {
			return nil, nil, upstream.Fail("the kept built-in tools are not a JSON array", err)
		}
	}
	if len(req.Tools) > 0 || len(builtin) > 0 {
		tools := make([]json.RawMessage, 0, len(req.Tools)+len(builtin))
		for _, s := range req.Tools {
			if wire, ok := pass.Tool(s); ok {
				tools = append(tools, wire)
				continue
			}
			t, err := toolfmt.ToResponses(s)
			if err != nil {
				return nil, nil, upstream.Fail("cannot offer the tools", err)
			}
			raw, err := json.Marshal(t)
			if err != nil {
				return nil, nil, upstream.Fail("cannot offer the tools", err)
			}
			tools = append(tools, raw)
		}
		tools = append(tools, builtin...)
		if body["tools"], err = json.Marshal(tools); err != nil {
			return nil, nil, upstream.Fail("cannot offer the tools", err)
		}
	}

	// Body sends store=false because the provider's loop sends the
	// whole conversation every time. A gateway client may rely on storage
	// the other way round: the items of a response it receives can come
	// back by id in its next request, which the provider resolves only if
	// it stored them. So the client's own setting is sent, and none when
	// it sent none, leaving the provider's default.
	if pass != nil {
		if v, ok := pass.Fields["store"]; ok {
			body["store"] = v
		} else {
			delete(body, "store")
		}
		for k, v := range pass.Fields {
			if k == "tools" {
				continue
			}
			if _, set := body[k]; set || k == "stream" || k == "input" {
				continue
			}
			// Stream options are an error on a call that does not stream.
			if k == "stream_options" && !stream {
				continue
			}
			body[k] = v
		}
	}
	out, err := rawjson.Marshal(body)
	if err != nil {
		return nil, nil, upstream.Fail("cannot encode the request", err)
	}
	return out, names, nil
}

func passField(pass *upstream.Passthrough, key string) (json.RawMessage, bool) {
	if pass == nil {
		return nil, false
	}
	v, ok := pass.Fields[key]
	return v, ok
}

// interleaved is a kept assistant turn whose items include its
// function_call_output items, while the tool messages that follow it are
// matched against them.
type interleaved struct {
	all  []json.RawMessage // the turn's items as the client sent them
	own  []json.RawMessage // the same without the outputs
	outs []json.RawMessage // the outputs, in order
	seen int               // outputs matched so far
}

func newInterleaved(m llm.Message, wire []json.RawMessage) *interleaved {
	if m.Role != hooks.RoleAssistant {
		return nil
	}
	t := &interleaved{all: wire}
	for _, raw := range wire {
		var it struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(raw, &it) == nil && it.Type == "function_call_output" {
			t.outs = append(t.outs, raw)
		} else {
			t.own = append(t.own, raw)
		}
	}
	if len(t.outs) == 0 {
		return nil
	}
	return t
}

// follows reports whether m, kept as wire, is the turn's next output
// unchanged, and counts it.
func (t *interleaved) follows(m llm.Message, wire []json.RawMessage) bool {
	if m.Role != hooks.RoleTool || t.seen >= len(t.outs) || len(wire) != 1 || !bytes.Equal(wire[0], t.outs[t.seen]) {
		return false
	}
	t.seen++
	return true
}

func (t *interleaved) complete() bool { return t.seen == len(t.outs) }

// split appends the turn's own items and the outputs matched so far: all
// calls before their outputs, an order the API accepts as well.
func (t *interleaved) split(input []json.RawMessage) []json.RawMessage {
	input = append(input, t.own...)
	return append(input, t.outs[:t.seen]...)
}
