package hooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/hookhost/hookhost/internal/rawjson"
)

// The checks in this file decide what "malformed" means for each answer
// type. They are the one statement of these rules: the Bus applies them to
// every answer of every plugin, in-process or remote, whichever protocol
// carried it, so a rule cannot differ by path. A malformed answer counts as
// nil, like any other plugin failure.

// DefaultMaxResultSize bounds what one answer may carry when
// hookbus.Options.MaxResultSize is zero: the wire's default, so that an in-process
// plugin has the limit a remote one has.
const DefaultMaxResultSize = 4 << 20

// MalformedError is an answer that breaks its hook's rules: whose, for
// which hook, and what is wrong with it. It is ErrMalformed to errors.Is.
type MalformedError struct {
	Plugin  string
	Hook    Name
	Problem string
	// Size and Limit are set when the answer carries more than the plugin's
	// max_result_size allows: Size bytes against Limit.
	Size, Limit int
}

func (e *MalformedError) Error() string {
	if e.Limit > 0 {
		return fmt.Sprintf("plugin %q: %s: the answer carries %d bytes, over the %d bytes this plugin's max_result_size allows (raise plugins.entries.%s.max_result_size if such answers are legitimate)",
			e.Plugin, e.Hook, e.Size, e.Limit, e.Plugin)
	}
	return fmt.Sprintf("plugin %q: %s: malformed answer: %s", e.Plugin, e.Hook, e.Problem)
}

// Unwrap makes a MalformedError ErrMalformed to errors.Is.
func (e *MalformedError) Unwrap() error { return ErrMalformed }

// errTooLarge is what checkAnswer reports for an answer over its size
// limit; CheckAnswer turns it into a MalformedError with Size and Limit.
type errTooLarge struct{ size, limit int }

func (e errTooLarge) Error() string {
	return fmt.Sprintf("the answer carries %d bytes, over max_result_size (%d bytes)", e.size, e.limit)
}

// CheckAnswer applies the rules every answer of hook keeps, whoever sent
// it: the Bus applies it to every answer of every plugin, and a plugin may
// apply it to its own before sending. maxSize bounds what the answer
// carries (0: DefaultMaxResultSize), maxTemperature the temperature a
// patch may set (0: DefaultMaxTemperature). A nil answer, or a nil pointer
// of an answer type, is always legal. The error is a *MalformedError naming
// plugin and hook, with Size and Limit set when the answer is too large.
func CheckAnswer(plugin string, hook Name, answer any, maxSize int, maxTemperature float64) error {
	err := checkAnswer(answer, limits{maxSize: maxSize, maxTemperature: maxTemperature})
	if err == nil {
		return nil
	}
	e := &MalformedError{Plugin: plugin, Hook: hook, Problem: err.Error()}
	if big, ok := err.(errTooLarge); ok {
		e.Size, e.Limit = big.size, big.limit
	}
	return e
}

// limits are the bounds an answer is checked against: the plugin's
// max_result_size (0: DefaultMaxResultSize) and the upstream's highest
// temperature (0: DefaultMaxTemperature).
type limits struct {
	maxSize        int
	maxTemperature float64
}

// DefaultMaxTemperature is the highest temperature a patch may set when
// hookbus.Config.MaxTemperature is zero: OpenAI's ceiling, the highest any
// provider takes.
const DefaultMaxTemperature = 2

