package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/codec/responses"
	"github.com/hookhost/hookhost/internal/rawjson"
	"github.com/hookhost/hookhost/internal/upstream"
	"github.com/hookhost/hookhost/llm"
	"github.com/hookhost/hookhost/llm/internal/history"
	"github.com/hookhost/hookhost/llm/internal/httpretry"
	"github.com/hookhost/hookhost/llm/internal/sampling"
	"github.com/hookhost/hookhost/llm/toolfmt"
)

// forwardResponses is Forward for api=responses. The body is the one
// Complete sends, with the client's own wire forms put back: kept input
// items (reasoning items, images, built-in tool calls an earlier turn
// returned) are sent as they came, kept tools likewise, and top-level
// fields the adapter does not set are added unchanged. The client's
// openai-beta header, kept in pass, is sent too.
func (p *Provider) forwardResponses(ctx context.Context, req llm.Request, pass *upstream.Passthrough, onText func(string)) (llm.Response, *upstream.WireResponse, error) {
	stream := onText != nil
	body, names, err := p.forwardResponsesBody(req, pass, stream)
	if err != nil {
		return llm.Response{}, nil, err
	}
	header := upstream.WithFeatureHeaders(llm.ProtocolResponses, p.headerFor(ctx), pass)
	if stream {
		return p.streamResponsesBody(ctx, header, body, names, onText)
	}
	resp, err := p.client.PostJSON(ctx, p.endpoint, header, body, false)
	if err != nil {
		return llm.Response{}, nil, err
	}
	data, err := p.client.ReadAll(resp)
	if err != nil {
		return llm.Response{}, nil, err
	}
	var rr responses.Response
	if err := json.Unmarshal(data, &rr); err != nil {
		return llm.Response{}, nil, p.badResponse("response is not a Responses API object: %v", err)
	}
	if missing := httpretry.Missing(data, "status", "output"); len(missing) > 0 {
		return llm.Response{}, nil, p.badResponse("response is missing %s, which a Responses API object must have", strings.Join(missing, ", "))
	}
	out, err := p.responsesResult(rr, names)
	if err != nil {
		return llm.Response{}, nil, err
	}
	wire, err := responses.ResponseWire(data, nil)
	if err != nil {
		return llm.Response{}, nil, p.badResponse("response is not a Responses API object: %v", err)
	}
	return out, wire, nil
}

// forwardResponsesBody builds the request body as a map of raw fields, so
// that what the client sent reaches the wire byte for byte.
func (p *Provider) forwardResponsesBody(req llm.Request, pass *upstream.Passthrough, stream bool) (map[string]json.RawMessage, *toolfmt.NameMap, error) {
	// The base body's input is replaced below: encoding each message here
	// only to drop it would cost more than the request when it holds many.
	bare := req
	bare.Messages = nil
	base, names, err := p.responsesBody(bare, stream)
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
		return nil, nil, p.fail("cannot encode the request", err)
	}
	body := map[string]json.RawMessage{}
	if err := json.Unmarshal(b, &body); err != nil {
		return nil, nil, p.fail("cannot encode the request", err)
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
		items, err := p.inputItems(m, names)
		if err != nil {
			return nil, nil, err
		}
		for _, it := range items {
			raw, err := json.Marshal(it)
			if err != nil {
				return nil, nil, p.fail("cannot encode the request", err)
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
			return nil, nil, p.fail("the kept built-in tools are not a JSON array", err)
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
				return nil, nil, p.fail("cannot offer the tools", err)
			}
			raw, err := json.Marshal(t)
			if err != nil {
				return nil, nil, p.fail("cannot offer the tools", err)
			}
			tools = append(tools, raw)
		}
		tools = append(tools, builtin...)
		if body["tools"], err = json.Marshal(tools); err != nil {
			return nil, nil, p.fail("cannot offer the tools", err)
		}
	}

	// Complete sends store=false because its loop sends the whole
	// conversation every time. A gateway client may rely on storage the
	// other way round: the items of a response it receives can come back
	// by id in its next request, which the provider resolves only if it
	// stored them. So the client's own setting is sent, and none when it
	// sent none, leaving the provider's default.
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
	return body, names, nil
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
