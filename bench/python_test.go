package bench

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
)

// pythonPackages are the Debian packages the Python plugins need beside
// /usr/bin/python3 (the interpreter their #! lines name): gRPC, protobuf,
// and cryptography for go-plugin's automatic mTLS.
var pythonPackages = []string{"python3-grpcio", "python3-protobuf", "python3-cryptography"}

// pythonInstallCommand is what installs them by hand.
var pythonInstallCommand = "sudo apt-get install -y " + strings.Join(pythonPackages, " ")

// pythonReady is the outcome of the one check, and install attempt, a run
// makes: the packages are installed when missing, as root or through sudo
// that asks for no password, as the gateway benchmark installs nginx.
var pythonReady = sync.OnceValue(func() error {
	if pythonImports() == nil {
		return nil
	}
	apt := append([]string{"apt-get", "install", "-y", "--no-install-recommends"}, pythonPackages...)
	if os.Geteuid() != 0 {
		// -n: never wait for a password nobody will type.
		apt = append([]string{"sudo", "-n"}, apt...)
	}
	cmd := exec.Command(apt[0], apt[1:]...)
	cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
	if out, err := cmd.CombinedOutput(); err != nil {
		lines := bytes.Split(bytes.TrimSpace(out), []byte("\n"))
		return fmt.Errorf("%s: %v\n%s", strings.Join(apt, " "), err, bytes.Join(lines[max(0, len(lines)-10):], []byte("\n")))
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
			strings.Join(pythonPackages, ", "), pythonInstallCommand, err)
	}
}