// checkAnswer applies the rules every answer of its hook keeps, whoever
// sent it, with lim.maxSize bounding what the answer carries: a provided or transformed result's content, a replacement text,
// a patch's messages, system text and tools, a tool list, a decision's
// arguments and message. A nil answer, or a nil pointer of an answer type,
// is always legal. The error says what is wrong, in the plugin author's
// terms; CheckAnswer wraps it in a MalformedError naming the plugin and hook.
func checkAnswer(answer any, lim limits) error {
	maxSize := lim.maxSize
	if maxSize <= 0 {
		maxSize = DefaultMaxResultSize
	}
	size := 0
	switch a := answer.(type) {
	case nil:
	case *ToolListOverride:
		if a == nil {
			return nil
		}
		if err := checkToolList(a.Tools); err != nil {
			return err
		}
		size = toolsSize(a.Tools)
	case *RequestPatch:
		if a == nil {
			return nil
		}
		if err := a.check(lim.maxTemperature); err != nil {
			return err
		}
		size = a.size()
	case *Reissue:
		if a == nil {
			return nil
		}
		if err := a.Patch.check(lim.maxTemperature); err != nil {
			return err
		}
		size = a.Patch.size() + len(a.Reason)
	case *TextReplacement:
		if a == nil {
			return nil
		}
		if a.Stop != nil && a.Text != "" {
			return errors.New("an answer both replaces the text and stops it; give one")
		}
		size = len(a.Text)
		if a.Stop != nil {
			size = len(a.Stop.Message)
		}
	case *PreToolCallDecision:
		if a == nil {
			return nil
		}
		if err := a.check(); err != nil {
			return err
		}
		size = len(a.ModifiedArgs)
		if a.Block != nil {
			size += len(a.Block.Message)
		}
		if a.Ask != nil {
			size += len(a.Ask.Reason)
		}
	case *ToolResult:
		if a == nil {
			return nil
		}
		size = len(a.Content)
	case *ModelResponse:
		if a == nil {
			return nil
		}
		if err := a.checkProvided(); err != nil {
			return err
		}
		size = messagesSize([]Message{a.Message}) + len(a.Model)
	case *UserMessageDecision:
		if a == nil {
			return nil
		}
		if a.Block != nil && a.AdditionalContext != "" {
			return errors.New("both block and additional_context set")
		}
		size = len(a.AdditionalContext)
		if a.Block != nil {
			size += len(a.Block.Message)
		}
	case *AddedContext:
		if a == nil {
			return nil
		}
		size = len(a.AdditionalContext)
	default:
		return fmt.Errorf("no hook answers with a %T", answer)
	}
	if size > maxSize {
		return errTooLarge{size, maxSize}
	}
	return nil
}

func checkToolList(tools []ToolSpec) error {
	seen := map[string]bool{}
	for _, t := range tools {
		if !ValidToolName(t.Name) {
			return fmt.Errorf("tool name %q must match ^[a-zA-Z0-9_-]{1,64}$", t.Name)
		}
		if seen[t.Name] {
			return fmt.Errorf("tool %q listed twice", t.Name)
		}
		seen[t.Name] = true
		if len(t.InputSchema) > 0 && !rawjson.IsObject(t.InputSchema) {
			return fmt.Errorf("tool %q: input schema is not a JSON object", t.Name)
		}
	}
	return nil
}

func toolsSize(tools []ToolSpec) int {
	n := 0
	for _, t := range tools {
		n += len(t.Name) + len(t.Description) + len(t.InputSchema)
	}
	return n
}

// checkMessages keeps a patch's messages to what every provider adapter
// can send: a known role, tool calls only from the assistant and each with
// an id and a name, and tool results that say which call they answer.
func checkMessages(msgs []Message) error {
	for i, m := range msgs {
		switch m.Role {
		case RoleSystem, RoleUser, RoleAssistant, RoleTool:
		default:
			return fmt.Errorf("message %d has role %q, want system, user, assistant or tool", i, m.Role)
		}
		if len(m.ToolCalls) > 0 && m.Role != RoleAssistant {
			return fmt.Errorf("message %d has role %q and tool calls; only assistant messages carry tool calls", i, m.Role)
		}
		ids := map[string]bool{}
		for j, c := range m.ToolCalls {
			switch {
			case c.ID == "":
				return fmt.Errorf("message %d: tool call %d has no id", i, j)
			case c.Name == "":
				return fmt.Errorf("message %d: tool call %q has no tool name", i, c.ID)
			case ids[c.ID]:
				return fmt.Errorf("message %d: tool call id %q used twice", i, c.ID)
			}
			ids[c.ID] = true
		}
		if m.Role == RoleTool && m.ToolCallID == "" {
			return fmt.Errorf("message %d is a tool result without tool_call_id", i)
		}
	}
	return nil
}

func messagesSize(msgs []Message) int {
	n := 0
	for _, m := range msgs {
		n += len(m.Content) + len(m.ToolCallID) + len(m.ToolName)
		for _, c := range m.ToolCalls {
			n += len(c.ID) + len(c.Name) + len(c.Arguments)
		}
	}
	return n
}

