// Command testreport runs `go test -json` with the arguments it is given
// and turns its event stream into what a person running the whole suite
// wants to see: one line per package as it finishes, the full output of
// every test and build that failed, and at the end a summary of what
// passed, failed and was skipped, each group of skipped tests with its
// reason and the command that installs (or runs) what it needs.
//
// It is what `make test` runs (built to bin/testreport first); by hand:
//
//	go run ./internal/testreport -race -count=1 ./...
//
// The go command it runs is $GO, or go.
// The exit status is go test's when that failed, 1 when a test failed
// though go test did not say so, and 0 otherwise. Skips written with
// internal/testenv carry their reason and install command in a form the
// summary groups by; any other skip is grouped by its message.
package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
)

func main() {
	// An interrupt reaches go test too (same process group); keep reading
	// its events so the summary covers what ran before it stopped.
	signal.Ignore(os.Interrupt)
	os.Exit(run(os.Args[1:], "", os.Stdout, os.Stderr))
}

// run runs go test -json args in dir (the current directory when empty)
// and reports on it to stdout, returning the exit status.
func run(args []string, dir string, stdout, stderr io.Writer) int {
	goTool := os.Getenv("GO")
	if goTool == "" {
		goTool = "go"
	}
	cmd := exec.Command(goTool, append([]string{"test", "-json"}, args...)...)
	cmd.Dir = dir
	cmd.Stderr = stderr
	events, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintf(stderr, "testreport: %v\n", err)
		return 2
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(stderr, "testreport: cannot run %s test: %v\n", goTool, err)
		return 2
	}
	r := NewReport(stdout, modulePath(goTool, dir))
	readErr := r.Read(events)
	waitErr := cmd.Wait()
	if readErr != nil {
		fmt.Fprintf(stderr, "testreport: reading go test's events: %v\n", readErr)
	}
	status := 0
	if waitErr != nil {
		status = 2
		if ee, ok := waitErr.(*exec.ExitError); ok && ee.ExitCode() > 0 {
			status = ee.ExitCode()
		}
	}
	r.Summary(status)
	return r.ExitStatus(status)
}

// modulePath is the main module's path, which package names are shown
// relative to; "" when there is none.
func modulePath(goTool, dir string) string {
	cmd := exec.Command(goTool, "list", "-m")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	if lines := strings.Fields(string(out)); len(lines) == 1 {
		return lines[0]
	}
	return "" // a workspace: several main modules
}
