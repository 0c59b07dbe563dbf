package kora

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/hookhost/hookhost/plugins/kora/internal/ledger"
)

// Pacing of lazyStore, variables so that tests can drive them.
var (
	// reopenEvery is the least time between two attempts to open a
	// database that failed to open, so a broken ledger costs each tool
	// call an error, not a fresh open.
	reopenEvery = 3 * time.Second
	// relogEvery is the least time between two ERROR lines for the same
	// kind of ledger failure; the ones in between go to DEBUG.
	relogEvery = time.Minute
)

// lazyStore is the ledger Kora uses: a ledger.Store that opens its
// database on first use and again after it failed, so that a database
// fixed while Kora runs (unlocked, given space, replaced) is picked up
// without a restart. Until then every call fails with the open's error,
// whose kind the bridge reports.
type lazyStore struct {
	opts ledger.Options
	log  hclog.Logger
	now  func() time.Time

	// sem is a one-slot lock that a waiter can give up on when its ctx
	// ends, which sync.Mutex cannot.
	sem     chan struct{}
	store   ledger.Store // nil until an open succeeds, and after Close
	closed  bool
	lastTry time.Time
	lastErr error

	logMu  sync.Mutex
	logged map[ledger.ErrorKind]time.Time
}

func newLazyStore(opts ledger.Options, log hclog.Logger) *lazyStore {
	return &lazyStore{opts: opts, log: log, now: time.Now, sem: make(chan struct{}, 1), logged: map[ledger.ErrorKind]time.Time{}}
}

var errClosed = errors.New("kora: ledger: closed (Kora is shutting down)")

// get returns the open store, opening it if it is time to try again.
func (l *lazyStore) get(ctx context.Context) (ledger.Store, error) { return l.open(ctx, false) }

// open is get; now skips the pacing between attempts.
func (l *lazyStore) open(ctx context.Context, now bool) (ledger.Store, error) {
	select {
	case l.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, &ledger.Error{Kind: ledger.KindLocked, Backend: l.backend(), Op: "open",
			Err: errors.New("the database is still being opened (the first start on a state directory of an earlier version imports its JSONL files, which can take a while): " + ctx.Err().Error())}
	}
	defer func() { <-l.sem }()
	switch {
	case l.closed:
		return nil, errClosed
	case l.store != nil:
		return l.store, nil
	case !now && l.lastErr != nil && l.now().Sub(l.lastTry) < reopenEvery:
		return nil, l.lastErr
	}
	l.lastTry = l.now()
	s, err := ledger.Open(ctx, l.opts)
	if err != nil {
		l.lastErr = err
		l.report("open", err)
		return nil, err
	}
	if l.lastErr != nil {
		l.log.Info("ledger: database open again after failing", "database", s.Describe())
	} else {
		l.log.Debug("ledger: database open", "database", s.Describe())
	}
	l.lastErr, l.store = nil, s
	return s, nil
}

// fail reports err, and forgets a store whose database turned out to be
// corrupt or of a newer schema, so the next use opens the file afresh: the
// operator's fix is usually to put a good file in its place.
func (l *lazyStore) fail(op string, s ledger.Store, err error) error {
	if err == nil {
		return nil
	}
	l.report(op, err)
	switch ledger.KindOf(err) {
	case ledger.KindCorrupt, ledger.KindSchema:
		l.sem <- struct{}{}
		if l.store == s {
			l.store = nil
			l.lastErr, l.lastTry = err, l.now()
			go s.Close() // calls still running on it fail on their own
		}
		<-l.sem
	}
	return err
}

// report logs a ledger failure at ERROR with what to do, once per kind per
// relogEvery; repeats go to DEBUG so a broken ledger does not flood the
// host's log with one line per tool call.
func (l *lazyStore) report(op string, err error) {
	kind := ledger.KindOf(err)
	now := l.now()
	l.logMu.Lock()
	last, seen := l.logged[kind]
	loud := !seen || now.Sub(last) >= relogEvery
	if loud {
		l.logged[kind] = now
	}
	l.logMu.Unlock()
	args := []any{"kind", string(kind), "backend", l.backend(), "op", op, "error", err.Error()}
	if !loud {
		l.log.Debug("ledger: failing", args...)
		return
	}
	args = append(args, "fix", remedy(kind))
	l.log.Error("ledger: failing; Kora stays up, its tools answer kora_tool_dispatch_error and records wait in memory until the database works (retried, no restart needed)", args...)
}

