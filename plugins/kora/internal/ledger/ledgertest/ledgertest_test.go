package ledgertest

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hookhost/hookhost/plugins/kora/internal/ledger"
	"github.com/hookhost/hookhost/plugins/kora/internal/pgtest"

	"github.com/hookhost/hookhost/internal/testenv"
)

// The test binary re-executes itself as writer and importer processes;
// these variables tell a child what to do.
const (
	envRole  = "KORA_LEDGERTEST_ROLE" // "writer" or "importer"
	envDSN   = "KORA_LEDGERTEST_DSN"
	envDir   = "KORA_LEDGERTEST_STATE_DIR"
	envID    = "KORA_LEDGERTEST_ID"
	envCount = "KORA_LEDGERTEST_COUNT"
)

func TestMain(m *testing.M) {
	switch os.Getenv(envRole) {
	case "writer":
		os.Exit(writerMain())
	case "importer":
		os.Exit(importerMain())
	}
	code := m.Run()
	pgtest.StopShared()
	os.Exit(code)
}

func open(t *testing.T, o ledger.Options) ledger.Store {
	t.Helper()
	s, err := ledger.Open(ctxT(t), o)
	if err != nil {
		t.Fatalf("open %s: %v", o.DSN, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func sqliteDSN(t *testing.T) string {
	return "sqlite:" + filepath.Join(t.TempDir(), "ledger.db")
}

func openSQLite(t *testing.T, o ledger.Options) ledger.Store {
	o.DSN = sqliteDSN(t)
	return open(t, o)
}

func openPostgres(t *testing.T, o ledger.Options) ledger.Store {
	o.DSN = pgtest.Shared(t).NewDatabase(t)
	return open(t, o)
}

func TestSQLite(t *testing.T)   { Run(t, openSQLite) }
func TestPostgres(t *testing.T) { Run(t, openPostgres) }

// backends are the two databases with a fresh-database DSN each.
var backends = []struct {
	name string
	dsn  func(t *testing.T) string
}{
	{"sqlite", sqliteDSN},
	{"postgres", func(t *testing.T) string { return pgtest.Shared(t).NewDatabase(t) }},
}

// writerRecords are writer id's records, bulky enough (a few KB each)
// that a torn or interleaved write would show.
func writerRecords(id, n int) []ledger.Inference {
	recs := Inferences(int64(1000+id), n, Base.Add(-2*day), Base)
	for i := range recs {
		recs[i].Reason = strings.Repeat(fmt.Sprintf("writer %d record %d; ", id, i), 150)
	}
	return recs
}

func childOptions(dsn, dir string) ledger.Options {
	return ledger.Options{
		DSN:         dsn,
		StateDir:    dir,
		Now:         func() time.Time { return Base },
		LockTimeout: 30 * time.Second, // eight processes share two cores
	}
}

// writerMain opens the store, says "ready", waits for its stdin to close
// (so that all writers start appending together) and appends.
func writerMain() int {
	id, _ := strconv.Atoi(os.Getenv(envID))
	n, _ := strconv.Atoi(os.Getenv(envCount))
	ctx := context.Background()
	s, err := ledger.Open(ctx, childOptions(os.Getenv(envDSN), os.Getenv(envDir)))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer s.Close()
	fmt.Println("ready")
	io.Copy(io.Discard, os.Stdin)
	for _, r := range writerRecords(id, n) {
		if err := s.AppendInference(ctx, r); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if err := s.AppendToolCall(ctx, ledger.ToolCall{Time: r.Time, CallID: r.SessionID, Name: "shell", Status: "ok", AnsweredBy: "native"}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return 0
}

// TestConcurrentWriterProcesses runs eight processes appending to one
// database at once: every record must be there exactly once, intact, and
// the totals must equal the details.
func TestConcurrentWriterProcesses(t *testing.T) {
	const writers, each = 8, 40
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			dsn, dir := b.dsn(t), t.TempDir()
			var cmds []*exec.Cmd
			var stdins []io.WriteCloser
			ready := make(chan readyMsg, writers)
			for id := range writers {
				cmd := exec.Command(os.Args[0])
				cmd.Env = append(os.Environ(), envRole+"=writer", envDSN+"="+dsn, envDir+"="+dir,
					envID+"="+strconv.Itoa(id), envCount+"="+strconv.Itoa(each))
				var stderr strings.Builder
				cmd.Stderr = &stderr
				in, err := cmd.StdinPipe()
				if err != nil {
					t.Fatal(err)
				}
				out, err := cmd.StdoutPipe()
				if err != nil {
					t.Fatal(err)
				}
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
				cmds, stdins = append(cmds, cmd), append(stdins, in)
				go func() {
					// Each writer says ready once its store is open; the
					// parent waits for all before letting them append.
					line, _ := bufio.NewReader(out).ReadString('\n')
					ready <- readyMsg{id, line, &stderr}
				}()
			}
			for range writers {
				r := <-ready
				if r.line != "ready\n" {
					t.Fatalf("writer %d did not open its store: %q", r.id, r.stderr.String())
				}
			}
			for _, in := range stdins {
				in.Close()
			}
			for id, cmd := range cmds {
				if err := cmd.Wait(); err != nil {
					t.Fatalf("writer %d: %v: %s", id, err, cmd.Stderr)
				}
			}
			s := open(t, childOptions(dsn, t.TempDir()))
			var all []ledger.Inference
			for id := range writers {
				all = append(all, writerRecords(id, each)...)
			}
			CheckAll(t, s, all)
			if _, total, err := s.RecentToolCalls(context.Background(), 1); err != nil || total != writers*each {
				t.Fatalf("tool calls: %d, %v; want %d", total, err, writers*each)
			}
		})
	}
}

type readyMsg struct {
	id     int
	line   string
	stderr *strings.Builder
}

// importerMain imports a state directory and SIGKILLs itself as soon as
// the first batch is committed, as a crash half-way would.
func importerMain() int {
	dsn, dir := os.Getenv(envDSN), os.Getenv(envDir)
	db, err := progressDB(dsn)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	go func() {
		for {
			if n, err := importedRecords(db); err == nil && n > 0 {
				fmt.Fprintf(os.Stderr, "imported %d, killing myself\n", n)
				syscall.Kill(os.Getpid(), syscall.SIGKILL)
			}
			time.Sleep(time.Millisecond)
		}
	}()
	if _, err := ledger.Open(context.Background(), childOptions(dsn, dir)); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Fprintln(os.Stderr, "import finished before it was killed")
	return 3
}

// progressDB opens the store's database directly, to watch the import's
// committed progress from outside the store. SQLite's is read-only, so
// that watching never creates the file before the store does.
func progressDB(dsn string) (*sql.DB, error) {
	if path, ok := strings.CutPrefix(dsn, "sqlite:"); ok {
		return sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(10000)")
	}
	return sql.Open("pgx", dsn)
}

func importedRecords(db *sql.DB) (int64, error) {
	var n int64
	err := db.QueryRow("SELECT COALESCE(SUM(records), 0) FROM jsonl_imports").Scan(&n)
	return n, err
}

// TestCrashMidImport kills an importing process after its first batch,
// then reruns the import: every record must end up there exactly once.
func TestCrashMidImport(t *testing.T) {
	const n = 12_000
	recs := Inferences(77, n, Base.Add(-20*day), Base)
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			dsn, dir := b.dsn(t), t.TempDir()
			WriteJSONL(t, filepath.Join(dir, ledger.InferencesFile), recs)
			cmd := exec.Command(os.Args[0])
			cmd.Env = append(os.Environ(), envRole+"=importer", envDSN+"="+dsn, envDir+"="+dir)
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || !ee.Sys().(syscall.WaitStatus).Signaled() || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
				t.Fatalf("importer was not killed mid-import (%v): %s", err, out)
			}
			db, err := progressDB(dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			done, err := importedRecords(db)
			if err != nil {
				t.Fatal(err)
			}
			var rows int64
			if err := db.QueryRow("SELECT COUNT(*) FROM inferences").Scan(&rows); err != nil {
				t.Fatal(err)
			}
			if done <= 0 || done >= n || rows != done {
				t.Fatalf("after the crash: %d rows, progress says %d of %d; want a committed part, rows == progress", rows, done, n)
			}
			t.Logf("killed after %d of %d records", done, n)
			s := open(t, childOptions(dsn, dir))
			CheckAll(t, s, recs)
			if st, err := s.ImportJSONL(context.Background(), dir); err != nil || st.Inferences != 0 {
				t.Fatalf("a third import: %+v, %v", st, err)
			}
		})
	}
}

