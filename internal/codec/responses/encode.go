package responses

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/codec"
	"github.com/hookhost/hookhost/internal/dialect"
)

// Encode writes the loop's outcome as one Response object.
func (f *Front) Encode(call *dialect.Call, res *dialect.Result) ([]byte, error) {
	if res == nil {
		return nil, fmt.Errorf("responses: no result to encode (host error)")
	}
	var wire map[string]json.RawMessage
	if res.Wire != nil {
		wire = res.Wire.Fields
	}
	r := response{
		id:        mintID("resp_"),
		createdAt: time.Now().Unix(),
		model:     res.Model,
		status:    "completed",
		usage:     usageJSON(res.Usage),
	}
	r.status, r.incomplete = statusOf(res.Stop)
	if v, ok := wire["created_at"]; ok {
		var t int64
		if json.Unmarshal(v, &t) == nil {
			r.createdAt = t
		}
	}
	if res.WholeWire && res.Wire != nil {
		if v, ok := wire["id"]; ok {
			var id string
			if json.Unmarshal(v, &id) == nil && id != "" {
				r.id = id
			}
		}
		r.output = res.Wire.Message
		// The upstream's usage has the details hookhost does not sum
		// (cached and reasoning tokens); it is the right one when it
		// counts what the loop counted.
		if u, ok := wire["usage"]; ok && sameUsage(u, res.Usage) {
			r.usage = u
		}
	} else {
		for _, t := range res.Text {
			if t != "" {
				r.output = append(r.output, messageItem(mintID("msg_"), "completed", t))
			}
		}
		for _, c := range res.ToolCalls {
			r.output = append(r.output, callItem(mintID("fc_"), "completed", c))
		}
	}
	st := stateOf(call)
	out, err := json.Marshal(r.object(st, wire))
	if err == nil {
		st.finalObject(out)
	}
	return out, err
}

// response is what the front itself sets in a Response object.
type response struct {
	id        string
	createdAt int64
	model     string
	status    string // in_progress, completed, incomplete, failed
	// incomplete is incomplete_details.reason when status is incomplete.
	incomplete string
	output     []json.RawMessage
	usage      json.RawMessage // nil: null
	errObj     json.RawMessage // nil: null
}

// own are the fields the front always sets itself; an upstream's value of
// them never reaches the client. instructions and tools are the client's
// own: hooks may have changed the former and plugins added to the latter.
var own = map[string]bool{
	"id": true, "object": true, "created_at": true, "status": true, "model": true, "output": true,
	"usage": true, "error": true, "incomplete_details": true, "instructions": true, "tools": true,
	"output_text": true,
}

// object builds the Response object: the protocol's defaults, then what
// the client asked for, then the upstream response's fields, then the
// front's own.
func (r response) object(st *state, wire map[string]json.RawMessage) map[string]json.RawMessage {
	o := map[string]json.RawMessage{
		"background":           json.RawMessage(`false`),
		"instructions":         json.RawMessage(`null`),
		"max_output_tokens":    json.RawMessage(`null`),
		"metadata":             json.RawMessage(`{}`),
		"parallel_tool_calls":  json.RawMessage(`true`),
		"previous_response_id": json.RawMessage(`null`),
		"reasoning":            json.RawMessage(`{"effort":null,"summary":null}`),
		"store":                json.RawMessage(`false`),
		"temperature":          json.RawMessage(`1`),
		"text":                 json.RawMessage(`{"format":{"type":"text"}}`),
		"tool_choice":          json.RawMessage(`"auto"`),
		"tools":                json.RawMessage(`[]`),
		"top_p":                json.RawMessage(`1`),
		"truncation":           json.RawMessage(`"disabled"`),
	}
	if st != nil {
		for k, v := range st.echo {
			o[k] = v
		}
	}
	for k, v := range wire {
		if !own[k] {
			o[k] = v
		}
	}
	if st != nil {
		for k, v := range st.over {
			o[k] = v
		}
	}
	output := r.output
	if output == nil {
		output = []json.RawMessage{}
	}
	o["id"] = mustJSON(r.id)
	o["object"] = json.RawMessage(`"response"`)
	o["created_at"] = mustJSON(r.createdAt)
	o["status"] = mustJSON(r.status)
	o["model"] = mustJSON(r.model)
	o["output"] = mustJSON(output)
	o["usage"] = orNull(r.usage)
	o["error"] = orNull(r.errObj)
	o["incomplete_details"] = json.RawMessage(`null`)
	if r.status == "incomplete" {
		reason := r.incomplete
		if reason == "" {
			reason = "max_output_tokens"
		}
		o["incomplete_details"] = mustJSON(map[string]string{"reason": reason})
	}
	return o
}

func stateOf(call *dialect.Call) *state {
	if call == nil {
		return nil
	}
	st, _ := call.State.(*state)
	return st
}

func messageItem(id, status, text string) json.RawMessage {
	return mustJSON(Item{Type: "message", ID: id, Status: status, Role: "assistant", Content: []Part{textPart(text)}})
}

func textPart(text string) Part {
	return Part{Type: "output_text", Text: text, Annotations: json.RawMessage(`[]`), Logprobs: json.RawMessage(`[]`)}
}

// callItem is c as a function_call item; a call without arguments has
// "arguments": "", as an item just opened has them.
func callItem(id, status string, c hooks.ToolCall) json.RawMessage {
	args := codec.Args(c.Arguments)
	return mustJSON(Item{Type: "function_call", ID: id, CallID: c.ID, Name: c.Name, Arguments: &args, Status: status})
}

func usageJSON(u hooks.Usage) json.RawMessage {
	return mustJSON(Usage{
		InputTokens:         u.InputTokens,
		InputTokensDetails:  json.RawMessage(`{"cached_tokens":0}`),
		OutputTokens:        u.OutputTokens,
		OutputTokensDetails: json.RawMessage(`{"reasoning_tokens":0}`),
		TotalTokens:         u.InputTokens + u.OutputTokens,
	})
}

func sameUsage(raw json.RawMessage, u hooks.Usage) bool {
	var w struct {
		In  *int `json:"input_tokens"`
		Out *int `json:"output_tokens"`
	}
	return json.Unmarshal(raw, &w) == nil && w.In != nil && w.Out != nil && *w.In == u.InputTokens && *w.Out == u.OutputTokens
}

func orNull(v json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(v)) == 0 {
		return json.RawMessage(`null`)
	}
	return v
}

// mustJSON encodes values built here, which always encode.
func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic("responses: cannot encode " + fmt.Sprintf("%T", v) + ": " + err.Error())
	}
	return b
}

// statusOf is a finished response's status for stop, with the reason
// incomplete_details gives: the answer cut at the token limit, or stopped
// by a filter (the upstream's refusal, or a plugin that stopped the
// answer).
func statusOf(stop hooks.StopReason) (status, incomplete string) {
	switch stop {
	case hooks.StopMaxTokens:
		return "incomplete", "max_output_tokens"
	case hooks.StopRefusal:
		return "incomplete", "content_filter"
	}
	return "completed", ""
}
