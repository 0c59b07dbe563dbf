package main

// End-to-end tests of the ledger's database under the real host: the
// import of a state directory from an earlier version, a corrupt database
// fixed while Kora runs, and `kora export`.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/hookhost/hookhost/config"
	"github.com/hookhost/hookhost/dispatch"
	"github.com/hookhost/hookhost/host"
	"github.com/hookhost/hookhost/plugins/kora/internal/bridge"
	"github.com/hookhost/hookhost/plugins/kora/internal/ledger"
)

// burnAll asks the running Kora for kora__get_burn over all time.
func (r *rig) burnAll(t *testing.T) (bridge.Burn, dispatch.Outcome) {
	t.Helper()
	out := r.call(t, bridge.ToolBurn, `{"window":"all"}`)
	var b bridge.Burn
	if out.Path == dispatch.PathProvided && !out.Result.IsError {
		if err := json.Unmarshal([]byte(out.Result.Content), &b); err != nil {
			t.Fatalf("burn result %s: %v", out.Result.Content, err)
		}
	}
	return b, out
}

// writeOldStateDir writes the JSONL files an earlier Kora left: n
// inferences and n tool calls, one corrupt line and a torn last line.
func writeOldStateDir(t *testing.T, dir string, n int) (infFile, callFile []byte) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	base := time.Now().UTC().Add(-48 * time.Hour).Truncate(time.Millisecond)
	var infs []ledger.Inference
	var calls []ledger.ToolCall
	for i := range n {
		at := base.Add(time.Duration(i) * time.Minute)
		infs = append(infs, ledger.Inference{Time: at, SessionID: "old", Iteration: i, Model: "offline-large", Route: "gateway",
			InputTokens: 100, OutputTokens: 10, CostUSD: 0.00035, DurationMS: 3.5})
		calls = append(calls, ledger.ToolCall{Time: at, SessionID: "old", Name: "now", Status: "ok", AnsweredBy: "native", DurationMS: 0.25})
	}
	infFile = append(jsonl(t, infs[:n/2]), []byte("{\"time\": not json\n")...)
	infFile = append(infFile, jsonl(t, infs[n/2:])...)
	callFile = append(jsonl(t, calls), []byte(`{"time":"2026-11-20T10:00:00Z","name":"no`)...)
	if err := os.WriteFile(filepath.Join(dir, ledger.InferencesFile), infFile, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ledger.ToolCallsFile), callFile, 0o600); err != nil {
		t.Fatal(err)
	}
	return infFile, callFile
}

// A state directory from an earlier version is imported when Kora first
// starts on it: the reports count the old records, the files are left
// byte for byte as they were, and a restart does not import them again.
func TestOldJSONLStateDirIsImportedOnce(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	const n = 40
	infFile, callFile := writeOldStateDir(t, state, n)

	r := start(t, state)
	b, out := r.burnAll(t)
	if out.Result.IsError || b.Inferences != n || b.InputTokens != 100*n || b.CostUSD != 0.00035*n {
		t.Fatalf("burn after the import = %s, want %d inferences of 100 tokens", out.Result.Content, n)
	}
	r.flush(t) // the audit of the burn call is queued
	tail := r.call(t, bridge.ToolAuditTail, `{"limit":1000}`)
	var audit bridge.Recent[bridge.ToolCallView]
	if err := json.Unmarshal([]byte(tail.Result.Content), &audit); err != nil || audit.Total != n+1 {
		// n imported, plus the kora__get_burn call just made.
		t.Fatalf("audit after the import = %s (%v), want %d calls", tail.Result.Content, err, n+1)
	}
	r.flush(t)
	r.host.Close(context.Background())

	r = start(t, state)
	b, out = r.burnAll(t)
	if out.Result.IsError || b.Inferences != n {
		t.Fatalf("burn after a restart = %s, want the same %d inferences (imported once)", out.Result.Content, n)
	}
	infs, calls := r.settled(t, n, n+3)
	// n imported; burn and audit tail before the restart, burn after.
	if len(infs) != n || len(calls) != n+3 {
		t.Fatalf("ledger holds %d inferences and %d tool calls, want %d and %d", len(infs), len(calls), n, n+3)
	}
	for name, want := range map[string][]byte{ledger.InferencesFile: infFile, ledger.ToolCallsFile: callFile} {
		if got, err := os.ReadFile(filepath.Join(state, name)); err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s changed by the import (%v)", name, err)
		}
	}
}

