package dialect

import (
	"encoding/json"
	"reflect"
	"testing"
)

// Both OpenAI fronts and the gateway's own pages render errors through
// these, so each protocol's shape is stated once.
func TestOpenAIErrorBodyMapsTypes(t *testing.T) {
	cases := []struct {
		in               Error
		typ, code, param any
	}{
		{Error{Status: 400, Type: "invalid_request_error", Param: "messages[3].tool_call_id", Message: "m"}, "invalid_request_error", nil, "messages[3].tool_call_id"},
		{Error{Status: 401, Type: "authentication_error", Message: "m"}, "invalid_request_error", "invalid_api_key", nil},
		{Error{Status: 404, Type: "not_found_error", Param: "model", Message: "model x is not served"}, "invalid_request_error", "model_not_found", "model"},
		{Error{Status: 404, Type: "not_found_error", Message: "no such path; GET /v1/models lists the models"}, "invalid_request_error", nil, nil},
		{Error{Status: 500, Message: "host"}, "server_error", nil, nil},
		{Error{Status: 429, Type: "rate_limit_error", Message: "m"}, "requests", "rate_limit_exceeded", nil},
		{Error{Status: 529, Type: "overloaded_error", Message: "m"}, "server_error", nil, nil},
		{Error{Status: 500, Type: "api_error", Message: "m"}, "server_error", nil, nil},
		{Error{Status: 504, Type: "timeout_error", Message: "m"}, "timeout", nil, nil},
		{Error{Status: 413, Type: "request_too_large", Message: "m"}, "invalid_request_error", nil, nil},
	}
	for _, c := range cases {
		var got struct {
			Error map[string]any `json:"error"`
		}
		b := OpenAIErrorBody(&c.in)
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		want := map[string]any{"message": c.in.Message, "type": c.typ, "code": c.code, "param": c.param}
		if !reflect.DeepEqual(got.Error, want) {
			t.Errorf("%s: error = %v, want %v", c.in.Type, got.Error, want)
		}
	}
}

func TestAnthropicErrorBody(t *testing.T) {
	for _, c := range []struct {
		in   Error
		want string
	}{
		{Error{Status: 529, Type: "overloaded_error", Message: "busy"}, `{"type":"error","error":{"type":"overloaded_error","message":"busy"}}`},
		{Error{Status: 500, Message: "host failed"}, `{"type":"error","error":{"type":"api_error","message":"host failed"}}`},
	} {
		var got, want any
		json.Unmarshal(AnthropicErrorBody(&c.in), &got)
		json.Unmarshal([]byte(c.want), &want)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%+v: %s, want %s", c.in, AnthropicErrorBody(&c.in), c.want)
		}
	}
}
