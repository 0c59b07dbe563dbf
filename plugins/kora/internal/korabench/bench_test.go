package korabench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/hookhost/hookhost/config"
	"github.com/hookhost/hookhost/hookbus"
	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/host"
	"github.com/hookhost/hookhost/internal/syncbuf"
	"github.com/hookhost/hookhost/plugins/kora/internal/bridge"
	"github.com/hookhost/hookhost/plugins/kora/internal/ledger"
	"github.com/hookhost/hookhost/plugins/kora/internal/pgtest"

	"github.com/hookhost/hookhost/internal/testenv"
)

// EnvInferences sets the size of the generated ledger the report
// benchmarks read; DefaultInferences when unset.
const EnvInferences = "KORA_BENCH_INFERENCES"

// DefaultInferences is the ledger size of a plain `make bench`: a million
// inferences generate in seconds; ten million, the ledger Kora is sized for, take a minute
// or two the first time each day and 1.7 GB under bin/bench-cache.
const DefaultInferences = 1_000_000

// The environment of a writer process (the test binary run again by
// BenchmarkKoraAppend).
const (
	envWriter      = "KORA_BENCH_WRITER" // the DSN to append to
	envWriterSync  = "KORA_BENCH_WRITER_SYNC"
	envWriterCount = "KORA_BENCH_WRITER_COUNT"
)

func TestMain(m *testing.M) {
	if dsn := os.Getenv(envWriter); dsn != "" {
		if err := writer(dsn); err != nil {
			fmt.Fprintln(os.Stderr, "writer:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	code := m.Run()
	if koraDir != "" {
		os.RemoveAll(koraDir)
	}
	if cluster != nil {
		cluster.Close()
	}
	os.Exit(code)
}

var (
	koraOnce sync.Once
	koraDir  string
	koraErr  error
)

// koraBinary builds the kora plugin once per run, only when a benchmark
// needs it, and returns its directory.
func koraBinary(b *testing.B) string {
	koraOnce.Do(func() {
		if koraDir, koraErr = os.MkdirTemp("", "korabench-"); koraErr != nil {
			return
		}
		out, err := exec.Command("go", "build", "-o", filepath.Join(koraDir, "kora"), "github.com/hookhost/hookhost/plugins/kora").CombinedOutput()
		if err != nil {
			koraErr = fmt.Errorf("building the kora plugin: %v\n%s", err, out)
		}
	})
	if koraErr != nil {
		b.Fatal(koraErr)
	}
	return koraDir
}

// benchInferences is the size of the report benchmarks' ledger.
func benchInferences(b *testing.B) int {
	s := os.Getenv(EnvInferences)
	if s == "" {
		return DefaultInferences
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		b.Fatalf("%s=%q: want a positive number of inferences", EnvInferences, s)
	}
	return n
}

// cachedLedger is CachedLedger under the repository's bin/bench-cache,
// saying how long a generation took.
func cachedLedger(b *testing.B, n int) string {
	root, err := RepoRoot()
	if err != nil {
		b.Fatal(err)
	}
	path, st, err := CachedLedger(context.Background(), filepath.Join(root, CacheDir), n)
	if err != nil {
		b.Fatal(err)
	}
	if st.Inferences > 0 {
		// On stdout rather than b.Log, which a benchmark with
		// sub-benchmarks does not print: the generation's speed is one of
		// the run's figures.
		fmt.Printf("korabench: generated %d inferences and %d tool calls into %s in %s (%.0f records/s)\n", st.Inferences, st.ToolCalls,
			path, st.Elapsed.Round(time.Millisecond), float64(st.Inferences+st.ToolCalls)/st.Elapsed.Seconds())
	}
	return path
}

// koraRig is one host running Kora on a given ledger, and a Bus over it.
type koraRig struct {
	bus *hookbus.Bus
	pid int
}

// startKora starts the host with Kora on the ledger dsn names.
func startKora(b *testing.B, dsn string) *koraRig {
	logs := &syncbuf.Buffer{}
	b.Cleanup(func() {
		if b.Failed() {
			b.Logf("host and plugin log:\n%s", logs.String())
		}
	})
	src := fmt.Sprintf(`
[plugins]
enabled = ["kora"]
dir = %q
[plugins.entries.kora]
timeout = "60s"
tool_timeout = "60s"
[plugins.entries.kora.config]
state_dir = %q
[plugins.entries.kora.config.ledger]
dsn = %q
`, koraBinary(b), b.TempDir(), dsn)
	cfg, err := config.Parse([]byte(src), "korabench.toml", b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	log := hclog.New(&hclog.LoggerOptions{Name: "hookhost", Output: logs, Level: hclog.Info})
	h, errs := host.Start(context.Background(), host.Specs(cfg), host.Options{Logger: log})
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		h.Close(ctx)
	})
	if len(errs) > 0 {
		b.Fatalf("kora did not start: %v", errs)
	}
	bus, err := hookbus.New(h.Members(), hookbus.Config{Logger: log.Named("hooks")})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		bus.Close(ctx)
	})
	return &koraRig{bus: bus, pid: h.Plugins()[0].PID}
}

