package ledger

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

func openTest(t *testing.T, o Options) *sqlStore {
	t.Helper()
	if o.DSN == "" && o.StateDir == "" {
		o.StateDir = t.TempDir()
	}
	s, err := Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s.(*sqlStore)
}

func TestRoundTripEveryField(t *testing.T) {
	fixed := time.Date(2026, 11, 22, 10, 0, 0, 123_456_789, time.UTC)
	s := openTest(t, Options{StateDir: filepath.Join(t.TempDir(), "state"), Now: func() time.Time { return fixed }})
	ctx := context.Background()
	inf := Inference{
		Time: time.Date(2026, 11, 20, 1, 2, 3, 4_000_000, time.UTC), SessionID: "sess", Iteration: 7,
		Model: "offline-large", Route: "gateway", InputTokens: 1 << 40, OutputTokens: 5, CostUSD: 12.345678901,
		Unpriced: true, Escalated: true, Reason: "hedged ✓", StopReason: "end_turn", DurationMS: 12.345, Error: "boom",
	}
	call := ToolCall{
		Time: time.Date(2026, 11, 20, 1, 2, 3, 5_000_000, time.UTC), SessionID: "sess", CallID: "c1", Name: "now",
		Status: "provided_by:kora", AnsweredBy: "kora", IsError: true, Error: "no",
		Arguments: json.RawMessage(`{"a":[1,2]}`), DurationMS: 0.25,
	}
	if err := s.AppendInference(ctx, inf); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendToolCall(ctx, call); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendInference(ctx, Inference{Model: "m", Route: "r"}); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendToolCall(ctx, ToolCall{Name: "n", Status: "ok", AnsweredBy: "native"}); err != nil {
		t.Fatal(err)
	}

	infs, total, err := s.RecentInferences(ctx, 10)
	if err != nil || total != 2 || len(infs) != 2 {
		t.Fatalf("RecentInferences = %d records, total %d, %v", len(infs), total, err)
	}
	if !infs[0].Time.Equal(fixed.Truncate(time.Millisecond)) {
		t.Errorf("a zero time was stamped %v, want %v", infs[0].Time, fixed.Truncate(time.Millisecond))
	}
	if got := infs[1]; !reflect.DeepEqual(got, inf) {
		t.Errorf("inference read back as\n%+v\nwant\n%+v", got, inf)
	}
	calls, total, err := s.RecentToolCalls(ctx, 1)
	if err != nil || total != 2 || len(calls) != 1 || calls[0].Name != "n" {
		t.Fatalf("RecentToolCalls(1) = %+v, total %d, %v", calls, total, err)
	}
	var exported []ToolCall
	if err := s.ExportToolCalls(ctx, time.Time{}, func(c ToolCall) error { exported = append(exported, c); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(exported) != 2 || !reflect.DeepEqual(exported[0], call) {
		t.Errorf("tool call read back as\n%+v\nwant\n%+v", exported, call)
	}
	dir, err := os.Stat(s.o.StateDir)
	if err != nil || dir.Mode().Perm() != 0o700 {
		t.Errorf("state directory mode %v, %v; want 0700", dir.Mode().Perm(), err)
	}
}

// randomRecords spreads n inferences over 20 days before now.
func randomRecords(r *rand.Rand, now time.Time, n int) []Inference {
	models := []string{"small", "large", "huge"}
	routes := []string{"gateway", "cli"}
	out := make([]Inference, n)
	for i := range out {
		out[i] = Inference{
			Time:  now.Add(-time.Duration(r.Int64N(int64(20 * 24 * time.Hour)))).Truncate(time.Millisecond),
			Model: models[r.IntN(3)], Route: routes[r.IntN(2)], InputTokens: r.IntN(5000), OutputTokens: r.IntN(900),
			CostUSD: float64(r.IntN(1_000_000)) / 1e7, Escalated: r.IntN(4) == 0, Unpriced: r.IntN(50) == 0,
			SessionID: fmt.Sprint(i),
		}
	}
	return out
}

// burnInGo is the burn the database must agree with.
func burnInGo(recs []Inference, since time.Time) map[[2]string]BurnGroup {
	out := map[[2]string]BurnGroup{}
	for _, r := range recs {
		if r.Time.Before(since) {
			continue
		}
		k := [2]string{r.Model, r.Route}
		g := out[k]
		g.Model, g.Route = r.Model, r.Route
		g.Inferences++
		g.Escalated += boolInt(r.Escalated)
		g.InputTokens += int64(r.InputTokens)
		g.OutputTokens += int64(r.OutputTokens)
		g.CostNanoUSD += NanoUSD(r.CostUSD)
		g.Unpriced = g.Unpriced || r.Unpriced
		out[k] = g
	}
	return out
}

func checkBurn(t *testing.T, s Store, recs []Inference, since time.Time, what string) {
	t.Helper()
	got, err := s.Burn(context.Background(), since)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	want := burnInGo(recs, since)
	if len(got) != len(want) {
		t.Errorf("%s: %d groups, want %d", what, len(got), len(want))
	}
	for _, g := range got {
		if w := want[[2]string{g.Model, g.Route}]; g != w {
			t.Errorf("%s: group %+v, want %+v", what, g, w)
		}
	}
}

func burnWindows(now time.Time) map[string]time.Time {
	today := now.Truncate(24 * time.Hour)
	return map[string]time.Time{
		"all":              {},
		"today":            today,
		"7d":               now.Add(-7 * 24 * time.Hour),
		"7 days at 0h":     today.Add(-7 * 24 * time.Hour),
		"36h":              now.Add(-36 * time.Hour),
		"1ms after a day":  today.Add(-3*24*time.Hour + time.Millisecond),
		"1ms before a day": today.Add(-3*24*time.Hour - time.Millisecond),
		"future":           now.Add(time.Hour),
		"before anything":  now.Add(-30 * 24 * time.Hour),
	}
}

func TestBurnWindowsExact(t *testing.T) {
	now := time.Date(2026, 11, 23, 15, 4, 5, 0, time.UTC)
	s := openTest(t, Options{Now: func() time.Time { return now }})
	recs := randomRecords(rand.New(rand.NewPCG(1, 2)), now, 3000)
	for _, r := range recs {
		if err := s.AppendInference(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	for what, since := range burnWindows(now) {
		checkBurn(t, s, recs, since, what)
	}
}

func TestRetentionKeepsTotalsExact(t *testing.T) {
	now := time.Date(2026, 11, 23, 15, 4, 5, 0, time.UTC)
	s := openTest(t, Options{Now: func() time.Time { return now }})
	ctx := context.Background()
	recs := randomRecords(rand.New(rand.NewPCG(3, 4)), now, 2500)
	for _, r := range recs {
		if err := s.AppendInference(ctx, r); err != nil {
			t.Fatal(err)
		}
		if err := s.AppendToolCall(ctx, ToolCall{Time: r.Time, Name: "n", Status: "ok", AnsweredBy: "native"}); err != nil {
			t.Fatal(err)
		}
	}
	allBefore, err := s.Burn(ctx, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	const keepDays = 8
	// Mid-day on purpose: Prune rounds down to the day boundary.
	horizon := now.Add(-keepDays * 24 * time.Hour)
	st, err := s.Prune(ctx, horizon)
	if err != nil {
		t.Fatal(err)
	}
	boundary := horizon.Truncate(24 * time.Hour)
	var older int64
	for _, r := range recs {
		if r.Time.Before(boundary) {
			older++
		}
	}
	if older == 0 || st.Inferences != older || st.ToolCalls != older {
		t.Fatalf("Prune = %+v, want %d of each (the records before %v)", st, older, boundary)
	}
	allAfter, err := s.Burn(ctx, time.Time{})
	if err != nil || !reflect.DeepEqual(allAfter, allBefore) {
		t.Errorf("burn over all time changed with retention:\n%+v\n%+v (%v)", allBefore, allAfter, err)
	}
	checkBurn(t, s, recs, time.Time{}, "all after prune")
	checkBurn(t, s, recs, now.Add(-7*24*time.Hour), "7d after prune")
	checkBurn(t, s, recs, now.Truncate(24*time.Hour), "today after prune")
	_, total, err := s.RecentInferences(ctx, 1)
	if err != nil || total != int64(len(recs)) {
		t.Errorf("RecentInferences total after prune = %d, %v; want %d", total, err, len(recs))
	}
	_, total, err = s.RecentToolCalls(ctx, 1)
	if err != nil || total != int64(len(recs)) {
		t.Errorf("RecentToolCalls total after prune = %d, %v; want %d", total, err, len(recs))
	}
	err = s.ExportInferences(ctx, time.Time{}, func(r Inference) error {
		if r.Time.Before(boundary) {
			return fmt.Errorf("record of %v survived the prune", r.Time)
		}
		return nil
	})
	if err != nil {
		t.Error(err)
	}
	var ms string
	if err := s.db.QueryRow(`SELECT value FROM kora_meta WHERE key = 'pruned_before_ms'`).Scan(&ms); err != nil || ms != fmt.Sprint(boundary.UnixMilli()) {
		t.Errorf("pruned_before_ms = %q, %v; want %d", ms, err, boundary.UnixMilli())
	}
}

func TestExportSinceAndPages(t *testing.T) {
	s := openTest(t, Options{})
	ctx := context.Background()
	base := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	const n = 2*exportPage + 17
	for i := range n {
		if err := s.AppendToolCall(ctx, ToolCall{Time: base.Add(time.Duration(i) * time.Minute), CallID: fmt.Sprint(i), Name: "n", Status: "ok", AnsweredBy: "native"}); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	since := base.Add(500 * time.Minute)
	err := s.ExportToolCalls(ctx, since, func(c ToolCall) error { got = append(got, c.CallID); return nil })
	if err != nil || len(got) != n-500 || got[0] != "500" || got[len(got)-1] != fmt.Sprint(n-1) {
		t.Fatalf("export since minute 500: %d records from %v, %v", len(got), got[:1], err)
	}
	stop := errors.New("enough")
	seen := 0
	err = s.ExportToolCalls(ctx, time.Time{}, func(ToolCall) error { seen++; return stopAt(seen, 10, stop) })
	if !errors.Is(err, stop) || seen != 10 {
		t.Errorf("an error from fn: export returned %v after %d records, want it as is after 10", err, seen)
	}
	// Ids follow commit order, not time: a late record with an early
	// time is still in its window.
	if err := s.AppendToolCall(ctx, ToolCall{Time: base.Add(time.Duration(n-1) * time.Minute), CallID: "late", Name: "n"}); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendToolCall(ctx, ToolCall{Time: base.Add(499 * time.Minute), CallID: "early", Name: "n"}); err != nil {
		t.Fatal(err)
	}
	got = got[:0]
	err = s.ExportToolCalls(ctx, base.Add(time.Duration(n-2)*time.Minute), func(c ToolCall) error { got = append(got, c.CallID); return nil })
	if want := []string{fmt.Sprint(n - 2), fmt.Sprint(n - 1), "late"}; err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("export of the last two minutes = %v, %v; want %v", got, err, want)
	}
	got = got[:0]
	err = s.ExportToolCalls(ctx, base.Add(time.Duration(n)*time.Minute), func(c ToolCall) error { got = append(got, c.CallID); return nil })
	if err != nil || len(got) != 0 {
		t.Errorf("export after the last record = %v, %v", got, err)
	}
}

func stopAt(seen, at int, err error) error {
	if seen == at {
		return err
	}
	return nil
}

func TestNewerSchemaRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	s := openTest(t, Options{DSN: "sqlite:" + path})
	if _, err := s.db.Exec(`UPDATE kora_meta SET value = '99' WHERE key = 'schema_version'`); err != nil {
		t.Fatal(err)
	}
	s.Close()
	_, err := Open(context.Background(), Options{DSN: "sqlite:" + path})
	if KindOf(err) != KindSchema || !strings.Contains(err.Error(), "99") {
		t.Errorf("Open of a schema_version 99 database = %v, want %s naming the version", err, KindSchema)
	}
}

func TestDSNs(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, Options{DSN: "sqlite:" + filepath.Join(dir, "sub", "x.db")})
	if got := s.Describe(); got != "sqlite "+filepath.Join(dir, "sub", "x.db") {
		t.Errorf("Describe() = %q", got)
	}
	for _, dsn := range []string{"mysql://kora:hunter2@db/kora", "kora:hunter2@tcp(db)/kora", "/var/lib/kora/ledger.db"} {
		_, err := Open(context.Background(), Options{DSN: dsn, StateDir: dir})
		if err == nil || strings.Contains(err.Error(), "hunter2") || !strings.Contains(err.Error(), "sqlite:<path>") {
			t.Errorf("Open(%q) = %v; want an error listing the accepted forms without the password", dsn, err)
		}
	}
	if _, err := Open(context.Background(), Options{}); err == nil {
		t.Error("Open with neither a DSN nor a state directory succeeded")
	}
	if _, err := Open(context.Background(), Options{StateDir: dir, Synchronous: "sometimes"}); err == nil || !strings.Contains(err.Error(), "sometimes") {
		t.Errorf("Open with synchronous=sometimes = %v", err)
	}
	if got := redactDSN("postgres://kora:hunter2@db:5432/kora?sslmode=disable"); strings.Contains(got, "hunter2") {
		t.Errorf("redactDSN kept the password: %s", got)
	}
	if got := redactDSN("host=db password=hunter2 user=kora"); strings.Contains(got, "hunter2") {
		t.Errorf("redactDSN kept the password: %s", got)
	}
}

func TestSynchronousSetting(t *testing.T) {
	for setting, want := range map[string]int{"": 2, SyncFull: 2, SyncNormal: 1} {
		s := openTest(t, Options{Synchronous: setting})
		var got int
		var mode string
		if err := s.db.QueryRow("PRAGMA synchronous").Scan(&got); err != nil || got != want {
			t.Errorf("synchronous %q: PRAGMA synchronous = %d, %v; want %d", setting, got, err, want)
		}
		if err := s.db.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
			t.Errorf("journal_mode = %q, %v; want wal", mode, err)
		}
	}
}

// TestReportsUseIndexes fails when a report's query would read the whole
// table: the partial start day of a window and the export's start must
// search inferences_time, the tails must walk the primary key backwards
// with no sort.
func TestReportsUseIndexes(t *testing.T) {
	s := openTest(t, Options{})
	recs := randomRecords(rand.New(rand.NewPCG(5, 6)), time.Now(), 200)
	for _, r := range recs {
		if err := s.AppendInference(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	plan := func(query string, args ...any) string {
		rows, err := s.db.Query("EXPLAIN QUERY PLAN "+query, args...)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var lines []string
		for rows.Next() {
			var id, parent, notused int
			var detail string
			if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
				t.Fatal(err)
			}
			lines = append(lines, detail)
		}
		return strings.Join(lines, "; ")
	}
	for _, c := range []struct {
		name, query string
		args        []any
		want        string
	}{
		{"burn's partial day", s.q.burnDetails, []any{1, 2}, "inferences_time (time_ms"},
		{"burn's whole days", s.q.burnDaysFrom, []any{1}, "SEARCH inference_days USING INDEX"},
		{"burn's start day", s.q.burnDay, []any{1}, "SEARCH inference_days USING INDEX"},
		{"burn's unpriced check", s.q.burnUnpriced, []any{1, 2}, "inferences_time (time_ms"},
		{"export start", s.q.firstInferenceFrom, []any{1}, "inferences_time (time_ms"},
		{"export page", s.q.pageInferences, []any{1, 2, 3}, "SEARCH inferences USING INTEGER PRIMARY KEY"},
		{"prune batch", s.q.pruneInferences, []any{1, 2}, "inferences_time (time_ms"},
		{"recent inferences", s.q.recentInferences, []any{10}, "SCAN inferences"},
		{"recent tool calls", s.q.recentToolCalls, []any{10}, "SCAN tool_calls"},
	} {
		got := plan(c.query, c.args...)
		if !strings.Contains(got, c.want) || strings.Contains(got, "TEMP B-TREE FOR ORDER BY") {
			t.Errorf("%s: plan %q, want %q and no sort of the table", c.name, got, c.want)
		}
		if c.want != "SCAN inferences" && c.want != "SCAN tool_calls" && strings.Contains(got, "SCAN inferences") {
			t.Errorf("%s: plan %q scans the table", c.name, got)
		}
	}
}

// TestLongQueryHonoursCtx shows that the driver interrupts a running query
// when its ctx ends, which is what bounds a report on a huge table.
func TestLongQueryHonoursCtx(t *testing.T) {
	s := openTest(t, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	err := within(t, "endless query", func() error {
		var n int64
		return s.db.QueryRowContext(ctx, `WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c`).Scan(&n)
	})
	if err == nil {
		t.Fatal("an endless query returned without error")
	}
	if k := s.d.kind(err); k != KindLocked {
		t.Logf("an interrupted query classifies as %s: %v", k, err)
	}
}

func TestClosedStore(t *testing.T) {
	s := openTest(t, Options{})
	s.Close()
	if err := s.AppendInference(context.Background(), Inference{}); KindOf(err) != KindUnavailable {
		t.Errorf("append after Close = %v", err)
	}
	if _, err := s.Burn(context.Background(), time.Time{}); KindOf(err) != KindUnavailable {
		t.Errorf("burn after Close = %v", err)
	}
}

// recordingLog keeps the warnings a store logs.
type recordingLog struct {
	nopLogger
	mu    sync.Mutex
	warns []string
}

func (l *recordingLog) Warn(msg string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.warns = append(l.warns, fmt.Sprint(append([]any{msg}, args...)...))
}

func TestImportOfAShorterFileLeavesIt(t *testing.T) {
	state := t.TempDir()
	writeJSONL(t, state, 1500, 10)
	log := &recordingLog{}
	s := openTest(t, Options{DSN: "sqlite:" + filepath.Join(t.TempDir(), "ledger.db"), StateDir: state, Log: log})
	if _, total, err := s.RecentInferences(context.Background(), 0); err != nil || total != 1500 {
		t.Fatalf("Open imported %d inferences, %v; want 1500", total, err)
	}
	if len(log.warns) != 4 {
		t.Errorf("import warnings %q, want one per corrupt or torn line (4)", log.warns)
	}
	// The same file (same first line), cut short: its tail was imported
	// already and must not be imported again.
	other := t.TempDir()
	b, err := os.ReadFile(filepath.Join(state, InferencesFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, InferencesFile), b[:len(b)/2], 0o600); err != nil {
		t.Fatal(err)
	}
	log.warns = nil
	st, err := s.ImportJSONL(context.Background(), other)
	if err != nil || st != (ImportStats{}) {
		t.Errorf("import of the shortened file = %+v, %v; want nothing", st, err)
	}
	if len(log.warns) != 1 || !strings.Contains(log.warns[0], "shorter") {
		t.Errorf("warnings %q, want one saying the file is shorter", log.warns)
	}
	// A file appended to since is imported from where the last run ended.
	f, err := os.OpenFile(filepath.Join(state, InferencesFile), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, "\n{\"time\":\"2026-11-03T00:00:00Z\",\"model\":\"late\",\"route\":\"r\"}\n")
	f.Close()
	st, err = s.ImportJSONL(context.Background(), state)
	if err != nil || st.Inferences != 1 {
		t.Errorf("import after one more line = %+v, %v; want 1 inference", st, err)
	}
}

func TestImportSkipsAnOverlongLine(t *testing.T) {
	defer func(old int) { maxImportLine = old }(maxImportLine)
	maxImportLine = 200 // well past the records below, far below the junk
	state := t.TempDir()
	good := `{"time":"2026-11-03T00:00:00Z","model":"m","route":"r","input_tokens":3}` + "\n"
	content := good + strings.Repeat("x", 200_000) + "\n" + good + strings.Repeat("y", 100_000)
	if err := os.WriteFile(filepath.Join(state, InferencesFile), []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	s := openTest(t, Options{DSN: "sqlite:" + filepath.Join(t.TempDir(), "ledger.db")})
	st, err := s.ImportJSONL(context.Background(), state)
	if err != nil || st.Inferences != 2 || st.Skipped != 2 {
		t.Fatalf("import = %+v, %v; want 2 inferences and 2 skipped lines", st, err)
	}
	st, err = s.ImportJSONL(context.Background(), state)
	if err != nil || st != (ImportStats{}) {
		t.Errorf("second import = %+v, %v; want nothing: the offset passed the long lines", st, err)
	}
}

// TestBurnPartialDay pins the start day's two ways of counting (details
// after since, or the day's totals minus details before it) on records
// whose unpriced flags and groups tell them apart.
func TestBurnPartialDay(t *testing.T) {
	day := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	now := day.Add(23*time.Hour + 30*time.Minute)
	recs := []Inference{
		{Time: day.Add(1 * time.Hour), Model: "a", Route: "r", Unpriced: true, InputTokens: 1},
		{Time: day.Add(3 * time.Hour), Model: "a", Route: "r", CostUSD: 0.25, InputTokens: 2},
		{Time: day.Add(20 * time.Hour), Model: "b", Route: "r", Unpriced: true, InputTokens: 4},
		{Time: day.Add(30 * time.Minute), Model: "c", Route: "r", CostUSD: 1, InputTokens: 8},
	}
	s := openTest(t, Options{Now: func() time.Time { return now }})
	for _, r := range recs {
		if err := s.AppendInference(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	for _, at := range []time.Duration{
		10 * time.Minute, 45 * time.Minute, 2 * time.Hour, 11 * time.Hour,
		13 * time.Hour, 19 * time.Hour, 21 * time.Hour, 23 * time.Hour,
	} {
		checkBurn(t, s, recs, day.Add(at), fmt.Sprintf("since %v into the day", at))
	}
}

func TestConcurrentGoroutines(t *testing.T) {
	s := openTest(t, Options{})
	const writers, perWriter = 8, 30
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWriter {
				if err := s.AppendInference(context.Background(), writerInference(fmt.Sprint("g", w), i)); err != nil {
					errs <- err
					return
				}
				if _, err := s.Burn(context.Background(), time.Time{}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if _, total, err := s.RecentInferences(context.Background(), 0); err != nil || total != writers*perWriter {
		t.Fatalf("total %d, %v; want %d", total, err, writers*perWriter)
	}
	checkTotals(t, s.db)
}
