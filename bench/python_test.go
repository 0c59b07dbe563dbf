package bench

import (
	"strings"
	"sync"
	"testing"

	"github.com/hookhost/hookhost/internal/testenv"
)

// pythonReady is the outcome of the one check, and install attempt, a run
// makes: the Debian packages the Python plugins need beside Debian's
// Python (the interpreter their #! lines name) are installed when
// missing, as the gateway benchmark installs nginx.
var pythonReady = sync.OnceValue(func() error {
	if testenv.DebianPythonImports() == nil {
		return nil
	}
	if err := testenv.AptInstall(testenv.DebianPythonPackages...); err != nil {
		return err
	}
	return testenv.DebianPythonImports()
})

// needPython fails b, saying what to install, unless the Python plugins
// can run.
func needPython(b *testing.B) {
	b.Helper()
	if err := pythonReady(); err != nil {
		b.Fatalf("the Python plugins need Debian's %s, which are missing and could not be installed (install them with: %s): %v",
			strings.Join(testenv.DebianPythonPackages, ", "), testenv.DebianPython, err)
	}
}