// ownCluster starts a cluster this test may stop, restart or break.
func ownCluster(t *testing.T) *pgtest.Cluster {
	if os.Getenv(pgtest.EnvDSN) != "" {
		t.Skip(pgtest.EnvDSN + " is set: an external server is not stopped or filled by tests")
	}
	c, err := pgtest.Start("")
	if err != nil {
		pgtest.Require(t, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func wantKind(t *testing.T, what string, err error, want ledger.ErrorKind) {
	t.Helper()
	if ledger.KindOf(err) != want {
		t.Fatalf("%s: %v (kind %s), want %s", what, err, ledger.KindOf(err), want)
	}
	if !strings.Contains(err.Error(), "kora: ledger (postgres)") {
		t.Fatalf("%s: %q does not say who failed", what, err)
	}
}

func deadline(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func TestPostgresServerStoppedMidUse(t *testing.T) {
	c := ownCluster(t)
	s := open(t, childOptions(c.NewDatabase(t), t.TempDir()))
	before := ledger.Inference{Time: Base, SessionID: "before", Model: "m", Route: "r", InputTokens: 1}
	after := ledger.Inference{Time: Base, SessionID: "after", Model: "m", Route: "r", InputTokens: 2}
	if err := s.AppendInference(deadline(t, time.Minute), before); err != nil {
		t.Fatal(err)
	}
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	err := s.AppendInference(deadline(t, 5*time.Second), ledger.Inference{Time: Base, SessionID: "lost", Model: "m", Route: "r"})
	wantKind(t, "append with the server down", err, ledger.KindUnavailable)
	t.Logf("append with the server down failed after %v: %v", time.Since(began), err)
	_, err = s.Burn(deadline(t, 5*time.Second), time.Time{})
	wantKind(t, "burn with the server down", err, ledger.KindUnavailable)
	_, _, err = s.RecentToolCalls(deadline(t, 5*time.Second), 5)
	wantKind(t, "recent with the server down", err, ledger.KindUnavailable)
	if err := c.Restart(); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendInference(deadline(t, time.Minute), after); err != nil {
		t.Fatalf("append after restart: %v", err)
	}
	CheckAll(t, s, []ledger.Inference{before, after})
}

func TestPostgresTableLocked(t *testing.T) {
	c := pgtest.Shared(t)
	dsn := c.NewDatabase(t)
	o := childOptions(dsn, t.TempDir())
	o.LockTimeout = 500 * time.Millisecond
	s := open(t, o)
	first := ledger.Inference{Time: Base, SessionID: "first", Model: "m", Route: "r"}
	if err := s.AppendInference(deadline(t, time.Minute), first); err != nil {
		t.Fatal(err)
	}
	other, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	holder, err := other.BeginTx(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Rollback()
	if _, err := holder.Exec("LOCK TABLE inferences, inference_days IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	err = s.AppendInference(deadline(t, time.Second), ledger.Inference{Time: Base, SessionID: "lost", Model: "m", Route: "r"})
	wantKind(t, "append behind a lock, ctx deadline", err, ledger.KindLocked)
	err = s.AppendInference(context.Background(), ledger.Inference{Time: Base, SessionID: "lost", Model: "m", Route: "r"})
	wantKind(t, "append behind a lock, no deadline (LockTimeout)", err, ledger.KindLocked)
	_, err = s.Burn(context.Background(), time.Time{})
	wantKind(t, "burn behind a lock", err, ledger.KindLocked)
	if err := holder.Rollback(); err != nil {
		t.Fatal(err)
	}
	second := ledger.Inference{Time: Base, SessionID: "second", Model: "m", Route: "r"}
	if err := s.AppendInference(deadline(t, time.Minute), second); err != nil {
		t.Fatalf("append after the lock was released: %v", err)
	}
	CheckAll(t, s, []ledger.Inference{first, second})
}

func TestPostgresReadOnly(t *testing.T) {
	c := pgtest.Shared(t)
	dsn := c.NewDatabase(t)
	rec := ledger.Inference{Time: Base, SessionID: "kept", Model: "m", Route: "r"}
	s := open(t, childOptions(dsn, t.TempDir()))
	if err := s.AppendInference(deadline(t, time.Minute), rec); err != nil {
		t.Fatal(err)
	}
	s.Close()
	u, _ := url.Parse(dsn)
	db := strings.TrimPrefix(u.Path, "/")
	admin, err := sql.Open("pgx", c.DSN("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if _, err := admin.Exec("ALTER DATABASE " + db + " SET default_transaction_read_only = on"); err != nil {
		t.Fatal(err)
	}
	ro, err := ledger.Open(deadline(t, time.Minute), childOptions(dsn, t.TempDir()))
	if err != nil {
		wantKind(t, "open of a read-only database", err, ledger.KindReadOnly)
		return
	}
	defer ro.Close()
	err = ro.AppendInference(deadline(t, time.Minute), ledger.Inference{Time: Base, Model: "m", Route: "r"})
	wantKind(t, "append to a read-only database", err, ledger.KindReadOnly)
	// Reading still works, and nothing was lost or added.
	CheckAll(t, ro, []ledger.Inference{rec})
}

// TestPostgresDiskFull moves the inferences table to a tablespace on a
// tiny tmpfs and fills it: an append must fail as ledger_full, record
// nothing, and appends must work again once there is room.
func TestPostgresDiskFull(t *testing.T) {
	c := ownCluster(t)
	mnt := filepath.Join(c.SocketDir(), "..", "tiny")
	if err := os.MkdirAll(mnt, 0o700); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=2m,mode=0700", "tmpfs", mnt).CombinedOutput(); err != nil {
		testenv.SkipUnlessRun(t, testenv.NoTmpfs, testenv.AsRoot("./plugins/kora/internal/ledger/..."),
			fmt.Sprintf("cannot simulate a full disk: %v: %s", err, out))
	}
	t.Cleanup(func() { exec.Command("umount", "-l", mnt).Run() })
	if os.Geteuid() == 0 {
		st, _ := os.Stat(c.SocketDir())
		sys := st.Sys().(*syscall.Stat_t)
		if err := os.Chown(mnt, int(sys.Uid), int(sys.Gid)); err != nil {
			t.Fatal(err)
		}
	}
	dsn := c.NewDatabase(t)
	s := open(t, childOptions(dsn, t.TempDir()))
	admin, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	abs, _ := filepath.Abs(mnt)
	for _, q := range []string{
		"CREATE TABLESPACE kora_tiny LOCATION '" + abs + "'",
		"ALTER TABLE inferences SET TABLESPACE kora_tiny",
	} {
		if _, err := admin.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	t.Cleanup(func() {
		c.DropDatabase(context.Background(), strings.TrimPrefix(mustURL(t, dsn).Path, "/"))
		if a, err := sql.Open("pgx", c.DSN("postgres")); err == nil {
			a.Exec("DROP TABLESPACE IF EXISTS kora_tiny")
			a.Close()
		}
	})
	ballast := filepath.Join(mnt, "ballast")
	fillDisk(t, ballast)

	err = s.AppendInference(deadline(t, time.Minute), ledger.Inference{Time: Base, SessionID: "lost", Model: "m", Route: "r"})
	wantKind(t, "append to a full disk", err, ledger.KindFull)
	if err := os.Remove(ballast); err != nil {
		t.Fatal(err)
	}
	rec := ledger.Inference{Time: Base, SessionID: "kept", Model: "m", Route: "r", InputTokens: 3}
	if err := s.AppendInference(deadline(t, time.Minute), rec); err != nil {
		t.Fatalf("append once there is room again: %v", err)
	}
	CheckAll(t, s, []ledger.Inference{rec})
}

// TestPostgresCorruptPage damages the header of the inferences table's
// first page on disk: reading it must fail as ledger_corrupt, and the
// reports that do not read it (burn over all time, from the daily totals)
// keep working.
func TestPostgresCorruptPage(t *testing.T) {
	c := ownCluster(t)
	dsn := c.NewDatabase(t)
	s := open(t, childOptions(dsn, t.TempDir()))
	recs := Inferences(21, 20, Base.Add(-day), Base)
	AppendAll(t, s, recs, nil)
	admin, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	var rel, data string
	if err := admin.QueryRow("SELECT pg_relation_filepath('inferences'), current_setting('data_directory')").Scan(&rel, &data); err != nil {
		t.Fatal(err)
	}
	admin.Close()
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	// Immediate shutdown leaves the pages in the WAL; the restart's
	// recovery would rewrite them. A clean restart first writes them out.
	if err := c.Restart(); err != nil {
		t.Fatal(err)
	}
	cp, _ := sql.Open("pgx", dsn)
	if _, err := cp.Exec("CHECKPOINT"); err != nil {
		t.Fatal(err)
	}
	cp.Close()
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(data, rel), os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	// pd_lower and pd_upper (bytes 12-15) swapped past each other: a
	// header PostgreSQL's page check rejects.
	if _, err := f.WriteAt([]byte{0xff, 0xff, 0x10, 0x00}, 12); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := c.Restart(); err != nil {
		t.Fatal(err)
	}
	_, _, err = s.RecentInferences(deadline(t, time.Minute), 5)
	wantKind(t, "recent over a damaged page", err, ledger.KindCorrupt)
	CheckBurn(t, s, recs, time.Time{})
}

// TestSQLiteDiskFull puts the database on a tiny tmpfs and fills it:
// appends keep going into space the database already has, then one fails
// as ledger_full; nothing acknowledged is lost, and appends work again
// once there is room.
func TestSQLiteDiskFull(t *testing.T) {
	mnt := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", mnt).CombinedOutput(); err != nil {
		testenv.SkipUnlessRun(t, testenv.NoTmpfs, testenv.AsRoot("./plugins/kora/internal/ledger/..."),
			fmt.Sprintf("cannot simulate a full disk: %v: %s", err, out))
	}
	t.Cleanup(func() { exec.Command("umount", "-l", mnt).Run() })
	o := childOptions("sqlite:"+filepath.Join(mnt, "ledger.db"), t.TempDir())
	s := open(t, o)
	ballast := filepath.Join(mnt, "ballast")
	fillDisk(t, ballast)
	var kept []ledger.Inference
	var err error
	for i := 0; i < 5000 && err == nil; i++ {
		rec := ledger.Inference{Time: Base, SessionID: "full", Iteration: i, Model: "m", Route: "r", Reason: strings.Repeat("x", 2000)}
		if err = s.AppendInference(deadline(t, time.Minute), rec); err == nil {
			kept = append(kept, rec)
		}
	}
	if ledger.KindOf(err) != ledger.KindFull || !strings.Contains(err.Error(), "kora: ledger (sqlite)") {
		t.Fatalf("appending to a full disk: %v (kind %s) after %d appends, want ledger_full", err, ledger.KindOf(err), len(kept))
	}
	t.Logf("full after %d appends: %v", len(kept), err)
	if err := os.Remove(ballast); err != nil {
		t.Fatal(err)
	}
	rec := ledger.Inference{Time: Base, SessionID: "after", Model: "m", Route: "r"}
	if err := s.AppendInference(deadline(t, time.Minute), rec); err != nil {
		t.Fatalf("append once there is room again: %v", err)
	}
	CheckAll(t, s, append(kept, rec))
}

func mustURL(t *testing.T, s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// fillDisk writes path until its filesystem has no room left.
func fillDisk(t *testing.T, path string) {
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	for {
		if _, err := f.Write(buf); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				return
			}
			t.Fatal(err)
		}
	}
}
