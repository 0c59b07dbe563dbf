package main

import (
	"bytes"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/hookstretch"
)

// root is the repository's root, seen from this package's directory.
var root = filepath.Join("..", "..")

// TestGeneratedCatalogueUpToDate regenerates every generated file in
// memory and fails when the committed one differs.
func TestGeneratedCatalogueUpToDate(t *testing.T) {
	files, err := generate(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 4 {
		t.Fatalf("generate wrote %d files", len(files))
	}
	for _, path := range slices.Sorted(maps.Keys(files)) {
		want := files[path]
		got, err := os.ReadFile(filepath.Join(root, path))
		if err != nil {
			t.Errorf("%v; run %s", err, regenerate)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is out of date with hooks/catalogue.go; run %s", path, regenerate)
		}
	}
}

// TestGeneratedCatalogueContent holds the generated texts to the table:
// each hook once in the README table and in each SDK's list, and each
// observer, tool hook and stretch where it belongs.
func TestGeneratedCatalogueContent(t *testing.T) {
	files, err := generate(root)
	if err != nil {
		t.Fatal(err)
	}
	py, ts := string(files[pythonPath]), string(files[typescriptPath])
	readme := string(files[readmePath])
	for _, f := range hooks.CatalogueFacts() {
		if f.Fires == "" || f.Returns == "" || f.Combine == "" {
			t.Errorf("%s: the catalogue row lacks a fires, returns or combine text", f.Name)
		}
		row := "| `" + string(f.Name) + "` | " + f.Fires + " | " + f.Returns + " | " + f.Combine + " |\n"
		if strings.Count(readme, row) != 1 {
			t.Errorf("README.md's catalogue table has not exactly one row %q", row)
		}
		if n := strings.Count(py, `"`+string(f.Name)+`",`); n < 1 {
			t.Errorf("%s does not list %s", pythonPath, f.Name)
		}
		if !strings.Contains(ts, `| "`+string(f.Name)+`"`) {
			t.Errorf("%s's HookName does not name %s", typescriptPath, f.Name)
		}
	}
	section := func(text, start, end string) string {
		i := strings.Index(text, start)
		if i < 0 {
			t.Fatalf("no %q in the generated text", start)
		}
		j := strings.Index(text[i:], end)
		return text[i : i+j]
	}
	pyObservers := section(py, "OBSERVERS", "\n)\n")
	tsToolHooks := section(ts, "export const TOOL_HOOKS", "];")
	for _, f := range hooks.CatalogueFacts() {
		if got := strings.Contains(pyObservers, `"`+string(f.Name)+`"`); got != f.Observer {
			t.Errorf("%s in the Python OBSERVERS: %v, want %v", f.Name, got, f.Observer)
		}
		if got := strings.Contains(tsToolHooks, `"`+string(f.Name)+`"`); got != f.ToolScoped {
			t.Errorf("%s in the TypeScript TOOL_HOOKS: %v, want %v", f.Name, got, f.ToolScoped)
		}
	}
	if got, want := strings.Count(section(py, "LEGAL_STRETCHES", "\n)\n"), "    (\n"), len(hookstretch.Legal()); got != want {
		t.Errorf("the Python LEGAL_STRETCHES has %d stretches, want %d", got, want)
	}
}

// TestCatalogueHooksEverywhere checks that every file the checklist
// "Adding a hook" in hooks/doc.go names exists, and that every hook of the
// catalogue has its part, named after it, in each file that needs one:
// written by hand (the Bus method, the wire table and the RPC, each SDK's
// wire row) or by make generate (the Go SDK's interface and adapter, the
// three harnesses, the Go conform plugin's default and the TypeScript
// SDK's Hooks, and the rows of the README, PROTOCOL.md and the SDK
// READMEs).
func TestCatalogueHooksEverywhere(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(root, "hooks", "doc.go"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	i := strings.Index(text, "// # Adding a hook")
	j := strings.Index(text, "\npackage hooks")
	if i < 0 || j < i {
		t.Fatal(`hooks/doc.go has no section "# Adding a hook" before its package clause`)
	}
	adding := text[i:j]
	named := regexp.MustCompile(`[\w.-]+(?:/[\w.-]+)*\.(?:go|py|ts|proto|md)\b`).FindAllString(adding, -1)
	if len(named) < 20 {
		t.Fatalf("the checklist in hooks/doc.go names %d files; is the section still headed \"# Adding a hook\"?", len(named))
	}
	for _, f := range named {
		if !strings.Contains(f, "/") && f != "PROTOCOL.md" && f != "README.md" {
			f = filepath.Join("hooks", f) // catalogue.go and the like, in the hooks package itself
		}
		if _, err := os.Stat(filepath.Join(root, f)); err != nil {
			t.Errorf("hooks/doc.go's checklist names %s, which is gone: %v", f, err)
		}
	}
	files, err := generate(root)
	if err != nil {
		t.Fatal(err)
	}
	for path := range files {
		if !strings.Contains(adding, path) {
			t.Errorf("hooks/doc.go's checklist does not name %s, which make generate writes", path)
		}
	}

	type where struct {
		path    string
		pattern func(hooks.Name) string // a regexp the file must match
		what    string
	}
	py := func(h hooks.Name) string { return `(?m)^    def ` + string(h) + `\(` }
	ts := func(h hooks.Name) string { return `(?m)^  (async )?` + camel(h) + `\(` }
	row := func(h hooks.Name) string { return "(?m)^\\| `" + string(h) + "` \\|" }
	checks := []where{
		// Written by hand.
		{"hookbus/bus_hooks.go", func(h hooks.Name) string { return `(?m)^func \(b \*Bus\) ` + goName(h) + `\(` }, "a Bus method named after it"},
		{"internal/wire/table.go", func(h hooks.Name) string { return `\(hooks\.` + goName(h) + `, "` + protoName(h) + `",` }, "a row in the wire table"},
		{"plugins/proto/v1/plugin.proto", func(h hooks.Name) string { return `(?m)^  rpc ` + protoName(h) + `\(` }, "an RPC"},
		{"plugins/python/src/hookhost_plugin/convert.py", func(h hooks.Name) string {
			return `_(observer|answerer)\(\s*"` + string(h) + `",`
		}, "a row in HOOKS (its wire conversion)"},
		{"plugins/typescript/src/wire.ts", func(h hooks.Name) string {
			return `row\("` + string(h) + `", "` + camel(h) + `",`
		}, "a row in TABLE (its wire conversion)"},
		// Written by make generate.
		{goSDKPath, func(h hooks.Name) string { return `(?m)^\t\t` + goName(h) + `\(context\.Context, ` }, "a per-hook interface of the Go SDK (make generate)"},
		{goSDKPath, func(h hooks.Name) string { return `f\.` + goName(h) + `Func = ` }, "its adapter in the Go SDK (make generate)"},
		{goHarnessPath, func(h hooks.Name) string { return `(?m)^func \(h \*Harness\) ` + goName(h) + `\(` }, "a Harness method of the Go SDK (make generate)"},
		{pyHarnessPath, py, "a Harness method of the Python SDK (make generate)"},
		{tsHarnessPath, ts, "a harness method of the TypeScript SDK (make generate)"},
		{tsHooksPath, func(h hooks.Name) string { return `(?m)^  ` + camel(h) + `\?\(` }, "a method of the TypeScript SDK's Hooks (make generate)"},
		{goConformPath, func(h hooks.Name) string { return `(?m)^func \((d )?defaults\) ` + goName(h) + `\(` }, "a default handler in the Go conform plugin (make generate)"},
		{"README.md", row, "a row in the catalogue table (make generate)"},
		{"PROTOCOL.md", row, "a row in the hook table (make generate)"},
		{"plugins/python/README.md", row, "a row in the handler table (make generate)"},
		{"plugins/typescript/README.md", func(h hooks.Name) string { return "(?m)^\\| `" + camel(h) + "` \\| `" + string(h) + "` \\|" }, "a row in the handler table (make generate)"},
	}
	for _, c := range checks {
		raw, err := os.ReadFile(filepath.Join(root, c.path))
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range hooks.Catalogue {
			if !regexp.MustCompile(c.pattern(h)).Match(raw) {
				t.Errorf("%s lacks %s for %s (see \"Adding a hook\" in hooks/doc.go)", c.path, c.what, h)
			}
		}
	}
}

// PROTOCOL.md's hook table gives exactly the catalogue's observers the
// combine rule "observer", which its paragraph on observers refers to.
func TestCatalogueProtocolObservers(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(root, protocolPath))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), "\nObservers (the hooks whose combine rule the table above gives as\n`observer`)") {
		t.Errorf("%s has no paragraph starting \"Observers (the hooks whose combine rule the table above gives as `observer`)\"", protocolPath)
	}
	var got []string
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z_]+)` \\|.* \\| observer \\|$").FindAllSubmatch(raw, -1) {
		got = append(got, string(m[1]))
	}
	want := names(hooks.CatalogueFacts(), observers)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("%s's hook table marks %v as observers; the catalogue's are %v", protocolPath, got, want)
	}
}
