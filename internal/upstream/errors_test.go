package upstream

import "testing"

func TestParseError(t *testing.T) {
	tests := []struct {
		body, typ, msg string
	}{
		{`{"error":{"message":"bad","type":"invalid_request_error","param":null,"code":null}}`, "invalid_request_error", "bad"},
		{`{"error":{"message":"quota","type":null,"code":"insufficient_quota"}}`, "insufficient_quota", "quota"},
		{`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, "overloaded_error", "Overloaded"},
		{`{"error":"model 'x' not found"}`, "", "model 'x' not found"},
		{`{"object":"error","message":"too long","type":"BadRequestError","code":400}`, "BadRequestError", "too long"},
		{`not json`, "", ""},
	}
	for _, tt := range tests {
		typ, msg := ParseError([]byte(tt.body))
		if typ != tt.typ || msg != tt.msg {
			t.Errorf("ParseError(%s) = %q, %q; want %q, %q", tt.body, typ, msg, tt.typ, tt.msg)
		}
	}
}
