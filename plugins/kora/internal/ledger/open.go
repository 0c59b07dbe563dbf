package ledger

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"
)

func open(ctx context.Context, o Options) (Store, error) {
	if o.LockTimeout <= 0 {
		o.LockTimeout = DefaultLockTimeout
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = nopLogger{}
	}
	dsn := o.DSN
	if dsn == "" {
		if o.StateDir == "" {
			return nil, errors.New("kora: ledger: no DSN and no state directory to keep the default SQLite database in")
		}
		dsn = "sqlite:" + filepath.Join(o.StateDir, DefaultSQLiteFile)
	}
	opener, ok := openerFor(dsn)
	if !ok {
		scheme, _, _ := strings.Cut(dsn, ":")
		switch strings.ToLower(scheme) {
		case "postgres", "postgresql":
			return nil, fmt.Errorf("kora: ledger: dsn %s: this build of Kora has no PostgreSQL support", redactDSN(dsn))
		}
		return nil, fmt.Errorf("kora: ledger: dsn %s: not a DSN Kora can use; accepted forms: %s", redactDSN(dsn), acceptedDSNs())
	}
	if o.StateDir != "" {
		if err := os.MkdirAll(o.StateDir, 0o700); err != nil {
			return nil, fmt.Errorf("kora: ledger: state directory %s: %w", o.StateDir, err)
		}
	}
	bctx, cancel := context.WithTimeout(ctx, o.LockTimeout)
	if _, ok := ctx.Deadline(); ok {
		bctx, cancel = context.WithCancel(ctx)
	}
	defer cancel()
	var s *sqlStore
	var err error
	for {
		s, err = setUp(bctx, opener, o, dsn)
		if err == nil || KindOf(err) != KindLocked || bctx.Err() != nil {
			break
		}
		// Several processes opening a new SQLite database at once: SQLite
		// answers some steps of setting it up (switching it to WAL, its
		// first schema read while another process writes the schema) with
		// "database is locked" at once rather than after its busy timeout.
		// Those are waits like any other: try again until the deadline.
		select {
		case <-bctx.Done():
		case <-time.After(time.Duration(5+rand.IntN(20)) * time.Millisecond):
		}
	}
	if err != nil {
		return nil, err
	}
	db := s.db
	if o.StateDir != "" && hasJSONL(o.StateDir) {
		st, err := s.ImportJSONL(ctx, o.StateDir)
		if err != nil {
			db.Close()
			return nil, err
		}
		if st.Inferences+st.ToolCalls+st.Skipped > 0 {
			o.Log.Info("ledger: imported JSONL files", "dir", o.StateDir, "inferences", st.Inferences,
				"tool_calls", st.ToolCalls, "skipped", st.Skipped)
		}
	}
	// Only speed depends on it, so a store that cannot compact now (a
	// writer holding the lock) still opens; Prune tries again.
	if err := s.compactDays(ctx); err != nil {
		o.Log.Warn("ledger: folding closed days' totals failed; retried by the next retention pass", "error", s.fail("compact", err).Error())
	}
	return s, nil
}

// setUp opens the database and brings its schema up to date.
func setUp(ctx context.Context, opener dialectOpener, o Options, dsn string) (*sqlStore, error) {
	db, d, err := opener(ctx, o, dsn)
	if err != nil {
		return nil, err
	}
	s := newSQLStore(db, d, o)
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

func hasJSONL(dir string) bool {
	for _, name := range []string{InferencesFile, ToolCallsFile} {
		if _, err := os.Stat(filepath.Join(dir, name)); !errors.Is(err, fs.ErrNotExist) {
			return true
		}
	}
	return false
}

// redactDSN hides a password in a URL DSN (user:pass@ and password=).
func redactDSN(dsn string) string {
	if u, err := url.Parse(dsn); err == nil && u.Scheme != "" && u.Host != "" {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
		}
		q := u.Query()
		if q.Has("password") {
			q.Set("password", "xxxxx")
			u.RawQuery = q.Encode()
		}
		return u.String()
	}
	if i := strings.Index(strings.ToLower(dsn), "password="); i >= 0 {
		end := strings.IndexAny(dsn[i:], " &")
		if end < 0 {
			return dsn[:i] + "password=xxxxx"
		}
		return dsn[:i] + "password=xxxxx" + dsn[i+end:]
	}
	// Any other form: whatever stands before an @ may hold a password.
	if at := strings.LastIndex(dsn, "@"); at >= 0 {
		start := 0
		if i := strings.Index(dsn, "://"); i >= 0 && i < at {
			start = i + 3
		} else if i := strings.Index(dsn, ":"); i >= 0 && i < at {
			start = i + 1
		}
		return dsn[:start] + "xxxxx" + dsn[at:]
	}
	return dsn
}

type nopLogger struct{}

func (nopLogger) Debug(string, ...any) {}
func (nopLogger) Info(string, ...any)  {}
func (nopLogger) Warn(string, ...any)  {}
func (nopLogger) Error(string, ...any) {}
