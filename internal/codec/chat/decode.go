package chat

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/dialect"
	"github.com/hookhost/hookhost/internal/rawjson"
	"github.com/hookhost/hookhost/internal/upstream"
	"github.com/hookhost/hookhost/llm/toolfmt"
)

// state is the front's own part of a Call.
type state struct {
	// includeUsage is stream_options.include_usage: the stream ends with
	// one usage chunk, and every other chunk carries "usage": null.
	includeUsage bool
}

// modelled are the top-level keys the neutral request or the front itself
// takes; every other key is passed through.
var modelled = map[string]bool{
	"model": true, "messages": true, "tools": true, "max_tokens": true, "max_completion_tokens": true,
	"temperature": true, "stream": true, "stream_options": true, "n": true,
}

// defaults are the values of refused fields that ask for nothing an
// upstream of another protocol would not do anyway, so they need no
// translation.
var defaults = map[string]any{
	"tool_choice":     "auto",
	"logprobs":        false,
	"top_logprobs":    0.0,
	"modalities":      []any{"text"},
	"response_format": map[string]any{"type": "text"},
}

// decoder carries one request's decoding.
type decoder struct {
	call *dialect.Call
	// callNames maps the ids of the assistant's tool calls seen so far to
	// their names, so a tool message can say which tool answered.
	callNames map[string]string
}

// Decode reads a client request body. Every refusal is a 400 naming the
// field at fault, in the words OpenAI would use.
func (f *Front) Decode(body []byte) (*dialect.Call, error) {
	top, err := dialect.Fields(body, `{"model":"…","messages":[{"role":"user","content":"Hello"}]}`)
	if err != nil {
		return nil, err
	}
	st := &state{}
	d := &decoder{
		call:      &dialect.Call{Pass: &upstream.Passthrough{Fields: map[string]json.RawMessage{}}, State: st},
		callNames: map[string]string{},
	}
	req := &d.call.Request
	for _, key := range []string{"functions", "function_call"} {
		if !isNull(top[key]) {
			return nil, dialect.Invalid(key, fmt.Sprintf("%s is deprecated and not supported: declare functions in tools and choose them with tool_choice", key))
		}
	}

	model, ok := stringOf(top["model"])
	if !ok || model == "" {
		return nil, dialect.Invalid("model", "model is required and must be a non-empty string")
	}
	req.Model = model

	msgs, ok := rawjson.Elements(top["messages"])
	if !ok || len(msgs) == 0 {
		return nil, dialect.Invalid("messages", "messages is required and must be a non-empty array of message objects")
	}
	if err := d.messages(msgs); err != nil {
		return nil, err
	}
	if err := d.tools(top["tools"]); err != nil {
		return nil, err
	}

	tokenKey := ""
	for _, key := range []string{"max_tokens", "max_completion_tokens"} {
		raw := top[key]
		if isNull(raw) {
			continue
		}
		n, ok := intOf(raw)
		if !ok || n < 1 {
			return nil, dialect.Invalid(key, key+" must be a positive integer")
		}
		// The newer field wins, as it does at OpenAI.
		if key == "max_completion_tokens" || req.MaxTokens == 0 {
			req.MaxTokens = n
			tokenKey = key
		}
	}
	if tokenKey != "" {
		// Which of the two fields the client used matters to some servers
		// (reasoning models refuse max_tokens); the forwarding adapter
		// sends the neutral value under the key kept here.
		d.call.Pass.Fields[tokenKey] = top[tokenKey]
	}
	if raw := top["temperature"]; !isNull(raw) {
		var t float64
		if json.Unmarshal(raw, &t) != nil || t < 0 || t > 2 || math.IsNaN(t) {
			return nil, dialect.Invalid("temperature", "temperature must be a number from 0 to 2")
		}
		req.Temperature = &t
	}
	if raw := top["stream"]; !isNull(raw) {
		if json.Unmarshal(raw, &d.call.Stream) != nil {
			return nil, dialect.Invalid("stream", "stream must be a boolean")
		}
	}
	if raw := top["stream_options"]; !isNull(raw) {
		if !d.call.Stream {
			return nil, dialect.Invalid("stream_options", "stream_options is only allowed when stream is true")
		}
		var so map[string]json.RawMessage
		if json.Unmarshal(raw, &so) != nil || so == nil {
			return nil, dialect.Invalid("stream_options", "stream_options must be an object whose include_usage is a boolean")
		}
		if v := so["include_usage"]; !isNull(v) {
			b, ok := boolOf(v)
			if !ok {
				return nil, dialect.Invalid("stream_options", "stream_options must be an object whose include_usage is a boolean")
			}
			st.includeUsage = b
		}
		for _, k := range slices.Sorted(maps.Keys(so)) {
			if v := so[k]; k == "include_usage" || isEmpty(v) {
				continue
			}
			// How the stream is written is hookhost's own business; an
			// option named after the table's rows is counted by its name,
			// any other under one row, so that metric labels stay few.
			if path := "stream_options." + k; table.IsHint(path) {
				d.call.Drop(path)
			} else {
				d.call.Drop("stream_options.*")
			}
		}
	}
	if raw := top["n"]; !isNull(raw) {
		if n, ok := intOf(raw); !ok || n != 1 {
			return nil, dialect.Invalid("n", "n must be 1: this server answers with one choice")
		}
	}
	if err := d.mapped(top); err != nil {
		return nil, err
	}

	// The rest follows the table: every field reaches an upstream of this
	// protocol as sent; across protocols a hint is dropped and counted, and
	// anything else (refused rows, and fields newer than the table) is
	// Foreign unless it holds the protocol's default.
	for _, k := range slices.Sorted(maps.Keys(top)) {
		if modelled[k] || k == "functions" || k == "function_call" {
			continue
		}
		v := top[k]
		d.call.Pass.Fields[k] = v
		switch table.Handling(k) {
		case dialect.Mapped:
		case dialect.Hint:
			if !isEmpty(v) {
				d.call.Drop(k)
			}
		default:
			if !isDefault(k, v) {
				d.call.Foreign = append(d.call.Foreign, k)
			}
		}
	}
	return d.call, nil
}

