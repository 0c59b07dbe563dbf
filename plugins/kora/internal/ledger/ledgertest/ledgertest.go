// Package ledgertest is the conformance suite of ledger.Store: one set of
// tests that every backend (SQLite, PostgreSQL) must pass, so that the two
// implementations keep the contract of store.go's doc comment in the same
// way. Run it from a backend's test with a function opening a store on a
// fresh, empty database.
package ledgertest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookhost/hookhost/plugins/kora/internal/ledger"
)

// Opener opens a store on a fresh, empty database, with o as given plus
// the DSN of that database, and closes it when t ends.
type Opener func(t *testing.T, o ledger.Options) ledger.Store

// Base is the suite's "now": mid-afternoon, not on a day boundary.
var Base = time.Date(2026, 3, 15, 13, 47, 12, 345_000_000, time.UTC)

const day = 24 * time.Hour

// Run runs the conformance suite against the stores open makes.
func Run(t *testing.T, open Opener) {
	tests := []struct {
		name string
		fn   func(*testing.T, Opener)
	}{
		{"RoundTripsEveryField", testRoundTrip},
		{"StampsZeroTimes", testStamp},
		{"BurnWindows", testBurnWindows},
		{"RecentOrderAndTotals", testRecent},
		{"ExportOrderSinceAndPages", testExport},
		{"ExportStopsOnCallbackError", testExportStops},
		{"PruneKeepsTotalsExact", testPrune},
		{"ImportIsIdempotent", testImport},
		{"OpenImportsStateDir", testOpenImports},
		{"ConcurrentAppendsFromGoroutines", testConcurrentGoroutines},
		{"CancelledContextRecordsNothing", testCancelled},
		{"ClosedStoreFails", testClosed},
		{"AppendBatchIsOneTransaction", testAppendBatch},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, open) })
	}
}

// SuiteOptions are the suite's defaults: a fixed clock and an empty state
// directory.
func SuiteOptions(t *testing.T, log *Log) ledger.Options {
	return ledger.Options{
		StateDir:    t.TempDir(),
		Now:         func() time.Time { return Base },
		LockTimeout: 5 * time.Second,
		Log:         log,
	}
}

// Log is a ledger.Logger that keeps its lines for tests to inspect.
type Log struct {
	mu    sync.Mutex
	lines []string
}

func (l *Log) add(level, msg string, args []any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf("%s %s %v", level, msg, args))
}

func (l *Log) Debug(msg string, args ...any) { l.add("DEBUG", msg, args) }
func (l *Log) Info(msg string, args ...any)  { l.add("INFO", msg, args) }
func (l *Log) Warn(msg string, args ...any)  { l.add("WARN", msg, args) }
func (l *Log) Error(msg string, args ...any) { l.add("ERROR", msg, args) }

// Count returns how many lines of level were logged.
func (l *Log) Count(level string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, s := range l.lines {
		if strings.HasPrefix(s, level+" ") {
			n++
		}
	}
	return n
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

var (
	models = []string{"offline-small", "offline-large", "cloud-pro", "cloud-mini"}
	routes = []string{"gateway", "escalation", "tool"}
)

// Inferences makes n inferences with distinct millisecond times spread
// over [from, to), deterministic for a seed, sorted by time. Some fall
// exactly on UTC day boundaries.
func Inferences(seed int64, n int, from, to time.Time) []ledger.Inference {
	rng := rand.New(rand.NewSource(seed))
	times := distinctTimes(rng, n, from, to)
	recs := make([]ledger.Inference, n)
	for i, tm := range times {
		recs[i] = ledger.Inference{
			Time:         tm,
			SessionID:    fmt.Sprintf("s%d-%d", seed, i),
			Iteration:    i,
			Model:        models[rng.Intn(len(models))],
			Route:        routes[rng.Intn(len(routes))],
			InputTokens:  rng.Intn(200_000),
			OutputTokens: rng.Intn(20_000),
			CostUSD:      float64(rng.Intn(5_000_000_000)) / 1e9,
			Unpriced:     rng.Intn(40) == 0,
			Escalated:    rng.Intn(5) == 0,
			Reason:       fmt.Sprintf("reason %d", rng.Intn(10)),
			StopReason:   []string{"end_turn", "tool_use", "max_tokens"}[rng.Intn(3)],
			DurationMS:   float64(rng.Intn(90_000_000)) / 1000,
		}
		if recs[i].Unpriced {
			recs[i].CostUSD = 0
		}
		if rng.Intn(20) == 0 {
			recs[i].Error = "upstream: 529 overloaded"
		}
	}
	return recs
}

// ToolCalls makes n tool calls as Inferences makes inferences.
func ToolCalls(seed int64, n int, from, to time.Time) []ledger.ToolCall {
	rng := rand.New(rand.NewSource(seed))
	times := distinctTimes(rng, n, from, to)
	recs := make([]ledger.ToolCall, n)
	for i, tm := range times {
		recs[i] = ledger.ToolCall{
			Time:       tm,
			SessionID:  fmt.Sprintf("s%d", rng.Intn(5)),
			CallID:     fmt.Sprintf("call-%d-%d", seed, i),
			Name:       []string{"read_file", "shell", "kora__get_burn"}[rng.Intn(3)],
			Status:     []string{"ok", "error", "blocked", "provided_by:kora"}[rng.Intn(4)],
			AnsweredBy: []string{"native", "kora", "blocked"}[rng.Intn(3)],
			IsError:    rng.Intn(6) == 0,
			Arguments:  json.RawMessage(fmt.Sprintf(`{"path":"/tmp/f%d","n":%d,"nested":{"ok":true}}`, i, rng.Intn(1000))),
			DurationMS: float64(rng.Intn(10_000_000)) / 1000,
		}
		if recs[i].IsError {
			recs[i].Error = "exit status 1"
		}
	}
	return recs
}

func distinctTimes(rng *rand.Rand, n int, from, to time.Time) []time.Time {
	span := to.UnixMilli() - from.UnixMilli()
	seen := map[int64]bool{}
	var ms []int64
	// Day boundaries inside the span, so "at since" and "at midnight"
	// are both exercised.
	for d := from.Truncate(day).Add(day); d.Before(to) && len(ms) < n/4; d = d.Add(day) {
		seen[d.UnixMilli()] = true
		ms = append(ms, d.UnixMilli())
	}
	for len(ms) < n {
		m := from.UnixMilli() + rng.Int63n(span)
		if !seen[m] {
			seen[m] = true
			ms = append(ms, m)
		}
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i] < ms[j] })
	times := make([]time.Time, n)
	for i, m := range ms {
		times[i] = time.UnixMilli(m).UTC()
	}
	return times
}

