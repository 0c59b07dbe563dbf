// Package cli is what the kora binary does when a person runs it with
// arguments rather than the host starting it: `kora export`, which writes
// the ledger's audit trail or inferences as JSONL for people and tools
// that tail it.
package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/hookhost/hookhost/config"
	// The host's config may name any provider hookhost has; they are
	// known to config once linked.
	_ "github.com/hookhost/hookhost/llm/anthropic"
	_ "github.com/hookhost/hookhost/llm/openai"
	"github.com/hookhost/hookhost/plugins/kora/internal/kora"
	"github.com/hookhost/hookhost/plugins/kora/internal/ledger"
)

// Exit statuses.
const (
	ExitOK    = 0
	ExitError = 1 // the export failed; the reason is on stderr
	ExitUsage = 2 // the command line was wrong; usage is on stderr
)

// Streams that export writes.
const (
	StreamToolCalls  = "tool_calls"
	StreamInferences = "inferences"
)

const usage = `usage: kora export [-config hookhost.toml | -state-dir DIR | -dsn DSN]
                   [-stream tool_calls|inferences] [-since 24h|RFC3339]

Writes Kora's ledger as JSONL to stdout, one record a line, oldest first:
the tool-call audit (default) or the inferences, in the shape of the
tool_calls.jsonl and inferences.jsonl files of earlier versions.

The ledger is found, in this order of preference, by
  -config FILE   Kora's table in a hookhost config file: its state_dir
                 (relative to FILE's directory, as Kora resolves it)
                 and ledger.dsn or ledger.dsn_env
  -state-dir DIR the SQLite ledger in DIR (DIR/ledger.db)
  -dsn DSN       "sqlite:<path>" or "postgres://..."
Exactly one of them is required.

  -stream NAME   tool_calls (default) or inferences
  -since WHEN    only records at or after WHEN: a duration back from now
                 (24h, 90m) or a time (2026-11-22T00:00:00Z); default all

Without arguments, kora is a hookhost plugin, started by the host.
`

// Run runs the command line args (without the program name), writing
// records to stdout and diagnostics to stderr, and returns the exit status.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "export" {
		if len(args) > 0 && args[0] != "-h" && args[0] != "-help" && args[0] != "--help" && args[0] != "help" {
			fmt.Fprintf(stderr, "kora: unknown command %q\n\n", args[0])
		}
		fmt.Fprint(stderr, usage)
		return ExitUsage
	}
	opts, err := parseExport(args[1:], stderr)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stderr, usage)
		return ExitUsage
	}
	if err != nil {
		fmt.Fprintf(stderr, "kora export: %v\n\n%s", err, usage)
		return ExitUsage
	}
	if err := export(ctx, opts, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "kora export: %v\n", err)
		return ExitError
	}
	return ExitOK
}

// exportOptions is a parsed `kora export` command line.
type exportOptions struct {
	configFile, stateDir, dsn string
	stream                    string
	since                     time.Time
}

func parseExport(args []string, stderr io.Writer) (exportOptions, error) {
	var o exportOptions
	var since string
	fs := flag.NewFlagSet("kora export", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // Run prints the usage, once
	fs.StringVar(&o.configFile, "config", "", "hookhost config file")
	fs.StringVar(&o.stateDir, "state-dir", "", "Kora's state directory")
	fs.StringVar(&o.dsn, "dsn", "", "the ledger's DSN")
	fs.StringVar(&o.stream, "stream", StreamToolCalls, "tool_calls or inferences")
	fs.StringVar(&since, "since", "", "a duration back from now or an RFC 3339 time")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	sources := 0
	for _, s := range []string{o.configFile, o.stateDir, o.dsn} {
		if s != "" {
			sources++
		}
	}
	if sources != 1 {
		return o, errors.New("give exactly one of -config, -state-dir and -dsn")
	}
	if o.stream != StreamToolCalls && o.stream != StreamInferences {
		return o, fmt.Errorf("-stream %q: use %s or %s", o.stream, StreamToolCalls, StreamInferences)
	}
	if since != "" {
		t, err := parseSince(since, time.Now())
		if err != nil {
			return o, err
		}
		o.since = t
	}
	return o, nil
}

// parseSince reads -since: a duration back from now, or a time.
func parseSince(s string, now time.Time) (time.Time, error) {
	if d, err := time.ParseDuration(s); err == nil {
		if d < 0 {
			return time.Time{}, fmt.Errorf("-since %q: a duration back from now cannot be negative", s)
		}
		return now.Add(-d), nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("-since %q is neither a duration (24h, 90m) nor an RFC 3339 time (2026-11-22T00:00:00Z)", s)
}

// storeOptions says which ledger o names.
func storeOptions(o exportOptions) (ledger.Options, error) {
	switch {
	case o.dsn != "":
		return ledger.Options{DSN: o.dsn}, nil
	case o.stateDir != "":
		if _, err := os.Stat(o.stateDir); err != nil {
			return ledger.Options{}, fmt.Errorf("-state-dir: %w", err)
		}
		return ledger.Options{StateDir: o.stateDir}, nil
	}
	// Parse, not Load: the export reads a ledger, so the config may come
	// from a machine whose plugins and read_root are not here.
	data, err := os.ReadFile(o.configFile)
	if err != nil {
		return ledger.Options{}, fmt.Errorf("-config: %w", err)
	}
	abs, err := filepath.Abs(o.configFile)
	if err != nil {
		return ledger.Options{}, fmt.Errorf("-config: %w", err)
	}
	hc, err := config.Parse(data, o.configFile, filepath.Dir(abs))
	if err != nil {
		return ledger.Options{}, err
	}
	if !hasEntry(hc, kora.Name) {
		return ledger.Options{}, fmt.Errorf("%s has no [plugins.entries.%s.config] table", o.configFile, kora.Name)
	}
	// Relative paths as the plugin resolves them: against the file's
	// directory, where the host runs it.
	cfg, err := kora.ParseConfigIn(hc.Entry(kora.Name).Config, hc.Dir)
	if err != nil {
		return ledger.Options{}, fmt.Errorf("%s: %w", o.configFile, err)
	}
	return ledger.Options{DSN: cfg.Ledger.ResolvedDSN(), StateDir: cfg.StateDir, Synchronous: cfg.Ledger.Synchronous}, nil
}

func hasEntry(hc *config.Config, name string) bool {
	_, ok := hc.Plugins.Entries[name]
	return ok
}

func export(ctx context.Context, o exportOptions, stdout, stderr io.Writer) error {
	opts, err := storeOptions(o)
	if err != nil {
		return err
	}
	opts.Log = hclog.New(&hclog.LoggerOptions{Name: "kora export", Output: stderr, Level: hclog.Warn})
	store, err := ledger.Open(ctx, opts)
	if err != nil {
		return err
	}
	defer store.Close()

	w := bufio.NewWriterSize(stdout, 64<<10)
	enc := json.NewEncoder(w)
	if o.stream == StreamInferences {
		err = store.ExportInferences(ctx, o.since, func(r ledger.Inference) error { return enc.Encode(r) })
	} else {
		err = store.ExportToolCalls(ctx, o.since, func(r ledger.ToolCall) error { return enc.Encode(r) })
	}
	if err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("write to stdout: %w", err)
	}
	return nil
}
