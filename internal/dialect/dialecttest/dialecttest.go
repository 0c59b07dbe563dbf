// Package dialecttest holds a front's decoder to its own field table, for
// the tests of every front: one example request per row, decoded, and the
// outcome checked against the row's handling.
package dialecttest

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/dialect"
)

// Example is a request holding one row's field with a value that asks for
// something (not the protocol's default), and for a mapped row what the
// neutral request must then say.
type Example struct {
	Body   string
	Mapped func(hooks.ModelRequest) bool
}

// CheckRows decodes, for every row of front's table but headers and those
// skip names, the row's example, and holds the decoder to the row: a
// translated or mapped field is read (a mapped one into the neutral
// request), a hint is dropped by its row's path and nothing else, a
// refused or carried field is a 400 or named in Foreign. Every row must
// have its example and every example its row; headers lists the request
// headers the table must say something of.
func CheckRows(t *testing.T, front dialect.Front, examples map[string]Example, skip func(path string) bool, headers []string) {
	t.Helper()
	seen := map[string]bool{}
	for _, row := range front.Fields() {
		seen[row.Path] = true
		if strings.HasPrefix(row.Path, "header: ") || (skip != nil && skip(row.Path)) {
			continue
		}
		ex, ok := examples[row.Path]
		if !ok {
			t.Errorf("row %q has no example request in this test", row.Path)
			continue
		}
		t.Run(row.Path, func(t *testing.T) { checkRow(t, front, row, ex) })
	}
	for path := range examples {
		if !seen[path] {
			t.Errorf("example %q has no row in the table", path)
		}
	}
	for _, h := range headers {
		if !seen["header: "+h] {
			t.Errorf("the table does not say what becomes of the %s header", h)
		}
	}
}

func checkRow(t *testing.T, front dialect.Front, row dialect.Field, ex Example) {
	call, err := front.Decode([]byte(ex.Body))
	if row.Handling == dialect.Refused || row.Handling == dialect.Carried {
		var de *dialect.Error
		switch {
		case errors.As(err, &de):
			if de.Status != 400 || de.Param == "" {
				t.Errorf("refusal %+v does not name the field", de)
			}
		case err != nil:
			t.Fatalf("Decode: %v", err)
		case len(call.Foreign) == 0:
			t.Errorf("a %s field is neither refused nor named in Foreign (dropped: %q)", row.Handling, call.Dropped)
		}
		return
	}
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	if len(call.Foreign) != 0 {
		t.Errorf("foreign = %q, want none for a %s field", call.Foreign, row.Handling)
	}
	switch row.Handling {
	case dialect.Hint:
		if !slices.Equal(call.Dropped, []string{row.Path}) {
			t.Errorf("dropped = %q, want [%q]", call.Dropped, row.Path)
		}
		// On the same protocol the field still reaches the upstream as
		// sent.
		if !strings.ContainsAny(row.Path, ".[") {
			var top map[string]json.RawMessage
			_ = json.Unmarshal([]byte(ex.Body), &top)
			if string(call.Pass.Fields[row.Path]) != string(top[row.Path]) {
				t.Errorf("kept for the same protocol as %s, want %s", call.Pass.Fields[row.Path], top[row.Path])
			}
		}
	case dialect.Mapped:
		if len(call.Dropped) != 0 {
			t.Errorf("dropped = %q, want none", call.Dropped)
		}
		if ex.Mapped == nil || !ex.Mapped(call.Request) {
			t.Errorf("the neutral request does not carry the mapped field: %+v", call.Request)
		}
	case dialect.Translated:
		if len(call.Dropped) != 0 {
			t.Errorf("dropped = %q, want none", call.Dropped)
		}
	default:
		t.Errorf("handling %q", row.Handling)
	}
}
