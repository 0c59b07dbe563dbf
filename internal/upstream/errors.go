package upstream

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/hookhost/hookhost/llm"
)

// Fail is the error of a request that cannot be encoded or sent, and Bad
// that of an answer hookhost cannot use. Both leave Provider empty: the
// transport that made the call names itself when it seals the error.
func Fail(msg string, err error) *llm.ProviderError {
	return &llm.ProviderError{Message: msg, Err: err}
}

// Bad reports a response hookhost cannot use; see Fail.
func Bad(format string, a ...any) *llm.ProviderError {
	return &llm.ProviderError{Message: fmt.Sprintf(format, a...)}
}

// ParseError reads the error type and message out of a provider's error
// body, "" for what it does not carry. It also serves error frames inside
// a stream, which use the same object.
func ParseError(body []byte) (typ, msg string) {
	var env struct {
		Type    any             `json:"type"`
		Message string          `json:"message"`
		Code    any             `json:"code"`
		Error   json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &env) != nil {
		return "", ""
	}
	var inner struct {
		Type    any    `json:"type"`
		Message string `json:"message"`
		Code    any    `json:"code"`
	}
	var str string
	switch {
	case len(env.Error) > 0 && json.Unmarshal(env.Error, &inner) == nil && (inner.Message != "" || inner.Type != nil || inner.Code != nil):
		typ, msg = scalar(inner.Type), inner.Message
		if typ == "" {
			typ = scalar(inner.Code)
		}
	case len(env.Error) > 0 && json.Unmarshal(env.Error, &str) == nil:
		msg = str
	default:
		typ, msg = scalar(env.Type), env.Message
		if typ == "error" || typ == "" {
			// Anthropic's envelope says type "error" around the real type;
			// without an inner object there is nothing more specific.
			typ = scalar(env.Code)
		}
	}
	return typ, msg
}

// Missing returns which of fields the JSON object body lacks or has as
// null, for adapters to name what a response that decoded fine still
// does not carry.
func Missing(body []byte, fields ...string) []string {
	var obj map[string]json.RawMessage
	_ = json.Unmarshal(body, &obj)
	var out []string
	for _, f := range fields {
		if v, ok := obj[f]; !ok || string(v) == "null" {
			out = append(out, f)
		}
	}
	return out
}

func scalar(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return ""
}
