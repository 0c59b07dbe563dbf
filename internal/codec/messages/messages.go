// Package messages is the Anthropic Messages codec: the protocol's wire
// shapes, defined once for both sides. As the gateway's front it decodes
// client requests (POST /v1/messages) into a dialect.Call and writes the
// loop's answer back, as one message object or as the named server-sent
// events of Anthropic's stream.
//
// # Decoding
//
// Decode follows the front's field table (Fields, and the README's table
// generated from it), which says for every request field and header what
// becomes of it when the upstream speaks another protocol.
//
// The neutral request gets the model, max_tokens, temperature, the system
// prompt (a string, or text blocks joined with a blank line), the custom
// tools and the conversation; and, mapped, top_p, stop_sequences (as Stop)
// and metadata.user_id (as User). A user message's text blocks are joined
// with a blank line into one neutral user message; each of its
// tool_result blocks becomes a neutral tool message, placed before that
// user message (Anthropic wants results first in any case). An assistant
// message's text blocks are joined and its tool_use blocks become tool
// calls whose arguments are the input object, compacted. A system message
// in the conversation (Claude Code sends them) becomes a neutral system
// message where it stands (after the results, when it stands between tool
// calls and their results); its wire form is not kept, so the anthropic
// provider folds it into the system prompt, also when forwarding, since an
// upstream without the beta that allows such messages refuses them.
//
// Hints, fields that cannot change what the model answers (cache_control
// anywhere, metadata's other keys, thinking and earlier thinking blocks,
// top_k, output_config.effort, tools' eager_input_streaming,
// defer_loading and strict, …), are named in Call.Dropped by their table
// path; an upstream of another protocol gets the request without them.
// Everything else the neutral view does not model is kept for an Anthropic
// upstream in the call's upstream.Passthrough, and named in Call.Foreign when
// it cannot go to another protocol:
//
//   - Top-level fields the neutral request does not model go to
//     Pass.Fields as sent, the mapped and hint ones too, so that an
//     Anthropic upstream gets them byte for byte. The refused and carried
//     ones (tool_choice, output_config.format, mcp_servers, container, …)
//     and any field added to the API later are Foreign unless their value
//     is the API's default.
//   - Server tools (a tool whose type is not "custom", such as
//     web_search_20250305) are Foreign and kept, in order, as the array
//     Pass.Fields["tools"], which the anthropic provider's Forward sends
//     after the custom tools. Custom tools are kept with KeepTool, so
//     their hints survive.
//   - The system prompt as sent is kept as the wire form of a system
//     message whose content is the joined prompt.
//   - A message that maps to exactly one neutral message (every assistant
//     message, and a user message without tool_result blocks) is kept
//     whole: the message object, byte for byte. A user message that
//     carries tool_result blocks is kept in blocks instead: each tool
//     message with its tool_result block, and the user message made of
//     its other blocks (if it has any) with those blocks. The forwarder
//     joins consecutive kept blocks of one role into one message, so the
//     client's message goes upstream with the same blocks in the same
//     order, whatever neutral messages it split into.
//   - Images, documents and any other block a neutral message cannot
//     hold are Foreign, named by their place and type, such as
//     "messages[1].content[0] (image)"; so are the blocks of Anthropic's
//     server tools and keys of a block or tool that the table does not
//     list.
//
// # Encoding
//
// A whole response is Anthropic's message object. Its top-level fields
// that this front does not set come from the upstream's response when the
// upstream speaks Anthropic too; when the message is exactly the
// upstream's (Result.WholeWire), its content blocks are sent as they came,
// thinking blocks and signatures included, and so are its stop_reason and
// stop_sequence. Usage is always the sum over every round; when the
// upstream reported cache token counts, they are kept and input_tokens is
// lowered by them, so that the three still add up to the sum.
//
// A stream writes nothing until the loop first emits something; then
// message_start (with empty content and input tokens of at least 1: the
// first upstream round's real count when the loop knows it by then, see
// dialect.InputAnnouncer, else the estimate of dialect.Meta), the blocks
// of every round renumbered 0..n-1 in order, and at
// the end one message_delta carrying the summed usage, and message_stop.
// Every frame is named after its data's type and flushed as written.
package messages

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/dialect"
	"github.com/hookhost/hookhost/internal/rawjson"
	"github.com/hookhost/hookhost/internal/upstream"
	"github.com/hookhost/hookhost/llm"
	"github.com/hookhost/hookhost/llm/toolfmt"
)

