//go:build linux

// Package pgtest runs a throwaway PostgreSQL cluster for Kora's tests and
// benchmarks: initdb into a fresh directory, a postmaster listening only on
// a Unix socket inside that directory (so parallel test binaries never
// collide), one fresh database per test, and a fast immediate shutdown.
//
// The server is started directly as a child of the test process, in its
// own process group and with a parent-death signal, so a test binary that
// crashes or is killed never leaves a server behind. fsync stays on:
// durability is what the ledger's tests check and its benchmarks measure.
//
// When KORA_TEST_POSTGRES_DSN is set, that server is used instead and no
// cluster is started.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hookhost/hookhost/internal/testenv"
)

// EnvDSN names the environment variable holding the DSN of an existing
// server to use instead of a throwaway cluster. Its user must be allowed
// to create and drop databases.
const EnvDSN = "KORA_TEST_POSTGRES_DSN"

// ErrNotInstalled is returned (wrapped) by Start when initdb or postgres
// cannot be found.
var ErrNotInstalled = errors.New("pgtest: PostgreSQL server binaries (initdb, postgres) not found in PATH or /usr/lib/postgresql/*/bin; install them with: apt-get install postgresql")

// serverUsers are the users, in order of preference, that run the server
// when the tests run as root, which postgres refuses: Debian's postgres,
// or nobody where the package's user does not exist.
var serverUsers = []string{"postgres", "nobody"}

// socketPort only names the socket file: nothing listens on TCP.
const socketPort = 5432

// startTimeout bounds initdb plus the server's start on a loaded machine.
const startTimeout = 2 * time.Minute

// Cluster is a running PostgreSQL server for tests, either a throwaway
// cluster this package started or the server EnvDSN names.
type Cluster struct {
	home    string // the cluster's directory
	ownHome bool   // home was made by Start, so Close removes it
	data    string
	socket  string
	binDir  string
	cred    *syscall.Credential // nil when not running as root
	uid     int                 // owner of the data directory, -1 when unchanged

	adminDSN string // a database (postgres) to run CREATE/DROP DATABASE in
	external bool   // EnvDSN: never stopped or restarted

	mu     sync.Mutex
	server *exec.Cmd
	exited chan struct{} // closed when server has been waited for
}

// Start starts a throwaway cluster in dir, which it creates when missing
// and which must be empty; "" makes a fresh directory under os.TempDir()
// that Close removes. When EnvDSN is set, no cluster is started and dir is
// not used.
//
// When running as root, the server runs as the postgres user and dir is
// given to it, so dir's parents must let that user through: os.TempDir()
// does, testing's TempDir does not (its directories are private to root).
func Start(dir string) (*Cluster, error) {
	if dsn := os.Getenv(EnvDSN); dsn != "" {
		return external(dsn)
	}
	binDir, err := findBinaries()
	if err != nil {
		return nil, err
	}
	c := &Cluster{binDir: binDir, uid: -1}
	if dir == "" {
		if dir, err = os.MkdirTemp("", "kora-pgtest-"); err != nil {
			return nil, fmt.Errorf("pgtest: %w", err)
		}
		c.ownHome = true
	} else if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	c.home = dir
	c.data = filepath.Join(dir, "data")
	c.socket = filepath.Join(dir, "s")
	if len(c.socket)+len("/.s.PGSQL.5432") >= 104 {
		// A Unix socket's path is limited to about 104 bytes.
		if c.socket, err = os.MkdirTemp("", "kora-pgsock-"); err != nil {
			return nil, fmt.Errorf("pgtest: %w", err)
		}
	} else if err := os.Mkdir(c.socket, 0o700); err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	if err := os.Mkdir(c.data, 0o700); err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	if os.Geteuid() == 0 {
		if err := c.dropRoot(); err != nil {
			c.removeHome()
			return nil, err
		}
	}
	if err := c.initdb(); err != nil {
		c.removeHome()
		return nil, err
	}
	if err := c.startServer(); err != nil {
		c.removeHome()
		return nil, err
	}
	return c, nil
}

func external(dsn string) (*Cluster, error) {
	c := &Cluster{adminDSN: dsn, external: true, uid: -1}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return nil, fmt.Errorf("pgtest: %s: %w", EnvDSN, err)
	}
	conn.Close(ctx)
	return c, nil
}