// AppendAll appends recs one by one.
func AppendAll(t testing.TB, s ledger.Store, infs []ledger.Inference, calls []ledger.ToolCall) {
	t.Helper()
	ctx := context.Background()
	for _, r := range infs {
		if err := s.AppendInference(ctx, r); err != nil {
			t.Fatalf("append inference: %v", err)
		}
	}
	for _, r := range calls {
		if err := s.AppendToolCall(ctx, r); err != nil {
			t.Fatalf("append tool call: %v", err)
		}
	}
}

type groupKey struct{ model, route string }

// ExpectedBurn is Burn computed in Go from the records.
func ExpectedBurn(recs []ledger.Inference, since time.Time) []ledger.BurnGroup {
	m := map[groupKey]*ledger.BurnGroup{}
	for _, r := range recs {
		if !since.IsZero() && r.Time.Before(since) {
			continue
		}
		k := groupKey{r.Model, r.Route}
		g := m[k]
		if g == nil {
			g = &ledger.BurnGroup{Model: r.Model, Route: r.Route}
			m[k] = g
		}
		g.Inferences++
		if r.Escalated {
			g.Escalated++
		}
		g.InputTokens += int64(r.InputTokens)
		g.OutputTokens += int64(r.OutputTokens)
		g.CostNanoUSD += ledger.NanoUSD(r.CostUSD)
		g.Unpriced = g.Unpriced || r.Unpriced
	}
	out := make([]ledger.BurnGroup, 0, len(m))
	for _, g := range m {
		out = append(out, *g)
	}
	sortGroups(out)
	return out
}

func sortGroups(gs []ledger.BurnGroup) {
	sort.Slice(gs, func(i, j int) bool {
		if gs[i].Model != gs[j].Model {
			return gs[i].Model < gs[j].Model
		}
		return gs[i].Route < gs[j].Route
	})
}

// CheckBurn compares s.Burn(since) with the totals computed in Go.
func CheckBurn(t testing.TB, s ledger.Store, recs []ledger.Inference, since time.Time) {
	t.Helper()
	got, err := s.Burn(context.Background(), since)
	if err != nil {
		t.Fatalf("burn since %v: %v", since, err)
	}
	got = append([]ledger.BurnGroup(nil), got...)
	sortGroups(got)
	want := ExpectedBurn(recs, since)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("burn since %v:\n got %+v\nwant %+v", since, got, want)
	}
}

// SameInference says how a stored inference differs from the one
// appended ("" when it does not): times to the millisecond, cost in
// nano-dollars, durations to the microsecond.
func SameInference(got, want ledger.Inference) string {
	var d []string
	if !got.Time.Equal(want.Time.Truncate(time.Millisecond)) {
		d = append(d, fmt.Sprintf("time %v != %v", got.Time, want.Time))
	}
	if ledger.NanoUSD(got.CostUSD) != ledger.NanoUSD(want.CostUSD) {
		d = append(d, fmt.Sprintf("cost %v != %v", got.CostUSD, want.CostUSD))
	}
	if us(got.DurationMS) != us(want.DurationMS) {
		d = append(d, fmt.Sprintf("duration %v != %v", got.DurationMS, want.DurationMS))
	}
	g, w := got, want
	g.Time, w.Time, g.CostUSD, w.CostUSD, g.DurationMS, w.DurationMS = time.Time{}, time.Time{}, 0, 0, 0, 0
	if g != w {
		d = append(d, fmt.Sprintf("fields %+v != %+v", g, w))
	}
	return strings.Join(d, "; ")
}

