package ledger

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"
)

// genNow is a fixed end of the generated year, mid-afternoon UTC.
var genNow = time.Date(2026, 11, 23, 15, 4, 5, 0, time.UTC)

func generated(t *testing.T, n int) (*sql.DB, GenerateStats) {
	t.Helper()
	dir := t.TempDir()
	st, err := Generate(context.Background(), GenerateOptions{StateDir: dir, Inferences: n, ToolCalls: -1, Seed: 7, Now: genNow})
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, DefaultSQLiteFile))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, st
}

func queryInt(t *testing.T, db *sql.DB, q string, args ...any) int64 {
	t.Helper()
	var v int64
	if err := db.QueryRow(q, args...).Scan(&v); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return v
}

// TestGenerateTotalsMatchDetails checks the daily totals Generate computes
// against the database's own sums over the records it wrote.
func TestGenerateTotalsMatchDetails(t *testing.T) {
	const n = 20_000
	db, st := generated(t, n)
	if st.Inferences != n || st.ToolCalls != n/2 {
		t.Fatalf("stats %+v, want %d inferences and %d tool calls", st, n, n/2)
	}
	if got := queryInt(t, db, `SELECT count(*) FROM inferences`); got != n {
		t.Fatalf("%d inferences in the database, want %d", got, n)
	}
	if got := queryInt(t, db, `SELECT count(*) FROM tool_calls`); got != n/2 {
		t.Fatalf("%d tool calls in the database, want %d", got, n/2)
	}
	// Every group of the details has exactly its daily row, and no daily
	// row lacks details.
	mismatch := queryInt(t, db, `
WITH d AS (
	SELECT time_ms / 86400000 AS day, model, route, count(*) AS n, sum(escalated) AS esc,
	       sum(input_tokens) AS i, sum(output_tokens) AS o, sum(cost_nanousd) AS c, max(unpriced) AS u
	FROM inferences GROUP BY 1, 2, 3),
t AS (
	SELECT day, model, route, sum(inferences) AS n, sum(escalated) AS esc,
	       sum(input_tokens) AS i, sum(output_tokens) AS o, sum(cost_nanousd) AS c, max(unpriced) AS u
	FROM inference_days GROUP BY 1, 2, 3)
SELECT count(*) FROM d FULL OUTER JOIN t USING (day, model, route)
WHERE d.n IS NOT t.n OR d.esc IS NOT t.esc OR d.i IS NOT t.i OR d.o IS NOT t.o OR d.c IS NOT t.c OR d.u IS NOT t.u`)
	if mismatch != 0 {
		t.Fatalf("%d (day, model, route) groups where inference_days differs from the details", mismatch)
	}
	mismatch = queryInt(t, db, `
WITH d AS (SELECT time_ms / 86400000 AS day, count(*) AS n FROM tool_calls GROUP BY 1),
t AS (SELECT day, sum(tool_calls) AS n FROM tool_call_days GROUP BY 1)
SELECT count(*) FROM d FULL OUTER JOIN t USING (day) WHERE d.n IS NOT t.n`)
	if mismatch != 0 {
		t.Fatalf("%d days where tool_call_days differs from the details", mismatch)
	}
	if got := queryInt(t, db, `SELECT count(*) FROM inference_days`); got != int64(st.InferenceDays) {
		t.Fatalf("%d inference_days rows, stats say %d", got, st.InferenceDays)
	}
	if v := queryInt(t, db, `SELECT value FROM kora_meta WHERE key = 'schema_version'`); v != SchemaVersion {
		t.Fatalf("schema_version %d, want %d", v, SchemaVersion)
	}
	var mode string
	if err := db.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
		t.Fatalf("journal_mode %q (%v), want wal", mode, err)
	}
	if got := queryInt(t, db, `SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name IN ('inferences_time', 'tool_calls_time')`); got != 2 {
		t.Fatalf("%d of the schema's 2 time indexes exist", got)
	}
}

// TestGenerateShape checks that the data looks like a year of traffic: the
// span, today's share, the models, routes and escalations.
func TestGenerateShape(t *testing.T) {
	const n = 36_500
	db, _ := generated(t, n)
	end := genNow.UnixMilli()
	if lo, hi := queryInt(t, db, `SELECT min(time_ms) FROM inferences`), queryInt(t, db, `SELECT max(time_ms) FROM inferences`); lo < end-GenerateSpan.Milliseconds() || hi > end || hi-lo < GenerateSpan.Milliseconds()*99/100 {
		t.Fatalf("inferences span %v .. %v, want the year ending %v", time.UnixMilli(lo).UTC(), time.UnixMilli(hi).UTC(), genNow)
	}
	// genNow is 15:04 into its day: today holds that share of a day's ~100.
	midnight := genNow.Truncate(24 * time.Hour).UnixMilli()
	today := queryInt(t, db, `SELECT count(*) FROM inferences WHERE time_ms >= ?`, midnight)
	if want := int64(n / 365 * 15 / 24); today < want*7/10 || today > want*13/10 {
		t.Fatalf("%d inferences today, want about %d", today, want)
	}
	if got := queryInt(t, db, `SELECT count(DISTINCT model) FROM inferences`); got != int64(len(genModels)) {
		t.Fatalf("%d models, want %d", got, len(genModels))
	}
	if got := queryInt(t, db, `SELECT count(DISTINCT model) FROM inferences WHERE unpriced = 1 AND cost_nanousd = 0`); got != 1 {
		t.Fatalf("%d unpriced models, want 1", got)
	}
	if got := queryInt(t, db, `SELECT count(*) FROM inferences WHERE unpriced = 0 AND cost_nanousd <= 0 AND input_tokens > 0`); got != 0 {
		t.Fatalf("%d priced inferences cost nothing", got)
	}
	esc := queryInt(t, db, `SELECT count(*) FROM inferences WHERE escalated = 1`)
	if esc < n*4/100 || esc > n*6/100 {
		t.Fatalf("%d escalated of %d, want about 5%%", esc, n)
	}
	if got := queryInt(t, db, `SELECT count(DISTINCT route) FROM inferences`); got != 2 {
		t.Fatalf("%d routes, want gateway and bypass", got)
	}
	if got := queryInt(t, db, `SELECT count(DISTINCT shard) FROM inference_days`); got != Shards {
		t.Fatalf("daily totals use %d shards, want all %d", got, Shards)
	}
}

