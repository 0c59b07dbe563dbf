package responses

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/dialect"
	"github.com/hookhost/hookhost/internal/rawjson"
	"github.com/hookhost/hookhost/internal/upstream"
	"github.com/hookhost/hookhost/llm/toolfmt"
)

// state is what Encode and the stream need of the request beyond the
// neutral view: the client's own values of the fields a Response object
// echoes, as sent.
type state struct {
	echo map[string]json.RawMessage
	// over are fields the stored state sets in the Response object
	// (store, previous_response_id), over an upstream's values.
	over map[string]json.RawMessage
	// turn, when the gateway stores responses, receives the Response
	// object sent (see Turn).
	turn *Turn
}

// echoed are the request fields a Response object repeats; the client's
// tools are echoed as it sent them, never with the tools hookhost added.
var echoed = []string{
	"instructions", "tools", "tool_choice", "parallel_tool_calls", "temperature", "top_p",
	"metadata", "max_output_tokens", "text", "reasoning", "truncation", "user",
	"service_tier", "background", "prompt_cache_key", "safety_identifier", "max_tool_calls", "top_logprobs",
}

// defaults are the protocol's default values of refused fields: a request
// that sends one of them asks for nothing another protocol could not give,
// so it is not Foreign.
var defaults = map[string][]string{
	"tool_choice":  {`"auto"`},
	"background":   {`false`},
	"top_logprobs": {`0`},
}

// Decode reads a client's request body. See the package documentation for
// what becomes of each field.
func (f *Front) Decode(body []byte) (*dialect.Call, error) {
	top, err := dialect.Fields(body, `{"model":"…","input":"Hello"}`)
	if err != nil {
		return nil, err
	}
	d := &decoder{call: &dialect.Call{Pass: &upstream.Passthrough{Fields: map[string]json.RawMessage{}}}, names: map[string]string{}}
	st := &state{echo: map[string]json.RawMessage{}}
	d.call.State = st
	for _, k := range echoed {
		if v, ok := top[k]; ok && !isNull(v) {
			st.echo[k] = v
		}
	}
	if v, ok := top["conversation"]; ok && !isNull(v) {
		return nil, dialect.Invalid("conversation", "conversation is not supported on the gateway route: hookhost keeps responses (previous_response_id), not conversation objects, so the model would lose the earlier conversation. "+
			"Continue with previous_response_id, send the whole conversation in input, or route this client through the bypass route (HOOKHOST_USE_GATEWAY=false), which passes the request to the provider unchanged")
	}
	if v, ok := top["background"]; ok && !isNull(v) && !isDefault("background", v) {
		return nil, dialect.Invalid("background", "background responses are not supported on the gateway route: one runs on after its request ends and is polled by id while it does, which hookhost does not do. "+
			"Leave background unset (or stream the response), or route this client through the bypass route (HOOKHOST_USE_GATEWAY=false)")
	}
	if err := d.decodeTop(top); err != nil {
		return nil, err
	}
	return d.call, nil
}

type decoder struct {
	call *dialect.Call
	// names maps the call ids of function_call items to their tool names,
	// so that a result knows which tool it answers.
	names map[string]string
	// group is the open assistant turn: consecutive assistant-side items
	// and the function_call_output items among and after its calls, which
	// become one neutral assistant message followed by its tool messages.
	group *group
}

// A group is one assistant turn. Clients build the next request either
// with all of a response's calls before their outputs or with each call
// followed by its output (OpenAI's function-calling guide does the
// latter); both are the same turn, and its calls must stay on one
// neutral message, or the relay would not recognise the calls it handed
// out and would lose the plugin rounds hidden behind them.
type group struct {
	msg  hooks.Message
	text []string
	wire []json.RawMessage // the turn's own items, outputs excepted
	outs []output
	// all is every item of the turn in the client's order, outputs
	// included, kept as the assistant message's wire form when a call
	// follows an output, so that an unchanged turn is forwarded as it
	// came.
	all         []json.RawMessage
	interleaved bool
}

type output struct {
	msg hooks.Message
	raw json.RawMessage
}