// SameToolCall is SameInference for tool calls; arguments compare as
// JSON values.
func SameToolCall(got, want ledger.ToolCall) string {
	var d []string
	if !got.Time.Equal(want.Time.Truncate(time.Millisecond)) {
		d = append(d, fmt.Sprintf("time %v != %v", got.Time, want.Time))
	}
	if us(got.DurationMS) != us(want.DurationMS) {
		d = append(d, fmt.Sprintf("duration %v != %v", got.DurationMS, want.DurationMS))
	}
	if !sameJSON(got.Arguments, want.Arguments) {
		d = append(d, fmt.Sprintf("arguments %s != %s", got.Arguments, want.Arguments))
	}
	g, w := got, want
	g.Time, w.Time, g.DurationMS, w.DurationMS, g.Arguments, w.Arguments = time.Time{}, time.Time{}, 0, 0, nil, nil
	if fmt.Sprintf("%+v", g) != fmt.Sprintf("%+v", w) {
		d = append(d, fmt.Sprintf("fields %+v != %+v", g, w))
	}
	return strings.Join(d, "; ")
}

func us(ms float64) int64 { return int64(math.Round(ms * 1000)) }

func sameJSON(a, b json.RawMessage) bool {
	if len(bytes.TrimSpace(a)) == 0 || len(bytes.TrimSpace(b)) == 0 {
		return len(bytes.TrimSpace(a)) == len(bytes.TrimSpace(b))
	}
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return bytes.Equal(a, b)
	}
	ja, _ := json.Marshal(va)
	jb, _ := json.Marshal(vb)
	return bytes.Equal(ja, jb)
}

// ExportAll returns every retained record at or after since, in the
// order the store exported them.
func ExportAll(t testing.TB, s ledger.Store, since time.Time) ([]ledger.Inference, []ledger.ToolCall) {
	t.Helper()
	var infs []ledger.Inference
	var calls []ledger.ToolCall
	ctx := context.Background()
	if err := s.ExportInferences(ctx, since, func(r ledger.Inference) error { infs = append(infs, r); return nil }); err != nil {
		t.Fatalf("export inferences: %v", err)
	}
	if err := s.ExportToolCalls(ctx, since, func(r ledger.ToolCall) error { calls = append(calls, r); return nil }); err != nil {
		t.Fatalf("export tool calls: %v", err)
	}
	return infs, calls
}

func testRoundTrip(t *testing.T, open Opener) {
	s := open(t, SuiteOptions(t, &Log{}))
	ctx := ctxT(t)
	inf := ledger.Inference{
		Time: time.Date(2026, 3, 14, 23, 59, 59, 999_000_000, time.UTC), SessionID: "sess-ü-1", Iteration: 7,
		Model: "cloud-pro", Route: "escalation", InputTokens: 123456, OutputTokens: 7890,
		CostUSD: 1.234567891, Unpriced: false, Escalated: true, Reason: "long context; \"quoted\" \n newline",
		StopReason: "max_tokens", DurationMS: 12.345, Error: "upstream: 529",
	}
	unpriced := ledger.Inference{Time: inf.Time.Add(time.Millisecond), Model: "mystery", Route: "gateway", InputTokens: 1, Unpriced: true}
	call := ledger.ToolCall{
		Time: inf.Time, SessionID: "sess-ü-1", CallID: "call_9", Name: "shell", Status: "provided_by:kora",
		AnsweredBy: "kora", IsError: true, Error: "exit status 2",
		Arguments: json.RawMessage(`{"cmd":"ls -la","env":{"A":"1"},"n":[1,2,3]}`), DurationMS: 0.001,
	}
	bare := ledger.ToolCall{Time: call.Time.Add(time.Millisecond), Name: "read_file", Status: "ok", AnsweredBy: "native"}
	AppendAll(t, s, []ledger.Inference{inf, unpriced}, []ledger.ToolCall{call, bare})

	infs, total, err := s.RecentInferences(ctx, 10)
	if err != nil || total != 2 || len(infs) != 2 {
		t.Fatalf("recent inferences: %d of %d, %v", len(infs), total, err)
	}
	for i, want := range []ledger.Inference{unpriced, inf} {
		if d := SameInference(infs[i], want); d != "" {
			t.Errorf("recent inference %d: %s", i, d)
		}
	}
	calls, total, err := s.RecentToolCalls(ctx, 10)
	if err != nil || total != 2 || len(calls) != 2 {
		t.Fatalf("recent tool calls: %d of %d, %v", len(calls), total, err)
	}
	for i, want := range []ledger.ToolCall{bare, call} {
		if d := SameToolCall(calls[i], want); d != "" {
			t.Errorf("recent tool call %d: %s", i, d)
		}
	}
	einfs, ecalls := ExportAll(t, s, time.Time{})
	if len(einfs) != 2 || len(ecalls) != 2 {
		t.Fatalf("export: %d inferences, %d tool calls", len(einfs), len(ecalls))
	}
	for i, want := range []ledger.Inference{inf, unpriced} {
		if d := SameInference(einfs[i], want); d != "" {
			t.Errorf("exported inference %d: %s", i, d)
		}
	}
	for i, want := range []ledger.ToolCall{call, bare} {
		if d := SameToolCall(ecalls[i], want); d != "" {
			t.Errorf("exported tool call %d: %s", i, d)
		}
	}
	CheckBurn(t, s, []ledger.Inference{inf, unpriced}, time.Time{})
}

