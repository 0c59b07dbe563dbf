package ledger

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strings"
	"sync"
)

// dialect is what differs between the databases behind the one SQL store
// (sql.go). Everything else (the statements, the transactions, the
// reports, the import, retention) is shared, so a database is added by
// writing a dialect and registering an opener for its DSN scheme; the
// shared code is not touched.
//
// How the shared store uses a dialect:
//
//   - Statements are written once with ? placeholders and passed through
//     rebind when the store is opened (PostgreSQL: ? -> $1, $2, ...).
//     The SQL itself is portable: INSERT ... ON CONFLICT (...) DO UPDATE
//     SET x = x + excluded.x, ORDER BY id DESC LIMIT ?, keyset pages
//     WHERE id > ? ORDER BY id LIMIT ?, DELETE ... WHERE id IN (SELECT id
//     ... LIMIT ?). Every integer is read into an int64.
//   - The day-total upsert keeps unpriced as the larger of the stored and
//     the new flag with maxFunc (SQLite max(a, b), PostgreSQL GREATEST).
//   - schema is run, inside the migration transaction, when kora_meta has
//     no schema_version (a new database); it must be idempotent (CREATE
//     ... IF NOT EXISTS) because two processes may race to create it.
//   - Write transactions are sql.Tx from db.BeginTx(ctx, nil); reports use
//     BeginTx(ctx, &sql.TxOptions{ReadOnly: true}) for one consistent
//     snapshot of totals and details. A write transaction must take its
//     write lock when it begins (SQLite BEGIN IMMEDIATE via the driver's
//     _txlock=immediate), so two writers never deadlock upgrading a read
//     lock; PostgreSQL's row locks already do.
//   - exclude is called first in the transactions that migrate the schema
//     and that import a batch of JSONL lines. It returns once no other
//     process can run the same kind of transaction until this one ends
//     (SQLite: nothing to do, BEGIN IMMEDIATE already holds the only write
//     lock; PostgreSQL: pg_advisory_xact_lock on a fixed key). It must
//     work before the tables exist.
//   - kind classifies a failure of the driver into the bridge's error
//     kinds. The store wraps it as &Error{Kind: kind(err), Backend:
//     name(), Op: op, Err: err}. Context errors arrive here too: a
//     deadline that passed while waiting for a lock is KindLocked, one
//     that passed while waiting for a server KindUnavailable. Unknown
//     errors are KindFailed. kind is never called with nil.
//   - Every call runs under a ctx that has a deadline: the store bounds a
//     caller's ctx without one by Options.LockTimeout before calling the
//     driver, so a dialect needs no timeout of its own for that.
//
// An opener (see registerDialect) gets the caller's ctx, the Options and
// the DSN as the operator wrote it (for SQLite, Open has already turned
// "" into "sqlite:<StateDir>/ledger.db"). It opens and pings the
// database, sets the connection pool up, and returns an *Error (Op
// "open", with its Kind) on failure; it must not put a password in any
// error or in describe.
type dialect interface {
	// name is the backend in errors and logs: "sqlite" or "postgres".
	name() string
	// describe is Store.Describe: "sqlite <path>", "postgres <host>/<db>".
	describe() string
	// schema is the DDL of SchemaVersion (schemaSQLite, schemaPostgres).
	schema() string
	// rebind rewrites the ? placeholders of query into the database's.
	rebind(query string) string
	// maxFunc is the SQL function of two integers returning the larger.
	maxFunc() string
	// exclude serialises migrations and imports between processes.
	exclude(ctx context.Context, tx *sql.Tx) error
	// moveRows returns the statements that delete the rows of table
	// matching where and insert what insertFrom makes of exactly those
	// rows (insertFrom's argument is what goes after FROM), in one
	// transaction. Where one write transaction excludes every other
	// writer, that may be a select then a delete; where it does not, the
	// rows inserted must be the rows deleted, in one statement.
	moveRows(table, where string, insertFrom func(source string) string) []string
	// kind classifies a driver error.
	kind(err error) ErrorKind
}

// dialectOpener opens the database a DSN names; see dialect.
type dialectOpener func(ctx context.Context, o Options, dsn string) (*sql.DB, dialect, error)

var (
	dialectsMu sync.Mutex
	dialects   = map[string]dialectOpener{}
)

// registerDialect makes Open hand DSNs that start with scheme + ":" to
// open. The SQLite and PostgreSQL files call it from their init; a second
// registration of one scheme is a programming error and panics.
func registerDialect(scheme string, open dialectOpener) {
	dialectsMu.Lock()
	defer dialectsMu.Unlock()
	scheme = strings.ToLower(scheme)
	if _, dup := dialects[scheme]; dup {
		panic("ledger: dialect registered twice for scheme " + scheme)
	}
	dialects[scheme] = open
}

// openerFor finds the opener of dsn's scheme: the text before the first
// ":", compared without case.
func openerFor(dsn string) (dialectOpener, bool) {
	scheme, _, ok := strings.Cut(dsn, ":")
	if !ok {
		return nil, false
	}
	dialectsMu.Lock()
	defer dialectsMu.Unlock()
	open, ok := dialects[strings.ToLower(scheme)]
	return open, ok
}

// acceptedDSNs lists the DSN forms Open understands, for the error that
// rejects a DSN.
func acceptedDSNs() string {
	forms := []string{`"" (SQLite in the state directory)`, `"sqlite:<path>"`, `"postgres://..."`, `"postgresql://..."`}
	dialectsMu.Lock()
	defer dialectsMu.Unlock()
	var extra []string
	for scheme := range dialects {
		switch scheme {
		case "sqlite", "postgres", "postgresql":
		default:
			extra = append(extra, fmt.Sprintf("%q", scheme+":..."))
		}
	}
	sort.Strings(extra)
	return strings.Join(append(forms, extra...), ", ")
}