// checkProvided applies the rules of a response a plugin provides instead
// of the model's: it must read as a model's answer to every later hook and
// to the client, so it is one assistant message (the role may be left
// empty) with text or tool calls, each call with an id, a valid tool name
// and JSON arguments, a known stop reason if any, and no negative usage.
func (r *ModelResponse) checkProvided() error {
	m := r.Message
	if m.Role != "" && m.Role != RoleAssistant {
		return fmt.Errorf("the message has role %q; a provided response is an assistant message", m.Role)
	}
	if m.ToolCallID != "" || m.ToolName != "" || m.IsError {
		return errors.New("the message carries tool-result fields (tool_call_id, tool_name, is_error); a provided response is an assistant message")
	}
	if m.Content == "" && len(m.ToolCalls) == 0 {
		return errors.New("the message has neither text nor tool calls")
	}
	ids := map[string]bool{}
	for j, c := range m.ToolCalls {
		switch {
		case c.ID == "":
			return fmt.Errorf("tool call %d has no id", j)
		case !ValidToolName(c.Name):
			return fmt.Errorf("tool call %q: tool name %q must match ^[a-zA-Z0-9_-]{1,64}$", c.ID, c.Name)
		case ids[c.ID]:
			return fmt.Errorf("tool call id %q used twice", c.ID)
		case len(c.Arguments) > 0 && !rawjson.IsObject(c.Arguments):
			return fmt.Errorf("tool call %q: arguments are not a JSON object", c.ID)
		}
		ids[c.ID] = true
	}
	switch r.StopReason {
	case "", StopEndTurn, StopToolUse, StopMaxTokens, StopRefusal, StopOther:
	default:
		return fmt.Errorf("stop reason %q, want end_turn, tool_use, max_tokens, refusal or other", r.StopReason)
	}
	if r.StopReason == StopToolUse && len(m.ToolCalls) == 0 {
		return errors.New("stop reason tool_use without tool calls")
	}
	if r.Usage.InputTokens < 0 || r.Usage.OutputTokens < 0 {
		return errors.New("negative token counts in usage")
	}
	return nil
}

// Provided returns r as the answer of a model call for req: an assistant
// message, every call's arguments at least {}, the request's model when r
// names none, and the stop reason tool_use when r has tool calls and
// end_turn when it has none, unless r states one.
func (r ModelResponse) Provided(req ModelRequest) ModelResponse {
	r.Message.Role = RoleAssistant
	if len(r.Message.ToolCalls) > 0 {
		calls := make([]ToolCall, len(r.Message.ToolCalls))
		copy(calls, r.Message.ToolCalls)
		for i := range calls {
			if len(calls[i].Arguments) == 0 {
				calls[i].Arguments = json.RawMessage("{}")
			}
		}
		r.Message.ToolCalls = calls
	}
	if r.Model == "" {
		r.Model = req.Model
	}
	if r.StopReason == "" {
		r.StopReason = StopEndTurn
		if len(r.Message.ToolCalls) > 0 {
			r.StopReason = StopToolUse
		}
	}
	return r
}

// check applies a patch's rules, with maxTemperature (0:
// DefaultMaxTemperature) the upstream's highest temperature. A temperature
// that is not a finite number in [0, maxTemperature] cannot be sent (JSON
// has no NaN or infinity) or is refused by the provider: either way the
// call would fail, so the patch is malformed rather than the turn lost.
func (p *RequestPatch) check(maxTemperature float64) error {
	if p.Model != nil && *p.Model == "" {
		return errors.New("model set to the empty string")
	}
	if p.Messages != nil && len(p.Messages) == 0 {
		return errors.New("messages set to an empty list")
	}
	if err := checkMessages(p.Messages); err != nil {
		return err
	}
	if p.MaxTokens != nil && *p.MaxTokens < 0 {
		return fmt.Errorf("max_tokens %d is negative", *p.MaxTokens)
	}
	if maxTemperature <= 0 {
		maxTemperature = DefaultMaxTemperature
	}
	if t := p.Temperature; t != nil {
		switch {
		case math.IsNaN(*t) || math.IsInf(*t, 0):
			return fmt.Errorf("temperature %g is not a finite number", *t)
		case *t < 0 || *t > maxTemperature:
			return fmt.Errorf("temperature %g is outside [0, %g], the range the upstream takes", *t, maxTemperature)
		}
	}
	if p.Tools != nil {
		if err := checkToolList(p.Tools); err != nil {
			return err
		}
	}
	return nil
}

