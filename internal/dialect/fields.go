package dialect

import (
	"fmt"
	"slices"
	"strings"
)

// Handling says what the gateway does with one request field of a front's
// protocol when the upstream speaks another protocol. On the same protocol
// every field is carried as it came, whatever its row says.
//
// The rule behind the rows: never refuse what a mainstream client sends by
// default. A field is translated, mapped or dropped as a hint wherever that
// leaves the answer the client relies on unchanged; only a field whose loss
// would silently change that answer is refused.
type Handling string

const (
	// Translated fields are modelled in the neutral types hooks see.
	Translated Handling = "translated"
	// Carried fields reach an upstream of the same protocol byte for
	// byte; no other protocol has them, and a request that uses them is
	// refused across protocols (a row that is carried across would be a
	// hint or mapped).
	Carried Handling = "carried"
	// Mapped fields have a cross-protocol equivalent the gateway sends
	// instead (stop ↔ stop_sequences, user ↔ metadata.user_id, …).
	Mapped Handling = "mapped"
	// Hint fields cannot change what the model answers (metadata, cache
	// hints, strict, store, …): across protocols they are dropped, logged
	// at DEBUG and counted in hookhost_gateway_fields_dropped_total.
	Hint Handling = "hint"
	// Refused fields would silently change an answer the client relies
	// on if dropped (n > 1, audio output): across protocols they are a
	// 400 naming the field.
	Refused Handling = "refused"
)

// Field is one row of a front's field table: a field of its protocol's
// request (top level, message, content part, tool, stream options) or a
// header its clients send, and what becomes of it across protocols.
type Field struct {
	// Path names the field as the API's reference does, with [] for
	// every element of an array: "top_p", "messages[].name",
	// "tools[].function.strict". A header is "header: anthropic-beta".
	Path     string
	Handling Handling
	// Note says, in a few words, how a mapped field is sent, what a hint
	// is for, or why a refused field cannot be dropped. It may be empty
	// for translated fields.
	Note string
}

// Drop records that the request holds the hint field path (a table Path,
// never an indexed one, so that metric labels stay few): an upstream of
// another protocol gets the request without it. Recording the same path
// twice keeps one.
func (c *Call) Drop(path string) {
	if !slices.Contains(c.Dropped, path) {
		c.Dropped = append(c.Dropped, path)
	}
}

// ByPath indexes a table's handlings by path, for a decoder's lookups.
func ByPath(fields []Field) map[string]Handling {
	m := make(map[string]Handling, len(fields))
	for _, f := range fields {
		m[f.Path] = f.Handling
	}
	return m
}

// FieldsMarkdown renders a field table as the README shows it.
func FieldsMarkdown(fields []Field) string {
	var b strings.Builder
	b.WriteString("| field | across protocols | how |\n|---|---|---|\n")
	for _, f := range fields {
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", f.Path, f.Handling, strings.ReplaceAll(f.Note, "|", `\|`))
	}
	return b.String()
}
