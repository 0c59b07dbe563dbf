package ledger

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

func init() { registerDialect("sqlite", openSQLite) }

// SQLite connection settings, for every connection of the pool:
//
//   - WAL, so that reports read while another process appends; it is
//     persistent in the file, set once by the first Open.
//   - synchronous FULL (the default) fsyncs the WAL at every commit, so an
//     acknowledged record survives a machine crash; NORMAL fsyncs only at
//     checkpoints, so a machine crash may lose the last commits (a crash
//     of the plugin alone loses nothing) but appends cost no fsync.
//   - _txlock=immediate: every write transaction takes the write lock at
//     BEGIN, so two writers never deadlock upgrading read locks (which
//     SQLite would answer with an immediate SQLITE_BUSY).
//   - busy_timeout bounds every wait for a lock, including the ones the
//     driver makes outside any call's ctx (opening a connection); the
//     driver also ends a wait as soon as the call's ctx is done.
//   - A 2 MB page cache per connection and no mmap, so that a report's
//     memory is the answer's, not the file's.
const (
	sqliteCacheKiB = 2048
	sqliteMaxConns = 4
)

// sqliteDialect is SQLite through modernc.org/sqlite.
type sqliteDialect struct {
	path string
}

func openSQLite(ctx context.Context, o Options, dsn string) (*sql.DB, dialect, error) {
	_, path, _ := strings.Cut(dsn, ":")
	d := &sqliteDialect{path: path}
	fail := func(err error) (*sql.DB, dialect, error) {
		return nil, nil, &Error{Kind: d.kind(err), Backend: d.name(), Op: "open", Err: err}
	}
	if path == "" {
		return fail(errors.New("empty path in DSN sqlite:<path>"))
	}
	if strings.ContainsAny(path, "?#") {
		return fail(fmt.Errorf("path %q contains ? or #, which SQLite's file names cannot carry", path))
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fail(err)
	}
	sync := "FULL"
	switch strings.ToLower(o.Synchronous) {
	case "", SyncFull:
	case SyncNormal:
		sync = "NORMAL"
	default:
		return nil, nil, fmt.Errorf("kora: ledger (sqlite): synchronous %q: want %q or %q", o.Synchronous, SyncFull, SyncNormal)
	}
	q := url.Values{}
	q.Set("_txlock", "immediate")
	q.Set("_busy_timeout", fmt.Sprint(o.LockTimeout.Milliseconds()))
	pragmas := []string{
		"synchronous=" + sync,
		fmt.Sprintf("cache_size=-%d", sqliteCacheKiB),
		"mmap_size=0",
		"temp_store=FILE",
	}
	// The path is a plain file name (no URI), so it needs no escaping;
	// the driver splits the parameters off at the first ?.
	db := newSQLiteDB(path+"?"+q.Encode(), pragmas)
	err := d.enableWAL(ctx, db)
	if err != nil && d.kind(err) == KindReadOnly && d.readableAsIs() {
		// SQLite cannot open a WAL database whose directory it cannot
		// write (it needs the -shm file). With no WAL content left to
		// read, the file alone is the whole database: open it as an
		// immutable read-only file so reports keep working and appends
		// fail as read-only.
		db.Close()
		u := url.URL{Path: path}
		ro := url.Values{}
		ro.Set("mode", "ro")
		ro.Set("immutable", "1")
		db = newSQLiteDB("file:"+u.EscapedPath()+"?"+ro.Encode()+"&"+q.Encode(), pragmas[1:])
		if err = db.PingContext(ctx); err == nil {
			o.Log.Warn("ledger: the database cannot be written; reports only, every append fails (ledger_read_only)", "path", path)
		}
	}
	if err != nil {
		db.Close()
		return fail(err)
	}
	return db, d, nil
}

func newSQLiteDB(dsn string, pragmas []string) *sql.DB {
	db := sql.OpenDB(&sqliteConnector{dsn: dsn, pragmas: pragmas})
	db.SetMaxOpenConns(sqliteMaxConns)
	db.SetMaxIdleConns(sqliteMaxConns)
	db.SetConnMaxIdleTime(time.Minute)
	return db
}

