package messages_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/hookhost/hookhost/internal/codec/messages"
	"github.com/hookhost/hookhost/internal/dialect"
)

func TestAnthropicErrorBody(t *testing.T) {
	for _, c := range []struct {
		in   dialect.Error
		want string
	}{
		{dialect.Error{Status: 529, Type: "overloaded_error", Message: "busy"}, `{"type":"error","error":{"type":"overloaded_error","message":"busy"}}`},
		{dialect.Error{Status: 500, Message: "host failed"}, `{"type":"error","error":{"type":"api_error","message":"host failed"}}`},
	} {
		var got, want any
		json.Unmarshal(messages.ErrorBody(&c.in), &got)
		json.Unmarshal([]byte(c.want), &want)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%+v: %s, want %s", c.in, messages.ErrorBody(&c.in), c.want)
		}
	}
}