func (d *decoder) decodeTop(top map[string]json.RawMessage) error {
	req := &d.call.Request
	// Sorted, so that Foreign lists the same request the same way.
	for _, k := range slices.Sorted(maps.Keys(top)) {
		v := top[k]
		switch k {
		case "model":
			if err := json.Unmarshal(v, &req.Model); err != nil || req.Model == "" {
				return dialect.Invalid("model", "model must be a non-empty string naming the model to use")
			}
		case "instructions":
			if isNull(v) {
				continue
			}
			if err := json.Unmarshal(v, &req.System); err != nil {
				return dialect.Invalid("instructions", "instructions must be a string")
			}
		case "max_output_tokens":
			if isNull(v) {
				continue
			}
			var n float64
			if err := json.Unmarshal(v, &n); err != nil || n < 1 || n != math.Trunc(n) || n > math.MaxInt32 {
				return dialect.Invalid("max_output_tokens", "max_output_tokens must be a positive integer")
			}
			req.MaxTokens = int(n)
		case "temperature":
			if isNull(v) {
				continue
			}
			var t float64
			if err := json.Unmarshal(v, &t); err != nil || t < 0 || t > 2 {
				return dialect.Invalid("temperature", "temperature must be a number between 0 and 2")
			}
			req.Temperature = &t
		case "stream":
			if isNull(v) {
				continue
			}
			if err := json.Unmarshal(v, &d.call.Stream); err != nil {
				return dialect.Invalid("stream", "stream must be true or false")
			}
		case "previous_response_id":
			// One hookhost stored was resolved into input before Decode
			// (States.Resolve); what is left is a Responses upstream's
			// own id, which only that upstream can continue from.
			if !isNull(v) {
				d.call.Pass.Fields[k] = v
				d.foreign(k)
			}
		case "input", "tools", "conversation":
			// Below, in order, or refused above.
		default:
			d.call.Pass.Fields[k] = v
			if err := d.field(k, v); err != nil {
				return err
			}
		}
	}
	if req.Model == "" {
		return dialect.Invalid("model", "model is required")
	}
	// safety_identifier is what OpenAI asks for in place of the deprecated
	// user; both name the end user, so the newer one wins.
	for _, k := range []string{"user", "safety_identifier"} {
		v, ok := top[k]
		if !ok || isNull(v) {
			continue
		}
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return dialect.Invalid(k, k+" must be a string identifying the end user")
		}
		if s != "" {
			req.User = s
		}
	}
	if v, ok := top["tools"]; ok && !isNull(v) {
		if err := d.decodeTools(v); err != nil {
			return err
		}
	}
	v, ok := top["input"]
	if !ok || isNull(v) {
		return dialect.Invalid("input", "input is required: the whole conversation, as a string or a list of input items")
	}
	return d.decodeInput(v)
}

func (d *decoder) foreign(what string) {
	d.call.Foreign = append(d.call.Foreign, what)
}

// field handles a top-level field the neutral request does not hold as
// such, by the table: every one reaches an upstream of this protocol as
// sent (it is in Pass.Fields); across protocols a mapped one is sent as
// the neutral request's, a hint is dropped and counted, and anything else
// (refused rows, fields newer than the table) is Foreign unless it holds
// the protocol's default.
func (d *decoder) field(k string, v json.RawMessage) error {
	if isNull(v) {
		return nil
	}
	switch k {
	case "top_p":
		var p float64
		if err := json.Unmarshal(v, &p); err != nil || p < 0 || p > 1 {
			return dialect.Invalid("top_p", "top_p must be a number between 0 and 1")
		}
		d.call.Request.TopP = &p
		return nil
	case "text":
		d.text(v)
		return nil
	case "include":
		d.include(v)
		return nil
	case "stream_options":
		d.streamOptions(v)
		return nil
	}
	switch table.Handling(k) {
	case dialect.Mapped:
		// Read by decodeTop.
	case dialect.Hint:
		if !isEmpty(v) {
			d.call.Drop(k)
		}
	default:
		if !isDefault(k, v) {
			d.foreign(k)
		}
	}
	return nil
}

// text reads the text options: a format other than plain text is Foreign
// (the client parses the JSON it asked for), verbosity a hint.
func (d *decoder) text(v json.RawMessage) {
	var t map[string]json.RawMessage
	if json.Unmarshal(v, &t) != nil {
		d.foreign("text")
		return
	}
	for _, k := range slices.Sorted(maps.Keys(t)) {
		sv := t[k]
		switch {
		case isEmpty(sv):
		case k == "format":
			var f struct {
				Type string `json:"type"`
			}
			if json.Unmarshal(sv, &f) != nil || f.Type != "text" {
				d.foreign("text.format")
			}
		case table.IsHint("text." + k):
			d.call.Drop("text." + k)
		default:
			d.foreign("text." + k)
		}
	}
}

// include reads the list of extra output the client asks for: each value
// by its row, and a value newer than the table is Foreign, since the
// client may read what it asked for.
func (d *decoder) include(v json.RawMessage) {
	var list []string
	if json.Unmarshal(v, &list) != nil {
		d.foreign("include")
		return
	}
	for i, what := range list {
		if path := "include[]: " + what; table.IsHint(path) {
			d.call.Drop(path)
			continue
		}
		d.foreign(fmt.Sprintf("include[%d] (%s)", i, what))
	}
}

