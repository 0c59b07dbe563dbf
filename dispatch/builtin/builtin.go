// Package builtin provides the native tools every hookhost session can
// offer without any plugin: a clock (now), a calculator (calculate) and a
// text-file reader confined to one directory (read_file).
//
// Each tool's input schema is strict (additionalProperties false) and its
// description uses the everyday words a user would, because models, and the
// offline model in particular, choose tools by matching the request against
// names and descriptions. Run functions still decode defensively, since a
// caller may skip validation.
package builtin

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/hookhost/hookhost/dispatch"
)

// All returns the built-in tools in a stable order: now (on the real
// clock), calculate, and read_file confined to root.
func All(root string) ([]dispatch.Tool, error) {
	rf, err := ReadFile(root)
	if err != nil {
		return nil, err
	}
	return []dispatch.Tool{Now(nil), Calculate(), rf}, nil
}

// decodeArgs treats missing arguments as an empty object, because some
// providers send "" or null for a call without arguments.
func decodeArgs(raw json.RawMessage, v any) error {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		return nil
	}
	if err := json.Unmarshal(trimmed, v); err != nil {
		return fmt.Errorf("invalid arguments: %v", err)
	}
	return nil
}

// compactJSON lets schemas be written readably in source while being sent
// compactly; it panics because a malformed literal is a programming error
// that the package's tests catch.
func compactJSON(s string) json.RawMessage {
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		panic(fmt.Sprintf("builtin: malformed schema literal: %v", err))
	}
	return json.RawMessage(b.Bytes())
}
