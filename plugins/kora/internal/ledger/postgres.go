package ledger

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
)

// The PostgreSQL dialect: for deployments where several gateway replicas,
// on several machines, write one ledger. synchronous_commit is left as the
// server has it (on by default), so a commit returns only once its WAL is
// flushed.
func init() {
	registerDialect("postgres", openPostgres)
	registerDialect("postgresql", openPostgres)
}

// advisoryKey is the pg_advisory_xact_lock key that serialises Kora's
// migrations and imports on one database: the bytes "koraledg".
const advisoryKey int64 = 0x6b6f72616c656467

// postgresPool bounds one store's connections. A plugin process appends
// one record at a time per session; a few connections keep reports from
// waiting behind appends without taking many of a server's slots from
// the other replicas.
const (
	postgresMaxOpen = 8
	postgresMaxIdle = 4
)

// idleInTransactionTimeout ends the session of a process that stopped
// (but did not die) half-way through a transaction, so the locks it holds
// do not stop every other replica's appends for longer.
const idleInTransactionTimeout = 60 * time.Second

type postgresDialect struct {
	where string // host/db, for Describe and errors
}

func openPostgres(ctx context.Context, o Options, dsn string) (*sql.DB, dialect, error) {
	fail := func(kind ErrorKind, err error) (*sql.DB, dialect, error) {
		return nil, nil, &Error{Kind: kind, Backend: "postgres", Op: "open", Err: err}
	}
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		// The DSN may hold a password: say what is wrong, not what it is.
		var pce *pgconn.ParseConfigError
		if errors.As(err, &pce) && errors.Unwrap(pce) != nil {
			err = errors.Unwrap(pce)
		} else {
			err = errors.New("not a PostgreSQL connection URL")
		}
		return fail(KindUnavailable, fmt.Errorf("dsn: %v", err))
	}
	if _, ok := cfg.RuntimeParams["application_name"]; !ok {
		cfg.RuntimeParams["application_name"] = "kora"
	}
	cfg.RuntimeParams["idle_in_transaction_session_timeout"] = strconv.FormatInt(idleInTransactionTimeout.Milliseconds(), 10)
	d := &postgresDialect{where: postgresWhere(cfg)}
	fallback := o.LockTimeout
	if fallback <= 0 {
		fallback = DefaultLockTimeout
	}
	bound := func(ctx context.Context, conn *pgx.Conn) error {
		return boundWaits(ctx, conn, fallback)
	}
	db := stdlib.OpenDB(*cfg, stdlib.OptionAfterConnect(bound), stdlib.OptionResetSession(bound))
	db.SetMaxOpenConns(postgresMaxOpen)
	db.SetMaxIdleConns(postgresMaxIdle)
	db.SetConnMaxIdleTime(5 * time.Minute)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return fail(d.kind(err), fmt.Errorf("%s: %w", d.where, err))
	}
	return db, d, nil
}

// postgresWhere names the server and database without user or password:
// "host:port/db", the port left out when it is the default.
func postgresWhere(cfg *pgx.ConnConfig) string {
	host := cfg.Host
	if cfg.Port != 0 && cfg.Port != 5432 {
		host += ":" + strconv.Itoa(int(cfg.Port))
	}
	return host + "/" + cfg.Database
}

// boundWaits makes the server give up waiting for a lock, or running a
// statement, shortly before the caller's deadline, so that a wait ends
// with the server's own error (55P03, 57014) and its session stays usable
// rather than with the client closing the connection under a backend that
// keeps waiting. database/sql calls it with the ctx of each call as it
// hands the connection out, so every call gets its own deadline.
//
// Setting the timeouts costs a round trip, a tenth of an append, so they
// are set a little below the bound (9/10) and left alone while the value
// in force stays within the next call's bound and not far below it: with
// the store's usual fixed bound they are set once per connection.
func boundWaits(ctx context.Context, conn *pgx.Conn, fallback time.Duration) error {
	wait := fallback
	if dl, ok := ctx.Deadline(); ok {
		wait = time.Until(dl)
	}
	bound := max(wait-min(wait/10, 250*time.Millisecond), time.Millisecond)
	data := conn.PgConn().CustomData()
	if cur, ok := data[timeoutsKey].(timeouts); ok && cur.statement <= bound && cur.lock >= bound*4/5 {
		return nil
	}
	lock := max(bound*9/10, time.Millisecond)
	next := timeouts{lock: lock, statement: lock + (bound-lock)/2}
	delete(data, timeoutsKey)
	_, err := conn.Exec(ctx, "SELECT set_config('lock_timeout', $1, false), set_config('statement_timeout', $2, false)",
		strconv.FormatInt(next.lock.Milliseconds(), 10), strconv.FormatInt(max(next.statement.Milliseconds(), 1), 10))
	if err != nil {
		if conn.IsClosed() {
			return driver.ErrBadConn
		}
		return err
	}
	// The server takes whole milliseconds: record what it has.
	next.lock = next.lock.Truncate(time.Millisecond)
	next.statement = max(next.statement.Truncate(time.Millisecond), time.Millisecond)
	data[timeoutsKey] = next
	return nil
}