// mapped reads the fields another protocol has an equivalent of into the
// neutral request; they stay in Pass.Fields too, so that an upstream of
// this protocol gets them as sent.
func (d *decoder) mapped(top map[string]json.RawMessage) error {
	req := &d.call.Request
	if raw := top["top_p"]; !isNull(raw) {
		var p float64
		if json.Unmarshal(raw, &p) != nil || p < 0 || p > 1 || math.IsNaN(p) {
			return dialect.Invalid("top_p", "top_p must be a number from 0 to 1")
		}
		req.TopP = &p
	}
	if raw := top["seed"]; !isNull(raw) {
		var n json.Number
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var seed int64
		err := dec.Decode(&n)
		if err == nil {
			seed, err = n.Int64()
		}
		// json.Number also takes a number written as a string.
		if t := bytes.TrimSpace(raw); err != nil || t[0] == '"' {
			return dialect.Invalid("seed", "seed must be an integer")
		}
		req.Seed = &seed
	}
	if raw := top["stop"]; !isNull(raw) {
		if s, ok := stringOf(raw); ok {
			if s != "" {
				req.Stop = []string{s}
			}
		} else {
			var list []string
			if json.Unmarshal(raw, &list) != nil {
				return dialect.Invalid("stop", "stop must be a string or an array of strings")
			}
			for _, s := range list {
				if s != "" {
					req.Stop = append(req.Stop, s)
				}
			}
		}
	}
	// safety_identifier is what OpenAI asks for in place of the deprecated
	// user; both name the end user, so the newer one wins.
	for _, key := range []string{"user", "safety_identifier"} {
		raw := top[key]
		if isNull(raw) {
			continue
		}
		s, ok := stringOf(raw)
		if !ok {
			return dialect.Invalid(key, key+" must be a string identifying the end user")
		}
		if s != "" {
			req.User = s
		}
	}
	return nil
}

// messages decodes the history. Leading system and developer messages
// are the system prompt, kept whole under the neutral system message so
// that an upstream of this protocol receives them as they came.
func (d *decoder) messages(msgs []json.RawMessage) error {
	req := &d.call.Request
	var sys []string
	lead := 0
	for ; lead < len(msgs); lead++ {
		m, err := object(msgs[lead], fmt.Sprintf("messages[%d]", lead))
		if err != nil {
			return err
		}
		role, _ := stringOf(m["role"])
		if role != "system" && role != "developer" {
			break
		}
		text, err := d.systemText(m, lead)
		if err != nil {
			return err
		}
		sys = append(sys, text)
	}
	if lead > 0 {
		req.System = strings.Join(sys, "\n\n")
		d.call.Pass.KeepMessage(hooks.Message{Role: hooks.RoleSystem, Content: req.System}, msgs[:lead]...)
	}
	req.Messages = make([]hooks.Message, 0, len(msgs)-lead)
	for i := lead; i < len(msgs); i++ {
		m, err := d.message(msgs[i], i)
		if err != nil {
			return err
		}
		req.Messages = append(req.Messages, m)
		d.call.Pass.KeepMessage(m, msgs[i])
	}
	return nil
}