// ask calls one Kora tool through the host's provide path and returns its
// result, failing on an error result.
func (r *koraRig) ask(b *testing.B, req hooks.ToolCallRequest) string {
	res := r.bus.PreToolCallCanProvideResult(context.Background(), req)
	if res == nil {
		b.Fatalf("%s: no plugin provided a result", req.Name)
	}
	if res.IsError || res.Plugin != "kora" {
		b.Fatalf("%s answered by %q: %s", req.Name, res.Plugin, res.Content)
	}
	return res.Content
}

// measure asks req once to warm up and check the answer, then in a loop,
// and reports the median and 99th percentile of the calls and Kora's peak
// resident memory during the loop.
func (r *koraRig) measure(b *testing.B, req hooks.ToolCallRequest, check func(content string) error) {
	if err := check(r.ask(b, req)); err != nil {
		b.Fatalf("%s %s: %v", req.Name, req.Arguments, err)
	}
	if err := ResetPeakRSS(r.pid); err != nil {
		b.Fatalf("reset kora's peak RSS: %v", err)
	}
	var lat []time.Duration
	for b.Loop() {
		t0 := time.Now()
		r.ask(b, req)
		lat = append(lat, time.Since(t0))
	}
	peak, err := PeakRSSKiB(r.pid)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(Percentile(lat, 50))/1e6, "p50-ms")
	b.ReportMetric(float64(Percentile(lat, 99))/1e6, "p99-ms")
	b.ReportMetric(float64(peak)/1024, "peak-rss-MiB")
}

func toolCall(name, args string) hooks.ToolCallRequest {
	return hooks.ToolCallRequest{SessionID: "korabench", CallID: "c", Name: name, Arguments: json.RawMessage(args)}
}

// BenchmarkKoraBurn is one kora__get_burn per window, asked through the
// host of a Kora process whose SQLite ledger holds a year of traffic
// (KORA_BENCH_INFERENCES inferences, DefaultInferences unless set).
func BenchmarkKoraBurn(b *testing.B) {
	n := benchInferences(b)
	path := cachedLedger(b, n)
	b.Run("sqlite-"+SizeLabel(n), func(b *testing.B) {
		r := startKora(b, "sqlite:"+path)
		for _, window := range bridge.Windows {
			b.Run(window, func(b *testing.B) {
				r.measure(b, toolCall(bridge.ToolBurn, `{"window":"`+window+`"}`), func(content string) error {
					var burn bridge.Burn
					if err := json.Unmarshal([]byte(content), &burn); err != nil {
						return err
					}
					switch {
					case burn.Window != window:
						return fmt.Errorf("answered window %q", burn.Window)
					case burn.Inferences <= 0 || burn.CostUSD <= 0 || len(burn.ByModel) == 0:
						return fmt.Errorf("an empty burn: %s", content)
					case window == "all" && burn.Inferences != int64(n):
						return fmt.Errorf("all time holds %d inferences, the ledger %d", burn.Inferences, n)
					}
					return nil
				})
			})
		}
	})
}

