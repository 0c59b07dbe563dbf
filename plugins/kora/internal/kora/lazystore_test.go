package kora

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/syncbuf"
	"github.com/hookhost/hookhost/plugins/kora/internal/bridge"
	"github.com/hookhost/hookhost/plugins/kora/internal/ledger"
	"github.com/hookhost/hookhost/plugins/sdk"
)

// garbage is what a database file holds after something else overwrote it.
var garbage = []byte(strings.Repeat("this is not an SQLite database\n", 200))

// A state directory whose ledger.db is garbage: Kora still configures and
// stays up, its tools answer ledger_corrupt, appends fail with the same
// error, and once a good file is in place the tools work again without
// a new Configure.
func TestCorruptDatabaseDoesNotStopKora(t *testing.T) {
	defer func(d time.Duration) { reopenEvery = d }(reopenEvery)
	reopenEvery = 0 // every use tries again; the pacing has its own test
	dir := t.TempDir()
	db := filepath.Join(dir, ledger.DefaultSQLiteFile)
	if err := os.WriteFile(db, garbage, 0o600); err != nil {
		t.Fatal(err)
	}
	p := New()
	ctx := context.Background()
	if err := p.Configure(ctx, json.RawMessage(fmt.Sprintf(`{"state_dir": %q}`, dir))); err != nil {
		t.Fatalf("a corrupt database failed Configure: %v", err)
	}
	t.Cleanup(func() { p.Close() })
	burn := func() *hooks.ToolResult {
		t.Helper()
		r, err := hooks.Ask[*hooks.ToolResult](ctx, sdk.Adapt(p), hooks.PreToolCallCanProvideResult,
			hooks.ToolCallRequest{Name: bridge.ToolBurn, Arguments: json.RawMessage(`{"window":"all"}`)})
		if err != nil || r == nil {
			t.Fatalf("burn: %+v, %v", r, err)
		}
		return r
	}
	for range 3 {
		if r := burn(); !r.IsError || !strings.Contains(r.Content, "kora_tool_dispatch_error: ledger_corrupt: ") {
			t.Fatalf("burn on a garbage database = %s, want ledger_corrupt", r.Content)
		}
	}
	// A record is queued whatever the database; the writer reports why
	// it cannot commit it, and keeps it.
	if err := p.PostLLMCall(ctx, hooks.Inference{Model: "offline-small", Route: hooks.RouteGateway, Usage: hooks.Usage{InputTokens: 5}}); err != nil {
		t.Fatalf("queueing a record while the database is corrupt: %v", err)
	}
	if err := p.flushLedger(ctx); ledger.KindOf(err) != ledger.KindCorrupt {
		t.Fatalf("writing to a garbage database = %v, want a ledger_corrupt error", err)
	}
	if got, _ := os.ReadFile(db); string(got) != string(garbage) {
		t.Fatal("Kora changed the corrupt file; it must leave it for the operator")
	}

	// The operator moves the bad file aside.
	if err := os.Rename(db, db+".bad"); err != nil {
		t.Fatal(err)
	}
	if err := p.PostLLMCall(ctx, hooks.Inference{Model: "offline-small", Route: hooks.RouteGateway, Usage: hooks.Usage{InputTokens: 7}}); err != nil {
		t.Fatalf("append after the fix: %v", err)
	}
	r := burn()
	var b bridge.Burn
	if r.IsError || json.Unmarshal([]byte(r.Content), &b) != nil || b.Inferences != 2 || b.InputTokens != 12 {
		t.Fatalf("burn after the fix = %s, want both inferences: the one kept while the database was corrupt, and the one since", r.Content)
	}
}

// fakeClock is a clock that moves only when told.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

