package ledger

import (
	"bufio"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Tests that need other processes re-execute this test binary with
// childMode set; childMain is what such a child does.
const (
	childMode  = "KORA_LEDGER_CHILD"
	childDSN   = "KORA_LEDGER_CHILD_DSN"
	childDir   = "KORA_LEDGER_CHILD_DIR"
	childID    = "KORA_LEDGER_CHILD_ID"
	childCount = "KORA_LEDGER_CHILD_COUNT"
	childKill  = "KORA_LEDGER_CHILD_KILL_AFTER"
	childLock  = "KORA_LEDGER_CHILD_LOCKING_MODE"
)

func childMain(mode string) int {
	ctx := context.Background()
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 1
	}
	switch mode {
	case "append":
		s, err := Open(ctx, Options{DSN: os.Getenv(childDSN), LockTimeout: time.Minute})
		if err != nil {
			return fail(err)
		}
		defer s.Close()
		n, _ := strconv.Atoi(os.Getenv(childCount))
		id := os.Getenv(childID)
		for i := range n {
			if err := s.AppendInference(ctx, writerInference(id, i)); err != nil {
				return fail(err)
			}
			if err := s.AppendToolCall(ctx, writerToolCall(id, i)); err != nil {
				return fail(err)
			}
		}
		return 0
	case "import":
		if k, _ := strconv.Atoi(os.Getenv(childKill)); k > 0 {
			afterImportBatch = func(stream string, batch int) {
				if stream == "inferences" && batch == k {
					syscall.Kill(os.Getpid(), syscall.SIGKILL)
					select {}
				}
			}
		}
		s, err := Open(ctx, Options{DSN: os.Getenv(childDSN), StateDir: os.Getenv(childDir), LockTimeout: time.Minute})
		if err != nil {
			return fail(err)
		}
		return boolExit(s.Close() != nil)
	case "lock":
		// Hold the database's write lock until stdin closes.
		db, err := sql.Open("sqlite", strings.TrimPrefix(os.Getenv(childDSN), "sqlite:"))
		if err != nil {
			return fail(err)
		}
		db.SetMaxOpenConns(1)
		if os.Getenv(childLock) != "" {
			if _, err := db.Exec("PRAGMA locking_mode=EXCLUSIVE"); err != nil {
				return fail(err)
			}
		}
		if _, err := db.Exec("BEGIN EXCLUSIVE"); err != nil {
			return fail(err)
		}
		if _, err := db.Exec("INSERT INTO kora_meta (key, value) VALUES ('holder', 'x') ON CONFLICT (key) DO UPDATE SET value = 'y'"); err != nil {
			return fail(err)
		}
		fmt.Println("locked")
		io.Copy(io.Discard, os.Stdin)
		return 0
	}
	return fail(fmt.Errorf("unknown mode %q", mode))
}

func boolExit(failed bool) int {
	if failed {
		return 1
	}
	return 0
}

// writerReason makes records bulky (past a page) so torn or interleaved
// writes would show.
var writerReason = strings.Repeat("hedge ", 1000)

func writerInference(id string, i int) Inference {
	return Inference{
		Time: time.Date(2026, 11, 1+i%5, 12, 0, 0, 0, time.UTC), SessionID: fmt.Sprintf("%s-%d", id, i),
		Iteration: i, Model: "model-" + id, Route: "gateway", InputTokens: i + 1, OutputTokens: 2 * i,
		CostUSD: float64(i) / 1000, Reason: writerReason, DurationMS: 1.5,
	}
}

func writerToolCall(id string, i int) ToolCall {
	return ToolCall{Time: time.Date(2026, 11, 1+i%5, 12, 0, 0, 0, time.UTC), SessionID: fmt.Sprintf("%s-%d", id, i),
		CallID: fmt.Sprint(i), Name: "now", Status: "ok", AnsweredBy: "native", Arguments: json.RawMessage(`{"i":` + fmt.Sprint(i) + `}`)}
}

func child(t *testing.T, mode string, env ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), append([]string{childMode + "=" + mode}, env...)...)
	cmd.Stderr = os.Stderr
	return cmd
}

func rawDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func count(t *testing.T, db *sql.DB, query string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := db.QueryRow(query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// checkTotals requires the day tables to equal the sums of the details.
func checkTotals(t *testing.T, db *sql.DB) {
	t.Helper()
	const diff = `SELECT count(*) FROM (
		SELECT day, model, route FROM (
			SELECT time_ms / 86400000 day, model, route, 1 n, escalated e, input_tokens i, output_tokens o, cost_nanousd c FROM inferences
			UNION ALL
			SELECT day, model, route, -inferences, -escalated, -input_tokens, -output_tokens, -cost_nanousd FROM inference_days)
		GROUP BY day, model, route HAVING sum(n) != 0 OR sum(e) != 0 OR sum(i) != 0 OR sum(o) != 0 OR sum(c) != 0)`
	if n := count(t, db, diff); n != 0 {
		t.Errorf("%d (day, model, route) groups whose daily totals differ from their details", n)
	}
	const calls = `SELECT count(*) FROM (SELECT day FROM (
			SELECT time_ms / 86400000 day, 1 n FROM tool_calls UNION ALL SELECT day, -tool_calls FROM tool_call_days)
		GROUP BY day HAVING sum(n) != 0)`
	if n := count(t, db, calls); n != 0 {
		t.Errorf("%d days whose tool-call totals differ from their details", n)
	}
}

func TestConcurrentWriterProcesses(t *testing.T) {
	const writers, perWriter = 8, 40
	path := filepath.Join(t.TempDir(), "ledger.db")
	dsn := "sqlite:" + path
	// Create the schema first so the children only append.
	s, err := Open(context.Background(), Options{DSN: dsn})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()

	var wg sync.WaitGroup
	errs := make([]error, writers)
	for w := range writers {
		cmd := child(t, "append", childDSN+"="+dsn, childID+"="+fmt.Sprint(w), childCount+"="+fmt.Sprint(perWriter))
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[w] = cmd.Run()
		}()
	}
	wg.Wait()
	for w, err := range errs {
		if err != nil {
			t.Fatalf("writer %d: %v", w, err)
		}
	}

	s, err = Open(context.Background(), Options{DSN: dsn})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got := map[string]Inference{}
	err = s.ExportInferences(context.Background(), time.Time{}, func(r Inference) error {
		if _, dup := got[r.SessionID]; dup {
			t.Errorf("record %s twice", r.SessionID)
		}
		got[r.SessionID] = r
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != writers*perWriter {
		t.Fatalf("%d inferences, want %d", len(got), writers*perWriter)
	}
	for w := range writers {
		for i := range perWriter {
			want := writerInference(fmt.Sprint(w), i)
			if r := got[want.SessionID]; !sameInference(r, want) {
				t.Fatalf("record %s read back as %+v", want.SessionID, r)
			}
		}
	}
	calls := 0
	if err := s.ExportToolCalls(context.Background(), time.Time{}, func(ToolCall) error { calls++; return nil }); err != nil || calls != writers*perWriter {
		t.Fatalf("%d tool calls, %v; want %d", calls, err, writers*perWriter)
	}
	_, total, err := s.RecentInferences(context.Background(), 1)
	if err != nil || total != writers*perWriter {
		t.Errorf("RecentInferences total = %d, %v; want %d", total, err, writers*perWriter)
	}
	checkTotals(t, rawDB(t, path))
}

func sameInference(a, b Inference) bool {
	return a.Time.Equal(b.Time) && a.SessionID == b.SessionID && a.Iteration == b.Iteration &&
		a.Model == b.Model && a.Route == b.Route && a.InputTokens == b.InputTokens &&
		a.OutputTokens == b.OutputTokens && NanoUSD(a.CostUSD) == NanoUSD(b.CostUSD) &&
		a.Unpriced == b.Unpriced && a.Escalated == b.Escalated && a.Reason == b.Reason &&
		a.StopReason == b.StopReason && a.DurationMS == b.DurationMS && a.Error == b.Error
}

// writeJSONL writes an old-style state directory: n inferences and m tool
// calls, one corrupt line in the middle of each file and a torn last line.
func writeJSONL(t *testing.T, dir string, n, m int) {
	t.Helper()
	write := func(name string, k int, rec func(i int) any) {
		var b strings.Builder
		for i := range k {
			if i == k/2 {
				b.WriteString("{\"time\": this is not json\n")
			}
			line, err := json.Marshal(rec(i))
			if err != nil {
				t.Fatal(err)
			}
			b.Write(line)
			b.WriteByte('\n')
		}
		b.WriteString(`{"time":"2026-11-02T00:00:00Z","model":"torn`)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(b.String()), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(InferencesFile, n, func(i int) any {
		return Inference{Time: time.Date(2026, 10, 1, 0, 0, i, 0, time.UTC), SessionID: fmt.Sprint("s", i), Model: "m", Route: "r", InputTokens: i, CostUSD: 0.001}
	})
	write(ToolCallsFile, m, func(i int) any {
		return ToolCall{Time: time.Date(2026, 10, 1, 0, 0, i, 0, time.UTC), CallID: fmt.Sprint("c", i), Name: "now", Status: "ok", AnsweredBy: "native"}
	})
}

func fileSums(t *testing.T, dir string) string {
	t.Helper()
	var out []string
	for _, name := range []string{InferencesFile, ToolCallsFile} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%x", sha256.Sum256(b)))
	}
	return strings.Join(out, " ")
}

// checkImported requires exactly one copy of each of the n and m records.
func checkImported(t *testing.T, db *sql.DB, n, m int) {
	t.Helper()
	if got := count(t, db, "SELECT count(*) FROM inferences"); got != int64(n) {
		t.Errorf("%d inferences imported, want %d", got, n)
	}
	if got := count(t, db, "SELECT count(DISTINCT session_id) FROM inferences"); got != int64(n) {
		t.Errorf("%d distinct inferences imported, want %d", got, n)
	}
	if got := count(t, db, "SELECT count(DISTINCT call_id) FROM tool_calls"); got != int64(m) {
		t.Errorf("%d distinct tool calls imported, want %d", got, m)
	}
	if got := count(t, db, "SELECT count(*) FROM tool_calls"); got != int64(m) {
		t.Errorf("%d tool calls imported, want %d", got, m)
	}
	if got := count(t, db, "SELECT COALESCE(sum(skipped), 0) FROM jsonl_imports"); got != 4 {
		t.Errorf("%d lines recorded as skipped, want 4 (a corrupt and a torn line per file)", got)
	}
	checkTotals(t, db)
}

func TestImportCrashAndRerun(t *testing.T) {
	const n, m = 3500, 1200
	state := t.TempDir()
	writeJSONL(t, state, n, m)
	before := fileSums(t, state)
	path := filepath.Join(t.TempDir(), "ledger.db")
	dsn := "sqlite:" + path

	cmd := child(t, "import", childDSN+"="+dsn, childDir+"="+state, childKill+"=2")
	err := cmd.Run()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("the importer was meant to kill itself after batch 2: %v", err)
	}
	db := rawDB(t, path)
	if got := count(t, db, "SELECT count(*) FROM inferences"); got != 2*importBatch-1 {
		// Batch 1 holds lines 0..999, batch 2 the corrupt line and 999 more.
		t.Errorf("after the crash %d inferences, want %d", got, 2*importBatch-1)
	}

	if err := child(t, "import", childDSN+"="+dsn, childDir+"="+state).Run(); err != nil {
		t.Fatalf("rerun: %v", err)
	}
	checkImported(t, db, n, m)

	s, err := Open(context.Background(), Options{DSN: dsn})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	st, err := s.ImportJSONL(context.Background(), state)
	if err != nil || st != (ImportStats{}) {
		t.Errorf("third import = %+v, %v; want nothing imported", st, err)
	}
	checkImported(t, db, n, m)
	if after := fileSums(t, state); after != before {
		t.Error("the import changed the JSONL files")
	}
}

func TestTwoImportersAtOnce(t *testing.T) {
	const n, m = 4200, 2100
	state := t.TempDir()
	writeJSONL(t, state, n, m)
	path := filepath.Join(t.TempDir(), "ledger.db")
	dsn := "sqlite:" + path
	s, err := Open(context.Background(), Options{DSN: dsn})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	a := child(t, "import", childDSN+"="+dsn, childDir+"="+state)
	b := child(t, "import", childDSN+"="+dsn, childDir+"="+state)
	if err := a.Start(); err != nil {
		t.Fatal(err)
	}
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	if err := a.Wait(); err != nil {
		t.Fatal(err)
	}
	if err := b.Wait(); err != nil {
		t.Fatal(err)
	}
	checkImported(t, rawDB(t, path), n, m)
}

// holdLock starts a child holding the database's write lock and returns
// once it holds it; the lock ends with the test.
func holdLock(t *testing.T, path string, exclusiveMode bool) {
	t.Helper()
	env := []string{childDSN + "=" + path}
	if exclusiveMode {
		env = append(env, childLock+"=1")
	}
	cmd := child(t, "lock", env...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "locked\n" {
		t.Fatalf("lock holder said %q, %v", line, err)
	}
}

// within fails the test if f has not returned after a generous bound: a
// call that ignores its ctx deadline would otherwise wait for the lock
// timeout of an hour.
func within(t *testing.T, what string, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(time.Minute):
		t.Fatalf("%s still waiting a minute after its deadline", what)
		return nil
	}
}

func TestLockedDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	s, err := Open(context.Background(), Options{DSN: "sqlite:" + path, LockTimeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.AppendInference(context.Background(), Inference{Model: "m", Route: "r"}); err != nil {
		t.Fatal(err)
	}
	shortCtx := func() (context.Context, context.CancelFunc) {
		return context.WithTimeout(context.Background(), 200*time.Millisecond)
	}

	t.Run("writer holds BEGIN EXCLUSIVE", func(t *testing.T) {
		holdLock(t, path, false)
		ctx, cancel := shortCtx()
		defer cancel()
		err := within(t, "append", func() error { return s.AppendInference(ctx, Inference{Model: "m", Route: "r"}) })
		if KindOf(err) != KindLocked {
			t.Errorf("append under another's write lock = %v, want %s", err, KindLocked)
		}
		ctx, cancel = shortCtx()
		defer cancel()
		err = within(t, "tool call append", func() error { return s.AppendToolCall(ctx, ToolCall{Name: "n"}) })
		if KindOf(err) != KindLocked {
			t.Errorf("tool call append = %v, want %s", err, KindLocked)
		}
		// WAL readers do not wait for writers: reports still answer.
		ctx, cancel = shortCtx()
		defer cancel()
		g, err := s.Burn(ctx, time.Time{})
		if err != nil || len(g) != 1 || g[0].Inferences != 1 {
			t.Errorf("burn beside a writer = %+v, %v", g, err)
		}
	})
	// Released: everything works again, and the failed appends left nothing.
	_, total, err := s.RecentInferences(context.Background(), 10)
	if err != nil || total != 1 {
		t.Errorf("after the lock: total %d, %v; want 1", total, err)
	}
	if err := s.AppendInference(context.Background(), Inference{Model: "m", Route: "r"}); err != nil {
		t.Error(err)
	}
	s.Close()

	// A process that keeps the file in exclusive locking mode shuts
	// readers out too (it can only take that mode while no other process
	// has the database open).
	t.Run("holder in exclusive locking mode", func(t *testing.T) {
		holdLock(t, path, true)
		ctx, cancel := shortCtx()
		defer cancel()
		err := within(t, "open", func() error {
			s, err := Open(ctx, Options{DSN: "sqlite:" + path, LockTimeout: time.Hour})
			if err == nil {
				_, err = s.Burn(ctx, time.Time{})
				s.Close()
			}
			return err
		})
		if KindOf(err) != KindLocked {
			t.Errorf("open and burn with the file locked exclusively = %v, want %s", err, KindLocked)
		}
	})
}