// streamOptions reads stream_options: how the stream is written is
// hookhost's own business, so every option is a hint. One the table names
// is counted by its name, any other under one row, so that metric labels
// stay few.
func (d *decoder) streamOptions(v json.RawMessage) {
	var so map[string]json.RawMessage
	if json.Unmarshal(v, &so) != nil {
		d.foreign("stream_options")
		return
	}
	for _, k := range slices.Sorted(maps.Keys(so)) {
		if isEmpty(so[k]) {
			continue
		}
		if path := "stream_options." + k; table.IsHint(path) {
			d.call.Drop(path)
		} else {
			d.call.Drop("stream_options.*")
		}
	}
}

func (d *decoder) decodeTools(v json.RawMessage) error {
	var tools []json.RawMessage
	if err := json.Unmarshal(v, &tools); err != nil {
		return dialect.Invalid("tools", "tools must be a list of tool objects")
	}
	var builtin []json.RawMessage
	for i, raw := range tools {
		param := fmt.Sprintf("tools[%d]", i)
		var t struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal(raw, &t); err != nil || t.Type == "" {
			return dialect.Invalid(param, param+" must be an object with a type")
		}
		if clientRun[t.Type] {
			return dialect.Invalid(param, fmt.Sprintf("%s: tools of type %q are not supported on the gateway route: the client runs their calls, which have no neutral form, so hookhost can neither run pre_tool_call on them nor carry them across the rounds it runs plugin tools in. "+
				"Declare the tool as a function tool, or route this client through the bypass route (HOOKHOST_USE_GATEWAY=false), which passes the request to the provider unchanged", param, t.Type))
		}
		if t.Type != "function" {
			// Run by the provider itself; only an upstream of this
			// protocol can (see llm/openai's forwarding).
			builtin = append(builtin, raw)
			if t.Type == "namespace" {
				d.call.Drop("tools[] (namespace)")
			} else {
				d.call.Drop("tools[] (built-in)")
			}
			continue
		}
		var ft toolfmt.ResponsesTool
		if err := json.Unmarshal(raw, &ft); err != nil {
			return dialect.Invalid(param, param+" is not a function tool: "+err.Error())
		}
		spec, err := toolfmt.FromResponses(ft)
		if err != nil {
			return dialect.Invalid(param, param+": "+err.Error())
		}
		eachKey(raw, func(k, v []byte) {
			switch string(k) {
			case "type", "name", "description", "parameters":
			case "strict":
				if !isEmpty(v) {
					d.call.Drop("tools[].strict")
				}
			default:
				if !isEmpty(v) {
					d.foreign(param + "." + string(k))
				}
			}
		})
		d.call.Request.Tools = append(d.call.Request.Tools, spec)
		d.call.Pass.KeepTool(spec, raw)
	}
	if len(builtin) > 0 {
		b, _ := json.Marshal(builtin)
		d.call.Pass.Fields["tools"] = b
	}
	return nil
}

// clientRun are the tool types whose calls come back to the client to
// run, other than function tools. Their calls are not function_call items
// (custom_tool_call, computer_call, …), so the neutral types cannot hold
// them. Any other type is one the provider runs itself.
var clientRun = map[string]bool{
	"custom": true, "computer_use_preview": true, "computer": true, "computer_use": true,
	"local_shell": true, "shell": true, "apply_patch": true,
}

// item is an input item's fields that hookhost reads.
type item struct {
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	CallID    *string         `json:"call_id"`
	Name      *string         `json:"name"`
	Arguments *string         `json:"arguments"`
	Output    json.RawMessage `json:"output"`
}

func (d *decoder) decodeInput(v json.RawMessage) error {
	var s string
	if err := json.Unmarshal(v, &s); err == nil {
		d.call.Request.Messages = []hooks.Message{{Role: hooks.RoleUser, Content: s}}
		return nil
	}
	items, ok := rawjson.Elements(v)
	if !ok {
		return dialect.Invalid("input", "input must be a string or a list of input items")
	}
	d.call.Request.Messages = make([]hooks.Message, 0, len(items))
	for i, raw := range items {
		if err := d.decodeItem(i, raw); err != nil {
			return err
		}
	}
	d.closeGroup()
	return nil
}