// A broken database is opened again at most once per reopenEvery, and
// each kind of failure is logged at ERROR once per relogEvery, not once a
// call.
func TestLazyStorePacesReopensAndErrorLines(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, ledger.DefaultSQLiteFile)
	if err := os.WriteFile(db, garbage, 0o600); err != nil {
		t.Fatal(err)
	}
	logs := &syncbuf.Buffer{}
	log := hclog.New(&hclog.LoggerOptions{Output: logs, Level: hclog.Debug})
	clock := &fakeClock{t: time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)}
	l := newLazyStore(ledger.Options{StateDir: dir}, log)
	l.now = clock.now
	t.Cleanup(func() { l.Close() })
	ctx := context.Background()
	errorLines := func() int { return strings.Count(logs.String(), "[ERROR]") }

	for range 5 {
		if _, err := l.Burn(ctx, time.Time{}); ledger.KindOf(err) != ledger.KindCorrupt {
			t.Fatalf("burn = %v, want ledger_corrupt", err)
		}
	}
	if n := errorLines(); n != 1 {
		t.Fatalf("%d ERROR lines for five failing calls, want 1:\n%s", n, logs)
	}
	if !strings.Contains(logs.String(), "kind=ledger_corrupt") || !strings.Contains(logs.String(), "move it aside") {
		t.Errorf("the ERROR line does not say the kind and what to do:\n%s", logs)
	}

	// Fixed, but within reopenEvery of the last try: still the old error,
	// without touching the database.
	if err := os.Remove(db); err != nil {
		t.Fatal(err)
	}
	clock.advance(reopenEvery / 2)
	if _, err := l.Burn(ctx, time.Time{}); ledger.KindOf(err) != ledger.KindCorrupt {
		t.Fatalf("burn within reopenEvery of a failed open = %v, want the remembered error", err)
	}
	if _, err := os.Stat(db); !os.IsNotExist(err) {
		t.Fatalf("the database was opened again within reopenEvery (stat: %v)", err)
	}
	clock.advance(reopenEvery)
	if _, err := l.Burn(ctx, time.Time{}); err != nil {
		t.Fatalf("burn after reopenEvery, with the file fixed: %v", err)
	}
	if !strings.Contains(logs.String(), "open again") {
		t.Errorf("recovery not logged:\n%s", logs)
	}

	// Another broken ledger: its failures within relogEvery of its first
	// ERROR line are quiet, and one after it is worth a new line.
	before := errorLines()
	bad := t.TempDir()
	if err := os.WriteFile(filepath.Join(bad, ledger.DefaultSQLiteFile), garbage, 0o600); err != nil {
		t.Fatal(err)
	}
	l2 := newLazyStore(ledger.Options{StateDir: bad}, log)
	l2.now = clock.now
	t.Cleanup(func() { l2.Close() })
	for range 3 {
		l2.Burn(ctx, time.Time{})
		clock.advance(reopenEvery)
	}
	if n := errorLines() - before; n != 1 {
		t.Fatalf("%d ERROR lines for three failures within relogEvery, want 1", n)
	}
	clock.advance(relogEvery)
	l2.Burn(ctx, time.Time{})
	if n := errorLines() - before; n != 2 {
		t.Fatalf("%d ERROR lines after relogEvery passed, want 2", n)
	}
}

