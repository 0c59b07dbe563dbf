package conformance

import (
	"path/filepath"
	"testing"

	"github.com/hookhost/hookhost/internal/testenv"
)

// TestPython checks the Python conform plugin, written with the Python SDK
// (plugins/python/conform/conform.py, which imports the SDK from
// plugins/python/src), on protocols 1 and 2. It needs Debian's Python with
// python3-grpcio, python3-protobuf and python3-cryptography: without them
// it is skipped, saying so, and under CI it fails. The plugin serves the
// lane: over protocol 2 every hook call must come on it.
func TestPython(t *testing.T) {
	t.Parallel()
	testenv.NeedDebianPython(t)
	path, err := filepath.Abs(filepath.Join("..", "..", "plugins", "python", "conform", "conform.py"))
	if err != nil {
		t.Fatal(err)
	}
	Run(t, Plugin{Language: "python", Path: path, ModelStages: true, Lane: true})
}
