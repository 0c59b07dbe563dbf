package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The streams in testdata were recorded with `go test -json -count=1` on
// a module example.com/fx whose packages pass, fail, skip, fail to build,
// panic in a test, panic outside any test and time out.

// replay feeds a recorded stream to a Report and returns what it printed,
// the summary included, and the exit status for goTestStatus.
func replay(t *testing.T, goTestStatus int, files ...string) (string, int) {
	t.Helper()
	var out strings.Builder
	r := NewReport(&out, "example.com/fx")
	for _, name := range files {
		f, err := os.Open(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		err = r.Read(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(r.packages) != 0 {
		t.Errorf("state kept for finished packages: %v", r.packages)
	}
	r.Summary(goTestStatus)
	return out.String(), r.ExitStatus(goTestStatus)
}

// wantInOrder checks that each of wants is in out, each after the one
// before.
func wantInOrder(t *testing.T, out string, wants ...string) {
	t.Helper()
	rest := out
	for _, w := range wants {
		i := strings.Index(rest, w)
		if i < 0 {
			t.Fatalf("missing (or out of order) %q in:\n%s", w, out)
		}
		rest = rest[i+len(w):]
	}
}

func wantNot(t *testing.T, out string, unwanted ...string) {
	t.Helper()
	for _, u := range unwanted {
		if strings.Contains(out, u) {
			t.Errorf("%q should not be printed, in:\n%s", u, out)
		}
	}
}

func TestPassingPackage(t *testing.T) {
	out, status := replay(t, 0, "pass.json", "notests.json")
	wantInOrder(t, out,
		"ok   pass ", "s  4 passed\n",
		"\npackages: 1 passed, 0 failed (1 without tests)\n",
		"tests:    4 passed, 0 failed, 0 skipped\n",
		"\nPASS\n")
	// A passing test's output is dropped; so are -json's framing lines.
	wantNot(t, out, "quiet", "=== RUN", "--- PASS", "skipped 1", "failed:", "notests")
	if status != 0 {
		t.Errorf("exit status %d, want 0", status)
	}
}

func TestFailedTestsPrintTheirOutput(t *testing.T) {
	out, status := replay(t, 1, "fail.json")
	wantInOrder(t, out,
		"=== FAIL fail.TestBad\n",
		"    fail_test.go:10: first line of the failure\n",
		"printed to stdout\n",
		"    fail_test.go:12: want 2, got 3\n",
		"        second line\n",
		"--- FAIL: TestBad (0.00s)\n",
		"=== FAIL fail.TestParent/broken\n",
		"    fail_test.go:16: sub failed\n",
		"FAIL fail ", "s  2 passed, 3 failed\n",
		"packages: 0 passed, 1 failed\n",
		"tests:    2 passed, 3 failed, 0 skipped\n",
		"failed:\n    fail.TestBad\n    fail.TestParent/broken\n    fail.TestParent\n",
		"FAIL (go test exited with status 1)\n")
	// TestParent failed only through its subtest, shown already.
	wantNot(t, out, "=== FAIL fail.TestParent\n", "=== RUN", "\nPASS\n")
	if status != 1 {
		t.Errorf("exit status %d, want 1", status)
	}
}

// A failed test fails the run even if go test's status said otherwise.
func TestFailedTestFailsTheRunWhateverGoTestSaid(t *testing.T) {
	out, status := replay(t, 0, "fail.json")
	if status != 1 {
		t.Errorf("exit status %d, want 1", status)
	}
	wantInOrder(t, out, "\nFAIL\n")
}

func TestSkipsAreGroupedWithWhatToDo(t *testing.T) {
	out, status := replay(t, 0, "skips.json")
	wantInOrder(t, out,
		"ok   skips ", "s  2 passed, 5 skipped\n",
		"tests:    2 passed, 0 failed, 5 skipped\n",
		"\nskipped 2 tests: widget is not installed — install: sudo apt-get install widget\n",
		"    skips.TestNeedsWidget, skips.TestNeedsWidgetToo\n",
		"\nskipped 1 test: the slow CLIs run only when SLOW=1 is set — run them with: make slow\n",
		"    skips.TestOptIn\n",
		// Free-form skips, grouped by their message.
		"\nskipped 1 test: no /proc/self/fd: open /proc/self/fd: no such file or directory\n",
		"    skips.TestSubSkip/x\n",
		"\nskipped 1 test: no sleep binary\n",
		"    skips.TestFreeForm\n",
		"\nPASS\n")
	// The skip's detail and earlier logs are not part of the summary.
	wantNot(t, out, "looking for widget", `exec: "widget"`, "failed:")
	if status != 0 {
		t.Errorf("exit status %d, want 0", status)
	}
}

func TestBuildFailurePrintsTheCompilerOutput(t *testing.T) {
	out, status := replay(t, 1, "broken.json", "pass.json")
	wantInOrder(t, out,
		"# example.com/fx/broken [example.com/fx/broken.test]\n",
		"broken/broken_test.go:5:33: undefined: undefinedThing\n",
		"FAIL broken [build failed]\n",
		"ok   pass ",
		"packages: 1 passed, 1 failed\n",
		"failed:\n    broken [build failed]\n")
	if strings.Count(out, "undefined: undefinedThing") != 1 {
		t.Errorf("build output printed other than once:\n%s", out)
	}
	if status != 1 {
		t.Errorf("exit status %d, want 1", status)
	}
}

func TestPanicInATest(t *testing.T) {
	out, status := replay(t, 1, "panics.json")
	wantInOrder(t, out,
		"=== FAIL panics.TestPanics\n",
		"    panics_test.go:7: about to panic\n",
		"panic: assignment to entry in nil map",
		"panics_test.go:9",
		"FAIL panics ", "s  1 passed, 1 failed\n",
		"failed:\n    panics.TestPanics\n")
	if status != 1 {
		t.Errorf("exit status %d, want 1", status)
	}
}

// A panic outside any test (here in init) fails the package with no
// failed test: its output is printed, and the package named as failed.
func TestPanicOutsideAnyTest(t *testing.T) {
	out, status := replay(t, 1, "initpanic.json")
	wantInOrder(t, out,
		"=== output of initpanic outside any test:\n",
		"panic: the fixture could not load\n",
		"initpanic_test.go:5",
		"FAIL initpanic ", "s  0 passed\n",
		"tests:    0 passed, 0 failed, 0 skipped\n",
		"failed:\n    initpanic (outside any test)\n")
	// go test's own result lines are replaced by the report's.
	wantNot(t, out, "FAIL\texample.com/fx/initpanic")
	if status != 1 {
		t.Errorf("exit status %d, want 1", status)
	}
}

// A timeout ends the binary mid-test, with no fail event for the test:
// its output so far and the timeout's panic are printed.
func TestTimedOutTestDidNotFinish(t *testing.T) {
	out, status := replay(t, 1, "timeout.json")
	wantInOrder(t, out,
		"=== FAIL timeout.TestSlow (did not finish)\n",
		"    timeout_test.go:8: waiting\n",
		"panic: test timed out after 2s\n",
		"FAIL timeout ", "s  0 passed, 1 failed\n",
		"failed:\n    timeout.TestSlow (did not finish)\n")
	if status != 1 {
		t.Errorf("exit status %d, want 1", status)
	}
}

// Lines that are not events (go test prints some before it starts a
// binary) are passed through.
func TestNonEventLinesPassThrough(t *testing.T) {
	var out strings.Builder
	r := NewReport(&out, "")
	if err := r.Read(strings.NewReader("go: warning: something\n")); err != nil {
		t.Fatal(err)
	}
	if out.String() != "go: warning: something\n" {
		t.Errorf("printed %q", out.String())
	}
}

func TestAbbreviatesLongGroups(t *testing.T) {
	tests := []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k"}
	if got, want := listed(tests), "a, b, c, d, e, f, g, h and 3 more"; got != want {
		t.Errorf("listed = %q, want %q", got, want)
	}
}

// Memory stays bounded by what runs: a test's output is kept while it
// runs and dropped once it passes or skips, before its package ends.
func TestOutputIsDroppedWhenATestEnds(t *testing.T) {
	var out strings.Builder
	r := NewReport(&out, "example.com/fx")
	const pkg = "example.com/fx/big"
	r.Event(event{Action: "start", Package: pkg})
	for i, end := range []string{"pass", "skip"} {
		test := fmt.Sprintf("TestBig%d", i)
		r.Event(event{Action: "run", Package: pkg, Test: test})
		for range 1000 {
			r.Event(event{Action: "output", Package: pkg, Test: test, Output: strings.Repeat("x", 1000) + "\n"})
		}
		if got := len(r.packages[pkg].running[test]); got != 1000 {
			t.Fatalf("%s: %d lines kept while it runs, want 1000", test, got)
		}
		r.Event(event{Action: end, Package: pkg, Test: test})
		if lines, ok := r.packages[pkg].running[test]; ok {
			t.Errorf("%s: %d lines kept after its %s", test, len(lines), end)
		}
	}
	if out.Len() != 0 {
		t.Errorf("printed %d bytes for a passing and a skipped test", out.Len())
	}
}

// test2json cuts a long output line into events of at most 1 KiB; a failed
// test's output prints the line whole again.
func TestLongFailureLineIsPrintedWhole(t *testing.T) {
	long := strings.Repeat("x", 3000)
	var in strings.Builder
	event := func(action, test, output string) {
		fmt.Fprintf(&in, `{"Action":%q,"Package":"example.com/fx/long","Test":%q,"Output":%q}`+"\n", action, test, output)
	}
	event("run", "TestLong", "")
	event("output", "TestLong", "=== RUN   TestLong\n")
	event("output", "TestLong", "    long_test.go:9: "+long[:1000])
	event("output", "TestLong", long[1000:2024])
	event("output", "TestLong", long[2024:]+"\n")
	event("output", "TestLong", "--- FAIL: TestLong (0.00s)\n")
	event("fail", "TestLong", "")
	fmt.Fprintf(&in, `{"Action":"fail","Package":"example.com/fx/long"}`+"\n")
	var out strings.Builder
	r := NewReport(&out, "example.com/fx")
	if err := r.Read(strings.NewReader(in.String())); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "    long_test.go:9: "+long+"\n") {
		t.Errorf("the long line is not printed whole:\n%s", out.String())
	}
}