// Front speaks Anthropic Messages to clients.
type Front struct{}

var _ dialect.Front = (*Front)(nil)

// New returns the front.
func New() *Front { return &Front{} }

// Protocol returns llm.ProtocolMessages.
func (f *Front) Protocol() llm.Protocol { return llm.ProtocolMessages }

// Path returns "/v1/messages".
func (f *Front) Path() string { return "/v1/messages" }

// defaults are the values of unmodelled fields that ask for nothing the
// neutral request lacks, so that a client sending them explicitly can
// still be served by an upstream of another protocol.
var defaults = map[string][]string{
	"metadata":       {`{}`, `{"user_id":null}`},
	"tool_choice":    {`{"type":"auto"}`, `{"type":"auto","disable_parallel_tool_use":false}`},
	"stop_sequences": {`[]`},
	"thinking":       {`{"type":"disabled"}`},
	"service_tier":   {`"auto"`},
	"output_config":  {`{}`},
}

// Decode reads a client request body; see the package doc.
func (f *Front) Decode(body []byte) (*dialect.Call, error) {
	top, err := dialect.Fields(body, `{"model":"…","max_tokens":1024,"messages":[{"role":"user","content":"Hello"}]}`)
	if err != nil {
		return nil, err
	}
	d := decoder{call: &dialect.Call{Pass: &upstream.Passthrough{}}, names: map[string]string{}}
	if err := d.decode(top); err != nil {
		return nil, err
	}
	return d.call, nil
}

type decoder struct {
	call  *dialect.Call
	names map[string]string // tool_use id → tool name, for tool messages
	// waiting are system messages that came between an assistant's tool
	// calls and their results: they follow the results, since a message
	// between the two would make the calls look unanswered.
	waiting []hooks.Message
}

func (d *decoder) foreign(what string) { d.call.Foreign = append(d.call.Foreign, what) }

func present(raw json.RawMessage) bool {
	return len(raw) > 0 && !bytes.Equal(bytes.TrimSpace(raw), []byte("null"))
}

func (d *decoder) decode(top map[string]json.RawMessage) error {
	req := &d.call.Request
	if err := json.Unmarshal(top["model"], &req.Model); err != nil || req.Model == "" {
		return dialect.Invalid("model", "model: a model name (a non-empty string) is required")
	}
	if !present(top["max_tokens"]) {
		return dialect.Invalid("max_tokens", "max_tokens: required; set the most tokens the answer may have, a positive integer")
	}
	// A quoted number would unmarshal into json.Number too; the API
	// wants a JSON number.
	var maxTokens json.Number
	err := json.Unmarshal(top["max_tokens"], &maxTokens)
	v, convErr := maxTokens.Int64()
	if err != nil || convErr != nil || top["max_tokens"][0] == '"' || v < 1 || v > 1<<31-1 {
		return dialect.Invalid("max_tokens", "max_tokens: must be a positive integer, got "+clip(top["max_tokens"]))
	}
	req.MaxTokens = int(v)
	if raw := top["temperature"]; present(raw) {
		var t float64
		if err := json.Unmarshal(raw, &t); err != nil {
			return dialect.Invalid("temperature", "temperature: must be a number, got "+clip(raw))
		}
		req.Temperature = &t
	}
	if raw := top["stream"]; present(raw) {
		if err := json.Unmarshal(raw, &d.call.Stream); err != nil {
			return dialect.Invalid("stream", "stream: must be true or false, got "+clip(raw))
		}
	}
	if raw := top["system"]; present(raw) {
		if err := d.system(raw); err != nil {
			return err
		}
	}
	if !present(top["messages"]) {
		return dialect.Invalid("messages", "messages: required; send the conversation as a list of user and assistant messages")
	}
	msgs, ok := rawjson.Elements(top["messages"])
	if !ok {
		return dialect.Invalid("messages", "messages: must be a list of message objects")
	}
	if len(msgs) == 0 {
		return dialect.Invalid("messages", "messages: at least one message is required")
	}
	d.call.Request.Messages = make([]hooks.Message, 0, len(msgs))
	for i, m := range msgs {
		if err := d.message(i, m); err != nil {
			return err
		}
	}
	d.flushWaiting()
	if raw := top["tools"]; present(raw) {
		if err := d.tools(raw); err != nil {
			return err
		}
	}
	for _, k := range slices.Sorted(maps.Keys(top)) {
		switch k {
		case "model", "max_tokens", "temperature", "stream", "system", "messages", "tools":
			continue
		}
		raw := top[k]
		if err := checkField(k, raw); err != nil {
			return err
		}
		// Every other field reaches an Anthropic upstream as sent,
		// mapped ones too; the neutral values are for other protocols.
		d.call.Pass.Fields = setField(d.call.Pass.Fields, k, raw)
		if isDefault(k, raw) {
			continue
		}
		switch k {
		case pathTopP:
			var v float64
			json.Unmarshal(raw, &v)
			req.TopP = &v
		case pathStop:
			json.Unmarshal(raw, &req.Stop)
		case pathMetadata:
			d.metadata(raw)
		case "output_config":
			d.outputConfig(raw)
		case "tool_choice":
			var c struct {
				Type     string `json:"type"`
				Parallel *bool  `json:"disable_parallel_tool_use"`
			}
			json.Unmarshal(raw, &c)
			if c.Type == "auto" && c.Parallel != nil && *c.Parallel {
				d.foreign("tool_choice.disable_parallel_tool_use")
			} else {
				d.foreign(k)
			}
		default:
			if topLevel[k] == dialect.Hint {
				d.call.Drop(k)
			} else {
				// Refused and carried rows, and fields added to the
				// API after this table was written.
				d.foreign(k)
			}
		}
	}
	return nil
}