func (d *decoder) decodeItem(i int, raw json.RawMessage) error {
	param := fmt.Sprintf("input[%d]", i)
	var it item
	if err := json.Unmarshal(raw, &it); err != nil {
		return dialect.Invalid(param, param+" must be an input item object: "+err.Error())
	}
	if it.Type == "" && it.Role != "" {
		it.Type = "message"
	}
	switch it.Type {
	case "":
		return dialect.Invalid(param+".type", param+" has no type")
	case "message":
		return d.message(param, it, raw)
	case "function_call":
		if it.CallID == nil || *it.CallID == "" {
			return dialect.Invalid(param+".call_id", param+" (function_call) needs a call_id")
		}
		if it.Name == nil || *it.Name == "" {
			return dialect.Invalid(param+".name", param+" (function_call) needs a name")
		}
		if it.Arguments == nil {
			return dialect.Invalid(param+".arguments", param+" (function_call) needs arguments, a string")
		}
		d.itemKeys(param, raw, "call_id", "name", "arguments")
		g := d.openTurn(false)
		g.interleaved = g.interleaved || len(g.outs) > 0
		g.all = append(g.all, raw)
		args := json.RawMessage(*it.Arguments)
		if strings.TrimSpace(*it.Arguments) == "" {
			args = json.RawMessage("{}")
		}
		g.msg.ToolCalls = append(g.msg.ToolCalls, hooks.ToolCall{ID: *it.CallID, Name: *it.Name, Arguments: args})
		g.wire = append(g.wire, raw)
		d.names[*it.CallID] = *it.Name
		return nil
	case "function_call_output":
		if it.CallID == nil || *it.CallID == "" {
			return dialect.Invalid(param+".call_id", param+" (function_call_output) needs the call_id of the call it answers")
		}
		d.itemKeys(param, raw, "call_id", "output")
		text, err := d.parts(param+".output", it.Output, "input_text", "output_text")
		if err != nil {
			return err
		}
		m := hooks.Message{Role: hooks.RoleTool, ToolCallID: *it.CallID, ToolName: d.names[*it.CallID], Content: text}
		if g := d.group; g != nil && len(g.msg.ToolCalls) > 0 {
			g.all = append(g.all, raw)
			g.outs = append(g.outs, output{m, raw})
			return nil
		}
		d.closeGroup()
		d.add(m, raw)
		return nil
	case "reasoning":
		// Opaque reasoning of an earlier response: a hint, which travels
		// with the assistant message it sits in, so an upstream of this
		// protocol gets it back in place.
		d.call.Drop("input[] (reasoning)")
		g := d.openTurn(true)
		g.wire = append(g.wire, raw)
		g.all = append(g.all, raw)
		return nil
	default:
		// Built-in tool calls and their outputs, item references: no
		// neutral form. They travel with the assistant message they sit
		// in, so an upstream of this protocol gets them back in place.
		d.foreign(fmt.Sprintf("%s (%s)", param, it.Type))
		g := d.openTurn(true)
		g.wire = append(g.wire, raw)
		g.all = append(g.all, raw)
		return nil
	}
}

// itemKeys looks at an item's keys other than type and known: the hints a
// client replays with an earlier response's items are dropped across
// protocols and counted, and any other key is Foreign.
func (d *decoder) itemKeys(param string, raw json.RawMessage, known ...string) {
	eachKey(raw, func(k, v []byte) {
		if string(k) == "type" || isEmpty(v) {
			return
		}
		for _, kk := range known {
			if string(k) == kk {
				return
			}
		}
		switch string(k) {
		case "id":
			d.call.Drop("input[].id")
		case "status":
			d.call.Drop("input[].status")
		case "phase":
			d.call.Drop("input[].phase")
		default:
			d.foreign(param + "." + string(k))
		}
	})
}

func (d *decoder) message(param string, it item, raw json.RawMessage) error {
	d.itemKeys(param, raw, "role", "content")
	var role hooks.Role
	switch it.Role {
	case "user":
		role = hooks.RoleUser
	case "system", "developer":
		role = hooks.RoleSystem
	case "assistant":
		text, err := d.parts(param+".content", it.Content, "output_text", "refusal", "input_text")
		if err != nil {
			return err
		}
		g := d.openTurn(true)
		if text != "" {
			g.text = append(g.text, text)
		}
		g.wire = append(g.wire, raw)
		g.all = append(g.all, raw)
		return nil
	default:
		return dialect.Invalid(param+".role", fmt.Sprintf("%s.role %q is not one of user, assistant, system, developer", param, it.Role))
	}
	text, err := d.parts(param+".content", it.Content, "input_text")
	if err != nil {
		return err
	}
	d.closeGroup()
	d.add(hooks.Message{Role: role, Content: text}, raw)
	return nil
}

