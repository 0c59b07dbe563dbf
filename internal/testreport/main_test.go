package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hookhost/hookhost/internal/testenv"
)

// throwawayModule writes a module with one passing test, one skipped the
// way testenv skips, and, when failing, one failed test.
func throwawayModule(t *testing.T, failing bool) string {
	t.Helper()
	dir := t.TempDir()
	skip := testenv.Message("the gizmo tool is not installed", testenv.Install, "sudo apt-get install gizmo") + "\nexec: gizmo: not found"
	src := fmt.Sprintf(`package throwaway

import "testing"

func TestPasses(t *testing.T) { t.Log("not shown") }

func TestNeedsGizmo(t *testing.T) { t.Skip(%s) }
`, strconv.Quote(skip))
	if failing {
		src += `
func TestFails(t *testing.T) {
	t.Log("what led to it")
	t.Fatal("the answer is 41, want 42")
}
`
	}
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/throwaway\n\ngo 1.24\n")
	write("throwaway_test.go", src)
	return dir
}

func runOn(t *testing.T, dir string) (string, int) {
	t.Helper()
	t.Setenv("GOWORK", "off")
	t.Setenv("GOFLAGS", "")
	var stdout, stderr strings.Builder
	status := run([]string{"-count=1", "./..."}, dir, &stdout, &stderr)
	if stderr.Len() > 0 {
		t.Logf("stderr:\n%s", stderr.String())
	}
	return stdout.String(), status
}

func TestRunSummarisesTheSkip(t *testing.T) {
	out, status := runOn(t, throwawayModule(t, false))
	if status != 0 {
		t.Errorf("exit status %d, want 0; output:\n%s", status, out)
	}
	wantInOrder(t, out,
		"ok   throwaway ", "s  1 passed, 1 skipped\n",
		"tests:    1 passed, 0 failed, 1 skipped\n",
		"skipped 1 test: the gizmo tool is not installed — install: sudo apt-get install gizmo\n",
		"    throwaway.TestNeedsGizmo\n",
		"\nPASS\n")
	wantNot(t, out, "not shown")
}

func TestRunFailsWhenATestFails(t *testing.T) {
	out, status := runOn(t, throwawayModule(t, true))
	if status == 0 {
		t.Errorf("exit status 0 though a test failed; output:\n%s", out)
	}
	wantInOrder(t, out,
		"=== FAIL throwaway.TestFails\n",
		"what led to it\n",
		"the answer is 41, want 42\n",
		"FAIL throwaway ", "s  1 passed, 1 failed, 1 skipped\n",
		"skipped 1 test: the gizmo tool is not installed — install: sudo apt-get install gizmo\n",
		"failed:\n    throwaway.TestFails\n",
		"FAIL (go test exited with status 1)\n")
}
