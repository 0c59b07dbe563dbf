package codec_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/hookhost/hookhost/internal/codec"
	"github.com/hookhost/hookhost/internal/dialect"
)

// Both OpenAI fronts and the gateway's own pages render errors through
// these, so each protocol's shape is stated once.
func TestOpenAIErrorBodyMapsTypes(t *testing.T) {
	cases := []struct {
		in               dialect.Error
		typ, code, param any
	}{
		{dialect.Error{Status: 400, Type: "invalid_request_error", Param: "messages[3].tool_call_id", Message: "m"}, "invalid_request_error", nil, "messages[3].tool_call_id"},
		{dialect.Error{Status: 401, Type: "authentication_error", Message: "m"}, "invalid_request_error", "invalid_api_key", nil},
		{dialect.Error{Status: 404, Type: "not_found_error", Param: "model", Message: "model x is not served"}, "invalid_request_error", "model_not_found", "model"},
		{dialect.Error{Status: 404, Type: "not_found_error", Message: "no such path; GET /v1/models lists the models"}, "invalid_request_error", nil, nil},
		{dialect.Error{Status: 500, Message: "host"}, "server_error", nil, nil},
		{dialect.Error{Status: 429, Type: "rate_limit_error", Message: "m"}, "requests", "rate_limit_exceeded", nil},
		{dialect.Error{Status: 529, Type: "overloaded_error", Message: "m"}, "server_error", nil, nil},
		{dialect.Error{Status: 500, Type: "api_error", Message: "m"}, "server_error", nil, nil},
		{dialect.Error{Status: 504, Type: "timeout_error", Message: "m"}, "timeout", nil, nil},
		{dialect.Error{Status: 413, Type: "request_too_large", Message: "m"}, "invalid_request_error", nil, nil},
	}
	for _, c := range cases {
		var got struct {
			Error map[string]any `json:"error"`
		}
		b := codec.OpenAIErrorBody(&c.in)
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		want := map[string]any{"message": c.in.Message, "type": c.typ, "code": c.code, "param": c.param}
		if !reflect.DeepEqual(got.Error, want) {
			t.Errorf("%s: error = %v, want %v", c.in.Type, got.Error, want)
		}
	}
}
