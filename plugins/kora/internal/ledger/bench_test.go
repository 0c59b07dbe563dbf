package ledger

import (
	"context"
	"database/sql"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// BenchmarkAppendInference measures one durable append (a transaction
// with its day total) at each synchronous setting: FULL pays an fsync of
// the WAL per commit, NORMAL none.
func BenchmarkAppendInference(b *testing.B) {
	for _, sync := range []string{SyncFull, SyncNormal} {
		b.Run(sync, func(b *testing.B) {
			s, err := Open(context.Background(), Options{DSN: "sqlite:" + filepath.Join(b.TempDir(), "ledger.db"), Synchronous: sync})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			rec := Inference{Model: "m", Route: "gateway", InputTokens: 1000, OutputTokens: 200, CostUSD: 0.01}
			b.ResetTimer()
			for range b.N {
				if err := s.AppendInference(context.Background(), rec); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkBurn7d measures the 7-day burn over 20 days of inferences:
// the day totals plus part of one day of details.
func BenchmarkBurn7d(b *testing.B) {
	now := time.Date(2026, 11, 23, 15, 0, 0, 0, time.UTC)
	s, err := Open(context.Background(), Options{DSN: "sqlite:" + filepath.Join(b.TempDir(), "ledger.db"), Synchronous: SyncNormal})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	st := s.(*sqlStore)
	recs := randomRecords(rand.New(rand.NewPCG(7, 8)), now, benchBurnRecords)
	// Appends arrive in time order, so rows of a day sit together.
	slices.SortFunc(recs, func(a, b Inference) int { return a.Time.Compare(b.Time) })
	for i := 0; i < len(recs); i += importBatch {
		rows := &importRows{}
		for _, r := range recs[i:min(i+importBatch, len(recs))] {
			rows.inferences = append(rows.inferences, r)
			rows.days.addInference(r)
		}
		if err := st.inTx(context.Background(), func(tx *sql.Tx) error {
			for _, r := range rows.inferences {
				if err := st.insertInference(context.Background(), tx, r); err != nil {
					return err
				}
			}
			return st.upsertDays(context.Background(), tx, &rows.days)
		}); err != nil {
			b.Fatal(err)
		}
	}
	since := now.Add(-7 * 24 * time.Hour)
	b.ResetTimer()
	for range b.N {
		if _, err := s.Burn(context.Background(), since); err != nil {
			b.Fatal(err)
		}
	}
}

// benchBurnRecords is 2,500 inferences a day for 20 days; a year of one
// call every 3 s is about 28,800 a day (set 576_000 to see it; the kbench
// benchmarks measure ten million through the host).
var benchBurnRecords = 50_000
