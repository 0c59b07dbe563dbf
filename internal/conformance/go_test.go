package conformance

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// TestGo checks the Go conform plugin, built with plugins/sdk: the
// reference every other language is held to, and the one that serves the
// lane.
func TestGo(t *testing.T) {
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "conform")
	if out, err := exec.Command("go", "build", "-o", bin, "./goconform").CombinedOutput(); err != nil {
		t.Fatalf("build goconform: %v\n%s", err, out)
	}
	Run(t, Plugin{Language: "go", Path: bin, ModelStages: true, Lane: true})
}