// topLevel is the table's handling of each top-level field.
var topLevel = func() map[string]dialect.Handling {
	m := map[string]dialect.Handling{}
	for _, f := range table {
		if !strings.ContainsAny(f.Path, ".[ ") {
			m[f.Path] = f.Handling
		}
	}
	return m
}()

// metadata maps user_id to the neutral user; metadata is a hint position,
// so any other key, known or added to the API later, is dropped.
func (d *decoder) metadata(raw json.RawMessage) {
	var m map[string]json.RawMessage
	json.Unmarshal(raw, &m)
	for k, v := range m {
		if k == "user_id" {
			json.Unmarshal(v, &d.call.Request.User)
			continue
		}
		if present(v) {
			d.call.Drop(pathMetadata)
		}
	}
}

// outputConfig drops the settings of output_config that cannot change the
// answer's form and refuses the others, format and unknown keys alike.
func (d *decoder) outputConfig(raw json.RawMessage) {
	var m map[string]json.RawMessage
	json.Unmarshal(raw, &m)
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if !present(m[k]) {
			continue
		}
		switch path := "output_config." + k; path {
		case pathEffort, pathTaskBudget:
			d.call.Drop(path)
		default:
			d.foreign(path)
		}
	}
}

func setField(m map[string]json.RawMessage, k string, v json.RawMessage) map[string]json.RawMessage {
	if m == nil {
		m = map[string]json.RawMessage{}
	}
	m[k] = v
	return m
}

func isDefault(k string, raw json.RawMessage) bool {
	if !present(raw) {
		return true
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return false
	}
	return slices.Contains(defaults[k], b.String())
}