// BenchmarkKoraTail is kora__recent_inferences and kora__audit_tail at
// their default limit on the same ledger as BenchmarkKoraBurn.
func BenchmarkKoraTail(b *testing.B) {
	n := benchInferences(b)
	path := cachedLedger(b, n)
	b.Run("sqlite-"+SizeLabel(n), func(b *testing.B) {
		r := startKora(b, "sqlite:"+path)
		for _, tc := range []struct {
			tool  string
			total int64
		}{{bridge.ToolRecentInferences, int64(n)}, {bridge.ToolAuditTail, int64(n / 2)}} {
			b.Run(strings.TrimPrefix(tc.tool, bridge.Prefix), func(b *testing.B) {
				r.measure(b, toolCall(tc.tool, `{}`), func(content string) error {
					var recent bridge.Recent[json.RawMessage]
					if err := json.Unmarshal([]byte(content), &recent); err != nil {
						return err
					}
					if recent.Total != tc.total || len(recent.Entries) != bridge.DefaultLimit {
						return fmt.Errorf("%d entries of %d, want %d of %d", len(recent.Entries), recent.Total, bridge.DefaultLimit, tc.total)
					}
					return nil
				})
			})
		}
	})
}

// appendBackend is one database the append benchmark writes to.
type appendBackend struct {
	name string
	sync string
	// ledger returns the DSN of a fresh, empty ledger.
	ledger func(b *testing.B) string
}

func sqliteLedger(b *testing.B) string {
	return "sqlite:" + filepath.Join(b.TempDir(), ledger.DefaultSQLiteFile)
}

var (
	clusterOnce sync.Once
	cluster     *pgtest.Cluster
	clusterErr  error
)

// postgresLedger returns a fresh database on the throwaway cluster, started
// once per run. Without PostgreSQL installed the benchmark is skipped,
// unless CI is set: CI installs it, so its absence there is a failure.
func postgresLedger(b *testing.B) string {
	clusterOnce.Do(func() { cluster, clusterErr = pgtest.Start("") })
	if clusterErr != nil {
		if errors.Is(clusterErr, pgtest.ErrNotInstalled) {
			testenv.Skip(b, pgtest.NotInstalledReason+", so its append throughput is not measured", pgtest.InstallCommand, clusterErr)
		}
		b.Fatal(clusterErr)
	}
	return cluster.NewDatabase(b)
}

// BenchmarkKoraAppend is the append throughput of 1 and 8 writer processes
// appending inferences at once to one ledger, each record its own
// transaction, acknowledged only once committed: SQLite with synchronous
// FULL (what survives a machine crash, the default) and NORMAL (a crash of
// the plugin only), and PostgreSQL with synchronous_commit on. Writers
// start and open the store before the clock starts; appends/s counts
// every writer's records.
func BenchmarkKoraAppend(b *testing.B) {
	backends := []appendBackend{
		{"sqlite-full", ledger.SyncFull, sqliteLedger},
		{"sqlite-normal", ledger.SyncNormal, sqliteLedger},
		{"postgres", "", postgresLedger},
	}
	for _, be := range backends {
		b.Run(be.name, func(b *testing.B) {
			for _, k := range []int{1, 8} {
				b.Run(fmt.Sprintf("%d-writers", k), func(b *testing.B) { appendRun(b, be, k) })
			}
		})
	}
}

// writerProc is one writer process and the ends of its pipes.
type writerProc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  *bufio.Scanner
	stderr *syncbuf.Buffer
}