func testStamp(t *testing.T, open Opener) {
	now := time.Date(2026, 3, 15, 10, 0, 0, 123_456_789, time.UTC)
	o := SuiteOptions(t, &Log{})
	o.Now = func() time.Time { return now }
	s := open(t, o)
	ctx := ctxT(t)
	if err := s.AppendInference(ctx, ledger.Inference{Model: "m", Route: "r"}); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendToolCall(ctx, ledger.ToolCall{Name: "n", Status: "ok", AnsweredBy: "native"}); err != nil {
		t.Fatal(err)
	}
	want := now.Truncate(time.Millisecond)
	infs, _, err := s.RecentInferences(ctx, 1)
	if err != nil || len(infs) != 1 || !infs[0].Time.Equal(want) {
		t.Fatalf("stamped inference: %+v, %v; want time %v", infs, err, want)
	}
	calls, _, err := s.RecentToolCalls(ctx, 1)
	if err != nil || len(calls) != 1 || !calls[0].Time.Equal(want) {
		t.Fatalf("stamped tool call: %+v, %v; want time %v", calls, err, want)
	}
	// The stamp counts in its own day: burn today sees it.
	CheckBurn(t, s, []ledger.Inference{{Time: want, Model: "m", Route: "r"}}, now.Truncate(day))
}

// burnSinces are the windows the suite checks: all time, day boundaries,
// off-boundary starts (a 7d window), at a record and a millisecond after
// it, and the future.
func burnSinces(recs []ledger.Inference) []time.Time {
	mid := recs[len(recs)/2].Time
	return []time.Time{
		{},
		Base.Truncate(day),
		Base.Truncate(day).Add(-7 * day),
		Base.Add(-7 * day),
		Base.Add(-36*time.Hour + 17*time.Minute),
		mid,
		mid.Add(time.Millisecond),
		mid.Add(-time.Millisecond),
		Base.Add(-30 * day),
		Base.Add(day),
	}
}

func testBurnWindows(t *testing.T, open Opener) {
	s := open(t, SuiteOptions(t, &Log{}))
	recs := Inferences(1, 400, Base.Add(-20*day), Base)
	AppendAll(t, s, recs, nil)
	for _, since := range burnSinces(recs) {
		CheckBurn(t, s, recs, since)
	}
}

func testRecent(t *testing.T, open Opener) {
	s := open(t, SuiteOptions(t, &Log{}))
	ctx := ctxT(t)
	infs := Inferences(2, 60, Base.Add(-3*day), Base)
	calls := ToolCalls(3, 50, Base.Add(-3*day), Base)
	// Appended in time order, as a live Kora does; what "newest" means
	// for records arriving out of time order (imports, hosts with skewed
	// clocks) is not pinned down here.
	AppendAll(t, s, infs, calls)

	for _, limit := range []int{1, 10, 60, 1000} {
		got, total, err := s.RecentInferences(ctx, limit)
		if err != nil || total != int64(len(infs)) || len(got) != min(limit, len(infs)) {
			t.Fatalf("recent inferences limit %d: %d records, total %d, %v", limit, len(got), total, err)
		}
		for i := range got {
			if d := SameInference(got[i], infs[len(infs)-1-i]); d != "" {
				t.Fatalf("recent inferences limit %d, #%d: %s", limit, i, d)
			}
		}
		gotC, totalC, err := s.RecentToolCalls(ctx, limit)
		if err != nil || totalC != int64(len(calls)) || len(gotC) != min(limit, len(calls)) {
			t.Fatalf("recent tool calls limit %d: %d records, total %d, %v", limit, len(gotC), totalC, err)
		}
		for i := range gotC {
			if d := SameToolCall(gotC[i], calls[len(calls)-1-i]); d != "" {
				t.Fatalf("recent tool calls limit %d, #%d: %s", limit, i, d)
			}
		}
	}
}