// checkField refuses the unmodelled fields whose shape is known to be
// wrong, so the client hears about it from here, naming the field.
func checkField(k string, raw json.RawMessage) error {
	if !present(raw) {
		return nil
	}
	var err error
	want := ""
	switch k {
	case "metadata", "output_config":
		var v map[string]json.RawMessage
		err, want = json.Unmarshal(raw, &v), "an object"
		if err == nil && v == nil {
			err = fmt.Errorf("not an object")
		}
		var id *string
		if err == nil && k == "metadata" && json.Unmarshal(v["user_id"], &id) != nil && present(v["user_id"]) {
			return dialect.Invalid("metadata.user_id", "metadata.user_id: must be a string, got "+clip(v["user_id"]))
		}
	case "tool_choice":
		var v struct {
			Type string `json:"type"`
		}
		err, want = json.Unmarshal(raw, &v), `an object with a type ("auto", "any", "tool" or "none")`
		if err == nil && v.Type == "" {
			err = fmt.Errorf("no type")
		}
	case "stop_sequences":
		var v []string
		err, want = json.Unmarshal(raw, &v), "a list of strings"
	case "top_k":
		var v int
		err, want = json.Unmarshal(raw, &v), "an integer"
	case "top_p":
		var v float64
		err, want = json.Unmarshal(raw, &v), "a number"
	case "thinking":
		var v struct {
			Type string `json:"type"`
		}
		err, want = json.Unmarshal(raw, &v), `an object with a type ("adaptive", "enabled" or "disabled")`
		if err == nil && v.Type == "" {
			err = fmt.Errorf("no type")
		}
	}
	if err != nil {
		return dialect.Invalid(k, fmt.Sprintf("%s: must be %s, got %s", k, want, clip(raw)))
	}
	return nil
}

// clip is a value for an error message, cut short.
func clip(raw json.RawMessage) string {
	s := string(bytes.TrimSpace(raw))
	if s == "" {
		return "nothing"
	}
	if len(s) > 60 {
		s = s[:60] + "…"
	}
	return s
}

// hintPaths are the rows a text block's cache_control and citations are
// dropped as, where the block stands.
type hintPaths struct{ cache, cites string }

var (
	inSystem  = hintPaths{pathSystemCache, pathSystemCites}
	inMessage = hintPaths{pathBlockCache, pathBlockCites}
	inResult  = hintPaths{pathResultCache, pathResultCites}
)

// text reads a text block; ok is false when raw is not one. Its
// cache_control and citations are hints, dropped as the rows of at; any
// other key makes the block foreign, named name.
func (d *decoder) text(raw json.RawMessage, at hintPaths, name string) (s string, ok bool) {
	var b TextBlock
	if json.Unmarshal(raw, &b) != nil || b.Type != "text" || b.Text == nil {
		return "", false
	}
	extra := false
	for k, on := range keysOf(raw) {
		switch k {
		case "type", "text":
		case "cache_control":
			if on {
				d.call.Drop(at.cache)
			}
		case "citations":
			if on {
				d.call.Drop(at.cites)
			}
		default:
			extra = true
		}
	}
	if extra {
		d.foreign(name)
	}
	return *b.Text, true
}

// textBlock reads the text block b of a message's content, at where.
func (d *decoder) textBlock(where string, b json.RawMessage, at hintPaths) (string, error) {
	t, ok := d.text(b, at, where+" (text)")
	if !ok {
		return "", dialect.Invalid(where+".text", where+".text: a text block needs its text, a string")
	}
	return t, nil
}

func (d *decoder) system(raw json.RawMessage) error {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		var blocks []json.RawMessage
		if json.Unmarshal(raw, &blocks) != nil {
			return dialect.Invalid("system", "system: must be a string or a list of text blocks")
		}
		var parts []string
		for i, b := range blocks {
			t, ok := d.text(b, inSystem, fmt.Sprintf("system[%d]", i))
			if !ok {
				return dialect.Invalid("system", fmt.Sprintf("system[%d]: must be a text block ({\"type\":\"text\",\"text\":…})", i))
			}
			parts = append(parts, t)
		}
		s = strings.Join(parts, "\n\n")
	}
	d.call.Request.System = s
	if s != "" {
		d.call.Pass.KeepMessage(hooks.Message{Role: hooks.RoleSystem, Content: s}, raw)
	}
	return nil
}

type blockHead struct {
	Type string `json:"type"`
}

