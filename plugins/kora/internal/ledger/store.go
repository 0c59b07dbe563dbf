package ledger

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Store is Kora's ledger on a database: the inference ledger and the
// tool-call audit, and the reports over them, computed by the database.
// Two implementations exist, chosen by Options.DSN: embedded SQLite (the
// default, a file in the state directory) and PostgreSQL.
//
// Rules every implementation keeps, which Kora and its tests rely on:
//
//   - An append returns nil only once the record is committed with the
//     durability the store was opened with (SQLite synchronous=FULL in WAL
//     mode, PostgreSQL synchronous_commit=on by default), so an
//     acknowledged record survives a crash of the plugin or of the machine.
//   - Each append is one transaction that inserts the record and adds it
//     to its day's totals (inference_days, tool_call_days), so totals and
//     details never disagree, and several processes appending at once
//     never lose or tear a record.
//   - Every call honours ctx: waiting for a lock or a server never
//     outlives the caller's deadline, and with no deadline is bounded by
//     Options.LockTimeout.
//   - A failure is an *Error whose Kind says what the database did
//     (locked, full, read-only, corrupt, unavailable), so the bridge can
//     answer kora_tool_dispatch_error: <kind>.
//   - Reports read in memory bounded by their answer, never by the
//     history: burn is a sum over daily totals plus at most one day of
//     details; the tails are an indexed LIMIT.
type Store interface {
	// AppendInference durably records one model call. A zero Time is
	// stamped with the store's clock, to the millisecond.
	AppendInference(ctx context.Context, rec Inference) error
	// AppendToolCall durably records one tool call. A zero Time is stamped
	// as for inferences.
	AppendToolCall(ctx context.Context, rec ToolCall) error
	// AppendBatch durably records several inferences and tool calls in one
	// transaction: all of them, each stream in the order given, or none.
	// Zero Times are stamped as for single appends. One commit (one sync
	// of the log) for many records is what lets a busy Kora keep up.
	AppendBatch(ctx context.Context, infs []Inference, calls []ToolCall) error

	// Burn totals the inferences recorded at or after since (the zero
	// time: all time), one group per model and route. It stays exact
	// after retention removed the details, because the daily totals are
	// kept forever; since must not be older than the retention horizon
	// unless it falls on a UTC day boundary.
	Burn(ctx context.Context, since time.Time) ([]BurnGroup, error)
	// RecentInferences returns up to limit inferences, newest first, and
	// how many were ever recorded (retained or rolled up).
	RecentInferences(ctx context.Context, limit int) (recs []Inference, total int64, err error)
	// RecentToolCalls returns up to limit tool calls, newest first, and how
	// many were ever recorded.
	RecentToolCalls(ctx context.Context, limit int) (recs []ToolCall, total int64, err error)

	// ExportToolCalls calls fn for every retained tool call recorded at or
	// after since, oldest first, reading in batches so memory stays
	// bounded. An error from fn stops the export and is returned as is.
	ExportToolCalls(ctx context.Context, since time.Time, fn func(ToolCall) error) error
	// ExportInferences does the same for inferences.
	ExportInferences(ctx context.Context, since time.Time, fn func(Inference) error) error

	// ImportJSONL imports the JSONL ledger files (InferencesFile and
	// ToolCallsFile) of a state directory written by earlier versions of
	// Kora. It is idempotent and resumable: progress is committed with
	// each batch, so a crash half-way and a rerun leave exactly one copy of
	// each record, and a rerun imports only lines appended since. The
	// files are only read, never changed. Open calls it for
	// Options.StateDir.
	ImportJSONL(ctx context.Context, dir string) (ImportStats, error)

	// Prune deletes the detailed records older than before (rounded down to
	// a UTC day boundary; the zero time deletes nothing). Daily totals are
	// kept, so reports over all time stay exact; the shards of days that
	// are over are folded into one row each, so those reports stay fast.
	// Open folds them too. It works in bounded batches so appends from other
	// processes are not held up for long.
	Prune(ctx context.Context, before time.Time) (PruneStats, error)

	// Describe says which database this is, for logs: "sqlite <path>" or
	// "postgres <host>/<db>", never a password.
	Describe() string
	// Close releases the database. Calls after Close fail.
	Close() error
}

// Totals is the spend of a set of inferences. Cost is kept in
// nano-dollars (1e-9 USD), an integer, so that sums are exact in any order
// and daily totals always equal the records they summarise.
type Totals struct {
	Inferences   int64
	Escalated    int64
	InputTokens  int64
	OutputTokens int64
	CostNanoUSD  int64
}

