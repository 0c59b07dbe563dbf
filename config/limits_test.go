package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A value too large says how large it may be, not how small.
func TestTooLargeValues(t *testing.T) {
	tests := []struct {
		name, src, key, msg string
	}{
		{"max_iterations at int64 max", "[conversation]\nmax_iterations = 9223372036854775807\n", "conversation.max_iterations", "must be at most 2147483647"},
		{"max_tokens at int64 max", "[llm]\nmax_tokens = 9223372036854775807\n", "llm.max_tokens", "must be at most 2147483647"},
		{"max_retries at int64 max", "[llm]\nmax_retries = 9223372036854775807\n", "llm.max_retries", "between 0 and 10"},
		{"llm.timeout overflows", "[llm]\ntimeout = \"9999999999h\"\n", "llm.timeout", "too large"},
		{"llm.call_timeout overflows", "[llm]\ncall_timeout = \"99999999999999999999s\"\n", "llm.call_timeout", "too large"},
		{"plugin timeout overflows", "[plugins.entries.kora]\ntimeout = \"3000000h\"\n", "plugins.entries.kora.timeout", "too large"},
		{"plugin tool_timeout overflows", "[plugins.entries.kora]\ntool_timeout = \"106751d\"\n", "plugins.entries.kora.tool_timeout", "bad duration"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.src), "hookhost.toml", testDir)
			var ce *Error
			if !errors.As(err, &ce) || ce.Key != tt.key || ce.Line != 2 || ce.File != "hookhost.toml" {
				t.Fatalf("err = %v, want a config error at hookhost.toml:2 for %s", err, tt.key)
			}
			if !strings.Contains(ce.Msg, tt.msg) || strings.Contains(ce.Msg, "at least") {
				t.Errorf("message %q, want it to say %q", ce.Msg, tt.msg)
			}
		})
	}
}

// read_root is checked when the file is loaded, so that a wrong directory
// is reported where it is written.
func TestReadRootIsCheckedWhereWritten(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "hookhost.toml")
	for root, want := range map[string]string{
		"missing":   "does not exist",
		"notes.txt": "is not a directory",
	} {
		src := "# tools\n[tools]\nread_root = \"" + root + "\"\n"
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Load(path)
		var ce *Error
		if !errors.As(err, &ce) || ce.File != path || ce.Line != 3 || ce.Key != "tools.read_root" {
			t.Fatalf("read_root %q: err = %v, want a config error at %s:3 for tools.read_root", root, err, path)
		}
		if !strings.Contains(ce.Msg, want) || !strings.Contains(ce.Msg, filepath.Join(dir, root)) || !strings.Contains(ce.Msg, "create") {
			t.Errorf("read_root %q: message %q, want it to say %q, name the directory and what to do", root, ce.Msg, want)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "work"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("[tools]\nread_root = \"work\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); err != nil {
		t.Errorf("existing read_root: %v", err)
	}
}
