package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/hookhost/hookhost/internal/testenv"
)

// event is one line of `go test -json` (see `go doc cmd/test2json`);
// ImportPath is set on the build-output and build-fail events of Go 1.24+.
type event struct {
	Action      string
	Package     string
	Test        string
	Elapsed     float64
	Output      string
	FailedBuild string
	ImportPath  string
}

// Report follows a go test -json stream: it writes a line per finished
// package and the output of what failed as the events come, and keeps
// only what the summary needs, plus the output of tests still running.
type Report struct {
	w      io.Writer
	module string

	packages map[string]*pkgState
	// builds holds build output by the ImportPath that produced it, until
	// the build fails (then it is printed) or the run ends.
	builds      map[string][]string
	buildOrder  []string
	printedFail map[string]bool

	pkgPassed, pkgFailed, pkgNoTests int
	passed, failed, skipped          int
	failures                         []string
	skips                            map[skipKey]*skipGroup
}

type pkgState struct {
	passed, failed, skipped int
	running                 map[string][]string // test -> its output so far
	output                  []string            // output outside any test
}

// skipKey groups skipped tests: by testenv's reason and command, or by
// the message of a free-form skip (kind "").
type skipKey struct{ kind, reason, command string }

type skipGroup struct {
	key   skipKey
	tests []string
}

// NewReport writes to w; package names are shown relative to module (the
// module's own package by its last element).
func NewReport(w io.Writer, module string) *Report {
	return &Report{
		w:           w,
		module:      module,
		packages:    map[string]*pkgState{},
		builds:      map[string][]string{},
		printedFail: map[string]bool{},
		skips:       map[skipKey]*skipGroup{},
	}
}

// Read handles every event of r; a line that is not an event is printed
// as it is.
func (r *Report) Read(in io.Reader) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var ev event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &ev) != nil {
			fmt.Fprintf(r.w, "%s\n", line)
			continue
		}
		r.Event(ev)
	}
	return sc.Err()
}

// Event handles one event.
func (r *Report) Event(ev event) {
	switch ev.Action {
	case "build-output":
		if _, ok := r.builds[ev.ImportPath]; !ok {
			r.buildOrder = append(r.buildOrder, ev.ImportPath)
		}
		r.builds[ev.ImportPath] = append(r.builds[ev.ImportPath], ev.Output)
		return
	case "build-fail":
		r.printBuild(ev.ImportPath)
		return
	}
	if ev.Package == "" {
		if ev.Output != "" {
			io.WriteString(r.w, ev.Output)
		}
		return
	}
	p := r.pkg(ev.Package)
	if ev.Test == "" {
		r.packageEvent(p, ev)
		return
	}
	switch ev.Action {
	case "run":
		p.running[ev.Test] = nil
	case "output":
		p.running[ev.Test] = append(p.running[ev.Test], ev.Output)
	case "pass":
		p.passed++
		r.passed++
		delete(p.running, ev.Test)
	case "bench": // a benchmark that logged but did not fail
		delete(p.running, ev.Test)
	case "skip":
		p.skipped++
		r.skipped++
		r.addSkip(ev.Package, ev.Test, p.running[ev.Test])
		delete(p.running, ev.Test)
	case "fail":
		r.testFailed(p, ev.Package, ev.Test, "")
	}
}

func (r *Report) pkg(name string) *pkgState {
	p := r.packages[name]
	if p == nil {
		p = &pkgState{running: map[string][]string{}}
		r.packages[name] = p
	}
	return p
}

func (r *Report) packageEvent(p *pkgState, ev event) {
	switch ev.Action {
	case "output":
		p.output = append(p.output, ev.Output)
		return
	case "skip": // no test files
		r.pkgNoTests++
	case "pass":
		r.pkgPassed++
		fmt.Fprintf(r.w, "ok   %-40s %6.1fs  %s\n", r.short(ev.Package), ev.Elapsed, counts(p))
	case "fail":
		r.pkgFailed++
		r.packageFailed(p, ev)
	default:
		return
	}
	delete(r.packages, ev.Package)
}

