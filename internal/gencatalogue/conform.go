package main

import (
	"fmt"
	"go/format"
	"strings"

	"github.com/hookhost/hookhost/hooks"
)

// goConformPath holds the Go conform plugin's handler for every hook of
// the catalogue as the conformance spec (internal/conformance/doc.go) has
// it for a hook it does not name: an observer records "<hook>
// <session_id>", an answering hook gives no opinion. The plugin embeds
// them; its own methods, for the hooks the spec names, take precedence.
const goConformPath = "internal/conformance/goconform/hooks_gen.go"

func goConform(facts []hooks.Facts) ([]byte, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "// %s\n\n", header)
	b.WriteString(`package main

import (
	"context"

	"github.com/hookhost/hookhost/hooks"
)

// defaults serves every hook of the catalogue as the spec does a hook it
// does not name; conform's own methods override them.
type defaults struct {
	// record keeps an observer's line.
	record func(line string) error
}
`)
	for _, f := range facts {
		name, payload := goName(f.Name), f.Payload.Name()
		if !f.Observer {
			fmt.Fprintf(&b, "\nfunc (defaults) %s(context.Context, hooks.%s) (*hooks.%s, error) {\n\treturn nil, nil\n}\n", name, payload, f.Answer.Name())
			continue
		}
		session := ""
		if _, ok := f.Payload.FieldByName("SessionID"); ok {
			session = " + ev.SessionID"
		}
		fmt.Fprintf(&b, "\nfunc (d defaults) %s(_ context.Context, ev hooks.%s) error {\n\treturn d.record(%q%s)\n}\n", name, payload, string(f.Name)+" ", session)
	}
	return format.Source([]byte(b.String()))
}
