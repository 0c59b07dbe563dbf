package bench

import (
	"bytes"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/hookhost/hookhost/internal/testenv"
)

// pythonReady is the outcome of the one check, and install attempt, a run
// makes: the Debian packages the Python plugins need beside
// /usr/bin/python3 (the interpreter their #! lines name) are installed
// when missing, as the gateway benchmark installs nginx.
var pythonReady = sync.OnceValue(func() error {
	if pythonImports() == nil {
		return nil
	}
	if err := testenv.AptInstall(testenv.DebianPythonPackages...); err != nil {
		return err
	}
	return pythonImports()
})

// pythonImports checks that /usr/bin/python3 imports what the Python
// plugins import.
func pythonImports() error {
	out, err := exec.Command("/usr/bin/python3", "-c", "import grpc, google.protobuf, cryptography").CombinedOutput()
	if err != nil {
		return fmt.Errorf("/usr/bin/python3 cannot import grpc, google.protobuf and cryptography: %v\n%s", err, bytes.TrimSpace(out))
	}
	return nil
}

// needPython fails b, saying what to install, unless the Python plugins
// can run.
func needPython(b *testing.B) {
	b.Helper()
	if err := pythonReady(); err != nil {
		b.Fatalf("the Python plugins need Debian's %s, which are missing and could not be installed (install them with: %s): %v",
			strings.Join(testenv.DebianPythonPackages, ", "), testenv.DebianPython, err)
	}
}
