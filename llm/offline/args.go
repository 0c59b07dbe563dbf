package offline

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode"
)

// objectSchema is the part of a tool's JSON Schema the model reads.
// Properties stay raw so that one odd property cannot hide the others.
type objectSchema struct {
	Properties map[string]json.RawMessage `json:"properties"`
	Required   []string                   `json:"required"`
}

type propSchema struct {
	Type        json.RawMessage   `json:"type"`
	Description string            `json:"description"`
	Enum        []json.RawMessage `json:"enum"`
	Default     json.RawMessage   `json:"default"`
	Minimum     json.RawMessage   `json:"minimum"`
}

func parseSchema(raw json.RawMessage) (objectSchema, bool) {
	var s objectSchema
	if len(raw) == 0 || json.Unmarshal(raw, &s) != nil {
		return objectSchema{}, false
	}
	return s, true
}

func (s objectSchema) property(name string) propSchema {
	var p propSchema
	if raw, ok := s.Properties[name]; ok {
		_ = json.Unmarshal(raw, &p) // a malformed property reads as untyped
	}
	return p
}

// typ returns the property's JSON type, taking the first non-null one of a
// type list.
func (p propSchema) typ() string {
	var one string
	if json.Unmarshal(p.Type, &one) == nil {
		return one
	}
	var many []string
	if json.Unmarshal(p.Type, &many) == nil {
		for _, t := range many {
			if t != "null" {
				return t
			}
		}
	}
	return ""
}

func isExpressionProp(name string, p propSchema) bool {
	switch strings.ToLower(name) {
	case "expression", "expr", "formula":
		return true
	}
	d := strings.ToLower(p.Description)
	return strings.Contains(d, "expression") || strings.Contains(d, "formula")
}

func isPathProp(name string) bool {
	n := strings.ToLower(name)
	return n == "filename" || strings.HasSuffix(n, "path") || strings.HasSuffix(n, "file")
}

// arguments builds a JSON object for a call of the tool whose input schema
// is raw, filling required properties from the question.
func arguments(question string, raw json.RawMessage) json.RawMessage {
	args := map[string]json.RawMessage{}
	s, ok := parseSchema(raw)
	if ok {
		required := setOf(s.Required...)
		for _, name := range s.Required {
			args[name] = requiredValue(question, name, s.property(name))
		}
		for name := range s.Properties {
			if required[name] {
				continue
			}
			p := s.property(name)
			if len(p.Default) == 0 {
				continue
			}
			if v, ok := namedEnum(question, p.Enum); ok {
				args[name] = v
			}
		}
	}
	return encode(args)
}

func requiredValue(question, name string, p propSchema) json.RawMessage {
	if len(p.Enum) > 0 {
		if v, ok := namedEnum(question, p.Enum); ok {
			return v
		}
		return p.Enum[0]
	}
	switch p.typ() {
	case "integer", "number":
		switch {
		case len(p.Default) > 0:
			return p.Default
		case len(p.Minimum) > 0:
			return p.Minimum
		}
		return json.RawMessage("1")
	case "boolean":
		return json.RawMessage("false")
	case "object":
		return json.RawMessage("{}")
	case "array":
		return json.RawMessage("[]")
	}
	switch {
	case isExpressionProp(name, p):
		if expr := arithmetic(question); expr != "" {
			return encode(expr)
		}
	case isPathProp(name):
		if path := findPath(question); path != "" {
			return encode(path)
		}
	}
	return encode(question)
}

// namedEnum returns the first enum value that the question contains as a
// whole word, ignoring case.
func namedEnum(question string, enum []json.RawMessage) (json.RawMessage, bool) {
	q := strings.ToLower(question)
	for _, v := range enum {
		var text string
		if json.Unmarshal(v, &text) != nil {
			text = string(v)
		}
		if text != "" && containsWord(q, strings.ToLower(text)) {
			return v, true
		}
	}
	return nil, false
}

func containsWord(s, w string) bool {
	for from := 0; ; {
		i := strings.Index(s[from:], w)
		if i < 0 {
			return false
		}
		i += from
		end := i + len(w)
		if !isWordByteAt(s, i-1) && !isWordByteAt(s, end) {
			return true
		}
		from = i + 1
	}
}

func isWordByteAt(s string, i int) bool {
	if i < 0 || i >= len(s) {
		return false
	}
	c := s[i]
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c >= 0x80
}

// findPath returns the first word of the question that looks like a file
// path, or "".
func findPath(question string) string {
	for _, f := range strings.Fields(question) {
		const punct = "\"'`()[]{}<>,;:?!"
		w := strings.TrimRight(strings.TrimLeft(f, punct), punct+".")
		if looksLikePath(w) {
			return w
		}
	}
	return ""
}

func looksLikePath(w string) bool {
	if !strings.ContainsFunc(w, unicode.IsLetter) {
		return false
	}
	if strings.Contains(w, "/") {
		return true
	}
	dot := strings.LastIndex(w, ".")
	if dot <= 0 {
		return false
	}
	ext := w[dot+1:]
	if len(ext) < 1 || len(ext) > 5 || strings.ContainsFunc(ext, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		return false
	}
	// Abbreviations such as "e.g" are dotted single letters, not files.
	for _, part := range strings.Split(w, ".") {
		if len(part) > 1 {
			return true
		}
	}
	return false
}

// encode marshals v without HTML escaping, so arguments read as written.
func encode(v any) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return json.RawMessage("{}")
	}
	return json.RawMessage(bytes.TrimRight(b.Bytes(), "\n"))
}
