package ledger

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"
)

// Closed days end up on one row per model and route, today keeps its
// shards, and every report stays what it was.
func TestCompactFoldsClosedDaysExactly(t *testing.T) {
	testCompact(t, func(o Options) *sqlStore { return openTest(t, o) })
}

func testCompact(t *testing.T, open func(Options) *sqlStore) {
	now := time.Date(2026, 11, 23, 15, 4, 5, 0, time.UTC)
	s := open(Options{Now: func() time.Time { return now }})
	recs := randomRecords(rand.New(rand.NewPCG(3, 4)), now, 2000)
	ctx := context.Background()
	for i, r := range recs {
		s.shard = i % Shards // as if appended by many processes
		if err := s.AppendInference(ctx, r); err != nil {
			t.Fatal(err)
		}
		if err := s.AppendToolCall(ctx, ToolCall{Time: r.Time, Name: "t", Status: "ok", AnsweredBy: "native"}); err != nil {
			t.Fatal(err)
		}
	}
	today := dayOf(now.UnixMilli())
	rows := func(q string) int64 {
		t.Helper()
		var n int64
		if err := s.db.QueryRow(s.d.rebind(q), today).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	const closedSharded = `SELECT count(*) FROM inference_days WHERE day < ? AND shard <> 0`
	const closedToolShards = `SELECT count(*) FROM tool_call_days WHERE day < ? AND shard <> 0`
	const todayShards = `SELECT count(DISTINCT shard) FROM inference_days WHERE day = ?`
	// Open compacted an empty ledger; the appends spread closed days again.
	if rows(closedSharded) == 0 || rows(closedToolShards) == 0 {
		t.Fatal("the appends left no sharded rows for closed days: the test proves nothing")
	}
	shardsToday := rows(todayShards)

	if _, err := s.Prune(ctx, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if n := rows(closedSharded); n != 0 {
		t.Errorf("%d inference_days rows of closed days off shard 0 after the fold", n)
	}
	if n := rows(closedToolShards); n != 0 {
		t.Errorf("%d tool_call_days rows of closed days off shard 0 after the fold", n)
	}
	if n := rows(todayShards); n != shardsToday {
		t.Errorf("today spread over %d shards after the fold, %d before: today must stay spread", n, shardsToday)
	}
	for what, since := range burnWindows(now) {
		checkBurn(t, s, recs, since, what)
	}
	if _, total, err := s.RecentToolCalls(ctx, 1); err != nil || total != int64(len(recs)) {
		t.Errorf("tool calls total %d (%v), want %d", total, err, len(recs))
	}
	if _, total, err := s.RecentInferences(ctx, 1); err != nil || total != int64(len(recs)) {
		t.Errorf("inferences total %d (%v), want %d", total, err, len(recs))
	}
	// Nothing was old enough to prune: the zero time deletes nothing.
	var details int64
	if err := s.db.QueryRow(`SELECT count(*) FROM inferences`).Scan(&details); err != nil || details != int64(len(recs)) {
		t.Errorf("%d details left (%v), want all %d", details, err, len(recs))
	}

	// Folding twice changes nothing, and a reopened store folds on open.
	if _, err := s.Prune(ctx, time.Time{}); err != nil {
		t.Fatal(err)
	}
	for what, since := range burnWindows(now) {
		checkBurn(t, s, recs, since, what)
	}
}
