package conformance

import (
	"path/filepath"
	"testing"
)

// TestReviewPythonSDKConform holds the Python SDK's conform plugin
// (plugins/python/conform/conform.py) to the harness, as go_test.go does
// the Go one: no test in the repository does.
func TestReviewPythonSDKConform(t *testing.T) {
	fromDocPython(t) // skips, or fails under CI, without Debian's modules
	p, err := filepath.Abs(filepath.Join("..", "..", "plugins", "python", "conform", "conform.py"))
	if err != nil {
		t.Fatal(err)
	}
	Run(t, Plugin{Language: "python-sdk", Path: p})
}