// Retention prunes details past keep_days right after Configure and keeps
// the all-time totals.
func TestRetentionPrunesOldDetailsAndKeepsTotals(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 11, 22, 15, 30, 0, 0, time.UTC)}
	dir := t.TempDir()
	ctx := context.Background()
	st, err := ledger.Open(ctx, ledger.Options{StateDir: dir, Now: clock.now})
	if err != nil {
		t.Fatal(err)
	}
	for _, age := range []time.Duration{40 * 24 * time.Hour, 20 * 24 * time.Hour, 2 * time.Hour} {
		if err := st.AppendInference(ctx, ledger.Inference{Time: clock.t.Add(-age), Model: "offline-small", Route: "gateway", InputTokens: 10, CostUSD: 0.25}); err != nil {
			t.Fatal(err)
		}
		if err := st.AppendToolCall(ctx, ledger.ToolCall{Time: clock.t.Add(-age), Name: "now", Status: "ok", AnsweredBy: "native"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	p := New()
	p.now = clock.now
	passes := make(chan error, 1)
	var first ledger.PruneStats
	p.afterPrune = func(s ledger.PruneStats, err error) {
		first = s
		select {
		case passes <- err:
		default:
		}
	}
	if err := p.Configure(ctx, json.RawMessage(fmt.Sprintf(`{"state_dir": %q, "ledger": {"keep_days": 8}}`, dir))); err != nil {
		t.Fatal(err)
	}
	if err := <-passes; err != nil {
		t.Fatalf("retention pass: %v", err)
	}
	if first.Inferences != 2 || first.ToolCalls != 2 {
		t.Errorf("retention pruned %+v, want the 2 inferences and 2 tool calls older than 8 days", first)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	infs, calls := readLedger(t, dir)
	if len(infs) != 1 || len(calls) != 1 {
		t.Fatalf("after retention %d inferences and %d tool calls remain, want 1 and 1", len(infs), len(calls))
	}
	st, err = ledger.Open(ctx, ledger.Options{StateDir: dir, Now: clock.now})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	groups, err := st.Burn(ctx, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	var total ledger.Totals
	for _, g := range groups {
		total.Inferences += g.Inferences
		total.CostNanoUSD += g.CostNanoUSD
	}
	if total.Inferences != 3 || total.CostNanoUSD != ledger.NanoUSD(0.75) {
		t.Errorf("all-time burn after retention = %+v, want 3 inferences costing 0.75", total)
	}
	if _, n, err := st.RecentToolCalls(ctx, 10); err != nil || n != 3 {
		t.Errorf("tool calls ever recorded after retention = %d (%v), want 3", n, err)
	}
}

// A database another process holds locked: the hook still returns at
// once, the writer's transaction gives up at its deadline with
// ledger_locked and keeps the records, the reports still answer, and once
// the lock is gone every record is committed, none lost.
func TestLockedDatabaseKeepsRecordsUntilTheLockIsGone(t *testing.T) {
	set(t, &writeTimeout, 300*time.Millisecond)
	dir := t.TempDir()
	p := New()
	ctx := context.Background()
	if err := p.Configure(ctx, json.RawMessage(fmt.Sprintf(`{"state_dir": %q}`, dir))); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	if err := p.PostLLMCall(ctx, hooks.Inference{Model: "offline-small", Route: hooks.RouteGateway}); err != nil {
		t.Fatal(err)
	}
	if err := p.flushLedger(ctx); err != nil {
		t.Fatal(err)
	}

	db, err := sql.Open("sqlite", filepath.Join(dir, ledger.DefaultSQLiteFile))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN EXCLUSIVE"); err != nil {
		t.Fatal(err)
	}
	if err := p.PostLLMCall(ctx, hooks.Inference{Model: "offline-small", Route: hooks.RouteGateway}); err != nil {
		t.Fatalf("queueing a record under another process's lock: %v", err)
	}
	if err := p.flushLedger(ctx); ledger.KindOf(err) != ledger.KindLocked {
		t.Fatalf("writing under another process's lock = %v, want ledger_locked", err)
	}
	r, err := hooks.Ask[*hooks.ToolResult](ctx, sdk.Adapt(p), hooks.PreToolCallCanProvideResult,
		hooks.ToolCallRequest{Name: bridge.ToolBurn, Arguments: json.RawMessage(`{"window":"all"}`)})
	if err != nil || r == nil || r.IsError {
		t.Fatalf("burn while a writer holds the lock = %+v, %v; readers are not blocked in WAL mode", r, err)
	}

	if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	if err := p.PostLLMCall(ctx, hooks.Inference{Model: "offline-small", Route: hooks.RouteGateway}); err != nil {
		t.Fatalf("append after the lock is gone: %v", err)
	}
	if err := p.Close(); err != nil {
		t.Fatalf("Close after the lock is gone: %v", err)
	}
	if infs, _ := readLedger(t, dir); len(infs) != 3 {
		t.Fatalf("%d inferences recorded, want all 3, the one queued under the lock too", len(infs))
	}
}

// An open that outlasts Configure's share of the host's deadline (here:
// none left at all) does not fail the start; it carries on in the
// background, and the tools answer from the imported ledger once it is done.
func TestSlowOpenFinishesInTheBackground(t *testing.T) {
	dir := t.TempDir()
	const n = 2000
	var b strings.Builder
	base := time.Now().UTC().Add(-time.Hour)
	for i := range n {
		line, err := json.Marshal(ledger.Inference{Time: base.Add(time.Duration(i) * time.Millisecond), Model: "offline-small", Route: "gateway", InputTokens: 1})
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	if err := os.WriteFile(filepath.Join(dir, ledger.InferencesFile), []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	p := New()
	expired, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	if err := p.Configure(expired, json.RawMessage(fmt.Sprintf(`{"state_dir": %q}`, dir))); err != nil {
		t.Fatalf("Configure with no time left to open the ledger: %v", err)
	}
	t.Cleanup(func() { p.Close() })
	if p.st.Load().stopOpening == nil {
		t.Fatal("the open that did not fit in Configure was not carried on in the background")
	}
	ctx := context.Background()
	deadline := time.Now().Add(60 * time.Second)
	for {
		r, err := hooks.Ask[*hooks.ToolResult](ctx, sdk.Adapt(p), hooks.PreToolCallCanProvideResult,
			hooks.ToolCallRequest{Name: bridge.ToolBurn, Arguments: json.RawMessage(`{"window":"all"}`)})
		if err != nil || r == nil {
			t.Fatalf("burn: %+v, %v", r, err)
		}
		if !r.IsError {
			var burn bridge.Burn
			if err := json.Unmarshal([]byte(r.Content), &burn); err != nil || burn.Inferences != n {
				t.Fatalf("burn after the background open = %s, want all %d imported inferences", r.Content, n)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the background open did not finish within 60s: %s", r.Content)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