// BurnGroup is the spend of one model on one route.
type BurnGroup struct {
	Model string
	Route string
	Totals
	// Unpriced is set when any of the group's inferences had no price.
	Unpriced bool
}

// NanoUSD converts dollars to the ledger's integer nano-dollars, rounding
// to the nearest.
func NanoUSD(usd float64) int64 {
	if usd >= 0 {
		return int64(usd*1e9 + 0.5)
	}
	return -int64(-usd*1e9 + 0.5)
}

// USD converts nano-dollars back to dollars.
func USD(nano int64) float64 { return float64(nano) / 1e9 }

// ImportStats says what ImportJSONL did.
type ImportStats struct {
	Inferences int // records imported by this run
	ToolCalls  int
	Skipped    int // corrupt or torn lines left out (each logged at WARN)
}

// PruneStats says what Prune deleted.
type PruneStats struct {
	Inferences int64
	ToolCalls  int64
}

// Options opens a Store.
type Options struct {
	// DSN picks the database: "" for SQLite in StateDir/ledger.db,
	// "sqlite:<path>" for SQLite elsewhere, or a PostgreSQL URL
	// ("postgres://..." or "postgresql://...").
	DSN string
	// StateDir is Kora's state directory: the default SQLite file's home
	// and where JSONL files from earlier versions are imported from.
	StateDir string
	// Synchronous is SQLite's durability: SyncFull (the default) survives
	// a machine crash; SyncNormal survives a crash of the plugin only.
	// PostgreSQL ignores it.
	Synchronous string
	// LockTimeout bounds a wait for a lock or a server when the caller's
	// ctx has no deadline. Default DefaultLockTimeout.
	LockTimeout time.Duration
	// Now stamps records that arrive without a time; tests replace it.
	Now func() time.Time
	// Log receives the store's warnings and errors; nil discards them.
	Log Logger
}

// Synchronous settings of SQLite.
const (
	SyncFull   = "full"
	SyncNormal = "normal"
)

// DefaultLockTimeout bounds lock waits when the caller gives no deadline.
const DefaultLockTimeout = 5 * time.Second

// DefaultSQLiteFile is the database's name inside the state directory.
const DefaultSQLiteFile = "ledger.db"

// Logger is the part of hclog.Logger the store uses.
type Logger interface {
	Debug(msg string, args ...any)
	Info(msg string, args ...any)
	Warn(msg string, args ...any)
	Error(msg string, args ...any)
}

// ErrorKind says what went wrong with the database, in the words of the
// bridge's kora_tool_dispatch_error results.
type ErrorKind string

// Error kinds. Each is the <kind> of the bridge's error result.
const (
	// KindLocked: another process held the database past the lock timeout
	// or the caller's deadline.
	KindLocked ErrorKind = "ledger_locked"
	// KindFull: the disk or the database's quota is full.
	KindFull ErrorKind = "ledger_full"
	// KindReadOnly: the database or its directory cannot be written.
	KindReadOnly ErrorKind = "ledger_read_only"
	// KindCorrupt: the file is not a database or its pages are damaged.
	KindCorrupt ErrorKind = "ledger_corrupt"
	// KindUnavailable: the database cannot be opened or reached (a
	// PostgreSQL server down, a missing directory, a refused login).
	KindUnavailable ErrorKind = "ledger_unavailable"
	// KindSchema: the database was written by a newer Kora (a schema
	// version this one does not know).
	KindSchema ErrorKind = "ledger_schema"
	// KindFailed: any other database failure.
	KindFailed ErrorKind = "ledger_failed"
)

// Error is a failure of the ledger's database.
type Error struct {
	Kind    ErrorKind
	Backend string // "sqlite" or "postgres"
	Op      string // what the store was doing: "append inference", "burn", "open", ...
	Err     error
}

func (e *Error) Error() string {
	return fmt.Sprintf("kora: ledger (%s): %s: %s: %v", e.Backend, e.Op, e.Kind, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// KindOf returns the kind of a ledger error, KindFailed for any other error
// and "" for nil.
func KindOf(err error) ErrorKind {
	if err == nil {
		return ""
	}
	var le *Error
	if errors.As(err, &le) {
		return le.Kind
	}
	return KindFailed
}

// Open opens (creating and migrating when needed) the database o.DSN
// names, then imports the JSONL files of o.StateDir that earlier versions
// of Kora wrote, once. A DSN Kora cannot use is an error naming it; a
// database that cannot be opened is an *Error with its kind.
func Open(ctx context.Context, o Options) (Store, error) {
	return open(ctx, o)
}
