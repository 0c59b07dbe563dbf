package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hookhost/hookhost/plugins/kora/internal/ledger"
)

// fill records n tool calls and n inferences, one an hour ending an hour
// ago, in a SQLite ledger in dir.
func fill(t *testing.T, dir string, n int) (calls []ledger.ToolCall, infs []ledger.Inference) {
	t.Helper()
	ctx := context.Background()
	st, err := ledger.Open(ctx, ledger.Options{StateDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	base := time.Now().UTC().Truncate(time.Millisecond).Add(-time.Duration(n) * time.Hour)
	for i := range n {
		c := ledger.ToolCall{Time: base.Add(time.Duration(i) * time.Hour), SessionID: "s", CallID: fmt.Sprint("c", i), Name: "now",
			Status: "ok", AnsweredBy: "native", Arguments: json.RawMessage(`{"i":` + fmt.Sprint(i) + `}`), DurationMS: 1.5}
		inf := ledger.Inference{Time: c.Time, SessionID: "s", Iteration: i, Model: "offline-small", Route: "gateway",
			InputTokens: 10 + i, OutputTokens: 2, CostUSD: 0.000003, DurationMS: 2.25}
		if err := st.AppendToolCall(ctx, c); err != nil {
			t.Fatal(err)
		}
		if err := st.AppendInference(ctx, inf); err != nil {
			t.Fatal(err)
		}
		calls, infs = append(calls, c), append(infs, inf)
	}
	return calls, infs
}

func run(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errs bytes.Buffer
	code = Run(context.Background(), args, &out, &errs)
	return code, out.String(), errs.String()
}

// lines encodes recs the way the JSONL files of earlier versions held them.
func lines[T any](t *testing.T, recs []T) string {
	t.Helper()
	var b strings.Builder
	for _, r := range recs {
		line, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.String()
}

func TestExportStreams(t *testing.T) {
	dir := t.TempDir()
	calls, infs := fill(t, dir, 5)

	code, out, errs := run(t, "export", "-state-dir", dir)
	if code != ExitOK || errs != "" {
		t.Fatalf("export = %d, stderr %q", code, errs)
	}
	if want := lines(t, calls); out != want {
		t.Errorf("tool calls exported as\n%s\nwant\n%s", out, want)
	}
	code, out, _ = run(t, "export", "-state-dir", dir, "-stream", "inferences")
	if want := lines(t, infs); code != ExitOK || out != want {
		t.Errorf("inferences exported as (%d)\n%s\nwant\n%s", code, out, want)
	}

	// -since as a duration and as a time select the same records.
	code, out, _ = run(t, "export", "-dsn", "sqlite:"+filepath.Join(dir, ledger.DefaultSQLiteFile), "-since", "150m")
	if want := lines(t, calls[3:]); code != ExitOK || out != want {
		t.Errorf("-since 150m exported (%d)\n%s\nwant the last two\n%s", code, out, want)
	}
	code, out, _ = run(t, "export", "-state-dir", dir, "-since", calls[3].Time.Format(time.RFC3339Nano))
	if want := lines(t, calls[3:]); code != ExitOK || out != want {
		t.Errorf("-since %s exported (%d)\n%s\nwant\n%s", calls[3].Time.Format(time.RFC3339Nano), code, out, want)
	}
}

// The export reads in batches and writes as it goes: a ledger larger than
// any one batch comes out whole and in order.
func TestExportLargeLedgerInOrder(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	st, err := ledger.Open(ctx, ledger.Options{StateDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	const n = 5000
	base := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		if err := st.AppendToolCall(ctx, ledger.ToolCall{Time: base.Add(time.Duration(i) * time.Second), Name: fmt.Sprint("t", i), Status: "ok", AnsweredBy: "native"}); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	code, out, errs := run(t, "export", "-state-dir", dir)
	if code != ExitOK {
		t.Fatalf("export = %d: %s", code, errs)
	}
	sc := bufio.NewScanner(strings.NewReader(out))
	i := 0
	for ; sc.Scan(); i++ {
		var c ledger.ToolCall
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil || c.Name != fmt.Sprint("t", i) {
			t.Fatalf("line %d = %s (%v), want t%d", i+1, sc.Text(), err, i)
		}
	}
	if i != n {
		t.Fatalf("%d lines exported, want %d", i, n)
	}
}

func TestExportFromHostConfig(t *testing.T) {
	t.Chdir(t.TempDir())
	confDir := t.TempDir()
	calls, _ := fill(t, filepath.Join(confDir, "state"), 2)
	conf := filepath.Join(confDir, "hookhost.toml")
	// state_dir is relative to the file's directory, where the host runs
	// Kora, not to the working directory of the command.
	src := "[plugins]\nenabled = [\"kora\"]\n[plugins.entries.kora.config]\nstate_dir = \"state\"\n"
	if err := os.WriteFile(conf, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errs := run(t, "export", "-config", conf)
	if want := lines(t, calls); code != ExitOK || out != want {
		t.Fatalf("export -config = %d (%s)\n%s\nwant\n%s", code, errs, out, want)
	}

	// ledger.dsn_env is read from the environment of the command.
	other := t.TempDir()
	otherCalls, _ := fill(t, other, 1)
	src += "[plugins.entries.kora.config.ledger]\ndsn_env = \"KORA_EXPORT_TEST_DSN\"\n"
	if err := os.WriteFile(conf, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, errs = run(t, "export", "-config", conf)
	if code != ExitError || !strings.Contains(errs, "KORA_EXPORT_TEST_DSN, which is not set") {
		t.Fatalf("dsn_env unset: %d, %q", code, errs)
	}
	t.Setenv("KORA_EXPORT_TEST_DSN", "sqlite:"+filepath.Join(other, ledger.DefaultSQLiteFile))
	code, out, errs = run(t, "export", "-config", conf)
	if want := lines(t, otherCalls); code != ExitOK || out != want {
		t.Fatalf("export -config with dsn_env = %d (%s)\n%s\nwant\n%s", code, errs, out, want)
	}

	// A config copied from another machine, where Kora is not installed
	// and not enabled, still names the ledger to export.
	copied := "[plugins]\nenabled = []\ndir = \"nowhere\"\n[plugins.entries.kora.config]\nstate_dir = \"state\"\n"
	if err := os.WriteFile(conf, []byte(copied), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errs = run(t, "export", "-config", conf)
	if want := lines(t, calls); code != ExitOK || out != want {
		t.Fatalf("export -config of a disabled, uninstalled Kora = %d (%s)\n%s\nwant\n%s", code, errs, out, want)
	}
}

func TestUsageAndErrors(t *testing.T) {
	dir := t.TempDir()
	fill(t, dir, 1)
	usageCases := []struct {
		args []string
		want string
	}{
		{nil, "usage: kora export"},
		{[]string{"-h"}, "usage: kora export"},
		{[]string{"import"}, `unknown command "import"`},
		{[]string{"export", "-h"}, "usage: kora export"},
		{[]string{"export"}, "give exactly one of -config, -state-dir and -dsn"},
		{[]string{"export", "-state-dir", dir, "-dsn", "sqlite:x.db"}, "give exactly one of"},
		{[]string{"export", "-state-dir", dir, "-stream", "logs"}, `-stream "logs": use tool_calls or inferences`},
		{[]string{"export", "-state-dir", dir, "-since", "yesterday"}, `-since "yesterday" is neither a duration`},
		{[]string{"export", "-state-dir", dir, "-since", "-1h"}, "cannot be negative"},
		{[]string{"export", "-state-dir", dir, "-bogus"}, "flag provided but not defined: -bogus"},
		{[]string{"export", "-state-dir", dir, "extra"}, `unexpected argument "extra"`},
	}
	for _, c := range usageCases {
		code, out, errs := run(t, c.args...)
		if code != ExitUsage || out != "" || !strings.Contains(errs, c.want) || !strings.Contains(errs, "usage:") {
			t.Errorf("kora %q = %d, stdout %q, stderr %q; want exit 2 with %q and the usage", c.args, code, out, errs, c.want)
		}
	}

	garbage := t.TempDir()
	if err := os.WriteFile(filepath.Join(garbage, ledger.DefaultSQLiteFile), bytes.Repeat([]byte("not a database\n"), 300), 0o600); err != nil {
		t.Fatal(err)
	}
	errorCases := []struct {
		args []string
		want string
	}{
		{[]string{"export", "-state-dir", filepath.Join(dir, "missing")}, "-state-dir: stat"},
		{[]string{"export", "-state-dir", garbage}, "ledger_corrupt"},
		{[]string{"export", "-dsn", "mysql://u:s3cret@h/db"}, "not a DSN Kora can use"},
		{[]string{"export", "-config", filepath.Join(dir, "none.toml")}, "none.toml"},
	}
	for _, c := range errorCases {
		code, out, errs := run(t, c.args...)
		if code != ExitError || out != "" || !strings.Contains(errs, c.want) || strings.Contains(errs, "s3cret") {
			t.Errorf("kora %q = %d, stdout %q, stderr %q; want exit 1 with %q", c.args, code, out, errs, c.want)
		}
	}
}