func (d *decoder) systemText(m map[string]json.RawMessage, i int) (string, error) {
	at := fmt.Sprintf("messages[%d]", i)
	d.extraKeys(m, at, "messages[]", "role", "content")
	return d.content(m["content"], at+".content", false)
}

// message decodes one message after the system prompt.
func (d *decoder) message(raw json.RawMessage, i int) (hooks.Message, error) {
	at := fmt.Sprintf("messages[%d]", i)
	m, err := object(raw, at)
	if err != nil {
		return hooks.Message{}, err
	}
	role, ok := stringOf(m["role"])
	if !ok {
		return hooks.Message{}, dialect.Invalid(at+".role", "role is required and must be one of system, developer, user, assistant, tool")
	}
	switch role {
	case "system", "developer":
		d.extraKeys(m, at, "messages[]", "role", "content")
		text, err := d.content(m["content"], at+".content", false)
		return hooks.Message{Role: hooks.RoleSystem, Content: text}, err
	case "user":
		d.extraKeys(m, at, "messages[]", "role", "content")
		text, err := d.content(m["content"], at+".content", false)
		return hooks.Message{Role: hooks.RoleUser, Content: text}, err
	case "assistant":
		return d.assistant(m, at)
	case "tool":
		d.extraKeys(m, at, "messages[]", "role", "content", "tool_call_id", "name")
		id, ok := stringOf(m["tool_call_id"])
		if !ok || id == "" {
			return hooks.Message{}, dialect.Invalid(at+".tool_call_id", "a tool message needs tool_call_id, the id of the call it answers")
		}
		// LangChain and LangGraph name the tool that answered. The call
		// the message answers knows its tool better: a name that differs
		// cannot change what the model reads of the result, so the call's
		// wins, and the message's is used only for a call not in view.
		name := d.callNames[id]
		if raw := m["name"]; !isNull(raw) {
			n, ok := stringOf(raw)
			if !ok {
				return hooks.Message{}, dialect.Invalid(at+".name", "name must be a string, the name of the tool that answered")
			}
			if name == "" {
				name = n
			}
		}
		text, err := d.content(m["content"], at+".content", false)
		return hooks.Message{Role: hooks.RoleTool, ToolCallID: id, ToolName: name, Content: text}, err
	case "function":
		return hooks.Message{}, dialect.Invalid(at+".role", `role "function" is deprecated and not supported: declare tools and answer their calls with role "tool" messages`)
	}
	return hooks.Message{}, dialect.Invalid(at+".role", fmt.Sprintf("role %q is not one of system, developer, user, assistant, tool", role))
}

func (d *decoder) assistant(m map[string]json.RawMessage, at string) (hooks.Message, error) {
	if !isNull(m["function_call"]) {
		return hooks.Message{}, dialect.Invalid(at+".function_call", "function_call is deprecated and not supported: send the assistant's calls in tool_calls")
	}
	d.extraKeys(m, at, "messages[]", "role", "content", "tool_calls", "refusal", "function_call")
	out := hooks.Message{Role: hooks.RoleAssistant}
	text, err := d.content(m["content"], at+".content", true)
	if err != nil {
		return out, err
	}
	out.Content = text
	if raw := m["refusal"]; !isNull(raw) {
		r, ok := stringOf(raw)
		if !ok {
			return out, dialect.Invalid(at+".refusal", "refusal must be a string or null")
		}
		// The provider adapter reads a refusal as the answer's text; the
		// history it comes back in must read the same.
		if out.Content == "" {
			out.Content = r
		}
	}
	if raw := m["tool_calls"]; !isNull(raw) {
		var calls []json.RawMessage
		if json.Unmarshal(raw, &calls) != nil {
			return out, dialect.Invalid(at+".tool_calls", "tool_calls must be an array of tool call objects")
		}
		for j, craw := range calls {
			c, err := d.toolCall(craw, fmt.Sprintf("%s.tool_calls[%d]", at, j))
			if err != nil {
				return out, err
			}
			out.ToolCalls = append(out.ToolCalls, c)
			d.callNames[c.ID] = c.Name
		}
	}
	return out, nil
}

