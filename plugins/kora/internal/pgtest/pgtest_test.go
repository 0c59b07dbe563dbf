//go:build linux

package pgtest

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

func TestMain(m *testing.M) {
	code := m.Run()
	StopShared()
	os.Exit(code)
}

func connect(t *testing.T, dsn string) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("connect %s: %v", dsn, err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func TestDatabasesAreFreshAndSeparate(t *testing.T) {
	c := Shared(t)
	a, b := c.NewDatabase(t), c.NewDatabase(t)
	if a == b {
		t.Fatalf("two databases share a DSN: %s", a)
	}
	ctx := context.Background()
	ca, cb := connect(t, a), connect(t, b)
	if _, err := ca.Exec(ctx, "CREATE TABLE t (x int); INSERT INTO t VALUES (42)"); err != nil {
		t.Fatal(err)
	}
	var x int
	if err := ca.QueryRow(ctx, "SELECT x FROM t").Scan(&x); err != nil || x != 42 {
		t.Fatalf("read back: %d, %v", x, err)
	}
	if _, err := cb.Exec(ctx, "SELECT x FROM t"); err == nil {
		t.Fatal("the second database sees the first one's table")
	}
	var fsync, sync string
	if err := ca.QueryRow(ctx, "SELECT current_setting('fsync'), current_setting('synchronous_commit')").Scan(&fsync, &sync); err != nil {
		t.Fatal(err)
	}
	if fsync != "on" || sync != "on" {
		t.Fatalf("fsync=%s synchronous_commit=%s, want both on", fsync, sync)
	}
}

func TestDatabaseIsDroppedWithItsTest(t *testing.T) {
	c := Shared(t)
	var dsn string
	t.Run("user", func(t *testing.T) { dsn = c.NewDatabase(t) })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err == nil {
		conn.Close(ctx)
		t.Fatalf("database %s still exists after its test ended", dsn)
	}
	if !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("connecting to a dropped database: %v, want does not exist", err)
	}
}

// TestStopRestartKeepsCommittedData stops the server the way a crash
// would and checks that what was committed before is there after the
// restart, and that nothing is left running after Close.
func TestStopRestartKeepsCommittedData(t *testing.T) {
	if os.Getenv(EnvDSN) != "" {
		t.Skip(EnvDSN + " is set: an external server is not stopped by tests")
	}
	c, err := Start("")
	if err != nil {
		Require(t, err)
	}
	defer c.Close()
	ctx := context.Background()
	name, err := c.CreateDatabase(ctx)
	if err != nil {
		t.Fatal(err)
	}
	dsn := c.DSN(name)
	conn := connect(t, dsn)
	if _, err := conn.Exec(ctx, "CREATE TABLE t (x int); INSERT INTO t VALUES (7)"); err != nil {
		t.Fatal(err)
	}
	pid := c.server.Process.Pid
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("postmaster %d still there after Stop: %v", pid, err)
	}
	if _, err := conn.Exec(ctx, "SELECT 1"); err == nil {
		t.Fatal("a query succeeded with the server stopped")
	}
	if err := c.Restart(); err != nil {
		t.Fatal(err)
	}
	var x int
	if err := connect(t, dsn).QueryRow(ctx, "SELECT x FROM t").Scan(&x); err != nil || x != 7 {
		t.Fatalf("after restart: %d, %v", x, err)
	}
	home := c.home
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(home); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("cluster directory %s left behind: %v", home, err)
	}
}

// TestServerDiesWithItsTestBinary starts a cluster in a child test
// process, SIGKILLs the child, and checks the server went with it.
func TestServerDiesWithItsTestBinary(t *testing.T) {
	if os.Getenv(EnvDSN) != "" {
		t.Skip(EnvDSN + " is set: no cluster is started")
	}
	if os.Getenv("PGTEST_ORPHAN_CHILD") == "1" {
		c, err := Start("")
		if err != nil {
			t.Fatal(err)
		}
		os.Stdout.WriteString("postmaster " + strconv.Itoa(c.server.Process.Pid) + " " + c.home + "\n")
		time.Sleep(time.Hour) // killed by the parent
		return
	}
	if _, err := findBinaries(); err != nil {
		Require(t, err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestServerDiesWithItsTestBinary$", "-test.v")
	cmd.Env = append(os.Environ(), "PGTEST_ORPHAN_CHILD=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var line string
	buf := make([]byte, 1)
	for !strings.HasPrefix(line, "postmaster ") || !strings.HasSuffix(line, "\n") {
		if strings.HasSuffix(line, "\n") {
			line = ""
		}
		if _, err := out.Read(buf); err != nil {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("child ended before starting its cluster: %v", err)
		}
		line += string(buf)
	}
	f := strings.Fields(line)
	pid, _ := strconv.Atoi(f[1])
	home := f[2]
	defer os.RemoveAll(home)
	cmd.Process.Kill()
	cmd.Wait()
	// The kernel delivers the parent-death signal as the child exits; the
	// postmaster may take a moment to be reaped by init.
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("postmaster %d outlived its killed test binary", pid)
		}
		err := syscall.Kill(pid, 0)
		if errors.Is(err, syscall.ESRCH) {
			break
		}
		if b, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat")); strings.Contains(string(b), ") Z ") {
			break // a zombie waiting for init: dead
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestSkipPolicy runs Require on a missing PostgreSQL in a child, with
// CI unset and set: the child's skip or failure is observed there rather
// than inherited (a skip here would show in make test's summary as a
// PostgreSQL missing from this machine).
func TestSkipPolicy(t *testing.T) {
	for _, c := range []struct{ ci, want string }{
		{"", "--- SKIP: TestSkipPolicyChild"},
		{"1", "--- FAIL: TestSkipPolicyChild"},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestSkipPolicyChild$", "-test.v")
		cmd.Env = append(os.Environ(), "PGTEST_SKIP_POLICY_CHILD=1", "CI="+c.ci)
		out, err := cmd.CombinedOutput()
		if failed := err != nil; failed != (c.ci != "") || !strings.Contains(string(out), c.want) {
			t.Errorf("with CI=%q, a missing PostgreSQL must give %q; child said (%v):\n%s", c.ci, c.want, err, out)
		}
		if !strings.Contains(string(out), InstallCommand) {
			t.Errorf("with CI=%q, the child does not say how to install PostgreSQL:\n%s", c.ci, out)
		}
	}
}

func TestSkipPolicyChild(t *testing.T) {
	if os.Getenv("PGTEST_SKIP_POLICY_CHILD") != "1" {
		// A helper process, not a test of its own: TestSkipPolicy runs
		// it in a child. Returning keeps it out of make test's skips.
		return
	}
	Require(t, ErrNotInstalled)
	t.Error("Require returned")
}
