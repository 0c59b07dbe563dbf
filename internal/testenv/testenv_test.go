package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// recorder is a testing.TB that records Skip and Fatal instead of ending
// the test, so the CI branch can be observed without failing this test.
type recorder struct {
	testing.TB
	skipped, fatal string
}

func (r *recorder) Helper()           {}
func (r *recorder) Skip(args ...any)  { r.skipped = fmt.Sprint(args...) }
func (r *recorder) Fatal(args ...any) { r.fatal = fmt.Sprint(args...) }

// TestSkipPolicy runs Skip in a child test binary with CI unset and set:
// the child's skip or failure is observed there rather than inherited (a
// skip here would show in make test's summary as something missing).
func TestSkipPolicy(t *testing.T) {
	for _, c := range []struct{ ci, want string }{
		{"", "--- SKIP: TestSkipChild"},
		{"1", "--- FAIL: TestSkipChild"},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestSkipChild$", "-test.v")
		cmd.Env = append(os.Environ(), "TESTENV_SKIP_CHILD=1", "CI="+c.ci)
		out, err := cmd.CombinedOutput()
		if failed := err != nil; failed != (c.ci != "") || !strings.Contains(string(out), c.want) {
			t.Errorf("with CI=%q a missing dependency must give %q; child said (%v):\n%s", c.ci, c.want, err, out)
		}
		want := "testenv: skip: the gizmo tool is not installed | install: sudo apt-get install gizmo\n"
		if c.ci != "" {
			want = "the gizmo tool is not installed (install: sudo apt-get install gizmo)\n"
		}
		if !strings.Contains(string(out), want) {
			t.Errorf("with CI=%q the child does not say what is missing and how to install it:\n%s", c.ci, out)
		}
		if strings.Contains(string(out), "Skip returned") {
			t.Errorf("with CI=%q the test went on after Skip:\n%s", c.ci, out)
		}
	}
}

func TestSkipChild(t *testing.T) {
	if os.Getenv("TESTENV_SKIP_CHILD") != "1" {
		// A helper process, not a test of its own: TestSkipPolicy runs
		// it in a child. Returning keeps it out of make test's skips.
		return
	}
	Skip(t, "the gizmo tool is not installed", "sudo apt-get install gizmo", "exec: gizmo: not found")
	t.Error("Skip returned")
}

func TestSkipMessage(t *testing.T) {
	t.Setenv("CI", "")
	var r recorder
	Skip(&r, "the gizmo tool is not installed", "sudo apt-get install gizmo", "exec: gizmo: not found")
	want := "testenv: skip: the gizmo tool is not installed | install: sudo apt-get install gizmo\nexec: gizmo: not found"
	if r.skipped != want || r.fatal != "" {
		t.Errorf("skip %q, fatal %q; want skip %q", r.skipped, r.fatal, want)
	}
}

func TestSkipFailsUnderCI(t *testing.T) {
	t.Setenv("CI", "1")
	var r recorder
	Skip(&r, "the gizmo tool is not installed", "sudo apt-get install gizmo")
	if r.skipped != "" {
		t.Errorf("under CI the test was skipped: %q", r.skipped)
	}
	if !strings.HasPrefix(r.fatal, "the gizmo tool is not installed (install: sudo apt-get install gizmo)\n") ||
		!strings.Contains(r.fatal, "CI is set") {
		t.Errorf("under CI, fatal = %q", r.fatal)
	}
}

// What is not a missing install skips under CI too.
func TestSkipUnlessRunSkipsUnderCI(t *testing.T) {
	for _, ci := range []string{"", "1"} {
		t.Setenv("CI", ci)
		var r recorder
		SkipUnlessRun(&r, "the CLIs run only when SLOW=1 is set", "make slow")
		if r.skipped != "testenv: skip: the CLIs run only when SLOW=1 is set | run: make slow" || r.fatal != "" {
			t.Errorf("CI=%q: skip %q, fatal %q", ci, r.skipped, r.fatal)
		}
	}
}

func TestParseReadsMessage(t *testing.T) {
	for _, c := range []struct{ reason, kind, command string }{
		{"python3 cannot import grpc", Install, "sudo apt-get install python3-grpcio python3-protobuf"},
		{"a | b is the reason", Run, "make agents | tee log"},
		{"no command", "", ""},
	} {
		line := "    file_test.go:12: " + Message(c.reason, c.kind, c.command) + "\n"
		reason, kind, command, ok := Parse(line)
		if !ok || reason != c.reason || kind != c.kind || command != c.command {
			t.Errorf("Parse(%q) = %q, %q, %q, %v; want %q, %q, %q", line, reason, kind, command, ok, c.reason, c.kind, c.command)
		}
	}
	if _, _, _, ok := Parse("    file_test.go:12: no sleep binary"); ok {
		t.Error("a free-form skip was parsed as testenv's")
	}
	// The message stays one line, whatever the reason held.
	if got := Message("two\nlines", Install, "apt-get  install x"); got != "testenv: skip: two lines | install: apt-get install x" {
		t.Errorf("Message = %q", got)
	}
}

// The install command shown to people and the packages a benchmark
// installs are the same list.
func TestDebianPythonNamesItsPackages(t *testing.T) {
	got := strings.Fields(strings.TrimPrefix(DebianPython, "sudo apt-get install "))
	if strings.Join(got, " ") != strings.Join(DebianPythonPackages, " ") {
		t.Errorf("DebianPython installs %q, DebianPythonPackages lists %q", got, DebianPythonPackages)
	}
}
