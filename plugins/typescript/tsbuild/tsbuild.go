// Package tsbuild finds what `make typescript` builds (the TypeScript SDK
// in plugins/typescript and the plugins written with it), for the Go tests
// that run them under the real host. A build that is missing, or older
// than the SDK's sources, makes the test skip, saying how to build it, or
// fail when the environment variable CI is set: CI builds them (make test
// depends on make typescript).
package tsbuild

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/hookhost/hookhost/internal/testenv"
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

// NotBuiltReason is the reason a test that needs a build gives when it
// skips for want of `make typescript`.
const NotBuiltReason = "the TypeScript SDK and the plugins written with it are not built"

// Missing says why the built file rel (relative to the repository root)
// cannot run, or "" when it can.
func Missing(rel string) string {
	_, _, why := missing(rel)
	return why
}

// missing is Missing with the skip's reason, shared by the tests with the
// same want, and the command that remedies it.
func missing(rel string) (reason, install, why string) {
	if _, err := os.Stat(Node); err != nil {
		return Node + " is missing (Node 20 or later)", "sudo apt-get install nodejs npm && " + BuildCommand,
			fmt.Sprintf("%s is missing (install Node 20 or later, Debian's nodejs)", Node)
	}
	if _, err := exec.LookPath("npm"); err != nil {
		return "npm is not on PATH", "sudo apt-get install npm && " + BuildCommand,
			"npm is not on PATH (install Debian's npm)"
	}
	p := filepath.Join(Root(), rel)
	st, err := os.Stat(p)
	if err != nil {
		return NotBuiltReason, BuildCommand, fmt.Sprintf("%s is not built", rel)
	}
	if head, _ := os.ReadFile(p); len(head) > 2 && string(head[:2]) == "#!" && st.Mode()&0o111 == 0 {
		return NotBuiltReason, BuildCommand, fmt.Sprintf("%s starts with #! but is not executable", rel)
	}
	if src, newer := newestSource(); newer.After(st.ModTime()) {
		// A build older than the SDK's sources would test the SDK as it
		// was, and pass or fail for the wrong reason.
		return NotBuiltReason, BuildCommand, fmt.Sprintf("%s is older than %s", rel, src)
	}
	return "", "", ""
}

// newestSource is the SDK source file changed last, relative to the
// repository root, and when. The generated sources are left out: `make
// test` regenerates them after building, with the same bytes and new
// times, and their drift is `make check-generated`'s to find.
func newestSource() (rel string, at time.Time) {
	root := Root()
	_ = filepath.WalkDir(filepath.Join(root, "plugins", "typescript", "src"), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			if d.Name() == "generated" {
				return filepath.SkipDir
			}
			return nil
		}
		if info, err := d.Info(); err == nil && info.ModTime().After(at) {
			at = info.ModTime()
			rel, _ = filepath.Rel(root, path)
		}
		return nil
	})
	return rel, at
}

// Need returns the absolute path of the built file rel, or stops t: a
// skip saying how to build it, or a failure under CI (make test runs make
// typescript first).
func Need(t testing.TB, rel string) string {
	t.Helper()
	if reason, install, why := missing(rel); why != "" {
		testenv.Skip(t, reason, install, why+"; build it with `"+BuildCommand+"` at the repository root")
	}
	p, err := filepath.Abs(filepath.Join(Root(), rel))
	if err != nil {
		t.Fatal(err)
	}
	return p
}