// findBinaries returns the directory holding initdb and postgres: PATH
// first, then the newest /usr/lib/postgresql/<version>/bin, where Debian
// keeps them out of PATH.
func findBinaries() (string, error) {
	if p, err := exec.LookPath("postgres"); err == nil {
		dir := filepath.Dir(p)
		if _, err := os.Stat(filepath.Join(dir, "initdb")); err == nil {
			return dir, nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, dir := range dirs {
		_, e1 := os.Stat(filepath.Join(dir, "postgres"))
		_, e2 := os.Stat(filepath.Join(dir, "initdb"))
		if e1 == nil && e2 == nil {
			return dir, nil
		}
	}
	return "", ErrNotInstalled
}

func version(binDir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return v
}

// dropRoot arranges for the server to run as one of serverUsers, owning the
// cluster's directories.
func (c *Cluster) dropRoot() error {
	var u *user.User
	var err error
	for _, name := range serverUsers {
		if u, err = user.Lookup(name); err == nil {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("pgtest: running as root, which postgres refuses, and no user to run it as (%s): %w", strings.Join(serverUsers, ", "), err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	c.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	c.uid = uid
	for _, p := range []string{c.home, c.data, c.socket} {
		if err := os.Chown(p, uid, gid); err != nil {
			return fmt.Errorf("pgtest: %w", err)
		}
	}
	// Fail here, clearly, rather than with initdb's permission error.
	for _, p := range []string{c.data, c.socket} {
		for d := filepath.Dir(p); d != "/"; d = filepath.Dir(d) {
			fi, err := os.Stat(d)
			if err != nil {
				return fmt.Errorf("pgtest: %w", err)
			}
			st, ok := fi.Sys().(*syscall.Stat_t)
			if !ok || int(st.Uid) == uid || fi.Mode().Perm()&0o001 != 0 {
				continue
			}
			return fmt.Errorf("pgtest: user %s cannot reach %s (mode %v owned by uid %d): give Start a directory under %s", u.Username, d, fi.Mode().Perm(), st.Uid, os.TempDir())
		}
	}
	return nil
}

func (c *Cluster) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(c.binDir, name), args...)
	cmd.Dir = c.home
	cmd.Env = []string{"PATH=/usr/bin:/bin", "LC_ALL=C", "TZ=UTC"}
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Credential: c.cred,
		Setpgid:    true,
		Pdeathsig:  syscall.SIGKILL,
	}
	return cmd
}

func (c *Cluster) initdb() error {
	// --no-sync only skips flushing the freshly made template files, which
	// a throwaway cluster never needs after a machine crash; the server
	// itself runs with fsync on.
	cmd := c.command("initdb", "-D", c.data, "-U", "postgres", "--auth=trust",
		"-E", "UTF8", "--locale=C", "--no-sync")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("pgtest: initdb: %w\n%s", err, out)
	}
	return nil
}

func (c *Cluster) logPath() string { return filepath.Join(c.home, "server.log") }

// startServer runs the postmaster from a goroutine locked to its OS
// thread: the parent-death signal fires when the thread that started the
// child exits, so that thread must live exactly as long as the server.
func (c *Cluster) startServer() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.server != nil {
		return errors.New("pgtest: server already running")
	}
	logf, err := os.OpenFile(c.logPath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	cmd := c.command("postgres", "-D", c.data,
		"-k", c.socket, "-p", strconv.Itoa(socketPort),
		"-c", "listen_addresses=",
		"-c", "fsync=on",
		"-c", "synchronous_commit=on",
		"-c", "max_connections=200",
		"-c", "shared_buffers=32MB",
	)
	cmd.Stdout = logf
	cmd.Stderr = logf
	started := make(chan error, 1)
	exited := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		// Never unlocked: the thread ends with this goroutine, after the
		// server has exited.
		if err := cmd.Start(); err != nil {
			started <- err
			close(exited)
			return
		}
		started <- nil
		_ = cmd.Wait()
		logf.Close()
		close(exited)
	}()
	if err := <-started; err != nil {
		logf.Close()
		return fmt.Errorf("pgtest: starting postgres: %w", err)
	}
	c.server, c.exited = cmd, exited
	c.adminDSN = c.DSN("postgres")

	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	for {
		cctx, ccancel := context.WithTimeout(ctx, 5*time.Second)
		conn, err := pgx.Connect(cctx, c.adminDSN)
		ccancel()
		if err == nil {
			conn.Close(ctx)
			return nil
		}
		select {
		case <-exited:
			c.server = nil
			return fmt.Errorf("pgtest: postgres exited while starting: %v\n%s", err, c.logTail())
		case <-ctx.Done():
			c.killLocked()
			return fmt.Errorf("pgtest: postgres not ready after %v: %v\n%s", startTimeout, err, c.logTail())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (c *Cluster) logTail() string {
	b, _ := os.ReadFile(c.logPath())
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// DSN returns the URL of database db on this cluster, connecting as the
// postgres superuser over the cluster's Unix socket (no password).
func (c *Cluster) DSN(db string) string {
	if c.external {
		u, err := url.Parse(c.adminDSN)
		if err != nil || u.Scheme == "" {
			return c.adminDSN + " dbname=" + db
		}
		u.Path = "/" + db
		return u.String()
	}
	q := url.Values{"host": {c.socket}, "port": {strconv.Itoa(socketPort)}, "sslmode": {"disable"}}
	return "postgres://postgres@/" + db + "?" + q.Encode()
}

// SocketDir is the directory holding the server's Unix socket ("" for an
// external server).
func (c *Cluster) SocketDir() string {
	if c.external {
		return ""
	}
	return c.socket
}

// External reports whether this is the server EnvDSN names, which tests
// cannot stop or restart.
func (c *Cluster) External() bool { return c.external }

// NewDatabase creates a fresh, empty database for tb, dropped when tb
// ends, and returns its DSN.
func (c *Cluster) NewDatabase(tb testing.TB) string {
	tb.Helper()
	name, err := c.CreateDatabase(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := c.DropDatabase(context.Background(), name); err != nil {
			tb.Log(err)
		}
	})
	return c.DSN(name)
}

// CreateDatabase creates a fresh, empty database with a random name and
// returns the name; for benchmarks and programs that manage its life.
func (c *Cluster) CreateDatabase(ctx context.Context) (string, error) {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("pgtest: %w", err)
	}
	name := "kora_test_" + hex.EncodeToString(b[:])
	if err := c.admin(ctx, "CREATE DATABASE "+name); err != nil {
		return "", err
	}
	return name, nil
}

// DropDatabase drops database name, disconnecting its sessions.
func (c *Cluster) DropDatabase(ctx context.Context, name string) error {
	return c.admin(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
}

func (c *Cluster) admin(ctx context.Context, sql string) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, c.adminDSN)
	if err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql); err != nil {
		return fmt.Errorf("pgtest: %s: %w", sql, err)
	}
	return nil
}