// A garbage ledger.db: Kora starts and stays healthy, its tools answer
// ledger_corrupt, and once a good database is put in its place they work
// again, without a restart.
func TestCorruptLedgerAnswersAndRecoversWithoutRestart(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	if err := os.MkdirAll(state, 0o700); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(state, ledger.DefaultSQLiteFile)
	if err := os.WriteFile(db, bytes.Repeat([]byte("garbage, not a database\n"), 500), 0o600); err != nil {
		t.Fatal(err)
	}
	r := start(t, state)
	for range 3 {
		_, out := r.burnAll(t)
		if out.Path != dispatch.PathProvided || out.AnsweredBy != "kora" || !out.Result.IsError ||
			!strings.Contains(out.Result.Content, "kora_tool_dispatch_error: ledger_corrupt: ") {
			t.Fatalf("burn on a garbage ledger.db = %s %+v, want Kora's ledger_corrupt", out.Path, out.Result)
		}
	}
	first := r.kora(t)
	if first.State != host.StateRunning || first.Restarts != 0 {
		t.Fatalf("kora on a garbage ledger.db: %+v, want running, never restarted", first)
	}

	// A good database, made elsewhere, replaces the garbage.
	good := t.TempDir()
	st, err := ledger.Open(context.Background(), ledger.Options{StateDir: good})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.AppendInference(context.Background(), ledger.Inference{Model: "offline-small", Route: "gateway", InputTokens: 42}); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	for _, suffix := range []string{"-wal", "-shm", "-journal"} {
		if err := os.Remove(db + suffix); err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
	}
	if err := os.Rename(filepath.Join(good, ledger.DefaultSQLiteFile), db); err != nil {
		t.Fatal(err)
	}
	// Kora tries a failed database again at most every few seconds.
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, out := r.burnAll(t)
		if !out.Result.IsError {
			if b.Inferences != 1 || b.InputTokens != 42 {
				t.Fatalf("burn on the good database = %s, want its one inference", out.Result.Content)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("still failing 30s after the database was fixed: %s", out.Result.Content)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if now := r.kora(t); now.PID != first.PID || now.Restarts != 0 {
		t.Fatalf("kora was restarted to recover (%+v, first %+v); it must not need to be", now, first)
	}
}

// `kora export` writes what the running Kora recorded, in the JSONL shape
// of the old files.
func TestExportCommand(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	r := start(t, state)
	burn := r.send(t, "what's my burn?")
	clock := r.send(t, "what time is it")
	infs, calls := r.settled(t, len(burn.Inferences)+len(clock.Inferences), len(burn.ToolCalls)+len(clock.ToolCalls))

	export := func(args ...string) (string, string, int) {
		t.Helper()
		cmd := exec.Command(filepath.Join(pluginDir, "kora"), append([]string{"export", "-state-dir", state}, args...)...)
		var out, errs bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errs
		err := cmd.Run()
		code := 0
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			code = exit.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return out.String(), errs.String(), code
	}
	out, errs, code := export()
	if code != 0 || out != string(jsonl(t, calls)) || len(calls) != 2 {
		t.Fatalf("kora export = %d (%s)\n%s\nwant the %d audited calls\n%s", code, errs, out, len(calls), jsonl(t, calls))
	}
	out, _, code = export("-stream", "inferences")
	if code != 0 || out != string(jsonl(t, infs)) || len(infs) == 0 {
		t.Fatalf("kora export -stream inferences = %d\n%s\nwant\n%s", code, out, jsonl(t, infs))
	}
	out, _, code = export("-since", time.Now().Add(time.Hour).UTC().Format(time.RFC3339))
	if code != 0 || out != "" {
		t.Fatalf("kora export -since an hour ahead = %d %q, want nothing", code, out)
	}
	_, errs, code = export("-stream", "bogus")
	if code != 2 || !strings.Contains(errs, "usage: kora export") {
		t.Fatalf("kora export -stream bogus = %d %q, want exit 2 with the usage", code, errs)
	}
	// Without arguments the binary is a plugin and says so.
	cmd := exec.Command(filepath.Join(pluginDir, "kora"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err == nil || !strings.Contains(stderr.String(), "hookhost plugin") {
		t.Fatalf("kora without arguments: %v, %q", err, stderr.String())
	}
}

// The DSN can come from the host's environment, for a password that must
// not sit in the config file: Kora reads it only when the operator lists
// the variable in the entry's env, and otherwise refuses to start, saying
// so.
func TestLedgerDSNFromTheEnvironment(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	elsewhere := filepath.Join(t.TempDir(), "shared.db")
	t.Setenv("KORA_E2E_LEDGER_DSN", "sqlite:"+elsewhere)
	const ledgerTable = "[plugins.entries.kora.config.ledger]\ndsn_env = \"KORA_E2E_LEDGER_DSN\"\n"

	// Not listed in env: the host does not pass it, and Kora says what to do.
	cfg, err := config.Parse([]byte(koraTOML(state, pluginDir, 0, "", ledgerTable)), "e2e.toml", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	h, errs := host.Start(context.Background(), host.Specs(cfg), host.Options{Logger: hclog.NewNullLogger()})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	h.Close(ctx)
	cancel()
	if len(errs) == 0 || !strings.Contains(fmt.Sprint(errs), "ledger.dsn_env names KORA_E2E_LEDGER_DSN, which is not set in Kora's environment: list it in env") {
		t.Fatalf("kora started without the DSN's variable in env, or said something else: %v", errs)
	}

	// Listed: the ledger is the database the variable names.
	r := startConfig(t, state, pluginDir, 0, host.Options{}, `env = ["KORA_E2E_LEDGER_DSN"]`, ledgerTable)
	r.send(t, "what's my burn?")
	r.flush(t)
	st, err := ledger.Open(context.Background(), ledger.Options{DSN: "sqlite:" + elsewhere})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// Kora commits its records shortly after the hook returned: poll, for
	// at most 10s.
	var (
		recs  []ledger.ToolCall
		total int64
	)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		recs, total, err = st.RecentToolCalls(context.Background(), 10)
		if err != nil || total > 0 || time.Now().After(deadline) {
			break
		}
	}
	if err != nil || total != 1 || recs[0].Name != bridge.ToolBurn {
		t.Fatalf("the database dsn_env names holds %d tool calls (%+v, %v), want the one burn call", total, recs, err)
	}
	if _, err := os.Stat(filepath.Join(state, ledger.DefaultSQLiteFile)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Kora also created a database in state_dir (stat: %v)", err)
	}
}

// A relative state_dir is resolved against the config file's directory,
// wherever hookhost and `kora export` are started from: the host runs Kora
// there, and export resolves it the same way.
func TestRelativeStateDirLandsBesideTheConfigFile(t *testing.T) {
	dir, elsewhere := t.TempDir(), t.TempDir()
	file := filepath.Join(dir, "hookhost.toml")
	src := fmt.Sprintf("[plugins]\nenabled = [\"kora\"]\ndir = %q\n[plugins.entries.kora.config]\nstate_dir = \"state\"\n", pluginDir)
	if err := os.WriteFile(file, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	h, errs := host.Start(context.Background(), host.Specs(cfg), host.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	h.Close(ctx)
	if len(errs) > 0 {
		t.Fatalf("kora did not start: %v", errs)
	}
	if _, err := os.Stat(filepath.Join(dir, "state", ledger.DefaultSQLiteFile)); err != nil {
		t.Fatalf("no ledger beside the config file: %v", err)
	}

	export := exec.Command(filepath.Join(pluginDir, "kora"), "export", "-config", file)
	export.Dir = elsewhere
	if out, err := export.CombinedOutput(); err != nil {
		t.Fatalf("kora export -config %s from %s: %v\n%s", file, elsewhere, err, out)
	}
	for _, d := range []string{elsewhere, mustGetwd(t)} {
		if _, err := os.Stat(filepath.Join(d, "state")); err == nil {
			t.Errorf("a state directory appeared in %s, not only beside the config file", d)
		}
	}
}

func mustGetwd(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return wd
}
