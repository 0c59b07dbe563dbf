package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// install writes an executable stand-in for a plugin binary.
func install(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
}

// loadFile writes src as hookhost.toml in dir and loads it.
func loadFile(t *testing.T, dir, src string) (*Config, error) {
	t.Helper()
	path := filepath.Join(dir, "hookhost.toml")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return Load(path)
}

// A table for a plugin that is neither enabled nor installed is most
// likely misspelt: Load refuses it with its line and the name meant.
func TestLoadRefusesEntryForUnknownPlugin(t *testing.T) {
	dir := t.TempDir()
	install(t, filepath.Join(dir, "bin/plugins/guard"))
	install(t, filepath.Join(dir, "bin/plugins/redactor"))
	for _, c := range []struct {
		name, src string
		line      int
		key, want string
	}{
		{"misspelt enabled plugin", `[plugins]
enabled = ["guard"]

[plugins.entries.gaurd]
fail_closed = true
`, 4, "plugins.entries.gaurd", `no plugin "gaurd" is enabled or installed in ` + filepath.Join(dir, "bin/plugins") + ` (did you mean guard?)`},
		{"misspelt installed plugin", `[plugins.entries.redacter.config]
mask = "x"
`, 1, "plugins.entries.redacter", `no plugin "redacter" is enabled or installed in ` + filepath.Join(dir, "bin/plugins") + ` (did you mean redactor?)`},
		{"nothing near", `[plugins]
enabled = ["guard"]
[plugins.entries.zebra]
timeout = "1s"
`, 3, "plugins.entries.zebra", `no plugin "zebra" is enabled or installed in ` + filepath.Join(dir, "bin/plugins") + ` (enable it in plugins.enabled and install its binary, or remove the table)`},
		{"path that does not exist", `[plugins.entries.other]
path = "elsewhere/other"
`, 1, "plugins.entries.other", `no plugin "other" is enabled or installed at ` + filepath.Join(dir, "elsewhere/other") + ` (its path)`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := loadFile(t, dir, c.src)
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("Load = %v, want a *config.Error", err)
			}
			if ce.Line != c.line || ce.Key != c.key || !strings.Contains(ce.Msg, c.want) {
				t.Errorf("error = %q (line %d, key %q)\nwant line %d, key %q, message containing %q", err, ce.Line, ce.Key, c.line, c.key, c.want)
			}
			if !strings.HasPrefix(err.Error(), "config: "+filepath.Join(dir, "hookhost.toml")+":") {
				t.Errorf("error %q does not start with the file and line", err)
			}
		})
	}
}

// A table for an installed plugin that is not enabled is kept, so that a
// plugin is switched on and off through plugins.enabled alone; Parse,
// which looks at no file, keeps every table.
func TestInstalledDisabledPluginsKeepTheirTables(t *testing.T) {
	dir := t.TempDir()
	install(t, filepath.Join(dir, "bin/plugins/spare"))
	install(t, filepath.Join(dir, "opt/custom"))
	c, err := loadFile(t, dir, `[plugins]
enabled = []
[plugins.entries.spare]
timeout = "3s"
[plugins.entries.custom]
path = "opt/custom"
`)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if _, ok := c.Plugins.Entries["spare"]; !ok {
		t.Errorf("entry for the installed plugin spare was dropped: %+v", c.Plugins.Entries)
	}
	if _, ok := c.Plugins.Entries["custom"]; !ok {
		t.Errorf("entry for custom, installed at its path, was dropped: %+v", c.Plugins.Entries)
	}
	if _, err := Parse([]byte("[plugins.entries.gaurd]\nfail_closed = true\n"), "hookhost.toml", dir); err != nil {
		t.Errorf("Parse refused a table for a plugin it cannot look for: %v", err)
	}
}

// The entry keeps where its config table and each of its top-level keys
// are written, for the host to point at once the plugin has said which
// keys it takes.
func TestEntrySourceLines(t *testing.T) {
	c := mustParse(t, `[plugins]
enabled = ["guard", "inline"]

[plugins.entries.guard]
timeout = "1s"
[plugins.entries.guard.config]
message = "no"
deny = [
  { tool = "read_file" },
]
[plugins.entries.guard.config.nested]
x = 1

[plugins.entries.inline]
config = { a = 1, b = { c = 2 } }
`)
	guard := c.Plugins.Entries["guard"].Source
	want := Source{File: "hookhost.toml", Line: 4, ConfigLine: 6, ConfigKeys: map[string]int{"message": 7, "deny": 8, "nested": 11}}
	if guard.File != want.File || guard.Line != want.Line || guard.ConfigLine != want.ConfigLine || len(guard.ConfigKeys) != 3 ||
		guard.ConfigKeys["message"] != 7 || guard.ConfigKeys["deny"] != 8 || guard.ConfigKeys["nested"] != 11 {
		t.Errorf("guard's source = %+v, want %+v", guard, want)
	}
	inline := c.Plugins.Entries["inline"].Source
	if inline.Line != 14 || inline.ConfigLine != 15 || inline.ConfigKeys["a"] != 15 || inline.ConfigKeys["b"] != 15 {
		t.Errorf("inline's source = %+v, want the table at 14 and its config and keys at 15", inline)
	}
	if at := guard.At(guard.ConfigKeys["deny"]); at != "hookhost.toml:8" {
		t.Errorf("At = %q, want hookhost.toml:8", at)
	}
	if at := (Source{}).At(3); at != "line 3" {
		t.Errorf("At without a file = %q, want line 3", at)
	}
}
