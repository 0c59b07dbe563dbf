// Package sampling holds what the providers share about the neutral
// request's sampling and identity settings (temperature, top_p, stop, seed,
// user): the ranges every upstream takes, checked before anything is
// encoded, and whether a client's own wire field, kept for forwarding,
// already says what the neutral value says.
//
// The second matters because a forwarded request carries the client's
// fields byte for byte (upstream.Passthrough): a setting is sent from its
// neutral value only where that value differs from the client's field or
// the client sent none, so it is never sent twice and never re-encoded
// when nothing changed it.
package sampling

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/hookhost/hookhost/internal/upstream"
	"github.com/hookhost/hookhost/llm"
)

// Check refuses settings no upstream takes, before any is encoded: a NaN
// or infinite number cannot even be written as JSON, and a value out of
// every provider's range would only come back as the upstream's 400. The
// error names the field and what it must be.
func Check(req llm.Request) error {
	if t := req.Temperature; t != nil && !(*t >= 0 && *t <= 2) {
		return fmt.Errorf("temperature is %v; it must be a number from 0 to 2", *t)
	}
	if p := req.TopP; p != nil && !(*p >= 0 && *p <= 1) {
		return fmt.Errorf("top_p is %v; it must be a number from 0 to 1", *p)
	}
	return nil
}

// field is pass's top-level field key, when it holds one that is not null.
func field(pass *upstream.Passthrough, key string) (json.RawMessage, bool) {
	if pass == nil {
		return nil, false
	}
	raw, ok := pass.Fields[key]
	if !ok || len(raw) == 0 || string(raw) == "null" {
		return nil, false
	}
	return raw, true
}

// SameFloat reports whether pass holds the field key with the value *v.
// A nil v has nothing to compare and is never the same.
func SameFloat(pass *upstream.Passthrough, key string, v *float64) bool {
	raw, ok := field(pass, key)
	if !ok || v == nil {
		return false
	}
	var got float64
	return json.Unmarshal(raw, &got) == nil && got == *v
}

// SameInt reports whether pass holds the field key with the value *v.
func SameInt(pass *upstream.Passthrough, key string, v *int64) bool {
	raw, ok := field(pass, key)
	if !ok || v == nil {
		return false
	}
	var got int64
	return json.Unmarshal(raw, &got) == nil && got == *v
}

// SameString reports whether pass holds the field key with the value v.
// An empty v is never the same.
func SameString(pass *upstream.Passthrough, key, v string) bool {
	raw, ok := field(pass, key)
	if !ok || v == "" {
		return false
	}
	var got string
	return json.Unmarshal(raw, &got) == nil && got == v
}

// SameStrings reports whether pass holds the field key with the values v,
// as a list or, as Chat Completions' stop allows, as one string. An empty
// v is never the same.
func SameStrings(pass *upstream.Passthrough, key string, v []string) bool {
	raw, ok := field(pass, key)
	if !ok || len(v) == 0 {
		return false
	}
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return len(v) == 1 && v[0] == one
	}
	var got []string
	return json.Unmarshal(raw, &got) == nil && slices.Equal(got, v)
}
