package codec

import (
	"bytes"
	"encoding/json"
	"strings"
)

// Args is a tool call's arguments on the OpenAI wire (Chat Completions'
// function.arguments, a Responses function_call's arguments): a JSON
// string holding the model's text. Some compatible servers send a JSON
// object instead; that is accepted as the arguments themselves.
type Args string

// MarshalJSON writes the arguments as the JSON string both APIs expect,
// escaped as a string field would be: the encoder that calls it escapes
// HTML characters or not, as it does for every other string.
func (a Args) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(string(a)); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// UnmarshalJSON reads a string, an object (kept as its JSON text) or
// null (no arguments).
func (a *Args) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*a = Args(s)
		return nil
	}
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		*a = ""
		return nil
	}
	*a = Args(b)
	return nil
}

// RawArgs turns wire arguments into a ToolCall's. Text is kept as written,
// invalid JSON included; only an empty string becomes {}, which is what a
// model means by it and what dispatch would assume anyway.
func RawArgs(s string) json.RawMessage {
	if strings.TrimSpace(s) == "" {
		return json.RawMessage("{}")
	}
	return json.RawMessage(s)
}

// WireArgs is the inverse for the history: the text the model wrote, {}
// for none.
func WireArgs(r json.RawMessage) Args {
	if len(bytes.TrimSpace(r)) == 0 {
		return "{}"
	}
	return Args(r)
}
