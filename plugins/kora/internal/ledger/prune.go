package ledger

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// Prune first folds closed days' totals onto one row each (compactDays),
// then deletes details before the UTC day that holds before, in batches
// of pruneBatch per transaction, so that appends from other processes
// wait at most one short batch. Each batch has its own deadline
// (LockTimeout when the caller gave none), since a large prune may take
// longer than one lock wait should.
func (s *sqlStore) Prune(ctx context.Context, before time.Time) (PruneStats, error) {
	const op = "prune"
	var st PruneStats
	if s.closed.Load() {
		return st, &Error{Kind: KindUnavailable, Backend: s.d.name(), Op: op, Err: errClosed}
	}
	if err := s.compactDays(ctx); err != nil {
		return st, s.fail(op, err)
	}
	horizon := dayOf(before.UnixMilli()) * dayMS
	for _, t := range []struct {
		query string
		count *int64
	}{{s.q.pruneInferences, &st.Inferences}, {s.q.pruneToolCalls, &st.ToolCalls}} {
		for {
			n, err := s.pruneBatch(ctx, t.query, horizon)
			if err != nil {
				return st, s.fail(op, err)
			}
			*t.count += n
			if n < pruneBatch {
				break
			}
		}
	}
	bctx, cancel := s.bound(ctx)
	defer cancel()
	err := s.inTx(bctx, func(tx *sql.Tx) error {
		var old string
		err := tx.QueryRowContext(bctx, s.q.metaGet, "pruned_before_ms").Scan(&old)
		var prev int64
		if err == nil {
			fmt.Sscan(old, &prev)
		} else if err != sql.ErrNoRows {
			return err
		}
		if prev >= horizon {
			return nil
		}
		_, err = tx.ExecContext(bctx, s.q.metaPut, "pruned_before_ms", fmt.Sprint(horizon))
		return err
	})
	return st, s.fail(op, err)
}

func (s *sqlStore) pruneBatch(ctx context.Context, query string, horizon int64) (int64, error) {
	ctx, cancel := s.bound(ctx)
	defer cancel()
	var n int64
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, query, horizon, pruneBatch)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return n, err
}