// packageFailed prints what a failed package left unsaid: its build's
// output, tests that never finished (a panic or timeout ends the binary
// mid-test) and output outside any test.
func (r *Report) packageFailed(p *pkgState, ev event) {
	if ev.FailedBuild != "" {
		r.printBuild(ev.FailedBuild)
		fmt.Fprintf(r.w, "FAIL %s [build failed]\n", r.short(ev.Package))
		r.failures = append(r.failures, r.short(ev.Package)+" [build failed]")
		return
	}
	for _, test := range slices.Sorted(maps.Keys(p.running)) {
		r.testFailed(p, ev.Package, test, " (did not finish)")
	}
	var extra []string
	for _, line := range p.output {
		if !isResultLine(line, ev.Package) {
			extra = append(extra, line)
		}
	}
	if len(extra) > 0 {
		fmt.Fprintf(r.w, "=== output of %s outside any test:\n", r.short(ev.Package))
		for _, line := range extra {
			io.WriteString(r.w, line)
		}
	}
	fmt.Fprintf(r.w, "FAIL %-40s %6.1fs  %s\n", r.short(ev.Package), ev.Elapsed, counts(p))
	if p.failed == 0 {
		r.failures = append(r.failures, r.short(ev.Package)+" (outside any test)")
	}
}

// testFailed prints a failed test's output, without the === framing lines
// of -json's verbose mode. A parent that failed only through its
// subtests, printed already, adds nothing but its --- FAIL line.
func (r *Report) testFailed(p *pkgState, pkg, test, note string) {
	p.failed++
	r.failed++
	name := r.short(pkg) + "." + test
	r.failures = append(r.failures, name+note)
	var lines []string
	onlyReports := true
	for _, line := range p.running[test] {
		if strings.HasPrefix(line, "=== ") {
			continue
		}
		lines = append(lines, line)
		if !strings.HasPrefix(strings.TrimLeft(line, " "), "--- ") {
			onlyReports = false
		}
	}
	delete(p.running, test)
	if onlyReports && !strings.Contains(test, "/") && r.hasFailedChild(name) {
		return
	}
	fmt.Fprintf(r.w, "=== FAIL %s%s\n", name, note)
	// test2json cuts a long line into several events: the pieces are
	// written as they came, so the line is whole again.
	for _, line := range lines {
		io.WriteString(r.w, line)
	}
	if n := len(lines); n > 0 && !strings.HasSuffix(lines[n-1], "\n") {
		io.WriteString(r.w, "\n")
	}
}

func (r *Report) hasFailedChild(name string) bool {
	for _, f := range r.failures {
		if strings.HasPrefix(f, name+"/") {
			return true
		}
	}
	return false
}

// printBuild prints a failed build's output once; packages that fail
// through the same broken dependency share it.
func (r *Report) printBuild(importPath string) {
	if r.printedFail[importPath] {
		return
	}
	r.printedFail[importPath] = true
	for _, line := range r.builds[importPath] {
		io.WriteString(r.w, line)
	}
	delete(r.builds, importPath)
}

// addSkip files a skipped test under its reason: testenv's line when the
// test wrote one, else the last message it logged.
func (r *Report) addSkip(pkg, test string, output []string) {
	key := skipKey{reason: "(no reason given)"}
	for _, line := range output {
		if reason, kind, command, ok := testenv.Parse(line); ok {
			key = skipKey{kind, reason, command}
			break
		}
		if m := logLine.FindStringSubmatch(line); m != nil {
			key.reason = m[1]
		}
	}
	g := r.skips[key]
	if g == nil {
		g = &skipGroup{key: key}
		r.skips[key] = g
	}
	g.tests = append(g.tests, r.short(pkg)+"."+test)
}

// logLine is the first line of a t.Log or t.Skip message: the testing
// package indents it and puts file:line first.
var logLine = regexp.MustCompile(`^\s+[\w.+-]+\.go:\d+: (.*?)\s*$`)