// TestGenerateDeterministic checks that a seed and an end time give the
// same records, and another seed other records.
func TestGenerateDeterministic(t *testing.T) {
	sum := func(seed uint64) (int64, int64) {
		var cost, tokens int64
		for r := range GeneratedInferences(GenerateOptions{Inferences: 5000, ToolCalls: -1, Seed: seed, Now: genNow}) {
			cost += NanoUSD(r.CostUSD)
			tokens += int64(r.InputTokens)*31 + int64(r.OutputTokens) + r.Time.UnixMilli()%1000
		}
		return cost, tokens
	}
	c1, t1 := sum(1)
	c2, t2 := sum(1)
	c3, t3 := sum(2)
	if c1 != c2 || t1 != t2 {
		t.Fatalf("seed 1 twice: cost %d vs %d, tokens %d vs %d", c1, c2, t1, t2)
	}
	if c1 == c3 && t1 == t3 {
		t.Fatal("seeds 1 and 2 gave the same records")
	}
	// The database holds what the iterator yields.
	db, _ := generated(t, 5000)
	var want int64
	for r := range GeneratedInferences(GenerateOptions{Inferences: 5000, ToolCalls: -1, Seed: 7, Now: genNow}) {
		want += NanoUSD(r.CostUSD)
	}
	if got := queryInt(t, db, `SELECT sum(cost_nanousd) FROM inferences`); got != want {
		t.Fatalf("database costs %d nano-USD, the iterator's records %d", got, want)
	}
	calls := 0
	for range GeneratedToolCalls(GenerateOptions{Inferences: 5000, ToolCalls: -1, Seed: 7, Now: genNow}) {
		calls++
	}
	if calls != 2500 {
		t.Fatalf("%d tool calls yielded, want 2500", calls)
	}
}

// TestGenerateRefusesAFullLedger checks that Generate never adds to a
// ledger that holds records.
func TestGenerateRefusesAFullLedger(t *testing.T) {
	dir := t.TempDir()
	o := GenerateOptions{StateDir: dir, Inferences: 100, ToolCalls: -1, Seed: 1, Now: genNow}
	if _, err := Generate(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if _, err := Generate(context.Background(), o); err == nil {
		t.Fatal("a second Generate into the same ledger succeeded")
	}
	if _, err := Generate(context.Background(), GenerateOptions{DSN: "postgres://u:secret@h/db", Inferences: 1}); err == nil {
		t.Fatal("Generate accepted a PostgreSQL DSN")
	}
}

// TestGeneratedLedgerReadsBack opens a generated ledger with the store and
// checks its reports against the records: all time from the daily totals,
// 7 days from totals and the details of the start day, and the totals of
// the tails.
func TestGeneratedLedgerReadsBack(t *testing.T) {
	const n = 20_000
	dir := t.TempDir()
	if _, err := Generate(context.Background(), GenerateOptions{StateDir: dir, Inferences: n, ToolCalls: -1, Seed: 3, Now: genNow}); err != nil {
		t.Fatal(err)
	}
	s, err := Open(context.Background(), Options{StateDir: dir, Now: func() time.Time { return genNow }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, DefaultSQLiteFile))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, since := range []time.Time{{}, genNow.Add(-7 * 24 * time.Hour), genNow.Truncate(24 * time.Hour)} {
		groups, err := s.Burn(context.Background(), since)
		if err != nil {
			t.Fatal(err)
		}
		var count, cost int64
		for _, g := range groups {
			count += g.Inferences
			cost += g.CostNanoUSD
		}
		wantCount := queryInt(t, db, `SELECT count(*) FROM inferences WHERE time_ms >= ?`, since.UnixMilli())
		wantCost := queryInt(t, db, `SELECT sum(cost_nanousd) FROM inferences WHERE time_ms >= ?`, since.UnixMilli())
		if count != wantCount || cost != wantCost || count == 0 {
			t.Errorf("burn since %v: %d inferences costing %d, the records %d costing %d", since, count, cost, wantCount, wantCost)
		}
	}
	recent, total, err := s.RecentInferences(context.Background(), 5)
	if err != nil || total != n || len(recent) != 5 || recent[0].Time.Before(recent[4].Time) {
		t.Fatalf("recent inferences: %d of %d, %v", len(recent), total, err)
	}
	calls, total, err := s.RecentToolCalls(context.Background(), 5)
	if err != nil || total != n/2 || len(calls) != 5 {
		t.Fatalf("recent tool calls: %d of %d, %v", len(calls), total, err)
	}
}
