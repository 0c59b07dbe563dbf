package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestLoadOrDefault(t *testing.T) {
	dir := t.TempDir()

	c, err := LoadOrDefault(filepath.Join(dir, "hookhost.toml"))
	if err != nil {
		t.Fatalf("missing file: %v", err)
	}
	if !reflect.DeepEqual(c, Default()) {
		t.Errorf("missing file gave %+v, want the defaults %+v", c, Default())
	}

	path := filepath.Join(dir, "hookhost.toml")
	if err := os.WriteFile(path, []byte("[conversation]\nmax_iterations = 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err = LoadOrDefault(path)
	if err != nil {
		t.Fatal(err)
	}
	if c.Conversation.MaxIterations != 3 || c.Dir != dir {
		t.Errorf("existing file: max_iterations %d, Dir %q; want 3 and %q", c.Conversation.MaxIterations, c.Dir, dir)
	}

	if err := os.WriteFile(path, []byte("[conversation]\nmax_iterations = \"many\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = LoadOrDefault(path)
	var ce *Error
	if !errors.As(err, &ce) || ce.File != path || ce.Line != 2 {
		t.Errorf("broken file: %v, want a config error naming %s line 2", err, path)
	}

	// A path that exists but cannot be read as a file is an error, not the
	// defaults.
	if _, err := LoadOrDefault(dir); err == nil {
		t.Errorf("a directory: no error, want one")
	}
}
