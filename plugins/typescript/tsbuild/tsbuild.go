// Package tsbuild finds what `make typescript` builds (the TypeScript SDK
// in plugins/typescript and the plugins written with it), for the Go tests
// that run them under the real host. A build that is missing makes the
// test skip, saying how to build it, or fail when the environment variable
// CI is set: CI builds them (make test depends on make typescript).
package tsbuild

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// Node is the interpreter the built plugins name in their #! line: the
// host passes no PATH, so a plugin names it by absolute path.
const Node = "/usr/bin/node"

// BuildCommand is what builds everything this package finds.
const BuildCommand = "make typescript"

// Root is the repository's root directory.
func Root() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		panic("tsbuild: cannot find the source file's path")
	}
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}

// Missing says why the built file rel (relative to the repository root)
// cannot run, or "" when it can.
func Missing(rel string) string {
	if _, err := os.Stat(Node); err != nil {
		return fmt.Sprintf("%s is missing (install Node 20 or later, Debian's nodejs)", Node)
	}
	if _, err := exec.LookPath("npm"); err != nil {
		return "npm is not on PATH (install Debian's npm)"
	}
	p := filepath.Join(Root(), rel)
	st, err := os.Stat(p)
	if err != nil {
		return fmt.Sprintf("%s is not built", rel)
	}
	if head, _ := os.ReadFile(p); len(head) > 2 && string(head[:2]) == "#!" && st.Mode()&0o111 == 0 {
		return fmt.Sprintf("%s starts with #! but is not executable", rel)
	}
	return ""
}

// Need returns the absolute path of the built file rel, or stops t: a
// skip saying how to build it, or a failure under CI.
func Need(t testing.TB, rel string) string {
	t.Helper()
	if why := Missing(rel); why != "" {
		msg := why + "; build it with `" + BuildCommand + "` at the repository root"
		if os.Getenv("CI") != "" {
			t.Fatal(msg + " (CI must: make test runs make typescript first)")
		}
		t.Skip(msg)
	}
	p, err := filepath.Abs(filepath.Join(Root(), rel))
	if err != nil {
		t.Fatal(err)
	}
	return p
}
