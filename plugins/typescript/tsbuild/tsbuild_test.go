package tsbuild

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hookhost/hookhost/internal/testenv"
)

// A build older than the SDK's newest source is not taken as built: the
// tests would run the SDK as it was. One newer than every source is.
func TestABuildOlderThanTheSourcesIsNotBuilt(t *testing.T) {
	if reason, install, why := missing("plugins/typescript/tsbuild/tsbuild.go"); strings.Contains(why, "Node") || strings.Contains(why, "npm") {
		testenv.Skip(t, reason, install, why)
	}
	built := filepath.Join(t.TempDir(), "index.js")
	if err := os.WriteFile(built, []byte("// built\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(Root(), built)
	if err != nil {
		t.Fatal(err)
	}
	src, newest := newestSource()
	if src == "" || !strings.HasPrefix(src, filepath.Join("plugins", "typescript", "src")) {
		t.Fatalf("newest source %q, want a file under plugins/typescript/src", src)
	}
	old := newest.Add(-time.Hour)
	if err := os.Chtimes(built, old, old); err != nil {
		t.Fatal(err)
	}
	if why := Missing(rel); !strings.Contains(why, "is older than "+src) {
		t.Errorf("a build older than %s: %q, want it said to be older", src, why)
	}
	fresh := newest.Add(time.Hour)
	if err := os.Chtimes(built, fresh, fresh); err != nil {
		t.Fatal(err)
	}
	if why := Missing(rel); why != "" {
		t.Errorf("a build newer than every source: %q, want it taken as built", why)
	}
}