// readableAsIs reports whether the database file exists and no WAL
// content waits to be checkpointed into it.
func (d *sqliteDialect) readableAsIs() bool {
	if fi, err := os.Stat(d.path); err != nil || fi.Size() == 0 {
		return false
	}
	fi, err := os.Stat(d.path + "-wal")
	return errors.Is(err, fs.ErrNotExist) || (err == nil && fi.Size() == 0)
}

// enableWAL switches the file to WAL unless it already is. A read-only
// database keeps whatever mode it has: reports still work.
func (d *sqliteDialect) enableWAL(ctx context.Context, db *sql.DB) error {
	var mode string
	if err := db.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return err
	}
	if strings.EqualFold(mode, "wal") {
		return nil
	}
	if err := db.QueryRowContext(ctx, "PRAGMA journal_mode=WAL").Scan(&mode); err != nil {
		if d.kind(err) == KindReadOnly {
			return nil
		}
		return err
	}
	return nil
}

// sqliteConnector opens connections and sets them up under the ctx of the
// call that needs one. The driver runs the pragmas of its DSN without any
// ctx, and some of them wait for a lock (reading the schema) for the whole
// busy timeout, so only busy_timeout and the transaction mode go there.
type sqliteConnector struct {
	dsn     string
	pragmas []string
}

var sqliteDriver = func() driver.Driver {
	db, _ := sql.Open("sqlite", "")
	defer db.Close()
	return db.Driver()
}()

func (c *sqliteConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := sqliteDriver.Open(c.dsn)
	if err != nil {
		return nil, err
	}
	ex, ok := conn.(driver.ExecerContext)
	if !ok {
		conn.Close()
		return nil, errors.New("the sqlite driver cannot execute statements with a context")
	}
	for _, p := range c.pragmas {
		if _, err := ex.ExecContext(ctx, "PRAGMA "+p, nil); err != nil {
			conn.Close()
			return nil, err
		}
	}
	return conn, nil
}

func (c *sqliteConnector) Driver() driver.Driver { return sqliteDriver }

func (d *sqliteDialect) name() string               { return "sqlite" }
func (d *sqliteDialect) describe() string           { return "sqlite " + d.path }
func (d *sqliteDialect) schema() string             { return schemaSQLite }
func (d *sqliteDialect) rebind(query string) string { return query }
func (d *sqliteDialect) maxFunc() string            { return "max" }

// exclude has nothing to do: the transaction began IMMEDIATE, so it holds
// the database's only write lock.
func (d *sqliteDialect) exclude(context.Context, *sql.Tx) error { return nil }

// moveRows can select then delete: the transaction holds the only write
// lock, so no row arrives in between.
func (d *sqliteDialect) moveRows(table, where string, insertFrom func(string) string) []string {
	return []string{insertFrom(table + " WHERE " + where), "DELETE FROM " + table + " WHERE " + where}
}

func (d *sqliteDialect) kind(err error) ErrorKind {
	if errors.Is(err, context.DeadlineExceeded) {
		// Every wait SQLite makes is for a lock.
		return KindLocked
	}
	var se *sqlite.Error
	if !errors.As(err, &se) {
		switch {
		case errors.Is(err, fs.ErrPermission), errors.Is(err, syscall.EROFS):
			return KindReadOnly
		case errors.Is(err, syscall.ENOSPC):
			return KindFull
		case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
			return KindUnavailable
		}
		return KindFailed
	}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
		return KindLocked
	case sqlite3.SQLITE_FULL:
		return KindFull
	case sqlite3.SQLITE_READONLY, sqlite3.SQLITE_PERM:
		return KindReadOnly
	case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
		return KindCorrupt
	case sqlite3.SQLITE_CANTOPEN:
		if d.cannotWrite() {
			return KindReadOnly
		}
		return KindUnavailable
	case sqlite3.SQLITE_IOERR:
		// SQLite turns a short write into SQLITE_FULL itself, but an
		// fsync, truncate or WAL-index growth failing for want of space
		// arrives as an I/O error; the file system says which it was.
		if d.diskFull() {
			return KindFull
		}
		if d.cannotWrite() {
			return KindReadOnly
		}
	}
	return KindFailed
}
