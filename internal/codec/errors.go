package codec

import (
	"encoding/json"
	"net/http"

	"github.com/hookhost/hookhost/internal/dialect"
)

// OpenAIError is the error object of the OpenAI APIs, as both of their
// codecs (chat, responses) send it: in a whole error response, and in Chat Completions'
// in-stream error event.
type OpenAIError struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

// ToOpenAI maps e, in Anthropic's vocabulary, onto the type and code
// OpenAI gives the same failure, which is what the OpenAI SDKs read.
func ToOpenAI(e *dialect.Error) OpenAIError {
	out := OpenAIError{Message: e.Message, Type: "invalid_request_error"}
	if e.Param != "" {
		p := e.Param
		out.Param = &p
	}
	code := func(c string) { out.Code = &c }
	switch e.Type {
	case "invalid_request_error", "request_too_large":
	case "authentication_error":
		code("invalid_api_key")
	case "permission_error":
		code("permission_denied")
	case "not_found_error":
		if e.Param == "model" {
			code("model_not_found")
		}
	case "rate_limit_error":
		out.Type = "requests"
		code("rate_limit_exceeded")
	case "overloaded_error", "api_error":
		out.Type = "server_error"
	case "timeout_error":
		out.Type = "timeout"
	default:
		if e.Status >= http.StatusInternalServerError || e.Status == 0 {
			out.Type = "server_error"
		}
	}
	if e.Code != "" {
		code(e.Code)
	}
	if out.Message == "" {
		out.Message = http.StatusText(e.Status)
	}
	return out
}

// OpenAIErrorBody renders e as {"error":{"message","type","param","code"}}.
func OpenAIErrorBody(e *dialect.Error) []byte {
	b, _ := json.Marshal(struct {
		Error OpenAIError `json:"error"`
	}{ToOpenAI(e)})
	return b
}