func (w *writerProc) expect(b *testing.B, prefix string) string {
	if !w.lines.Scan() {
		w.cmd.Wait()
		b.Fatalf("writer %d ended before saying %q: %s", w.cmd.Process.Pid, prefix, w.stderr.String())
	}
	line := w.lines.Text()
	if !strings.HasPrefix(line, prefix) {
		b.Fatalf("writer %d said %q, want %q: %s", w.cmd.Process.Pid, line, prefix, w.stderr.String())
	}
	return strings.TrimSpace(strings.TrimPrefix(line, prefix))
}

func appendRun(b *testing.B, be appendBackend, writers int) {
	dsn := be.ledger(b)
	procs := make([]*writerProc, writers)
	for i := range procs {
		count := b.N / writers
		if i < b.N%writers {
			count++
		}
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), envWriter+"="+dsn, envWriterSync+"="+be.sync, envWriterCount+"="+strconv.Itoa(count))
		stderr := &syncbuf.Buffer{}
		cmd.Stderr = stderr
		stdin, err := cmd.StdinPipe()
		if err != nil {
			b.Fatal(err)
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			b.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		// A writer left behind by a failed benchmark dies with its stdin.
		b.Cleanup(func() { stdin.Close(); cmd.Process.Kill(); cmd.Wait() })
		procs[i] = &writerProc{cmd: cmd, stdin: stdin, lines: bufio.NewScanner(stdout), stderr: stderr}
	}
	for _, p := range procs {
		p.expect(b, "ready")
	}
	b.ResetTimer()
	start := time.Now()
	for _, p := range procs {
		if _, err := io.WriteString(p.stdin, "go\n"); err != nil {
			b.Fatal(err)
		}
	}
	appended := 0
	for _, p := range procs {
		n, err := strconv.Atoi(p.expect(b, "done"))
		if err != nil {
			b.Fatal(err)
		}
		appended += n
	}
	elapsed := time.Since(start)
	b.StopTimer()
	for _, p := range procs {
		p.stdin.Close()
		if err := p.cmd.Wait(); err != nil {
			b.Fatalf("writer %d: %v: %s", p.cmd.Process.Pid, err, p.stderr.String())
		}
	}
	// Every acknowledged record is in the ledger, once.
	s, err := ledger.Open(context.Background(), ledger.Options{DSN: dsn})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if _, total, err := s.RecentInferences(context.Background(), 1); err != nil || total != int64(b.N) || appended != b.N {
		b.Fatalf("%d writers acknowledged %d appends of %d; the ledger holds %d (%v)", writers, appended, b.N, total, err)
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "appends/s")
}

// writer is a writer process: it opens the store dsn names, says "ready",
// waits for "go" on stdin, appends its count of inferences one by one and
// says "done <n>".
func writer(dsn string) error {
	count, err := strconv.Atoi(os.Getenv(envWriterCount))
	if err != nil {
		return fmt.Errorf("%s: %v", envWriterCount, err)
	}
	ctx := context.Background()
	s, err := ledger.Open(ctx, ledger.Options{DSN: dsn, Synchronous: os.Getenv(envWriterSync)})
	if err != nil {
		return err
	}
	defer s.Close()
	fmt.Println("ready")
	in := bufio.NewScanner(os.Stdin)
	if !in.Scan() || in.Text() != "go" {
		return errors.New("stdin closed before go")
	}
	session := fmt.Sprintf("writer-%d", os.Getpid())
	for i := range count {
		rec := ledger.Inference{
			SessionID: session, Iteration: i + 1, Model: "claude-haiku-4-5", Route: "gateway",
			InputTokens: 1600 + i%700, OutputTokens: 260 + i%90, StopReason: "end_turn", DurationMS: 950,
		}
		rec.CostUSD = ledger.USD(int64(rec.InputTokens)*1000 + int64(rec.OutputTokens)*5000)
		if err := s.AppendInference(ctx, rec); err != nil {
			return fmt.Errorf("append %d of %d: %w", i+1, count, err)
		}
	}
	fmt.Println("done", count)
	return nil
}