func (p *RequestPatch) size() int {
	n := messagesSize(p.Messages) + toolsSize(p.Tools)
	if p.Model != nil {
		n += len(*p.Model)
	}
	if p.System != nil {
		n += len(*p.System)
	}
	return n
}

// Apply returns req with the patch's set fields replaced, and the names of
// the fields the patch set. It applies one patch alone; the Bus merges the
// patches of several plugins, first write per field winning.
func (p RequestPatch) Apply(req ModelRequest) (ModelRequest, []string) {
	var fields []string
	if p.Model != nil {
		req.Model = *p.Model
		fields = append(fields, "model")
	}
	if p.System != nil {
		req.System = *p.System
		fields = append(fields, "system")
	}
	if p.Messages != nil {
		req.Messages = p.Messages
		fields = append(fields, "messages")
	}
	if p.Tools != nil {
		req.Tools = p.Tools
		fields = append(fields, "tools")
	}
	if p.MaxTokens != nil {
		req.MaxTokens = *p.MaxTokens
		fields = append(fields, "max_tokens")
	}
	if p.Temperature != nil {
		t := *p.Temperature
		req.Temperature = &t
		fields = append(fields, "temperature")
	}
	return req, fields
}

func (d *PreToolCallDecision) check() error {
	set := 0
	for _, isSet := range []bool{d.Block != nil, d.Ask != nil, d.ModifiedArgs != nil} {
		if isSet {
			set++
		}
	}
	if set > 1 {
		return errors.New("more than one of block, ask and modified_args set")
	}
	if d.ModifiedArgs != nil && !rawjson.IsObject(d.ModifiedArgs) {
		return errors.New("modified_args is not a JSON object")
	}
	return nil
}

