package ledger

import (
	"context"
	"database/sql"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/hookhost/hookhost/plugins/kora/internal/pgtest"
)

// kindOf is the dialect's classification, "" for no error at all (which
// the store never asks it about).
func kindOf(d dialect, err error) ErrorKind {
	if err == nil {
		return ""
	}
	return d.kind(err)
}

func TestPostgresRebind(t *testing.T) {
	d := &postgresDialect{}
	for _, c := range []struct{ in, want string }{
		{"SELECT 1", "SELECT 1"},
		{"INSERT INTO t (a, b) VALUES (?, ?)", "INSERT INTO t (a, b) VALUES ($1, $2)"},
		{"SELECT '?', \"a?\" FROM t WHERE x = ? -- why?\nAND y = ?", "SELECT '?', \"a?\" FROM t WHERE x = $1 -- why?\nAND y = $2"},
		{"SELECT 'it''s ?' WHERE a = ?", "SELECT 'it''s ?' WHERE a = $1"},
		{"UPDATE t SET a = ? WHERE b IN (SELECT id FROM u LIMIT ?)", "UPDATE t SET a = $1 WHERE b IN (SELECT id FROM u LIMIT $2)"},
	} {
		if got := d.rebind(c.in); got != c.want {
			t.Errorf("rebind(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestPostgresCodeKinds(t *testing.T) {
	for code, want := range map[string]ErrorKind{
		"53100": KindFull, "25006": KindReadOnly, "55P03": KindLocked, "57014": KindLocked,
		"40P01": KindLocked, "XX001": KindCorrupt, "XX002": KindCorrupt, "08006": KindUnavailable,
		"57P01": KindUnavailable, "28P01": KindUnavailable, "3D000": KindUnavailable,
		"53200": KindFailed, "54000": KindFailed, "23505": KindFailed, "": KindFailed,
	} {
		if got := postgresCodeKind(code); got != want {
			t.Errorf("SQLSTATE %q: %s, want %s", code, got, want)
		}
	}
}

// TestPostgresDialect runs the dialect against a real server: what Open
// reports for servers it cannot use, and how the server's refusals are
// classified, before any of the store's code is involved.
func TestPostgresDialect(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a PostgreSQL cluster")
	}
	c, err := pgtest.Start("")
	if err != nil {
		pgtest.Require(t, err)
	}
	t.Cleanup(func() { c.Close() })
	ctx := context.Background()
	dsn := c.NewDatabase(t)
	open := func(t *testing.T, dsn string) (*sql.DB, dialect) {
		t.Helper()
		db, d, err := openPostgres(ctx, Options{LockTimeout: time.Second}, dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db, d
	}

	t.Run("describe names host and database, never the password", func(t *testing.T) {
		u, _ := url.Parse(dsn)
		u.User = url.UserPassword("postgres", "s3cret-pw")
		_, d := open(t, u.String()) // trust authentication ignores the password
		got := d.describe()
		if strings.Contains(got, "s3cret-pw") || !strings.HasPrefix(got, "postgres "+c.SocketDir()+"/kora_test_") {
			t.Fatalf("describe = %q", got)
		}
	})

	t.Run("closed days fold onto one row, exactly", func(t *testing.T) {
		testCompact(t, func(o Options) *sqlStore {
			o.DSN = c.NewDatabase(t)
			st, err := Open(ctx, o)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return st.(*sqlStore)
		})
	})

	t.Run("unreachable server is unavailable, password not in the error", func(t *testing.T) {
		bad := "postgres://kora:s3cret-pw@/nodb?host=" + url.QueryEscape(t.TempDir()) + "&connect_timeout=5"
		_, _, err := openPostgres(ctx, Options{}, bad)
		if KindOf(err) != KindUnavailable || strings.Contains(err.Error(), "s3cret-pw") {
			t.Fatalf("open: %v (kind %s)", err, KindOf(err))
		}
	})

	t.Run("missing database is unavailable", func(t *testing.T) {
		u, _ := url.Parse(dsn)
		u.Path = "/no_such_database"
		_, _, err := openPostgres(ctx, Options{}, u.String())
		if KindOf(err) != KindUnavailable || !strings.Contains(err.Error(), "no_such_database") {
			t.Fatalf("open: %v (kind %s)", err, KindOf(err))
		}
	})

	t.Run("malformed DSN is refused without echoing it", func(t *testing.T) {
		_, _, err := openPostgres(ctx, Options{}, "postgres://kora:s3cret-pw@host:notaport/db")
		if err == nil || strings.Contains(err.Error(), "s3cret-pw") {
			t.Fatalf("open: %v", err)
		}
	})

	db, d := open(t, dsn)
	if _, err := db.ExecContext(ctx, schemaPostgres); err != nil {
		t.Fatal(err)
	}

	t.Run("a lock held by another session ends as locked, by the server", func(t *testing.T) {
		holder, err := db.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer holder.Rollback()
		if _, err := holder.ExecContext(ctx, "LOCK TABLE tool_call_days IN ACCESS EXCLUSIVE MODE"); err != nil {
			t.Fatal(err)
		}
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		_, err = db.ExecContext(cctx, d.rebind("INSERT INTO tool_call_days (day, shard, tool_calls) VALUES (?, ?, ?)"), 1, 0, 1)
		var pe *pgconn.PgError
		if kindOf(d, err) != KindLocked || !errors.As(err, &pe) || pe.Code != "55P03" {
			t.Fatalf("insert behind a lock: %v (kind %s), want the server's lock_timeout (55P03)", err, kindOf(d, err))
		}
		// The pool's connection came back usable.
		if _, err := db.ExecContext(ctx, "SELECT 1"); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("the server's waits follow each call's deadline", func(t *testing.T) {
		slow, _, err := openPostgres(ctx, Options{LockTimeout: time.Minute}, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer slow.Close()
		setting := func(ctx context.Context, name string) time.Duration {
			t.Helper()
			var ms int64
			q := "SELECT CAST(setting AS BIGINT) FROM pg_settings WHERE name = '" + name + "'"
			if err := slow.QueryRowContext(ctx, q).Scan(&ms); err != nil {
				t.Fatal(err)
			}
			return time.Duration(ms) * time.Millisecond
		}
		for range 2 { // a new connection, then the same one handed out again
			cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			lock, stmt := setting(cctx, "lock_timeout"), setting(cctx, "statement_timeout")
			cancel()
			if lock <= 0 || lock > 10*time.Second || stmt < lock || stmt > 10*time.Second {
				t.Fatalf("with 10s left: lock_timeout %v, statement_timeout %v", lock, stmt)
			}
		}
		// No deadline (the store always sets one, but a connection the pool
		// opens in the background has none): Options.LockTimeout.
		if lock := setting(ctx, "lock_timeout"); lock <= 10*time.Second || lock > time.Minute {
			t.Fatalf("with no deadline: lock_timeout %v, want just under LockTimeout", lock)
		}
	})

	t.Run("exclusion is one process at a time", func(t *testing.T) {
		first, err := db.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer first.Rollback()
		if err := d.exclude(ctx, first); err != nil {
			t.Fatal(err)
		}
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		second, err := db.BeginTx(cctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer second.Rollback()
		if err := d.exclude(cctx, second); kindOf(d, err) != KindLocked {
			t.Fatalf("second exclude while the first holds it: %v", err)
		}
		first.Rollback()
		third, err := db.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer third.Rollback()
		if err := d.exclude(ctx, third); err != nil {
			t.Fatalf("exclude after the holder ended: %v", err)
		}
	})

	t.Run("read-only database", func(t *testing.T) {
		u, _ := url.Parse(dsn)
		q := u.Query()
		q.Set("default_transaction_read_only", "on")
		u.RawQuery = q.Encode()
		ro, d := open(t, u.String())
		_, err := ro.ExecContext(ctx, d.rebind("INSERT INTO tool_call_days (day, shard, tool_calls) VALUES (?, ?, ?)"), 2, 0, 1)
		if kindOf(d, err) != KindReadOnly {
			t.Fatalf("insert: %v (kind %s)", err, kindOf(d, err))
		}
	})

	t.Run("server stopped under an open pool", func(t *testing.T) {
		if err := c.Stop(); err != nil {
			t.Fatal(err)
		}
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		_, err := db.ExecContext(cctx, "SELECT 1")
		if kindOf(d, err) != KindUnavailable {
			t.Fatalf("query with the server down: %v (kind %s)", err, kindOf(d, err))
		}
		if err := c.Restart(); err != nil {
			t.Fatal(err)
		}
		if _, err := db.ExecContext(ctx, "SELECT 1"); err != nil {
			t.Fatalf("after restart: %v", err)
		}
	})
}
