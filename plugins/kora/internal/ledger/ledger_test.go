package ledger

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
)

// The multi-process test re-executes this test binary as a writer; these
// variables tell the child what to do.
const (
	helperDir   = "KORA_LEDGER_HELPER_DIR"
	helperID    = "KORA_LEDGER_HELPER_ID"
	helperCount = "KORA_LEDGER_HELPER_COUNT"
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(childMode); mode != "" {
		os.Exit(childMain(mode))
	}
	if dir := os.Getenv(helperDir); dir != "" {
		os.Exit(helperMain(dir))
	}
	os.Exit(m.Run())
}

func helperMain(dir string) int {
	n, _ := strconv.Atoi(os.Getenv(helperCount))
	l, err := OpenJSONL(dir, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := appendMany(l, "proc"+os.Getenv(helperID), n); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// bulky makes records large enough (well past a pipe buffer's atomic size
// and a typical page) that unsynchronised writers would visibly interleave.
var bulky = strings.Repeat("hedge ", 1500)

func appendMany(l *Ledger, writer string, n int) error {
	for i := range n {
		rec := Inference{SessionID: fmt.Sprintf("%s-%d", writer, i), Model: "offline-small", Route: "gateway", Reason: bulky}
		if err := l.AppendInference(rec); err != nil {
			return err
		}
	}
	return nil
}

func newLogger(buf *bytes.Buffer) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{Output: buf, Level: hclog.Debug})
}