// parts reads a content value: a string, or a list of parts whose text
// parts (of the given types) are joined and whose others (images, files,
// audio) are Foreign.
func (d *decoder) parts(param string, v json.RawMessage, textTypes ...string) (string, error) {
	if len(v) == 0 || isNull(v) {
		return "", dialect.Invalid(param, param+" is required")
	}
	var s string
	if err := json.Unmarshal(v, &s); err == nil {
		return s, nil
	}
	var parts []struct {
		Type    string  `json:"type"`
		Text    *string `json:"text"`
		Refusal *string `json:"refusal"`
	}
	if err := json.Unmarshal(v, &parts); err != nil {
		return "", dialect.Invalid(param, param+" must be a string or a list of content parts")
	}
	var texts []string
	for j, p := range parts {
		pp := fmt.Sprintf("%s[%d]", param, j)
		switch {
		case p.Type == "":
			return "", dialect.Invalid(pp+".type", pp+" has no type")
		case p.Type == "refusal" && slices.Contains(textTypes, p.Type):
			if p.Refusal == nil {
				return "", dialect.Invalid(pp+".refusal", pp+" (refusal) needs refusal, a string")
			}
			texts = append(texts, *p.Refusal)
		case slices.Contains(textTypes, p.Type):
			if p.Text == nil {
				return "", dialect.Invalid(pp+".text", fmt.Sprintf("%s (%s) needs text, a string", pp, p.Type))
			}
			texts = append(texts, *p.Text)
		default:
			d.foreign(fmt.Sprintf("%s (%s)", pp, p.Type))
		}
	}
	// The keys of the text parts: what a replayed answer carries beside
	// its text is a hint, anything else Foreign.
	j := 0
	eachElem(v, func(raw []byte) {
		if j >= len(parts) {
			return
		}
		typ := parts[j].Type
		at := j
		j++
		if !slices.Contains(textTypes, typ) {
			return
		}
		eachKey(raw, func(k, val []byte) {
			switch string(k) {
			case "type", "text", "refusal":
			case "annotations":
				if !isEmpty(val) {
					d.call.Drop("input[].content[].annotations")
				}
			case "logprobs":
				if !isEmpty(val) {
					d.call.Drop("input[].content[].logprobs")
				}
			default:
				if !isEmpty(val) {
					d.foreign(fmt.Sprintf("%s[%d].%s", param, at, k))
				}
			}
		})
	})
	return strings.Join(texts, "\n"), nil
}

// openTurn returns the open assistant turn, or a new one. An item that
// starts a turn's output (a message, reasoning) after the open turn's
// results have begun starts the next turn; a call continues it.
func (d *decoder) openTurn(starts bool) *group {
	if starts && d.group != nil && len(d.group.outs) > 0 {
		d.closeGroup()
	}
	if d.group == nil {
		d.group = &group{msg: hooks.Message{Role: hooks.RoleAssistant}}
	}
	return d.group
}

func (d *decoder) closeGroup() {
	g := d.group
	if g == nil {
		return
	}
	d.group = nil
	g.msg.Content = strings.Join(g.text, "\n")
	if g.interleaved {
		d.add(g.msg, g.all...)
	} else {
		d.add(g.msg, g.wire...)
	}
	// The outputs' own items are kept too: llm/openai forwards the turn
	// from the assistant message's items only while every output is
	// unchanged, and each output from its own item otherwise.
	for _, o := range g.outs {
		d.add(o.msg, o.raw)
	}
}

func (d *decoder) add(m hooks.Message, wire ...json.RawMessage) {
	d.call.Request.Messages = append(d.call.Request.Messages, m)
	d.call.Pass.KeepMessage(m, wire...)
}

func isNull(v json.RawMessage) bool {
	return bytes.Equal(bytes.TrimSpace(v), []byte("null"))
}

// isEmpty is true for null, "", [] and {}: values that ask for nothing.
func isEmpty(v json.RawMessage) bool {
	t := bytes.TrimSpace(v)
	if len(t) == 0 || isNull(t) {
		return true
	}
	switch t[0] {
	case '"':
		return string(t) == `""`
	case '[', '{':
		// The value is valid JSON (it was decoded from the body), so an
		// array or object with nothing but space inside is empty.
		return len(bytes.TrimSpace(t[1:len(t)-1])) == 0
	}
	return false
}

// isDefault reports whether v is null or the protocol's default for key.
func isDefault(key string, v json.RawMessage) bool {
	if isNull(v) {
		return true
	}
	var got any
	if json.Unmarshal(v, &got) != nil {
		return false
	}
	for _, def := range defaults[key] {
		var want any
		_ = json.Unmarshal([]byte(def), &want)
		if equalJSON(got, want) {
			return true
		}
	}
	return false
}

func equalJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}
