package chat

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/hookhost/hookhost/gateway/dialect"
)

// apiError is OpenAI's error object.
type apiError struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

// openAIError maps an error in Anthropic's vocabulary onto the type and
// code OpenAI gives the same failure, which is what the OpenAI SDKs read.
func openAIError(e *dialect.Error) apiError {
	out := apiError{Message: e.Message, Type: "invalid_request_error"}
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
		if e.Param == "model" || strings.Contains(strings.ToLower(e.Message), "model") {
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
	if out.Message == "" {
		out.Message = http.StatusText(e.Status)
	}
	return out
}

// ErrorBody renders e as {"error":{"message","type","param","code"}}.
func (f *Front) ErrorBody(e *dialect.Error) []byte {
	b, _ := json.Marshal(struct {
		Error apiError `json:"error"`
	}{openAIError(e)})
	return b
}