// Stop shuts the server down at once (PostgreSQL's immediate mode: no
// checkpoint, the next start recovers from the WAL, as after a crash),
// keeping the data. Restart brings it back.
func (c *Cluster) Stop() error {
	if c.external {
		return errors.New("pgtest: an external server (" + EnvDSN + ") is not stopped by tests")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.server == nil {
		return nil
	}
	_ = c.server.Process.Signal(syscall.SIGQUIT)
	select {
	case <-c.exited:
	case <-time.After(30 * time.Second):
		c.killLocked()
	}
	c.server = nil
	return nil
}

func (c *Cluster) killLocked() {
	if c.server == nil {
		return
	}
	_ = syscall.Kill(-c.server.Process.Pid, syscall.SIGKILL)
	<-c.exited
	c.server = nil
}

// Restart starts the server again after Stop, on the same socket.
func (c *Cluster) Restart() error {
	if c.external {
		return errors.New("pgtest: an external server (" + EnvDSN + ") is not restarted by tests")
	}
	// An immediate shutdown can leave the old postmaster's pid file for a
	// moment after it exited; postgres itself checks it is stale.
	return c.startServer()
}

// Close stops the server and removes the cluster's directory when Start
// made it.
func (c *Cluster) Close() error {
	if c.external {
		return nil
	}
	err := c.Stop()
	c.removeHome()
	return err
}

func (c *Cluster) removeHome() {
	if !strings.HasPrefix(c.socket, c.home) {
		os.RemoveAll(c.socket)
	}
	if c.ownHome {
		os.RemoveAll(c.home)
	}
}

// NotInstalledReason and InstallCommand are what a test skipped for want
// of PostgreSQL says.
const (
	NotInstalledReason = "PostgreSQL's server binaries (initdb, postgres) are not installed"
	InstallCommand     = "sudo apt-get install postgresql (or set " + EnvDSN + " to a server's DSN)"
)

// Require applies the skip policy to an error of Start: without
// PostgreSQL a test skips, saying how to install it, unless CI is set,
// where it fails, so CI never passes by skipping. Any other error fails tb.
func Require(tb testing.TB, err error) {
	tb.Helper()
	if errors.Is(err, ErrNotInstalled) {
		testenv.Skip(tb, NotInstalledReason, InstallCommand, err)
		return
	}
	tb.Fatal(err)
}

var shared struct {
	sync.Mutex
	c   *Cluster
	err error
}

// Shared returns the test binary's one cluster, starting it on first use
// (under os.TempDir()). Without PostgreSQL it skips tb, saying how to
// install it, unless CI is set, where it fails tb. Call StopShared from
// TestMain after m.Run to remove it; a test binary that dies without doing
// so still takes the server down with it.
func Shared(tb testing.TB) *Cluster {
	tb.Helper()
	shared.Lock()
	defer shared.Unlock()
	if shared.c == nil && shared.err == nil {
		shared.c, shared.err = Start("")
	}
	if shared.err != nil {
		Require(tb, shared.err)
	}
	return shared.c
}

// StopShared stops and removes the cluster Shared started, if any.
func StopShared() {
	shared.Lock()
	defer shared.Unlock()
	if shared.c != nil {
		shared.c.Close()
		shared.c = nil
	}
}