// testExport imports enough records, many sharing a millisecond, to take
// the export over several pages, and checks each comes out once, in time
// order, from since on.
func testExport(t *testing.T, open Opener) {
	o := SuiteOptions(t, &Log{})
	s := open(t, o)
	ctx := ctxT(t)
	const n = 5003
	infs := make([]ledger.Inference, n)
	calls := make([]ledger.ToolCall, n)
	start := Base.Add(-2 * day)
	for i := range n {
		// Three records per instant: pages must not split or repeat
		// records that share a time.
		tm := start.Add(time.Duration(i/3) * time.Second)
		infs[i] = ledger.Inference{Time: tm, SessionID: fmt.Sprint(i), Iteration: i, Model: models[i%4], Route: routes[i%3], InputTokens: i, CostUSD: float64(i) / 1e6}
		calls[i] = ledger.ToolCall{Time: tm, CallID: fmt.Sprint(i), Name: "shell", Status: "ok", AnsweredBy: "native", Arguments: json.RawMessage(fmt.Sprintf(`{"i":%d}`, i))}
	}
	dir := t.TempDir()
	WriteJSONL(t, filepath.Join(dir, ledger.InferencesFile), infs)
	WriteJSONL(t, filepath.Join(dir, ledger.ToolCallsFile), calls)
	st, err := s.ImportJSONL(ctx, dir)
	if err != nil || st.Inferences != n || st.ToolCalls != n {
		t.Fatalf("import: %+v, %v", st, err)
	}
	for _, since := range []time.Time{{}, infs[1000].Time, infs[1000].Time.Add(time.Millisecond), Base} {
		einfs, ecalls := ExportAll(t, s, since)
		var wantI []ledger.Inference
		for _, r := range infs {
			if !r.Time.Before(since) {
				wantI = append(wantI, r)
			}
		}
		if len(einfs) != len(wantI) || len(ecalls) != len(wantI) {
			t.Fatalf("export since %v: %d inferences and %d tool calls, want %d of each", since, len(einfs), len(ecalls), len(wantI))
		}
		seenI, seenC := map[string]bool{}, map[string]bool{}
		for i := range einfs {
			if i > 0 && (einfs[i].Time.Before(einfs[i-1].Time) || ecalls[i].Time.Before(ecalls[i-1].Time)) {
				t.Fatalf("export since %v not oldest first at #%d", since, i)
			}
			if seenI[einfs[i].SessionID] || seenC[ecalls[i].CallID] {
				t.Fatalf("export since %v repeats a record at #%d", since, i)
			}
			seenI[einfs[i].SessionID], seenC[ecalls[i].CallID] = true, true
			if einfs[i].Time.Before(since) || ecalls[i].Time.Before(since) {
				t.Fatalf("export since %v returned a record from %v", since, einfs[i].Time)
			}
		}
		for _, r := range wantI {
			if !seenI[r.SessionID] {
				t.Fatalf("export since %v lost inference %s", since, r.SessionID)
			}
		}
	}
}

func testExportStops(t *testing.T, open Opener) {
	s := open(t, SuiteOptions(t, &Log{}))
	infs := Inferences(5, 30, Base.Add(-day), Base)
	calls := ToolCalls(6, 30, Base.Add(-day), Base)
	AppendAll(t, s, infs, calls)
	stop := errors.New("reader went away")
	n := 0
	err := s.ExportInferences(ctxT(t), time.Time{}, func(ledger.Inference) error {
		n++
		if n == 5 {
			return stop
		}
		return nil
	})
	if err != stop || n != 5 {
		t.Fatalf("export inferences after fn failed: %v after %d records, want %v after 5", err, n, stop)
	}
	n = 0
	err = s.ExportToolCalls(ctxT(t), time.Time{}, func(ledger.ToolCall) error { n++; return stop })
	if err != stop || n != 1 {
		t.Fatalf("export tool calls after fn failed: %v after %d records", err, n)
	}
}