func (d *decoder) message(i int, raw json.RawMessage) error {
	at := fmt.Sprintf("messages[%d]", i)
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil || m == nil {
		return dialect.Invalid(at, at+": must be an object with a role and content")
	}
	var role string
	json.Unmarshal(m["role"], &role)
	switch role {
	case "user", "assistant":
	case "system":
		return d.systemMessage(at, m)
	default:
		return dialect.Invalid(at+".role", at+`.role: must be "user", "assistant" or "system", got `+clip(m["role"]))
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if k != "role" && k != "content" {
			d.foreign(at + "." + k)
		}
	}
	if !present(m["content"]) {
		return dialect.Invalid(at+".content", at+".content: required (a string or a list of content blocks)")
	}
	var s string
	if json.Unmarshal(m["content"], &s) == nil {
		msg := hooks.Message{Role: hooks.Role(role), Content: s}
		d.flushWaiting()
		d.add(msg, raw)
		return nil
	}
	var blocks []json.RawMessage
	if json.Unmarshal(m["content"], &blocks) != nil {
		return dialect.Invalid(at+".content", at+".content: must be a string or a list of content blocks")
	}
	if role == "assistant" {
		d.flushWaiting()
		return d.assistant(at, raw, blocks)
	}
	return d.user(at, raw, blocks)
}

// systemMessage reads a mid-conversation system message (Claude Code
// sends them) as a neutral system message. Its wire form is not kept: an
// Anthropic upstream without the beta that allows system messages refuses
// them, so the anthropic provider folds them into the system prompt, as it
// does for every protocol's.
func (d *decoder) systemMessage(at string, m map[string]json.RawMessage) error {
	for _, k := range slices.Sorted(maps.Keys(m)) {
		v := m[k]
		switch k {
		case "role", "content":
		case "clear_at":
			var c *string
			if json.Unmarshal(v, &c) != nil || (c != nil && *c != "never" && *c != "next_user_message") {
				return dialect.Invalid(at+".clear_at", at+`.clear_at: must be "never" or "next_user_message", got `+clip(v))
			}
			if c != nil && *c != "never" {
				d.call.Drop(pathClearAt)
			}
		case "output_config":
			var o map[string]json.RawMessage
			if json.Unmarshal(v, &o) != nil {
				return dialect.Invalid(at+".output_config", at+".output_config: must be an object, got "+clip(v))
			}
			if len(o) > 0 {
				d.call.Drop(pathMessageOutput)
			}
		default:
			d.foreign(at + "." + k)
		}
	}
	raw := m["content"]
	if !present(raw) {
		if !present(m["output_config"]) {
			return dialect.Invalid(at+".content", at+".content: a system message needs content (a string or a list of text blocks)")
		}
		return nil
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		var blocks []json.RawMessage
		if json.Unmarshal(raw, &blocks) != nil {
			return dialect.Invalid(at+".content", at+".content: must be a string or a list of text blocks")
		}
		var texts []string
		for j, b := range blocks {
			where, typ, err := d.head(at, j, b)
			if err != nil {
				return err
			}
			if typ != "text" {
				d.foreign(fmt.Sprintf("%s (%s)", where, typ))
				continue
			}
			t, err := d.textBlock(where, b, inMessage)
			if err != nil {
				return err
			}
			texts = append(texts, t)
		}
		s = strings.Join(texts, "\n\n")
	}
	if s != "" {
		m := hooks.Message{Role: hooks.RoleSystem, Content: s}
		if msgs := d.call.Request.Messages; len(d.waiting) > 0 || len(msgs) > 0 && len(msgs[len(msgs)-1].ToolCalls) > 0 {
			d.waiting = append(d.waiting, m)
		} else {
			d.call.Request.Messages = append(d.call.Request.Messages, m)
		}
	}
	return nil
}

// flushWaiting appends the system messages held back by systemMessage.
func (d *decoder) flushWaiting() {
	d.call.Request.Messages = append(d.call.Request.Messages, d.waiting...)
	d.waiting = nil
}

func (d *decoder) add(m hooks.Message, wire ...json.RawMessage) {
	d.call.Request.Messages = append(d.call.Request.Messages, m)
	d.call.Pass.KeepMessage(m, wire...)
}

// head reads the type of block j of the content at at, and names where
// the block stands for the errors about it.
func (d *decoder) head(at string, j int, raw json.RawMessage) (where, typ string, err error) {
	where = fmt.Sprintf("%s.content[%d]", at, j)
	var h blockHead
	if json.Unmarshal(raw, &h) != nil || h.Type == "" {
		return where, "", dialect.Invalid(where, where+": must be a content block, an object with a type")
	}
	return where, h.Type, nil
}

