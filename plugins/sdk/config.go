package sdk

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// DecodeConfig decodes the config table the host hands to Configure into v,
// strictly: an unknown key is an error, because a misspelt key silently
// ignored is how a guard ends up letting through what it was meant to stop.
// Errors speak the config's language (keys, lists, tables), not Go's, so a
// plugin can return them from Configure as they are and the operator sees,
// through `hookhost plugins check`, which key to fix (the host adds which
// plugin rejected its config).
func DecodeConfig(raw json.RawMessage, v any) error {
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = json.RawMessage("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		return nil
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		want := te.Type.Kind().String()
		switch te.Type.Kind() {
		case reflect.Slice, reflect.Array:
			want = "list"
		case reflect.Struct, reflect.Map:
			want = "table"
		}
		return fmt.Errorf("%s: wrong type: got %s, want %s", te.Field, te.Value, want)
	}
	msg := strings.TrimPrefix(err.Error(), "json: ")
	return errors.New(strings.Replace(msg, "unknown field", "unknown key", 1))
}