func testPrune(t *testing.T, open Opener) {
	s := open(t, SuiteOptions(t, &Log{}))
	ctx := ctxT(t)
	infs := Inferences(7, 300, Base.Add(-20*day), Base)
	calls := ToolCalls(8, 200, Base.Add(-20*day), Base)
	AppendAll(t, s, infs, calls)

	before := Base.Add(-10*day + 5*time.Hour) // off a day boundary
	horizon := before.Truncate(day)
	var oldI, oldC int64
	for _, r := range infs {
		if r.Time.Before(horizon) {
			oldI++
		}
	}
	for _, r := range calls {
		if r.Time.Before(horizon) {
			oldC++
		}
	}
	st, err := s.Prune(ctx, before)
	if err != nil || st.Inferences != oldI || st.ToolCalls != oldC {
		t.Fatalf("prune before %v: %+v, %v; want %d inferences and %d tool calls deleted", before, st, err, oldI, oldC)
	}
	// All-time and day-aligned reports stay exact; windows inside the
	// retained details too.
	for _, since := range []time.Time{{}, horizon, horizon.Add(-3 * day), Base.Add(-7 * day), Base.Truncate(day), infs[len(infs)-5].Time} {
		CheckBurn(t, s, infs, since)
	}
	if _, total, err := s.RecentInferences(ctx, 1); err != nil || total != int64(len(infs)) {
		t.Fatalf("recent inferences total after prune: %d, %v; want %d", total, err, len(infs))
	}
	if _, total, err := s.RecentToolCalls(ctx, 1); err != nil || total != int64(len(calls)) {
		t.Fatalf("recent tool calls total after prune: %d, %v; want %d", total, err, len(calls))
	}
	einfs, ecalls := ExportAll(t, s, time.Time{})
	if int64(len(einfs)) != int64(len(infs))-oldI || int64(len(ecalls)) != int64(len(calls))-oldC {
		t.Fatalf("after prune %d inferences and %d tool calls retained, want %d and %d", len(einfs), len(ecalls), int64(len(infs))-oldI, int64(len(calls))-oldC)
	}
	for _, r := range einfs {
		if r.Time.Before(horizon) {
			t.Fatalf("inference at %v survived prune before %v", r.Time, horizon)
		}
	}
	if st, err := s.Prune(ctx, before); err != nil || st.Inferences != 0 || st.ToolCalls != 0 {
		t.Fatalf("second prune: %+v, %v; want nothing deleted", st, err)
	}
	more := Inferences(9, 20, Base.Add(-day), Base)
	AppendAll(t, s, more, nil)
	CheckBurn(t, s, append(append([]ledger.Inference(nil), infs...), more...), time.Time{})
}

// WriteJSONL writes records as an earlier Kora's ledger did: one JSON
// object a line.
func WriteJSONL[T any](t testing.TB, path string, recs []T) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var b bytes.Buffer
	for _, r := range recs {
		line, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	if _, err := f.Write(b.Bytes()); err != nil {
		t.Fatal(err)
	}
}