// keys goes through the keys of a block beside those the neutral view
// reads (known): cache_control is dropped as a hint, carried keys and
// keys added to the API later make the block foreign.
func (d *decoder) keys(where string, raw json.RawMessage, known ...string) {
	all := keysOf(raw)
	for _, k := range slices.Sorted(maps.Keys(all)) {
		switch {
		case slices.Contains(known, k):
		case k == "cache_control":
			if all[k] {
				d.call.Drop(pathBlockCache)
			}
		default:
			if all[k] {
				d.foreign(where + "." + k)
			}
		}
	}
}

// set is whether a key's value is present (not null); reading it copies
// nothing, since a block's text or a tool result may be megabytes.
type set bool

func (s *set) UnmarshalJSON(b []byte) error {
	*s = set(present(b))
	return nil
}

// keysOf is the keys of the object raw, each with whether its value is
// present.
func keysOf(raw json.RawMessage) map[string]set {
	var all map[string]set
	json.Unmarshal(raw, &all)
	return all
}

func (d *decoder) assistant(at string, raw json.RawMessage, blocks []json.RawMessage) error {
	msg := hooks.Message{Role: hooks.RoleAssistant}
	var texts []string
	for j, b := range blocks {
		where, typ, err := d.head(at, j, b)
		if err != nil {
			return err
		}
		switch typ {
		case "text":
			t, err := d.textBlock(where, b, inMessage)
			if err != nil {
				return err
			}
			texts = append(texts, t)
		case "tool_use":
			var u ResponseBlock
			json.Unmarshal(b, &u)
			if u.ID == "" || u.Name == "" {
				return dialect.Invalid(where, where+": a tool_use block needs an id and a name")
			}
			var obj map[string]json.RawMessage
			if json.Unmarshal(u.Input, &obj) != nil || obj == nil {
				return dialect.Invalid(where+".input", where+".input: must be an object (the tool's arguments)")
			}
			d.keys(where, b, "type", "id", "name", "input")
			var args bytes.Buffer
			json.Compact(&args, u.Input)
			msg.ToolCalls = append(msg.ToolCalls, hooks.ToolCall{ID: u.ID, Name: u.Name, Arguments: args.Bytes()})
			d.names[u.ID] = u.Name
		case "thinking":
			// An Anthropic upstream gets the block in the message's kept
			// wire form; another protocol can do without it.
			d.call.Drop(pathThinkingBlock)
		case "redacted_thinking":
			d.call.Drop(pathRedactedBlock)
		default:
			d.foreign(fmt.Sprintf("%s (%s)", where, typ))
		}
	}
	msg.Content = strings.Join(texts, "\n\n")
	d.add(msg, raw)
	return nil
}

func (d *decoder) user(at string, raw json.RawMessage, blocks []json.RawMessage) error {
	var (
		texts   []string
		others  []json.RawMessage // the blocks that are not tool results
		results []hooks.Message
		units   []json.RawMessage
	)
	for j, b := range blocks {
		where, typ, err := d.head(at, j, b)
		if err != nil {
			return err
		}
		switch typ {
		case "text":
			t, err := d.textBlock(where, b, inMessage)
			if err != nil {
				return err
			}
			texts = append(texts, t)
			others = append(others, b)
		case "tool_result":
			m, err := d.toolResult(where, b)
			if err != nil {
				return err
			}
			results = append(results, m)
			units = append(units, b)
		default:
			d.foreign(fmt.Sprintf("%s (%s)", where, typ))
			others = append(others, b)
		}
	}
	msg := hooks.Message{Role: hooks.RoleUser, Content: strings.Join(texts, "\n\n")}
	if len(results) == 0 {
		d.flushWaiting()
		d.add(msg, raw)
		return nil
	}
	for k, r := range results {
		d.add(r, units[k])
	}
	d.flushWaiting()
	if len(others) > 0 {
		d.add(msg, others...)
	}
	return nil
}