// isResultLine reports whether line is one go test prints at a package's
// end, which the report's own line replaces.
func isResultLine(line, pkg string) bool {
	l := strings.TrimRight(line, "\n")
	return l == "PASS" || l == "FAIL" || strings.HasPrefix(l, "FAIL\t"+pkg) || strings.HasPrefix(l, "ok  \t"+pkg)
}

// maxListed is how many skipped tests a group names before it abbreviates.
const maxListed = 8

// Summary writes the closing summary; status is go test's exit status.
func (r *Report) Summary(status int) {
	for _, ip := range r.buildOrder {
		r.printBuild(ip) // output of builds that did not fail: warnings
	}
	fmt.Fprintf(r.w, "\npackages: %d passed, %d failed", r.pkgPassed, r.pkgFailed)
	if r.pkgNoTests > 0 {
		fmt.Fprintf(r.w, " (%d without tests)", r.pkgNoTests)
	}
	fmt.Fprintf(r.w, "\ntests:    %d passed, %d failed, %d skipped\n", r.passed, r.failed, r.skipped)

	groups := slices.Collect(maps.Values(r.skips))
	slices.SortFunc(groups, func(a, b *skipGroup) int {
		return cmp.Or(
			cmp.Compare(kindOrder(a.key.kind), kindOrder(b.key.kind)),
			cmp.Compare(len(b.tests), len(a.tests)),
			cmp.Compare(a.key.reason, b.key.reason),
			cmp.Compare(a.key.command, b.key.command))
	})
	for _, g := range groups {
		fmt.Fprintf(r.w, "\nskipped %s: %s", plural(len(g.tests), "test"), g.key.reason)
		switch g.key.kind {
		case testenv.Install:
			fmt.Fprintf(r.w, " — install: %s", g.key.command)
		case testenv.Run:
			fmt.Fprintf(r.w, " — run them with: %s", g.key.command)
		}
		fmt.Fprintf(r.w, "\n    %s\n", listed(g.tests))
	}

	if len(r.failures) > 0 {
		fmt.Fprintf(r.w, "\nfailed:\n")
		for _, f := range r.failures {
			fmt.Fprintf(r.w, "    %s\n", f)
		}
	}
	switch {
	case status != 0:
		fmt.Fprintf(r.w, "\nFAIL (go test exited with status %d)\n", status)
	case r.failed > 0 || r.pkgFailed > 0:
		fmt.Fprintf(r.w, "\nFAIL\n")
	default:
		fmt.Fprintf(r.w, "\nPASS\n")
	}
}

// ExitStatus is go test's status, or 1 when something failed though go
// test exited 0.
func (r *Report) ExitStatus(goTestStatus int) int {
	if goTestStatus != 0 {
		return goTestStatus
	}
	if r.failed > 0 || r.pkgFailed > 0 {
		return 1
	}
	return 0
}

// kindOrder puts skips for a missing install first, then those run
// elsewhere, then free-form ones.
func kindOrder(kind string) int {
	switch kind {
	case testenv.Install:
		return 0
	case testenv.Run:
		return 1
	}
	return 2
}

func (r *Report) short(pkg string) string {
	if r.module == "" {
		return pkg
	}
	if pkg == r.module {
		return path.Base(pkg)
	}
	if rest, ok := strings.CutPrefix(pkg, r.module+"/"); ok {
		return rest
	}
	return pkg
}

func counts(p *pkgState) string {
	s := fmt.Sprintf("%d passed", p.passed)
	if p.failed > 0 {
		s += fmt.Sprintf(", %d failed", p.failed)
	}
	if p.skipped > 0 {
		s += fmt.Sprintf(", %d skipped", p.skipped)
	}
	return s
}

func listed(tests []string) string {
	if len(tests) <= maxListed {
		return strings.Join(tests, ", ")
	}
	return strings.Join(tests[:maxListed], ", ") + fmt.Sprintf(" and %d more", len(tests)-maxListed)
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