func appendRaw(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func testImport(t *testing.T, open Opener) {
	log := &Log{}
	s := open(t, SuiteOptions(t, log))
	ctx := ctxT(t)
	dir := t.TempDir()
	infs := Inferences(10, 120, Base.Add(-5*day), Base.Add(-day))
	calls := ToolCalls(11, 80, Base.Add(-5*day), Base.Add(-day))
	infPath, callPath := filepath.Join(dir, ledger.InferencesFile), filepath.Join(dir, ledger.ToolCallsFile)
	WriteJSONL(t, infPath, infs[:60])
	appendRaw(t, infPath, "{\"time\": \"not a time\", \"model\": \n") // a corrupt line mid-file
	WriteJSONL(t, infPath, infs[60:100])
	WriteJSONL(t, callPath, calls[:50])
	before := map[string][]byte{}
	for _, p := range []string{infPath, callPath} {
		b, _ := os.ReadFile(p)
		before[p] = b
	}

	st, err := s.ImportJSONL(ctx, dir)
	if err != nil || st.Inferences != 100 || st.ToolCalls != 50 || st.Skipped != 1 {
		t.Fatalf("first import: %+v, %v; want 100 inferences, 50 tool calls, 1 skipped", st, err)
	}
	if log.Count("WARN") == 0 {
		t.Error("the corrupt line was skipped without a WARN")
	}
	st, err = s.ImportJSONL(ctx, dir)
	if err != nil || st != (ledger.ImportStats{}) {
		t.Fatalf("second import of the same files: %+v, %v; want nothing", st, err)
	}
	other := t.TempDir()
	copyFile(t, infPath, filepath.Join(other, ledger.InferencesFile))
	copyFile(t, callPath, filepath.Join(other, ledger.ToolCallsFile))
	if st, err = s.ImportJSONL(ctx, other); err != nil || st.Inferences != 0 || st.ToolCalls != 0 {
		t.Fatalf("import of a copy in another directory: %+v, %v; want nothing", st, err)
	}
	for p, b := range before {
		if now, _ := os.ReadFile(p); !bytes.Equal(now, b) {
			t.Fatalf("import changed %s", p)
		}
	}
	// Lines appended since are imported, and only they.
	WriteJSONL(t, infPath, infs[100:])
	WriteJSONL(t, callPath, calls[50:])
	if st, err = s.ImportJSONL(ctx, dir); err != nil || st.Inferences != 20 || st.ToolCalls != 30 {
		t.Fatalf("import of appended lines: %+v, %v; want 20 and 30", st, err)
	}
	einfs, ecalls := ExportAll(t, s, time.Time{})
	if len(einfs) != len(infs) || len(ecalls) != len(calls) {
		t.Fatalf("after imports: %d inferences, %d tool calls; want %d and %d", len(einfs), len(ecalls), len(infs), len(calls))
	}
	for i := range infs {
		if d := SameInference(einfs[i], infs[i]); d != "" {
			t.Fatalf("imported inference %d: %s", i, d)
		}
	}
	for i := range calls {
		if d := SameToolCall(ecalls[i], calls[i]); d != "" {
			t.Fatalf("imported tool call %d: %s", i, d)
		}
	}
	CheckBurn(t, s, infs, time.Time{})
	CheckBurn(t, s, infs, Base.Add(-3*day))
	if _, total, err := s.RecentToolCalls(ctx, 1); err != nil || total != int64(len(calls)) {
		t.Fatalf("tool calls total after import: %d, %v", total, err)
	}
}

func testOpenImports(t *testing.T, open Opener) {
	o := SuiteOptions(t, &Log{})
	infs := Inferences(12, 40, Base.Add(-2*day), Base)
	calls := ToolCalls(13, 30, Base.Add(-2*day), Base)
	WriteJSONL(t, filepath.Join(o.StateDir, ledger.InferencesFile), infs)
	WriteJSONL(t, filepath.Join(o.StateDir, ledger.ToolCallsFile), calls)
	s := open(t, o)
	ctx := ctxT(t)
	if _, total, err := s.RecentInferences(ctx, 1); err != nil || total != int64(len(infs)) {
		t.Fatalf("inferences after Open: %d, %v; want the state directory's %d", total, err, len(infs))
	}
	if _, total, err := s.RecentToolCalls(ctx, 1); err != nil || total != int64(len(calls)) {
		t.Fatalf("tool calls after Open: %d, %v; want %d", total, err, len(calls))
	}
	CheckBurn(t, s, infs, time.Time{})
	if st, err := s.ImportJSONL(ctx, o.StateDir); err != nil || st.Inferences != 0 || st.ToolCalls != 0 {
		t.Fatalf("import after Open imported: %+v, %v", st, err)
	}
}

func testConcurrentGoroutines(t *testing.T, open Opener) {
	s := open(t, SuiteOptions(t, &Log{}))
	const writers, each = 8, 25
	all := make([][]ledger.Inference, writers)
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		all[w] = Inferences(int64(100+w), each, Base.Add(-2*day), Base)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, r := range all[w] {
				if err := s.AppendInference(context.Background(), r); err != nil {
					errs <- err
					return
				}
				if err := s.AppendToolCall(context.Background(), ledger.ToolCall{Time: r.Time, CallID: r.SessionID, Name: "x", Status: "ok", AnsweredBy: "native"}); err != nil {
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
	var flat []ledger.Inference
	for _, recs := range all {
		flat = append(flat, recs...)
	}
	CheckAll(t, s, flat)
}

// CheckAll checks that s holds exactly recs, each once and intact, and
// that the daily totals equal the details: burn over all time (the
// totals) and burn computed from the exported details agree with Go.
func CheckAll(t testing.TB, s ledger.Store, recs []ledger.Inference) {
	t.Helper()
	ctx := context.Background()
	_, total, err := s.RecentInferences(ctx, 1)
	if err != nil || total != int64(len(recs)) {
		t.Fatalf("total inferences: %d, %v; want %d", total, err, len(recs))
	}
	einfs, _ := ExportAll(t, s, time.Time{})
	if len(einfs) != len(recs) {
		t.Fatalf("exported %d inferences, want %d", len(einfs), len(recs))
	}
	byID := map[string]ledger.Inference{}
	for _, r := range recs {
		byID[r.SessionID+"/"+fmt.Sprint(r.Iteration)] = r
	}
	seen := map[string]bool{}
	for _, r := range einfs {
		id := r.SessionID + "/" + fmt.Sprint(r.Iteration)
		want, ok := byID[id]
		if !ok || seen[id] {
			t.Fatalf("inference %s unknown or stored twice", id)
		}
		seen[id] = true
		if d := SameInference(r, want); d != "" {
			t.Fatalf("inference %s: %s", id, d)
		}
	}
	CheckBurn(t, s, recs, time.Time{})
	if fmt.Sprint(ExpectedBurn(einfs, time.Time{})) != fmt.Sprint(ExpectedBurn(recs, time.Time{})) {
		t.Fatal("the stored details do not add up to the totals")
	}
	_, totalC, err := s.RecentToolCalls(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	_, ecalls := ExportAll(t, s, time.Time{})
	if totalC != int64(len(ecalls)) {
		t.Fatalf("tool call totals %d != %d details", totalC, len(ecalls))
	}
}

func testCancelled(t *testing.T, open Opener) {
	s := open(t, SuiteOptions(t, &Log{}))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.AppendInference(ctx, ledger.Inference{Model: "m", Route: "r"}); err == nil {
		t.Fatal("append with a cancelled context succeeded")
	}
	if err := s.AppendToolCall(ctx, ledger.ToolCall{Name: "n", Status: "ok", AnsweredBy: "native"}); err == nil {
		t.Fatal("tool call append with a cancelled context succeeded")
	}
	if _, err := s.Burn(ctx, time.Time{}); err == nil {
		t.Fatal("burn with a cancelled context succeeded")
	}
	live := ctxT(t)
	if _, total, err := s.RecentInferences(live, 1); err != nil || total != 0 {
		t.Fatalf("after cancelled appends: total %d, %v; want 0", total, err)
	}
	if _, total, err := s.RecentToolCalls(live, 1); err != nil || total != 0 {
		t.Fatalf("after cancelled appends: tool call total %d, %v; want 0", total, err)
	}
}

func testClosed(t *testing.T, open Opener) {
	s := open(t, SuiteOptions(t, &Log{}))
	ctx := ctxT(t)
	if err := s.AppendInference(ctx, ledger.Inference{Model: "m", Route: "r"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	checks := map[string]error{}
	checks["append inference"] = s.AppendInference(ctx, ledger.Inference{Model: "m", Route: "r"})
	checks["append tool call"] = s.AppendToolCall(ctx, ledger.ToolCall{Name: "n", Status: "ok", AnsweredBy: "native"})
	_, checks["burn"] = s.Burn(ctx, time.Time{})
	_, _, checks["recent inferences"] = s.RecentInferences(ctx, 1)
	_, _, checks["recent tool calls"] = s.RecentToolCalls(ctx, 1)
	checks["export"] = s.ExportToolCalls(ctx, time.Time{}, func(ledger.ToolCall) error { return nil })
	_, checks["import"] = s.ImportJSONL(ctx, t.TempDir())
	_, checks["prune"] = s.Prune(ctx, Base)
	for op, err := range checks {
		if err == nil {
			t.Errorf("%s after Close succeeded", op)
		} else if !strings.Contains(err.Error(), "kora: ledger") {
			t.Errorf("%s after Close: %q does not say it is the ledger's", op, err)
		}
	}
	_ = s.Close() // a second Close must not panic; its error is the backend's business
}

// testAppendBatch: a batch lands whole, each stream in its order, its
// totals exact across days; a zero time is stamped; a batch that fails
// leaves nothing behind.
func testAppendBatch(t *testing.T, open Opener) {
	o := SuiteOptions(t, &Log{})
	s := open(t, o)
	ctx := ctxT(t)
	infs := Inferences(7, 300, Base.Add(-3*day), Base)
	calls := ToolCalls(8, 200, Base.Add(-3*day), Base)
	if err := s.AppendBatch(ctx, infs[:150], calls[:120]); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendBatch(ctx, infs[150:], nil); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendBatch(ctx, nil, calls[120:]); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendBatch(ctx, nil, nil); err != nil {
		t.Fatalf("an empty batch: %v", err)
	}
	einfs, ecalls := ExportAll(t, s, time.Time{})
	if len(einfs) != len(infs) || len(ecalls) != len(calls) {
		t.Fatalf("export after batches: %d inferences, %d tool calls; want %d and %d", len(einfs), len(ecalls), len(infs), len(calls))
	}
	for i := range infs {
		if d := SameInference(einfs[i], infs[i]); d != "" {
			t.Fatalf("inference %d: %s", i, d)
		}
	}
	for i := range calls {
		if d := SameToolCall(ecalls[i], calls[i]); d != "" {
			t.Fatalf("tool call %d: %s", i, d)
		}
	}
	for _, since := range []time.Time{{}, Base.Add(-2 * day).Truncate(day), Base.Add(-36 * time.Hour)} {
		CheckBurn(t, s, infs, since)
	}
	if _, total, err := s.RecentToolCalls(ctx, 1); err != nil || total != int64(len(calls)) {
		t.Fatalf("tool calls ever recorded = %d (%v), want %d", total, err, len(calls))
	}

	stamped := open(t, SuiteOptions(t, &Log{}))
	if err := stamped.AppendBatch(ctx, []ledger.Inference{{Model: "m", Route: "r"}}, []ledger.ToolCall{{Name: "n", Status: "ok", AnsweredBy: "native"}}); err != nil {
		t.Fatal(err)
	}
	sinfs, scalls := ExportAll(t, stamped, time.Time{})
	if len(sinfs) != 1 || len(scalls) != 1 || sinfs[0].Time.IsZero() || !sinfs[0].Time.Equal(scalls[0].Time) {
		t.Fatalf("a batch of zero times was stamped %+v / %+v, want one stamp for both", sinfs, scalls)
	}

	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	empty := open(t, SuiteOptions(t, &Log{}))
	if err := empty.AppendBatch(cancelled, infs[:10], calls[:10]); err == nil {
		t.Fatal("a batch with a cancelled context succeeded")
	}
	if _, total, err := empty.RecentInferences(ctx, 1); err != nil || total != 0 {
		t.Fatalf("after a failed batch: %d inferences recorded (%v), want none", total, err)
	}
	if e, c := ExportAll(t, empty, time.Time{}); len(e) != 0 || len(c) != 0 {
		t.Fatalf("after a failed batch: %d inferences and %d tool calls exported, want none", len(e), len(c))
	}
}