func TestRoundTrip(t *testing.T) {
	l, err := OpenJSONL(filepath.Join(t.TempDir(), "state"), nil)
	if err != nil {
		t.Fatal(err)
	}
	fixed := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	l.Now = func() time.Time { return fixed }
	if err := l.AppendInference(Inference{Model: "offline-large", InputTokens: 10, OutputTokens: 4, CostUSD: 0.5, Escalated: true, Reason: "hedged"}); err != nil {
		t.Fatal(err)
	}
	if err := l.AppendToolCall(ToolCall{Name: "now", Status: "ok", AnsweredBy: "native", Arguments: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	infs, st, err := l.Inferences()
	if err != nil || st.Skipped != 0 || len(infs) != 1 {
		t.Fatalf("Inferences() = %v, %+v, %v", infs, st, err)
	}
	if got := infs[0]; !got.Time.Equal(fixed) || got.Model != "offline-large" || !got.Escalated || got.Reason != "hedged" || got.CostUSD != 0.5 {
		t.Errorf("inference read back as %+v", got)
	}
	calls, _, err := l.ToolCalls()
	if err != nil || len(calls) != 1 || calls[0].AnsweredBy != "native" || string(calls[0].Arguments) != "{}" {
		t.Fatalf("ToolCalls() = %+v, %v", calls, err)
	}
	for _, name := range []string{InferencesFile, ToolCallsFile} {
		fi, err := os.Stat(filepath.Join(l.Dir(), name))
		if err != nil {
			t.Fatal(err)
		}
		if perm := fi.Mode().Perm(); perm != 0o600 {
			t.Errorf("%s has mode %v, want 0600: the ledger is the operator's, not the world's", name, perm)
		}
	}
}

func TestMissingFilesReadEmpty(t *testing.T) {
	l, err := OpenJSONL(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	infs, st, err := l.Inferences()
	if err != nil || len(infs) != 0 || st != (ReadStats{}) {
		t.Fatalf("Inferences() on a fresh directory = %v, %+v, %v", infs, st, err)
	}
}

// checkAll reads the stream back and requires every line to parse and
// every (writer, index) pair to appear exactly once.
func checkAll(t *testing.T, l *Ledger, writers []string, perWriter int) {
	t.Helper()
	infs, st, err := l.Inferences()
	if err != nil {
		t.Fatal(err)
	}
	if st.Skipped != 0 {
		t.Fatalf("%d lines did not parse: appends tore or interleaved", st.Skipped)
	}
	want := len(writers) * perWriter
	if len(infs) != want || st.Lines != want {
		t.Fatalf("read %d records (stats %+v), want %d", len(infs), st, want)
	}
	seen := map[string]bool{}
	for _, r := range infs {
		if r.Reason != bulky {
			t.Fatalf("record %s came back altered", r.SessionID)
		}
		if seen[r.SessionID] {
			t.Fatalf("record %s appears twice", r.SessionID)
		}
		seen[r.SessionID] = true
	}
	for _, w := range writers {
		for i := range perWriter {
			if id := fmt.Sprintf("%s-%d", w, i); !seen[id] {
				t.Fatalf("record %s is missing", id)
			}
		}
	}
}

func TestConcurrentAppendsFromGoroutines(t *testing.T) {
	l, err := OpenJSONL(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	const goroutines, each = 16, 25
	var writers []string
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for g := range goroutines {
		w := fmt.Sprintf("g%d", g)
		writers = append(writers, w)
		wg.Go(func() { errs <- appendMany(l, w, each) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	checkAll(t, l, writers, each)
}

func TestConcurrentAppendsFromProcesses(t *testing.T) {
	dir := t.TempDir()
	l, err := OpenJSONL(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	const procs, each = 4, 40
	var writers []string
	var cmds []*exec.Cmd
	for p := range procs {
		cmd := exec.Command(exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), helperDir+"="+dir, helperID+"="+strconv.Itoa(p), helperCount+"="+strconv.Itoa(each))
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
		writers = append(writers, fmt.Sprintf("proc%d", p))
	}
	// This process writes at the same time, so in-process and cross-process
	// exclusion are exercised together.
	if err := appendMany(l, "parent", each); err != nil {
		t.Fatal(err)
	}
	writers = append(writers, "parent")
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("writer process %d: %v: %s", i, err, cmd.Stderr)
		}
	}
	checkAll(t, l, writers, each)
}

func writeRaw(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

const (
	goodLine1 = `{"time":"2026-11-22T10:00:00Z","iteration":1,"model":"offline-small","route":"gateway","input_tokens":10,"output_tokens":5,"cost_usd":0.001,"duration_ms":1}`
	goodLine2 = `{"time":"2026-11-22T10:00:01Z","iteration":1,"model":"offline-large","route":"gateway","input_tokens":12,"output_tokens":6,"cost_usd":0.01,"escalated":true,"reason":"hedged","duration_ms":1}`
	tornLine  = `{"time":"2026-11-22T10:00:02Z","iteration":2,"model":"offl`
)

func TestTornLastLineIsSkippedWithWarning(t *testing.T) {
	var logs bytes.Buffer
	dir := t.TempDir()
	l, err := OpenJSONL(dir, newLogger(&logs))
	if err != nil {
		t.Fatal(err)
	}
	writeRaw(t, filepath.Join(dir, InferencesFile), goodLine1+"\n"+goodLine2+"\n"+tornLine)

	infs, st, err := l.Inferences()
	if err != nil {
		t.Fatalf("a torn last line must not fail the read: %v", err)
	}
	if len(infs) != 2 || st.Skipped != 1 || st.Lines != 2 {
		t.Fatalf("read %d records, stats %+v; want the 2 whole ones and 1 skipped", len(infs), st)
	}
	if !strings.Contains(logs.String(), "[WARN]") || !strings.Contains(logs.String(), "torn last line") {
		t.Errorf("no WARN about the torn line; log:\n%s", logs.String())
	}

	// The next append must not glue its record onto the fragment.
	if err := l.AppendInference(Inference{Model: "offline-small", SessionID: "after-crash"}); err != nil {
		t.Fatal(err)
	}
	infs, st, err = l.Inferences()
	if err != nil {
		t.Fatal(err)
	}
	if len(infs) != 3 || st.Skipped != 1 || infs[2].SessionID != "after-crash" {
		t.Fatalf("after an append: %d records, stats %+v; want 3 whole records and the old fragment skipped", len(infs), st)
	}
}

func TestWarnsOncePerBadLine(t *testing.T) {
	var logs bytes.Buffer
	dir := t.TempDir()
	l, err := OpenJSONL(dir, newLogger(&logs))
	if err != nil {
		t.Fatal(err)
	}
	writeRaw(t, filepath.Join(dir, InferencesFile), goodLine1+"\n"+tornLine)
	for range 3 {
		if _, _, err := l.Inferences(); err != nil {
			t.Fatal(err)
		}
	}
	if n := strings.Count(logs.String(), "[WARN]"); n != 1 {
		t.Errorf("%d WARN lines for one torn line read three times, want 1:\n%s", n, logs.String())
	}
}

func TestCorruptLineMidFileIsSkipped(t *testing.T) {
	var logs bytes.Buffer
	dir := t.TempDir()
	l, err := OpenJSONL(dir, newLogger(&logs))
	if err != nil {
		t.Fatal(err)
	}
	writeRaw(t, filepath.Join(dir, InferencesFile), goodLine1+"\nnot json at all\n\n"+goodLine2+"\n")
	infs, st, err := l.Inferences()
	if err != nil || len(infs) != 2 || st.Skipped != 1 {
		t.Fatalf("Inferences() = %d records, %+v, %v; want 2 and 1 skipped", len(infs), st, err)
	}
	if !strings.Contains(logs.String(), "corrupt line") {
		t.Errorf("no warning about the corrupt line:\n%s", logs.String())
	}
}

func TestLastLineMissingOnlyItsNewlineIsKept(t *testing.T) {
	dir := t.TempDir()
	l, err := OpenJSONL(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	writeRaw(t, filepath.Join(dir, InferencesFile), goodLine1+"\n"+goodLine2)
	infs, st, err := l.Inferences()
	if err != nil || len(infs) != 2 || st.Skipped != 0 {
		t.Fatalf("Inferences() = %d records, %+v, %v; want both", len(infs), st, err)
	}
	if err := l.AppendInference(Inference{Model: "m"}); err != nil {
		t.Fatal(err)
	}
	if infs, st, _ := l.Inferences(); len(infs) != 3 || st.Skipped != 0 {
		t.Fatalf("after an append: %d records, %+v; want 3 and none skipped", len(infs), st)
	}
}

func TestUnreadableStreamIsAnError(t *testing.T) {
	dir := t.TempDir()
	l, err := OpenJSONL(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	// A directory where the file should be cannot be read as lines.
	if err := os.Mkdir(filepath.Join(dir, ToolCallsFile), 0o700); err != nil {
		t.Fatal(err)
	}
	if _, _, err := l.ToolCalls(); err == nil || !strings.Contains(err.Error(), "kora: ledger") {
		t.Fatalf("ToolCalls() error = %v, want one naming the ledger", err)
	}
	if err := l.AppendToolCall(ToolCall{Name: "now"}); err == nil {
		t.Fatal("appending to a directory succeeded")
	}
}

func TestOpenFailsOnAFile(t *testing.T) {
	f := filepath.Join(t.TempDir(), "plain")
	writeRaw(t, f, "x")
	if _, err := OpenJSONL(f, nil); err == nil || !strings.Contains(err.Error(), "state directory") {
		t.Fatalf("OpenJSONL(file) error = %v, want one about the state directory", err)
	}
}
