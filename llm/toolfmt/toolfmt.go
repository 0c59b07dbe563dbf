// Package toolfmt converts tool definitions between hookhost's neutral
// ToolSpec and the forms each wire protocol uses: OpenAI Chat Completions,
// OpenAI Responses, Anthropic Messages and MCP. Keeping every conversion in
// one place keeps the name rules in one place too.
//
// # Names
//
// OpenAI and Anthropic accept tool names matching ^[a-zA-Z0-9_-]{1,64}$
// only. MCP also allows dots (and up to 128 characters), so a dotted id is
// sent as MapName(id), with each "." written "__". Two tools that end up
// with the same wire name — "a.b" next to "a__b", or one name listed twice —
// cannot be told apart when the model calls one, so CheckNames rejects them
// with an error naming both. A NameMap built from one request's tool list
// turns the names a model calls back into neutral ids.
//
// # Schemas
//
// A tool without an input schema is sent with the empty object schema
// {"type":"object","properties":{}}, because Anthropic and the Responses
// API require one and OpenAI rejects anything but an object schema.
// Conversions back therefore return that schema rather than none.
package toolfmt

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/rawjson"
)

// NamePattern is the tool name rule shared by OpenAI and Anthropic.
const NamePattern = `^[a-zA-Z0-9_-]{1,64}$`

var (
	nameRE = regexp.MustCompile(NamePattern)
	// mcpNameRE is MCP's looser rule, which export must meet.
	mcpNameRE = regexp.MustCompile(`^[a-zA-Z0-9_.-]{1,128}$`)
)

// EmptySchema is the input schema of a tool that takes no arguments.
var EmptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

// MapName returns the wire name of a tool id: dots become "__".
func MapName(id string) string { return strings.ReplaceAll(id, ".", "__") }

// ValidName reports whether name can be sent to OpenAI or Anthropic as is.
func ValidName(name string) bool { return nameRE.MatchString(name) }

// checkName returns the wire name of id, or why it has none.
func checkName(id string) (string, error) {
	wire := MapName(id)
	if ValidName(wire) {
		return wire, nil
	}
	if wire != id {
		return "", fmt.Errorf("tool %q: its provider name %q must match %s", id, wire, NamePattern)
	}
	return "", fmt.Errorf("tool name %q must match %s (letters, digits, \"_\" and \"-\", at most 64)", id, NamePattern)
}

// CheckNames verifies that every id has a valid wire name and that no two
// ids share one. The error names both tools of a collision.
func CheckNames(ids []string) error {
	_, err := NewNameMap(ids)
	return err
}

// NameMap translates between neutral tool ids and wire names for one tool
// list.
type NameMap struct {
	toID map[string]string
}

// NewNameMap checks ids as CheckNames does and remembers how to turn each
// wire name back into its id.
func NewNameMap(ids []string) (*NameMap, error) {
	m := &NameMap{toID: make(map[string]string, len(ids))}
	for _, id := range ids {
		wire, err := checkName(id)
		if err != nil {
			return nil, err
		}
		if other, dup := m.toID[wire]; dup {
			if other == id {
				return nil, fmt.Errorf("tool %q is listed twice", id)
			}
			return nil, fmt.Errorf("tools %q and %q both become %q on the wire (rename one of them)", other, id, wire)
		}
		m.toID[wire] = id
	}
	return m, nil
}

// Wire returns the name a tool id is sent under.
func (m *NameMap) Wire(id string) string { return MapName(id) }

// ID returns the tool id for a wire name the model used. A name that is not
// in the list (a model may invent one) is returned unchanged, so dispatch
// can report it as an unknown tool.
func (m *NameMap) ID(wire string) string {
	if m != nil {
		if id, ok := m.toID[wire]; ok {
			return id
		}
	}
	return wire
}

// SpecNames returns the names of specs, for NewNameMap.
func SpecNames(specs []hooks.ToolSpec) []string {
	names := make([]string, len(specs))
	for i, s := range specs {
		names[i] = s.Name
	}
	return names
}

func schemaOut(s json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(s)) == 0 {
		return EmptySchema
	}
	return s
}

func schemaIn(tool string, s json.RawMessage) (json.RawMessage, error) {
	t := bytes.TrimSpace(s)
	if len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return nil, nil
	}
	if !rawjson.IsObject(t) {
		return nil, fmt.Errorf("tool %q: input schema is not a JSON object", tool)
	}
	return t, nil
}

func specOut(s hooks.ToolSpec) (name string, schema json.RawMessage, err error) {
	name, err = checkName(s.Name)
	if err != nil {
		return "", nil, err
	}
	if _, err := schemaIn(s.Name, s.InputSchema); err != nil {
		return "", nil, err
	}
	return name, schemaOut(s.InputSchema), nil
}

func specIn(name, desc string, schema json.RawMessage) (hooks.ToolSpec, error) {
	if !ValidName(name) {
		return hooks.ToolSpec{}, fmt.Errorf("tool name %q must match %s", name, NamePattern)
	}
	s, err := schemaIn(name, schema)
	if err != nil {
		return hooks.ToolSpec{}, err
	}
	return hooks.ToolSpec{Name: name, Description: desc, InputSchema: s}, nil
}

// ChatTool is a tool in OpenAI Chat Completions form.
type ChatTool struct {
	Type     string       `json:"type"` // always "function"
	Function ChatFunction `json:"function"`
}

// ChatFunction is the function part of a ChatTool.
type ChatFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
	Strict      *bool           `json:"strict,omitempty"`
}

