package gateway

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hookhost/hookhost/internal/codec/chat"
	"github.com/hookhost/hookhost/internal/codec/messages"
	"github.com/hookhost/hookhost/internal/codec/responses"
	"github.com/hookhost/hookhost/internal/dialect"
)

// TestREADMEFieldTables holds the README's field tables equal to the
// fronts' own; HOOKHOST_UPDATE_README=1 rewrites them from the code.
func TestREADMEFieldTables(t *testing.T) {
	path := filepath.Join("..", "README.md")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	readme := string(raw)
	for _, front := range []dialect.Front{chat.New(), responses.New(), messages.New()} {
		rows := front.Fields()
		checkTable(t, front.Path(), rows)
		section := regexp.MustCompile(`(?s)(<!-- fields ` + regexp.QuoteMeta(front.Path()) + ` -->\n)(.*?)(<!-- end fields -->)`)
		m := section.FindStringSubmatchIndex(readme)
		if m == nil {
			t.Errorf("README.md has no <!-- fields %s --> … <!-- end fields --> section", front.Path())
			continue
		}
		want := "\n" + dialect.FieldsMarkdown(rows) + "\n"
		if got := readme[m[4]:m[5]]; got != want {
			if os.Getenv("HOOKHOST_UPDATE_README") != "" {
				readme = readme[:m[4]] + want + readme[m[5]:]
				continue
			}
			t.Errorf("README.md's field table for %s differs from the front's; run HOOKHOST_UPDATE_README=1 go test ./gateway -run TestREADMEFieldTables", front.Path())
		}
	}
	if os.Getenv("HOOKHOST_UPDATE_README") != "" && readme != string(raw) {
		if err := os.WriteFile(path, []byte(readme), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// checkTable holds a table to its own rules: each path once, a known
// handling, and a note wherever the row is not simply translated.
func checkTable(t *testing.T, endpoint string, rows []dialect.Field) {
	t.Helper()
	seen := map[string]bool{}
	for _, f := range rows {
		if seen[f.Path] {
			t.Errorf("%s: field %q is in the table twice", endpoint, f.Path)
		}
		seen[f.Path] = true
		switch f.Handling {
		case dialect.Translated, dialect.Carried:
		case dialect.Mapped, dialect.Hint, dialect.Refused:
			if strings.TrimSpace(f.Note) == "" {
				t.Errorf("%s: field %q is %s but its note does not say how or why", endpoint, f.Path, f.Handling)
			}
		default:
			t.Errorf("%s: field %q has handling %q, not one of translated, carried, mapped, hint, refused", endpoint, f.Path, f.Handling)
		}
	}
	if len(rows) < 10 {
		t.Errorf("%s: the table has %d rows; it must cover every field the API documents", endpoint, len(rows))
	}
}
