// Package testenv is how a test stops when this machine lacks something it
// needs. Outside CI it skips, with a message in one stable form that
// internal/testreport (what `make test` runs) groups into its closing
// summary, each group with the command that installs what is missing.
// Under CI (env CI set) a missing dependency fails the test instead, so CI
// never passes by skipping.
package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// The skip message's first line is Prefix, the reason, then Install or
// Run and its command:
//
//	testenv: skip: <reason> | install: <command>
//	testenv: skip: <reason> | run: <command>
//
// A detail (the error that showed what is missing) may follow on the next
// lines; it is not part of the group.
const (
	Prefix  = "testenv: skip: "
	Install = "install"
	Run     = "run"
	sep     = " | "
)

// Skip stops a test that needs what reason says is missing: it skips,
// saying how to install it, or under CI fails. detail, when given, is
// printed after the message.
func Skip(tb testing.TB, reason, install string, detail ...any) {
	tb.Helper()
	if InCI() {
		tb.Fatal(oneLine(reason) + " (install: " + oneLine(install) + ")" + details(detail) +
			"\nCI is set, so a missing dependency fails the test instead of skipping it")
		return
	}
	tb.Skip(Message(reason, Install, install) + details(detail))
}

// SkipUnlessRun skips a test that this run is not the place for (it needs
// an opt-in, or privileges it lacks), saying how to run it. Unlike Skip it
// skips under CI too: what it needs is not a missing install.
func SkipUnlessRun(tb testing.TB, reason, run string, detail ...any) {
	tb.Helper()
	tb.Skip(Message(reason, Run, run) + details(detail))
}

// InCI reports whether the tests run under CI, where nothing may be
// skipped for a missing dependency.
func InCI() bool { return os.Getenv("CI") != "" }

// Message is the first line of a skip: reason, and what to do (kind is
// Install or Run) when command is not empty.
func Message(reason, kind, command string) string {
	reason = oneLine(reason)
	if command == "" {
		return Prefix + reason
	}
	return Prefix + reason + sep + kind + ": " + oneLine(command)
}

// Parse reads a line written by Message (anything before Prefix, such as
// the file:line the testing package puts first, is ignored).
func Parse(line string) (reason, kind, command string, ok bool) {
	_, rest, ok := strings.Cut(strings.TrimRight(line, "\r\n"), Prefix)
	if !ok {
		return "", "", "", false
	}
	for _, k := range []string{Install, Run} {
		if reason, cmd, found := strings.Cut(rest, sep+k+": "); found {
			return reason, k, cmd, true
		}
	}
	return rest, "", "", true
}

// oneLine keeps a message's parseable line one line long.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

func details(detail []any) string {
	if len(detail) == 0 {
		return ""
	}
	d := strings.TrimSpace(fmt.Sprint(detail...))
	if d == "" {
		return ""
	}
	return "\n" + d
}

// DebianPython installs the modules the Python SDK and plugins need in
// Debian's /usr/bin/python3: grpc, google.protobuf and cryptography (for
// go-plugin's automatic mTLS).
const DebianPython = "sudo apt-get install python3-grpcio python3-protobuf python3-cryptography"

// DebianPythonPath is Debian's Python, which the Python plugins' #! lines
// name.
const DebianPythonPath = "/usr/bin/python3"

// DebianPythonImports reports whether Debian's Python imports the modules
// DebianPythonPackages install; the error holds what Python said.
func DebianPythonImports() error {
	out, err := exec.Command(DebianPythonPath, "-c", "import grpc, google.protobuf, cryptography").CombinedOutput()
	if err != nil {
		return fmt.Errorf("%v: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

// NeedDebianPython stops a test that runs a Python plugin unless
// DebianPythonImports succeeds (see Skip).
func NeedDebianPython(tb testing.TB) {
	tb.Helper()
	if err := DebianPythonImports(); err != nil {
		Skip(tb, DebianPythonPath+" cannot import grpc, google.protobuf and cryptography", DebianPython, err.Error())
	}
}

// DebianPythonPackages are the packages DebianPython installs.
var DebianPythonPackages = []string{"python3-grpcio", "python3-protobuf", "python3-cryptography"}

// AptInstall installs Debian packages, as root or through sudo that asks
// for no password (never waiting for one nobody will type), for a
// benchmark that installs what it lacks rather than fail. The error ends
// with the last lines apt-get printed.
func AptInstall(packages ...string) error {
	apt := append([]string{"apt-get", "install", "-y", "--no-install-recommends"}, packages...)
	if os.Geteuid() != 0 {
		apt = append([]string{"sudo", "-n"}, apt...)
	}
	cmd := exec.Command(apt[0], apt[1:]...)
	cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
	out, err := cmd.CombinedOutput()
	if err != nil {
		lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
		return fmt.Errorf("%s: %v\n%s", strings.Join(apt, " "), err, strings.Join(lines[max(0, len(lines)-10):], "\n"))
	}
	return nil
}

// NoTmpfs is the reason of tests that mount a tmpfs (to fill a disk or
// make it read-only) where mount(2) is not allowed.
const NoTmpfs = "cannot mount a tmpfs here (needs root or CAP_SYS_ADMIN)"

// AsRoot is how to run the tests in pkgs as root, keeping the
// environment (GOPATH, GOCACHE, PATH).
func AsRoot(pkgs string) string {
	return "as root: sudo -E env PATH=\"$PATH\" go test " + pkgs
}