// ToOpenAIChat converts a spec for Chat Completions.
func ToOpenAIChat(s hooks.ToolSpec) (ChatTool, error) {
	name, schema, err := specOut(s)
	if err != nil {
		return ChatTool{}, err
	}
	return ChatTool{Type: "function", Function: ChatFunction{Name: name, Description: s.Description, Parameters: schema}}, nil
}

// FromOpenAIChat converts a Chat Completions tool back. Strict has no
// neutral form and is dropped.
func FromOpenAIChat(t ChatTool) (hooks.ToolSpec, error) {
	if t.Type != "function" {
		return hooks.ToolSpec{}, fmt.Errorf("tool %q: type %q is not a function tool", t.Function.Name, t.Type)
	}
	return specIn(t.Function.Name, t.Function.Description, t.Function.Parameters)
}

// ResponsesTool is a function tool in OpenAI Responses form (flat, unlike
// Chat Completions).
type ResponsesTool struct {
	Type        string          `json:"type"` // always "function"
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
	// Strict is always sent: the Responses API treats a missing value as
	// true, which rejects ordinary schemas that leave properties optional.
	Strict bool `json:"strict"`
}

// ToResponses converts a spec for the Responses API, with strict off.
func ToResponses(s hooks.ToolSpec) (ResponsesTool, error) {
	name, schema, err := specOut(s)
	if err != nil {
		return ResponsesTool{}, err
	}
	return ResponsesTool{Type: "function", Name: name, Description: s.Description, Parameters: schema}, nil
}

// FromResponses converts a Responses function tool back.
func FromResponses(t ResponsesTool) (hooks.ToolSpec, error) {
	if t.Type != "function" {
		return hooks.ToolSpec{}, fmt.Errorf("tool %q: type %q is not a function tool", t.Name, t.Type)
	}
	return specIn(t.Name, t.Description, t.Parameters)
}

// AnthropicTool is a client tool in Anthropic Messages form.
type AnthropicTool struct {
	Name         string          `json:"name"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"input_schema"`
	CacheControl json.RawMessage `json:"cache_control,omitempty"`
}

// ToAnthropic converts a spec for the Messages API.
func ToAnthropic(s hooks.ToolSpec) (AnthropicTool, error) {
	name, schema, err := specOut(s)
	if err != nil {
		return AnthropicTool{}, err
	}
	return AnthropicTool{Name: name, Description: s.Description, InputSchema: schema}, nil
}

// FromAnthropic converts a Messages tool back; cache_control is dropped.
func FromAnthropic(t AnthropicTool) (hooks.ToolSpec, error) {
	return specIn(t.Name, t.Description, t.InputSchema)
}

// MCPTool is a tool definition as an MCP server lists it (2025-11-25).
type MCPTool struct {
	Name         string          `json:"name"`
	Title        string          `json:"title,omitempty"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	Annotations  *Annotations    `json:"annotations,omitempty"`
}

// Annotations are an MCP tool's behaviour hints. They come from servers
// that may not be trusted, so they can inform a display or a policy's
// default but must never be what grants a permission. A nil hint is
// unspecified; MCP's defaults then are destructive and open-world.
type Annotations struct {
	Title           string `json:"title,omitempty"`
	ReadOnlyHint    *bool  `json:"readOnlyHint,omitempty"`
	DestructiveHint *bool  `json:"destructiveHint,omitempty"`
	IdempotentHint  *bool  `json:"idempotentHint,omitempty"`
	OpenWorldHint   *bool  `json:"openWorldHint,omitempty"`
}

// Tool is a neutral spec together with the metadata MCP carries and the
// model providers do not.
type Tool struct {
	Spec         hooks.ToolSpec
	Title        string
	OutputSchema json.RawMessage
	Annotations  *Annotations
}

// ToMCP exports a tool as an MCP definition. MCP names are a superset of
// provider names, dotted ids included, so the id is kept as it is.
func ToMCP(t Tool) (MCPTool, error) {
	if !mcpNameRE.MatchString(t.Spec.Name) {
		return MCPTool{}, fmt.Errorf("tool name %q is not a valid MCP name (letters, digits, \"_\", \"-\" and \".\", at most 128)", t.Spec.Name)
	}
	if _, err := schemaIn(t.Spec.Name, t.Spec.InputSchema); err != nil {
		return MCPTool{}, err
	}
	var ann *Annotations
	if t.Annotations != nil {
		a := *t.Annotations
		ann = &a
	}
	return MCPTool{
		Name: t.Spec.Name, Title: t.Title, Description: t.Spec.Description,
		InputSchema: schemaOut(t.Spec.InputSchema), OutputSchema: t.OutputSchema, Annotations: ann,
	}, nil
}

// FromMCP imports an MCP definition. A dotted name becomes its wire name
// (MapName), since the neutral id is what providers are offered; keep a
// NameMap over the originals to route calls back to the server.
func FromMCP(m MCPTool) (Tool, error) {
	name, err := checkName(m.Name)
	if err != nil {
		return Tool{}, err
	}
	spec, err := specIn(name, m.Description, m.InputSchema)
	if err != nil {
		return Tool{}, err
	}
	if len(m.OutputSchema) > 0 {
		if _, err := schemaIn(m.Name, m.OutputSchema); err != nil {
			return Tool{}, fmt.Errorf("tool %q: output schema is not a JSON object", m.Name)
		}
	}
	var ann *Annotations
	if m.Annotations != nil {
		a := *m.Annotations
		ann = &a
	}
	return Tool{Spec: spec, Title: m.Title, OutputSchema: m.OutputSchema, Annotations: ann}, nil
}