// AsJSON applies the one rule for what a tool result holds: JSON. Content
// that is not JSON is taken as text and returned as a JSON string holding
// it, so a plugin that answers in plain text is understood rather than
// punished, and everything downstream may rely on JSON. Valid JSON content
// is returned unchanged.
//
// Content that is not valid UTF-8 first has each invalid sequence replaced
// by U+FFFD, the repair the plugin protocol makes to every string it
// carries. Repairing here, before encoding, is what makes a result read the
// same on every path: left to the JSON encoder, the bytes would become the
// six characters \ufffd, which is what a plugin saw when it provided and
// transformed a result in one exchange, while over one call per hook the
// wire had already put U+FFFD there.
func (r ToolResult) AsJSON() ToolResult {
	if !utf8.ValidString(r.Content) {
		r.Content = strings.ToValidUTF8(r.Content, "\uFFFD")
	}
	if json.Valid([]byte(r.Content)) {
		return r
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)  // the model reads it: keep <, > and & as they are
	_ = enc.Encode(r.Content) // a string always encodes
	r.Content = string(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
	return r
}

// toolNamePattern is what OpenAI and Anthropic accept as a tool name.
var toolNamePattern = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// ValidToolName reports whether name can be sent to model providers.
func ValidToolName(name string) bool { return toolNamePattern.MatchString(name) }

// ManifestError is a manifest that breaks the rules of ValidateManifest:
// whose, and what is wrong with it.
type ManifestError struct {
	Plugin  string // the manifest's name; empty when it has none
	Problem string // what is wrong, in the plugin author's terms
	// Tool is the tool at fault, when a tool is; OutsideNamespace says its
	// name lies outside "<plugin>__", which allow_tool_override would allow.
	Tool             string
	OutsideNamespace bool
}

func (e *ManifestError) Error() string {
	if e.Plugin == "" {
		return "plugin manifest: " + e.Problem
	}
	msg := fmt.Sprintf("plugin %q: manifest: %s", e.Plugin, e.Problem)
	if e.OutsideNamespace {
		msg += " (rename it, or set allow_tool_override in its config entry)"
	}
	return msg
}

// ValidateManifest checks one plugin's manifest: a name, known hooks, valid
// matcher globs, and tools that are legal, unique and (unless
// allowToolOverride, the plugin's allow_tool_override setting) inside the
// plugin's "<name>__" namespace. The error is a *ManifestError naming the
// plugin.
func ValidateManifest(m Manifest, allowToolOverride bool) error {
	if m.Name == "" {
		return &ManifestError{Problem: "the manifest has no name"}
	}
	bad := func(format string, a ...any) error {
		return &ManifestError{Plugin: m.Name, Problem: fmt.Sprintf(format, a...)}
	}
	// The version is shown to operators as it is: no line breaks or
	// terminal escape sequences.
	if !utf8.ValidString(m.Version) || strings.ContainsFunc(m.Version, func(r rune) bool { return !unicode.IsPrint(r) }) {
		return bad("version %q is not printable text", m.Version)
	}
	seenHook := map[Name]bool{}
	for _, h := range m.Hooks {
		if !h.Known() {
			return bad("unknown hook %q", h)
		}
		if seenHook[h] {
			return bad("hook %q listed twice", h)
		}
		seenHook[h] = true
	}
	checkGlobs := func(where string, globs []string) error {
		for _, g := range globs {
			if g == "" {
				return bad("%sempty tool matcher", where)
			}
			if _, err := path.Match(g, ""); err != nil {
				return bad("%stool matcher %q is not a valid glob: %v", where, g, err)
			}
		}
		return nil
	}
	if err := checkGlobs("", m.Matchers); err != nil {
		return err
	}
	for h, globs := range m.HookMatchers {
		switch {
		case !h.Known():
			return bad("hook matchers name unknown hook %q", h)
		case !h.ToolScoped():
			return bad("hook matchers name %q, which is not a tool hook", h)
		case !seenHook[h]:
			return bad("hook matchers name %q, which the plugin does not serve", h)
		}
		if err := checkGlobs(string(h)+": ", globs); err != nil {
			return err
		}
	}
	for h, o := range m.HookOptions {
		if err := checkHookOptions(h, o, seenHook[h]); err != "" {
			return bad("%s", err)
		}
	}
	seenTool := map[string]bool{}
	for _, t := range m.Tools {
		if !ValidToolName(t.Name) {
			return bad("tool name %q must match ^[a-zA-Z0-9_-]{1,64}$", t.Name)
		}
		if !allowToolOverride && !strings.HasPrefix(t.Name, m.Name+"__") {
			return &ManifestError{Plugin: m.Name, Tool: t.Name, OutsideNamespace: true,
				Problem: fmt.Sprintf("tool %q is outside the plugin's namespace %q", t.Name, m.Name+"__")}
		}
		if seenTool[t.Name] {
			return bad("tool %q declared twice", t.Name)
		}
		seenTool[t.Name] = true
		if len(t.InputSchema) > 0 && !rawjson.IsObject(t.InputSchema) {
			return bad("tool %q: input schema is not a JSON object", t.Name)
		}
	}
	return nil
}

// checkHookOptions returns what is wrong with a manifest's options for
// hook h, or "".
func checkHookOptions(h Name, o HookOptions, served bool) string {
	switch {
	case !h.Known():
		return fmt.Sprintf("hook options name unknown hook %q", h)
	case h != TransformLLMOutput && h != PostLLMCallCanReissue:
		return fmt.Sprintf("hook options name %q, which takes none (only %s and %s do)", h, TransformLLMOutput, PostLLMCallCanReissue)
	case !served:
		return fmt.Sprintf("hook options name %q, which the plugin does not serve", h)
	case o.WindowBytes < 0 || o.OverlapBytes < 0 || o.DecideAfterBytes < 0:
		return fmt.Sprintf("%s: window_bytes, overlap_bytes and decide_after_bytes may not be negative", h)
	case h == TransformLLMOutput && o.DecideAfterBytes != 0:
		return fmt.Sprintf("%s: decide_after_bytes is an option of %s only", h, PostLLMCallCanReissue)
	case h == PostLLMCallCanReissue && o.Windowed():
		return fmt.Sprintf("%s: window_bytes and overlap_bytes are options of %s only", h, TransformLLMOutput)
	case o.DecideAfterBytes > MaxWindowBytes:
		return fmt.Sprintf("%s: decide_after_bytes %d is over %d", h, o.DecideAfterBytes, MaxWindowBytes)
	}
	if !o.Windowed() {
		return ""
	}
	window, overlap := o.Window()
	switch {
	case window < MinWindowBytes || window > MaxWindowBytes:
		return fmt.Sprintf("%s: window_bytes %d is outside %d..%d", h, window, MinWindowBytes, MaxWindowBytes)
	case overlap >= window:
		return fmt.Sprintf("%s: overlap_bytes %d must be less than window_bytes %d", h, overlap, window)
	}
	return ""
}