func (d *decoder) toolResult(where string, raw json.RawMessage) (hooks.Message, error) {
	var r ToolResult
	if json.Unmarshal(raw, &r) != nil || r.ToolUseID == "" {
		return hooks.Message{}, dialect.Invalid(where+".tool_use_id", where+".tool_use_id: a tool_result block needs the id of the tool_use it answers")
	}
	d.keys(where, raw, "type", "tool_use_id", "content", "is_error")
	m := hooks.Message{Role: hooks.RoleTool, ToolCallID: r.ToolUseID, ToolName: d.names[r.ToolUseID]}
	if r.IsError != nil {
		m.IsError = *r.IsError
	}
	if !present(r.Content) {
		return m, nil
	}
	if json.Unmarshal(r.Content, &m.Content) == nil {
		return m, nil
	}
	var blocks []json.RawMessage
	if json.Unmarshal(r.Content, &blocks) != nil {
		return hooks.Message{}, dialect.Invalid(where+".content", where+".content: must be a string or a list of content blocks")
	}
	var texts []string
	for k, b := range blocks {
		inner := fmt.Sprintf("%s.content[%d]", where, k)
		var h blockHead
		if json.Unmarshal(b, &h) != nil || h.Type == "" {
			return hooks.Message{}, dialect.Invalid(inner, inner+": must be a content block, an object with a type")
		}
		if t, ok := d.text(b, inResult, inner+" (text)"); ok {
			texts = append(texts, t)
			continue
		}
		if h.Type == "text" {
			return hooks.Message{}, dialect.Invalid(inner+".text", inner+".text: a text block needs its text, a string")
		}
		d.foreign(fmt.Sprintf("%s (%s)", inner, h.Type))
	}
	m.Content = strings.Join(texts, "\n\n")
	return m, nil
}

// toolHints are the keys of a custom tool that another protocol can do
// without, by the row each is dropped as.
var toolHints = map[string]string{
	"cache_control":         pathToolCache,
	"defer_loading":         pathToolDefer,
	"eager_input_streaming": pathToolEager,
	"strict":                pathToolStrict,
	"input_examples":        pathToolExamples,
}

func (d *decoder) tools(raw json.RawMessage) error {
	var tools []json.RawMessage
	if json.Unmarshal(raw, &tools) != nil {
		return dialect.Invalid("tools", "tools: must be a list of tool definitions")
	}
	var server []json.RawMessage
	seen := map[string]bool{}
	for i, t := range tools {
		at := fmt.Sprintf("tools[%d]", i)
		var all map[string]json.RawMessage
		if json.Unmarshal(t, &all) != nil || all == nil {
			return dialect.Invalid(at, at+": must be a tool definition object")
		}
		var typ string
		if present(all["type"]) && json.Unmarshal(all["type"], &typ) != nil {
			return dialect.Invalid(at+".type", at+".type: must be a string")
		}
		if typ != "" && typ != "custom" {
			d.foreign(fmt.Sprintf("%s (%s)", at, typ))
			server = append(server, t)
			continue
		}
		var spec hooks.ToolSpec
		if json.Unmarshal(all["name"], &spec.Name) != nil || spec.Name == "" {
			return dialect.Invalid(at+".name", at+".name: a tool needs a name, a string")
		}
		if !toolfmt.ValidName(spec.Name) {
			return dialect.Invalid(at+".name", fmt.Sprintf("%s.name: %q must match %s (letters, digits, \"_\" and \"-\", at most 64)", at, spec.Name, toolfmt.NamePattern))
		}
		if seen[spec.Name] {
			return dialect.Invalid(at+".name", fmt.Sprintf("%s.name: tool %q is defined twice", at, spec.Name))
		}
		seen[spec.Name] = true
		if present(all["description"]) && json.Unmarshal(all["description"], &spec.Description) != nil {
			return dialect.Invalid(at+".description", at+".description: must be a string")
		}
		var schema map[string]json.RawMessage
		if json.Unmarshal(all["input_schema"], &schema) != nil || schema == nil {
			return dialect.Invalid(at+".input_schema", at+".input_schema: a tool needs its input_schema, a JSON Schema object")
		}
		spec.InputSchema = bytes.TrimSpace(all["input_schema"])
		for _, k := range slices.Sorted(maps.Keys(all)) {
			switch k {
			case "name", "description", "input_schema", "type":
				continue
			}
			if !present(all[k]) {
				continue
			}
			if path, ok := toolHints[k]; ok {
				d.call.Drop(path)
				continue
			}
			d.foreign(at + "." + k)
		}
		d.call.Request.Tools = append(d.call.Request.Tools, spec)
		d.call.Pass.KeepTool(spec, t)
	}
	if len(server) > 0 {
		d.call.Pass.Fields = setField(d.call.Pass.Fields, "tools", rawjson.Array(server))
	}
	return nil
}