func (d *decoder) toolCall(raw json.RawMessage, at string) (hooks.ToolCall, error) {
	c, err := object(raw, at)
	if err != nil {
		return hooks.ToolCall{}, err
	}
	id, ok := stringOf(c["id"])
	if !ok || id == "" {
		return hooks.ToolCall{}, dialect.Invalid(at+".id", "a tool call needs an id, a non-empty string")
	}
	typ, _ := stringOf(c["type"])
	switch typ {
	case "function":
		fn, err := object(c["function"], at+".function")
		if err != nil {
			return hooks.ToolCall{}, err
		}
		name, ok := stringOf(fn["name"])
		if !ok || name == "" {
			return hooks.ToolCall{}, dialect.Invalid(at+".function.name", "a function call needs its name")
		}
		args, ok := stringOf(fn["arguments"])
		if !ok {
			return hooks.ToolCall{}, dialect.Invalid(at+".function.arguments", "arguments must be a string holding the call's JSON arguments")
		}
		// The model's text is kept as written, invalid JSON included: the
		// tool-call pipeline turns that into an error the model can read.
		if strings.TrimSpace(args) == "" {
			args = "{}"
		}
		return hooks.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(args)}, nil
	case "custom":
		// A custom tool's call carries free text, not JSON arguments;
		// only an upstream of this protocol can take it back.
		cu, err := object(c["custom"], at+".custom")
		if err != nil {
			return hooks.ToolCall{}, err
		}
		name, _ := stringOf(cu["name"])
		input, _ := stringOf(cu["input"])
		d.call.Foreign = append(d.call.Foreign, at+" (custom)")
		q, _ := json.Marshal(input)
		return hooks.ToolCall{ID: id, Name: name, Arguments: q}, nil
	}
	return hooks.ToolCall{}, dialect.Invalid(at+".type", `a tool call's type must be "function"`)
}

// content reads a message's content: a string, or an array of parts whose
// text parts (and an assistant's refusal parts) are joined. Parts of other
// types (images, audio, files) are noted as foreign: only an upstream of
// this protocol can carry them, and it gets them through the kept wire
// form. assistant allows null, as for an assistant that only calls tools.
func (d *decoder) content(raw json.RawMessage, at string, assistant bool) (string, error) {
	if isNull(raw) {
		if assistant {
			return "", nil
		}
		return "", dialect.Invalid(at, "content is required: a string or an array of content parts")
	}
	if s, ok := stringOf(raw); ok {
		return s, nil
	}
	var parts []json.RawMessage
	if json.Unmarshal(raw, &parts) != nil {
		return "", dialect.Invalid(at, "content must be a string or an array of content parts")
	}
	var texts []string
	for j, praw := range parts {
		pat := fmt.Sprintf("%s[%d]", at, j)
		p, err := object(praw, pat)
		if err != nil {
			return "", err
		}
		typ, ok := stringOf(p["type"])
		if !ok || typ == "" {
			return "", dialect.Invalid(pat+".type", "a content part needs a type")
		}
		if typ == "refusal" && assistant {
			// The provider adapters read a refusal as the answer's text;
			// the history it comes back in reads the same.
			r, ok := stringOf(p["refusal"])
			if !ok {
				return "", dialect.Invalid(pat+".refusal", "a refusal part needs refusal, a string")
			}
			d.extraKeys(p, pat, "messages[].content[]", "type", "refusal")
			texts = append(texts, r)
			continue
		}
		if typ != "text" {
			d.call.Foreign = append(d.call.Foreign, fmt.Sprintf("%s (%s)", pat, typ))
			continue
		}
		t, ok := stringOf(p["text"])
		if !ok {
			return "", dialect.Invalid(pat+".text", "a text part needs text, a string")
		}
		d.extraKeys(p, pat, "messages[].content[]", "type", "text")
		texts = append(texts, t)
	}
	return strings.Join(texts, "\n"), nil
}