// timeoutsKey keeps, in a connection's custom data, the timeouts in force
// on its session.
const timeoutsKey = "kora.timeouts"

type timeouts struct{ lock, statement time.Duration }

func (d *postgresDialect) name() string     { return "postgres" }
func (d *postgresDialect) describe() string { return "postgres " + d.where }
func (d *postgresDialect) schema() string   { return schemaPostgres }
func (d *postgresDialect) maxFunc() string  { return "GREATEST" }

// rebind turns the shared statements' ? placeholders into $1, $2, ...,
// leaving quoted text and comments alone.
func (d *postgresDialect) rebind(query string) string {
	var b strings.Builder
	b.Grow(len(query) + 8)
	n := 0
	for i := 0; i < len(query); i++ {
		c := query[i]
		switch {
		case c == '?':
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		case c == '\'' || c == '"':
			end := strings.IndexByte(query[i+1:], c)
			if end < 0 {
				b.WriteString(query[i:])
				return b.String()
			}
			b.WriteString(query[i : i+end+2])
			i += end + 1
			continue
		case c == '-' && strings.HasPrefix(query[i:], "--"):
			end := strings.IndexByte(query[i:], '\n')
			if end < 0 {
				b.WriteString(query[i:])
				return b.String()
			}
			b.WriteString(query[i : i+end])
			i += end - 1
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// exclude takes a transaction-scoped advisory lock, released by the
// commit or rollback, so migrations and imports from several processes
// run one at a time. It needs no table, so it works on an empty database;
// its wait is bounded by lock_timeout like any other lock.
// moveRows deletes and inserts in one statement: each statement of a READ
// COMMITTED transaction sees a new snapshot, so a row added between a
// select and a delete would be deleted unmoved.
func (d *postgresDialect) moveRows(table, where string, insertFrom func(string) string) []string {
	return []string{"WITH moved AS (DELETE FROM " + table + " WHERE " + where + " RETURNING *) " + insertFrom("moved")}
}

func (d *postgresDialect) exclude(ctx context.Context, tx *sql.Tx) error {
	_, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock($1)", advisoryKey)
	return err
}

// kind classifies PostgreSQL's SQLSTATEs and the client's connection
// errors into the bridge's error kinds.
func (d *postgresDialect) kind(err error) ErrorKind {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return postgresCodeKind(pe.Code)
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return KindUnavailable
	}
	var ne net.Error
	switch {
	case errors.Is(err, driver.ErrBadConn), errors.Is(err, sql.ErrConnDone),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.EPIPE), errors.Is(err, syscall.ENOENT),
		errors.As(err, &ne) && !ne.Timeout(),
		strings.Contains(err.Error(), "conn closed"):
		return KindUnavailable
	case errors.Is(err, context.DeadlineExceeded), pgconn.Timeout(err):
		// The server was answering (a dead one fails the dial or the
		// read above), so the deadline passed while waiting behind
		// another session's lock, or for a connection of the pool.
		return KindLocked
	}
	return KindFailed
}

func postgresCodeKind(code string) ErrorKind {
	switch code {
	case "53100": // disk_full
		return KindFull
	case "25006": // read_only_sql_transaction
		return KindReadOnly
	case "42501": // insufficient_privilege: this role may not write here
		return KindReadOnly
	case "55P03", // lock_not_available (lock_timeout)
		"57014", // query_canceled (statement_timeout)
		"40P01", // deadlock_detected
		"40001": // serialization_failure
		return KindLocked
	case "XX001", "XX002": // data_corrupted, index_corrupted
		return KindCorrupt
	case "53300", // too_many_connections
		"57P01", "57P02", "57P03", "57P04", "57P05", // shutdown, crash, cannot connect now, database dropped, idle session timeout
		"3D000": // invalid_catalog_name: no such database
		return KindUnavailable
	case "25P03": // idle_in_transaction_session_timeout
		return KindUnavailable
	}
	// Other insufficient resources (53: out of memory, ...) and program
	// limits (54000) are failures of this call, not of the database.
	if len(code) >= 2 {
		switch code[:2] {
		case "08", // connection exception
			"28": // invalid authorization: a refused login
			return KindUnavailable
		}
	}
	return KindFailed
}