// Encode writes a whole response body; see the package doc.
func (f *Front) Encode(call *dialect.Call, res *dialect.Result) ([]byte, error) {
	var o rawjson.Object
	var wire map[string]json.RawMessage
	if res.Wire != nil {
		wire = res.Wire.Fields
	}
	id := wire["id"]
	if !present(id) {
		id = rawjson.MustMarshal(dialect.NewID("msg_"))
	}
	o.Set("id", id)
	o.Set("type", json.RawMessage(`"message"`))
	o.Set("role", json.RawMessage(`"assistant"`))
	model := res.Model
	if model == "" {
		model = call.Request.Model
	}
	o.Set("model", rawjson.MustMarshal(model))
	var content []json.RawMessage
	whole := res.WholeWire && res.Wire != nil
	if whole {
		content = res.Wire.Message
	} else {
		for _, t := range res.Text {
			if t != "" {
				content = append(content, rawjson.MustMarshal(Block{Type: "text", Text: &t}))
			}
		}
		for _, c := range res.ToolCalls {
			content = append(content, toolUse(c))
		}
	}
	o.Set("content", rawjson.Array(content))
	if whole && present(wire["stop_reason"]) {
		o.Set("stop_reason", wire["stop_reason"])
		stopSeq := wire["stop_sequence"]
		if len(stopSeq) == 0 {
			stopSeq = json.RawMessage("null")
		}
		o.Set("stop_sequence", stopSeq)
	} else {
		o.Set("stop_reason", rawjson.MustMarshal(stopReason(res.Stop)))
		o.Set("stop_sequence", json.RawMessage("null"))
	}
	o.Set("usage", usage(wire["usage"], res.Usage))
	for _, k := range slices.Sorted(maps.Keys(wire)) {
		if !o.Has(k) {
			o.Set(k, wire[k])
		}
	}
	return o.Bytes(), nil
}

// usage is the summed usage as Anthropic reports it: when the upstream's
// own usage object is known, its other counts are kept and input_tokens
// excludes the cache counts, which Anthropic reports beside it.
func usage(upstream json.RawMessage, sum hooks.Usage) json.RawMessage {
	o, _ := rawjson.ParseObject(upstream)
	input := sum.InputTokens
	for _, k := range []string{"cache_creation_input_tokens", "cache_read_input_tokens"} {
		var n int
		if json.Unmarshal(o.Get(k), &n) == nil && n > 0 && n <= input {
			input -= n
		}
	}
	o.Set("input_tokens", rawjson.MustMarshal(input))
	o.Set("output_tokens", rawjson.MustMarshal(sum.OutputTokens))
	return o.Bytes()
}

func stopReason(s hooks.StopReason) string {
	switch s {
	case hooks.StopToolUse, hooks.StopMaxTokens, hooks.StopRefusal:
		return string(s)
	}
	return "end_turn"
}

func toolUse(c hooks.ToolCall) json.RawMessage {
	return rawjson.MustMarshal(Block{Type: "tool_use", ID: c.ID, Name: c.Name, Input: AnswerInput.Of(c.Arguments)})
}

// ErrorBody renders e as Anthropic's error object.
func (f *Front) ErrorBody(e *dialect.Error) []byte { return ErrorBody(e) }

// fields is a JSON object of the given key, value pairs, in that order.
func fields(kv ...any) json.RawMessage {
	var o rawjson.Object
	for i := 0; i+1 < len(kv); i += 2 {
		v, ok := kv[i+1].(json.RawMessage)
		if !ok {
			v = rawjson.MustMarshal(kv[i+1])
		}
		o.Set(kv[i].(string), v)
	}
	return o.Bytes()
}

// NewStream returns a Sink writing server-sent events to w.
func (f *Front) NewStream(w http.ResponseWriter, call *dialect.Call, meta dialect.Meta) dialect.Sink {
	model := meta.Model
	if model == "" {
		model = call.Request.Model
	}
	return &sink{w: w, rc: http.NewResponseController(w), model: model, input: max(1, meta.InputTokens), id: dialect.NewID("msg_")}
}