// tools decodes the client's tools. Function tools become neutral specs,
// kept in their wire form so strict and anything newer survive; tools of
// other types (custom) are refused.
func (d *decoder) tools(raw json.RawMessage) error {
	if isNull(raw) {
		return nil
	}
	var tools []json.RawMessage
	if json.Unmarshal(raw, &tools) != nil {
		return dialect.Invalid("tools", "tools must be an array of tool objects")
	}
	seen := map[string]bool{}
	for i, traw := range tools {
		at := fmt.Sprintf("tools[%d]", i)
		t, err := object(traw, at)
		if err != nil {
			return err
		}
		typ, ok := stringOf(t["type"])
		if !ok || typ == "" {
			return dialect.Invalid(at+".type", `a tool needs a type, such as "function"`)
		}
		if typ != "function" {
			// Chat Completions has no tools the provider runs itself:
			// every call comes back to the client, and one of a tool with
			// no neutral form (custom tools take free text) could neither
			// pass through pre_tool_call nor be told from the plugin
			// calls of its round.
			return dialect.Invalid(at, fmt.Sprintf("%s: tools of type %q are not supported on the gateway route: the client runs their calls, and hookhost can neither run pre_tool_call on them nor carry them across the rounds it runs plugin tools in. "+
				"Declare the tool as a function tool, or route this client through the bypass route (HOOKHOST_USE_GATEWAY=false), which passes the request to the provider unchanged", at, typ))
		}
		fn, err := object(t["function"], at+".function")
		if err != nil {
			return err
		}
		name, _ := stringOf(fn["name"])
		if !toolfmt.ValidName(name) {
			return dialect.Invalid(at+".function.name", fmt.Sprintf("function name %q must be 1 to 64 letters, digits, underscores or dashes", name))
		}
		if seen[name] {
			return dialect.Invalid(at+".function.name", fmt.Sprintf("function name %q is declared twice", name))
		}
		seen[name] = true
		spec := hooks.ToolSpec{Name: name}
		if raw := fn["description"]; !isNull(raw) {
			if spec.Description, ok = stringOf(raw); !ok {
				return dialect.Invalid(at+".function.description", "description must be a string")
			}
		}
		if raw := fn["parameters"]; !isNull(raw) {
			if _, err := object(raw, at+".function.parameters"); err != nil {
				return dialect.Invalid(at+".function.parameters", "parameters must be a JSON Schema object")
			}
			spec.InputSchema = raw
		}
		d.extraKeys(fn, at+".function", "tools[].function", "name", "description", "parameters")
		d.extraKeys(t, at, "tools[]", "type", "function")
		d.call.Request.Tools = append(d.call.Request.Tools, spec)
		d.call.Pass.KeepTool(spec, traw)
	}
	return nil
}

// extraKeys handles the keys of m, found at at, other than known whose
// values are not empty, by the table's rows under row ("messages[]",
// "tools[].function", …): a hint is dropped across protocols and counted;
// any other key, documented or newer than the table, means something the
// neutral types cannot say and is Foreign.
func (d *decoder) extraKeys(m map[string]json.RawMessage, at, row string, known ...string) {
	var keys []string
	for k, v := range m {
		if !isEmpty(v) && !slices.Contains(known, k) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		if path := row + "." + k; table.IsHint(path) {
			d.call.Drop(path)
			continue
		}
		d.call.Foreign = append(d.call.Foreign, at+"."+k)
	}
}

func object(raw json.RawMessage, at string) (map[string]json.RawMessage, error) {
	// Members reads what json.Unmarshal into a map would, without
	// copying each value.
	m, ok := rawjson.Members(raw)
	if !ok {
		return nil, dialect.Invalid(at, at+" must be a JSON object")
	}
	return m, nil
}

func isNull(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || string(t) == "null"
}

// isEmpty is true for null, "", [] and {}: values that ask for nothing.
func isEmpty(raw json.RawMessage) bool {
	if isNull(raw) {
		return true
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return false
	}
	switch v := v.(type) {
	case string:
		return v == ""
	case []any:
		return len(v) == 0
	case map[string]any:
		return len(v) == 0
	}
	return false
}

func isDefault(key string, raw json.RawMessage) bool {
	if isEmpty(raw) {
		return true
	}
	want, ok := defaults[key]
	if !ok {
		return false
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return false
	}
	return reflect.DeepEqual(v, want)
}

func stringOf(raw json.RawMessage) (string, bool) {
	if s, ok := plainString(raw); ok {
		return s, true
	}
	var s string
	if len(raw) == 0 || json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	t := bytes.TrimSpace(raw)
	return s, len(t) > 0 && t[0] == '"'
}

// plainString is the string raw holds when it is one with no escape, no
// control character and valid UTF-8, which needs no decoding; ok is false
// for anything else, left to encoding/json.
func plainString(raw json.RawMessage) (string, bool) {
	t := bytes.TrimSpace(raw)
	if len(t) < 2 || t[0] != '"' || t[len(t)-1] != '"' {
		return "", false
	}
	inner := t[1 : len(t)-1]
	for _, c := range inner {
		if c < 0x20 || c == '"' || c == '\\' {
			return "", false
		}
	}
	if !utf8.Valid(inner) {
		return "", false
	}
	return string(inner), true
}

func boolOf(raw json.RawMessage) (bool, bool) {
	var b bool
	if isNull(raw) || json.Unmarshal(raw, &b) != nil {
		return false, false
	}
	return b, true
}

func intOf(raw json.RawMessage) (int, bool) {
	var f float64
	if json.Unmarshal(raw, &f) != nil || f != math.Trunc(f) || f > math.MaxInt32 || f < math.MinInt32 {
		return 0, false
	}
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || t[0] == '"' {
		return 0, false
	}
	return int(f), true
}