// remedy says what an operator does about each kind of failure.
func remedy(kind ledger.ErrorKind) string {
	switch kind {
	case ledger.KindLocked:
		return "another process holds the database locked: find it (another Kora, a sqlite3 shell in a transaction) and let it finish"
	case ledger.KindFull:
		return "the disk or the database's quota is full: free space or raise the quota"
	case ledger.KindReadOnly:
		return "the database or its directory cannot be written: check permissions, the mount and the PostgreSQL role"
	case ledger.KindCorrupt:
		return "the database file is damaged: move it aside (Kora starts a new one) or restore it from a backup; the JSONL files of earlier versions are imported again"
	case ledger.KindUnavailable:
		return "the database cannot be reached: check the DSN (ledger.dsn or ledger.dsn_env), that the server is up and the login works"
	case ledger.KindSchema:
		return "the database was written by a newer Kora: run that version, or point this one at another database"
	}
	return "see the error; the database is retried on the next use"
}

func (l *lazyStore) backend() string {
	if l.opts.DSN == "" || len(l.opts.DSN) >= 7 && l.opts.DSN[:7] == "sqlite:" {
		return "sqlite"
	}
	return "postgres"
}

func (l *lazyStore) AppendInference(ctx context.Context, rec ledger.Inference) error {
	s, err := l.get(ctx)
	if err != nil {
		return err
	}
	return l.fail("append inference", s, s.AppendInference(ctx, rec))
}

func (l *lazyStore) AppendToolCall(ctx context.Context, rec ledger.ToolCall) error {
	s, err := l.get(ctx)
	if err != nil {
		return err
	}
	return l.fail("append tool call", s, s.AppendToolCall(ctx, rec))
}

func (l *lazyStore) AppendBatch(ctx context.Context, infs []ledger.Inference, calls []ledger.ToolCall) error {
	s, err := l.get(ctx)
	if err != nil {
		return err
	}
	return l.fail("append batch", s, s.AppendBatch(ctx, infs, calls))
}

func (l *lazyStore) Burn(ctx context.Context, since time.Time) ([]ledger.BurnGroup, error) {
	s, err := l.get(ctx)
	if err != nil {
		return nil, err
	}
	g, err := s.Burn(ctx, since)
	return g, l.fail("burn", s, err)
}

func (l *lazyStore) RecentInferences(ctx context.Context, limit int) ([]ledger.Inference, int64, error) {
	s, err := l.get(ctx)
	if err != nil {
		return nil, 0, err
	}
	recs, total, err := s.RecentInferences(ctx, limit)
	return recs, total, l.fail("recent inferences", s, err)
}

func (l *lazyStore) RecentToolCalls(ctx context.Context, limit int) ([]ledger.ToolCall, int64, error) {
	s, err := l.get(ctx)
	if err != nil {
		return nil, 0, err
	}
	recs, total, err := s.RecentToolCalls(ctx, limit)
	return recs, total, l.fail("recent tool calls", s, err)
}

func (l *lazyStore) ExportToolCalls(ctx context.Context, since time.Time, fn func(ledger.ToolCall) error) error {
	s, err := l.get(ctx)
	if err != nil {
		return err
	}
	return l.fail("export tool calls", s, s.ExportToolCalls(ctx, since, fn))
}

func (l *lazyStore) ExportInferences(ctx context.Context, since time.Time, fn func(ledger.Inference) error) error {
	s, err := l.get(ctx)
	if err != nil {
		return err
	}
	return l.fail("export inferences", s, s.ExportInferences(ctx, since, fn))
}

func (l *lazyStore) ImportJSONL(ctx context.Context, dir string) (ledger.ImportStats, error) {
	s, err := l.get(ctx)
	if err != nil {
		return ledger.ImportStats{}, err
	}
	st, err := s.ImportJSONL(ctx, dir)
	return st, l.fail("import JSONL", s, err)
}

func (l *lazyStore) Prune(ctx context.Context, before time.Time) (ledger.PruneStats, error) {
	s, err := l.get(ctx)
	if err != nil {
		return ledger.PruneStats{}, err
	}
	st, err := s.Prune(ctx, before)
	return st, l.fail("prune", s, err)
}

// Describe names the database whether or not it is open, without
// waiting for an open in progress.
func (l *lazyStore) Describe() string {
	select {
	case l.sem <- struct{}{}:
	default:
		return l.backend() + " (being opened)"
	}
	defer func() { <-l.sem }()
	if l.store != nil {
		return l.store.Describe()
	}
	return l.backend() + " (not open)"
}

// Close closes the database, if open; later calls fail.
func (l *lazyStore) Close() error {
	l.sem <- struct{}{}
	defer func() { <-l.sem }()
	l.closed = true
	if l.store == nil {
		return nil
	}
	s := l.store
	l.store = nil
	return s.Close()
}

var _ ledger.Store = (*lazyStore)(nil)
