package ledger

import (
	"os"
	"testing"
)

// TestMain lets the tests re-execute this binary as a child process (a
// writer, an importer that crashes) when childMode is set.
func TestMain(m *testing.M) {
	if mode := os.Getenv(childMode); mode != "" {
		os.Exit(childMain(mode))
	}
	os.Exit(m.Run())
}
