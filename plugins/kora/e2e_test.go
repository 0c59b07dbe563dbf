package main

// End-to-end tests: the real kora binary, started and supervised by the
// real host, answering a real conversation loop on the offline model. What
// they check comes from two independent witnesses: the transcript the loop
// returns and the ledger database Kora wrote, read by a store of the
// test's own, as another process would.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/hookhost/hookhost/config"
	"github.com/hookhost/hookhost/conversation"
	"github.com/hookhost/hookhost/dispatch"
	"github.com/hookhost/hookhost/dispatch/builtin"
	"github.com/hookhost/hookhost/hookbus"
	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/host"
	"github.com/hookhost/hookhost/internal/syncbuf"
	"github.com/hookhost/hookhost/llm/offline"
	"github.com/hookhost/hookhost/plugins/kora/internal/bridge"
	"github.com/hookhost/hookhost/plugins/kora/internal/ledger"
	"github.com/hookhost/hookhost/plugins/kora/internal/ledger/ledgertest"
)

// pluginDir holds the kora binary, built once for every test here.
var pluginDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "kora-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	build := exec.Command("go", "build", "-o", filepath.Join(dir, "kora"), ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building the kora plugin:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	pluginDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// rig is one host running kora, a Bus over it and a gateway session.
type rig struct {
	host     *host.Host
	bus      *hookbus.Bus
	sess     *conversation.Session
	stateDir string
	// onTrace, when set, sees every trace event as it happens.
	onTrace func(conversation.Event)
	// pipe runs tool calls outside a conversation.
	pipe *dispatch.Pipeline
}

func start(t *testing.T, stateDir string) *rig {
	t.Helper()
	return startFrom(t, stateDir, pluginDir, host.Options{})
}

// startFrom is start with the kora binary in binDir and the given host
// options (their Logger is replaced by one the test shows on failure).
func startFrom(t *testing.T, stateDir, binDir string, opts host.Options) *rig {
	t.Helper()
	return startOver(t, stateDir, binDir, 0, opts)
}

// startOver is startFrom with kora's plugin protocol pinned to protocol
// (0: the newest both speak).
func startOver(t *testing.T, stateDir, binDir string, protocol int, opts host.Options) *rig {
	t.Helper()
	return startConfig(t, stateDir, binDir, protocol, opts, "", "")
}

// koraTOML is the host config the rigs run: entryKeys are added to
// [plugins.entries.kora], tables after Kora's own.
func koraTOML(stateDir, binDir string, protocol int, entryKeys, tables string) string {
	return fmt.Sprintf(`
[llm]
provider = "offline"
model = "offline-small"
[routing]
gateway = true
[plugins]
enabled = ["kora"]
dir = %q
[plugins.entries.kora]
timeout = "5s"
protocol = %d
%s
[plugins.entries.kora.config]
state_dir = %q
[plugins.entries.kora.config.budget]
daily_usd = 1.0
[plugins.entries.kora.config.router]
enabled = true
%s
`, binDir, protocol, entryKeys, stateDir, tables)
}

// startConfig is startOver with koraTOML's additions.
func startConfig(t *testing.T, stateDir, binDir string, protocol int, opts host.Options, entryKeys, tables string) *rig {
	t.Helper()
	return startTOML(t, stateDir, opts, koraTOML(stateDir, binDir, protocol, entryKeys, tables))
}

// startTOML starts a rig on the host config src, whose Kora keeps its
// ledger in stateDir.
func startTOML(t *testing.T, stateDir string, opts host.Options, src string) *rig {
	t.Helper()
	logs := &syncbuf.Buffer{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("host and plugin log:\n%s", logs.String())
		}
	})
	cfg, err := config.Parse([]byte(src), "e2e.toml", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	log := hclog.New(&hclog.LoggerOptions{Name: "hookhost", Output: logs, Level: hclog.Debug})
	opts.Logger = log
	h, errs := host.Start(context.Background(), host.Specs(cfg), opts)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		h.Close(ctx)
	})
	if len(errs) > 0 {
		t.Fatalf("kora did not start: %v", errs)
	}
	bus, err := hookbus.New(h.Members(), hookbus.Config{Logger: log.Named("hooks")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		bus.Close(ctx)
	})
	native, err := builtin.All(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	reg, err := dispatch.NewRegistry(native...)
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{host: h, bus: bus, stateDir: stateDir}
	r.sess, err = conversation.New(conversation.Options{
		Provider: offline.New(), Model: cfg.LLM.Model, Route: hooks.RouteGateway, Bus: bus, Tools: reg,
		Trace: func(e conversation.Event) {
			if r.onTrace != nil {
				r.onTrace(e)
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	r.pipe = &dispatch.Pipeline{Registry: reg, Bus: bus}
	return r
}

// call runs one tool call through the host's pipeline, outside any
// conversation.
func (r *rig) call(t *testing.T, name, args string) dispatch.Outcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return r.pipe.Run(ctx, "e2e", hooks.ToolCall{ID: "c", Name: name, Arguments: json.RawMessage(args)})
}

func (r *rig) send(t *testing.T, q string) *conversation.Turn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	turn, err := r.sess.Send(ctx, q)
	if err != nil {
		t.Fatalf("%q: %v", q, err)
	}
	if turn.EndReason != hooks.EndCompleted {
		t.Fatalf("%q ended %s", q, turn.EndReason)
	}
	return turn
}

func (r *rig) flush(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.bus.Flush(ctx); err != nil {
		t.Fatal(err)
	}
}

func (r *rig) kora(t *testing.T) host.Status {
	t.Helper()
	for _, s := range r.host.Plugins() {
		if s.Name == "kora" {
			return s
		}
	}
	t.Fatal("kora is not among the host's plugins")
	return host.Status{}
}

// readLedger reads both streams of the ledger in stateDir, oldest first.
func (r *rig) readLedger(t *testing.T) ([]ledger.Inference, []ledger.ToolCall) {
	t.Helper()
	return readLedger(t, r.stateDir)
}

// settled waits until the host has delivered its queued observer events
// and the ledger holds at least wantInf inferences and wantCalls tool
// calls, then reads both streams. Kora commits what it is sent in
// batches, shortly after the hook returned, so a reader in another
// process polls, for at most 10s.
func (r *rig) settled(t *testing.T, wantInf, wantCalls int) ([]ledger.Inference, []ledger.ToolCall) {
	t.Helper()
	r.flush(t)
	return settledLedger(t, r.stateDir, wantInf, wantCalls)
}

// settledLedger is settled for the ledger in stateDir, without a rig.
func settledLedger(t *testing.T, stateDir string, wantInf, wantCalls int) ([]ledger.Inference, []ledger.ToolCall) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		infs, calls := readLedger(t, stateDir)
		if len(infs) >= wantInf && len(calls) >= wantCalls || time.Now().After(deadline) {
			return infs, calls
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// readLedger reads both streams of the ledger in stateDir, oldest first,
// through a store of the test's own.
func readLedger(t *testing.T, stateDir string) ([]ledger.Inference, []ledger.ToolCall) {
	t.Helper()
	st, err := ledger.Open(context.Background(), ledger.Options{StateDir: stateDir})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	return ledgertest.ExportAll(t, st, time.Time{})
}

// jsonl encodes records one a line, to compare ledgers byte for byte.
func jsonl[T any](t *testing.T, recs []T) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	for _, r := range recs {
		if err := enc.Encode(r); err != nil {
			t.Fatal(err)
		}
	}
	return b.Bytes()
}

func TestDemoBehaviours(t *testing.T) {
	for _, protocol := range []int{1, 2} {
		t.Run(fmt.Sprintf("protocol=%d", protocol), func(t *testing.T) {
			r := startOver(t, filepath.Join(t.TempDir(), "state"), pluginDir, protocol, host.Options{})
			if got := r.kora(t).Protocol; got != protocol {
				t.Fatalf("kora speaks protocol %d, want %d", got, protocol)
			}
			testDemoBehaviours(t, r)
		})
	}
}

func testDemoBehaviours(t *testing.T, r *rig) {

	// 1. The bridge answers kora__get_burn; native dispatch never runs.
	burn := r.send(t, "what's my burn?")
	if len(burn.ToolCalls) != 1 {
		t.Fatalf("burn turn made %d tool calls", len(burn.ToolCalls))
	}
	if c := burn.ToolCalls[0]; c.Call.Name != bridge.ToolBurn || c.Path != dispatch.PathProvided || c.AnsweredBy != "kora" || c.Status != hooks.ProvidedBy("kora") || c.Result.IsError {
		t.Fatalf("burn call = %+v", c)
	}
	var report bridge.Burn
	if err := json.Unmarshal([]byte(burn.ToolCalls[0].Result.Content), &report); err != nil || report.Window != "today" {
		t.Fatalf("burn result %s: %v", burn.ToolCalls[0].Result.Content, err)
	}

	// 2. The small tier hedges; Kora escalates once to offline-large.
	hedge := r.send(t, "show the tokens spent lately")
	models := []string{}
	for _, inf := range hedge.Inferences {
		models = append(models, inf.Model)
	}
	if !slices.Equal(models, []string{offline.SmallModel, offline.LargeModel, offline.SmallModel}) ||
		!hedge.Inferences[1].Escalated || !strings.Contains(hedge.Inferences[1].Reason, "hedged") {
		t.Fatalf("hedge turn inferences = %+v", hedge.Inferences)
	}
	if len(hedge.ToolCalls) != 1 || hedge.ToolCalls[0].AnsweredBy != "kora" {
		t.Fatalf("the escalated model's call = %+v", hedge.ToolCalls)
	}

	// 3. A native tool goes through Kora untouched.
	clock := r.send(t, "what time is it")
	if len(clock.ToolCalls) != 1 || clock.ToolCalls[0].Call.Name != "now" || clock.ToolCalls[0].Path != dispatch.PathNative || clock.ToolCalls[0].Status != hooks.StatusOK {
		t.Fatalf("clock turn = %+v", clock.ToolCalls)
	}
	if len(clock.Inferences) != 2 || clock.Inferences[0].Escalated || clock.Inferences[1].Escalated {
		t.Fatalf("clock turn inferences = %+v", clock.Inferences)
	}

	// The ledger, written by the plugin process, tells the same story.
	var turns []conversation.Inference
	for _, turn := range []*conversation.Turn{burn, hedge, clock} {
		turns = append(turns, turn.Inferences...)
	}
	infs, calls := r.settled(t, len(turns), len(burn.ToolCalls)+len(hedge.ToolCalls)+len(clock.ToolCalls))
	if len(infs) != len(turns) {
		t.Fatalf("ledger has %d inferences, the transcript %d", len(infs), len(turns))
	}
	for i, rec := range infs {
		want := turns[i]
		if rec.Model != want.Model || rec.Escalated != want.Escalated || rec.Reason != want.Reason ||
			rec.InputTokens != want.Usage.InputTokens || rec.OutputTokens != want.Usage.OutputTokens ||
			rec.Route != string(hooks.RouteGateway) || rec.SessionID != r.sess.ID() || rec.CostUSD <= 0 {
			t.Errorf("ledger inference %d = %+v, transcript %+v", i, rec, want)
		}
	}
	var audit []string
	for _, c := range calls {
		audit = append(audit, c.Name+" "+c.Status+" "+c.AnsweredBy)
	}
	want := []string{
		"kora__get_burn provided_by:kora kora",
		"kora__get_burn provided_by:kora kora",
		"now ok native",
	}
	if !slices.Equal(audit, want) {
		t.Fatalf("audit = %q, want %q", audit, want)
	}

	// The tools read that ledger back: the escalation shows in the burn.
	check := r.send(t, "show my recent inferences")
	var recent bridge.Recent[bridge.InferenceView]
	if err := json.Unmarshal([]byte(check.ToolCalls[0].Result.Content), &recent); err != nil {
		t.Fatal(err)
	}
	escalated := 0
	for _, e := range recent.Entries {
		if e.Escalated {
			escalated++
		}
	}
	if check.ToolCalls[0].AnsweredBy != "kora" || escalated != 1 {
		t.Fatalf("kora__recent_inferences answered %s", check.ToolCalls[0].Result.Content)
	}
}

// ownBinary copies the kora binary into a directory of the test's own, so
// that the test can take it away without touching other tests' plugin.
func ownBinary(t *testing.T) (dir, path string) {
	t.Helper()
	dir = t.TempDir()
	path = filepath.Join(dir, "kora")
	src, err := os.Open(filepath.Join(pluginDir, "kora"))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	return dir, path
}

// TestKoraKilledMidConversation SIGKILLs the Kora process in the middle of a
// turn, between the model's decision to call a Kora tool and the call.
//
// The outage lasts as long as the test needs: the binary is taken away
// before the kill, so every restart fails until the test puts it back after
// the call it wants to see fail.
func TestKoraKilledMidConversation(t *testing.T) {
	binDir, bin := ownBinary(t)
	away := bin + ".away"
	r := startFrom(t, filepath.Join(t.TempDir(), "state"), binDir, host.Options{
		// Retry quickly once the binary is back, and never open the
		// circuit, however many restarts fail while it is away.
		Backoff:         host.BackoffPolicy{Initial: 20 * time.Millisecond, Max: 100 * time.Millisecond, Factor: 2},
		CircuitFailures: math.MaxInt32,
	})

	before := r.send(t, "what's my burn?")
	if before.ToolCalls[0].AnsweredBy != "kora" {
		t.Fatalf("before the kill: %+v", before.ToolCalls[0])
	}
	snapInfRecs, snapCallRecs := r.settled(t, len(before.Inferences), len(before.ToolCalls))
	snapInf, snapCalls := jsonl(t, snapInfRecs), jsonl(t, snapCallRecs)
	if len(snapInfRecs) == 0 || len(snapCallRecs) == 0 {
		t.Fatalf("nothing recorded before the kill: %d inferences, %d tool calls", len(snapInfRecs), len(snapCallRecs))
	}

	first := r.kora(t)
	killed := false
	r.onTrace = func(e conversation.Event) {
		if killed || e.Kind != conversation.EventModelCall || !strings.Contains(e.Text, "calls "+bridge.ToolBudget) {
			return
		}
		killed = true
		// No restart can succeed until the binary is back.
		if err := os.Rename(bin, away); err != nil {
			t.Errorf("take the kora binary away: %v", err)
			return
		}
		if err := syscall.Kill(first.PID, syscall.SIGKILL); err != nil {
			t.Errorf("kill kora (pid %d): %v", first.PID, err)
			return
		}
		// Let the host notice, so the call below meets the outage and not
		// a process that happens to be still dying.
		deadline := time.Now().Add(10 * time.Second)
		for r.kora(t).State == host.StateRunning {
			if time.Now().After(deadline) {
				t.Errorf("the host did not notice kora (pid %d) was killed within 10s: %+v", first.PID, r.kora(t))
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	during := r.send(t, "what's my budget")
	r.onTrace = nil
	if !killed {
		t.Fatalf("the model never called %s, so kora was not killed; trace hook missed", bridge.ToolBudget)
	}
	if len(during.ToolCalls) != 1 {
		t.Fatalf("outage turn made %d tool calls", len(during.ToolCalls))
	}
	if c := during.ToolCalls[0]; !c.Result.IsError || c.AnsweredBy == "kora" || !strings.Contains(c.Result.Content, `served by plugin \"kora\"`) {
		t.Fatalf("during the outage %s answered %+v, want an error result from the host", bridge.ToolBudget, c)
	}
	if during.Answer == "" {
		t.Fatal("the conversation produced no answer during the outage")
	}
	if s := r.kora(t); s.State == host.StateRunning {
		t.Fatalf("kora running again while its binary is away: %+v", s)
	}

	// Back after the restart, with the same ledger.
	if err := os.Rename(away, bin); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		s := r.kora(t)
		if s.State == host.StateRunning && s.Restarts >= 1 && s.PID != first.PID {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("kora not restarted within 20s: %+v", s)
		}
		time.Sleep(20 * time.Millisecond)
	}
	after := r.send(t, "what's my budget")
	if c := after.ToolCalls[0]; c.AnsweredBy != "kora" || c.Result.IsError {
		t.Fatalf("after the restart %s answered %+v", bridge.ToolBudget, c)
	}

	// Nothing recorded before the kill was lost or changed.
	infs, calls := r.settled(t, len(before.Inferences)+len(after.Inferences), len(before.ToolCalls)+len(after.ToolCalls))
	if !bytes.HasPrefix(jsonl(t, infs), snapInf) || !bytes.HasPrefix(jsonl(t, calls), snapCalls) {
		t.Fatal("the ledger no longer starts with what was recorded before the kill")
	}
	// The restarted process appends after whatever the outage left.
	n := len(after.Inferences)
	if len(infs) < len(before.Inferences)+n {
		t.Fatalf("ledger has %d inferences, want at least %d", len(infs), len(before.Inferences)+n)
	}
	for i, want := range after.Inferences {
		if got := infs[len(infs)-n+i]; got.Model != want.Model || got.InputTokens != want.Usage.InputTokens {
			t.Errorf("post-restart inference %d recorded as %+v, transcript %+v", i, got, want)
		}
	}
	if last := calls[len(calls)-1]; last.Name != bridge.ToolBudget || last.AnsweredBy != "kora" {
		t.Errorf("last audited call = %+v, want the post-restart %s", last, bridge.ToolBudget)
	}
}

// TestConcurrentSessionsShareTheLedger runs two hosts, each with its own
// Kora process, against one state directory at the same time.
func TestConcurrentSessionsShareTheLedger(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	rigs := []*rig{start(t, state), start(t, state)}
	questions := []string{"what's my burn?", "show the tokens spent lately", "what time is it", "what's my budget"}
	turns := make([][]*conversation.Turn, len(rigs))
	var wg sync.WaitGroup
	for i, r := range rigs {
		wg.Go(func() {
			for _, q := range questions {
				turn, err := r.sess.Send(context.Background(), q)
				if err != nil {
					t.Errorf("session %d, %q: %v", i, q, err)
					return
				}
				turns[i] = append(turns[i], turn)
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	wantInf, wantCalls := 0, 0
	for i, r := range rigs {
		r.flush(t)
		for _, turn := range turns[i] {
			wantInf += len(turn.Inferences)
			wantCalls += len(turn.ToolCalls)
		}
	}
	infs, calls := settledLedger(t, state, wantInf, wantCalls)
	if len(infs) != wantInf || len(calls) != wantCalls {
		t.Fatalf("ledger has %d inferences and %d tool calls, the transcripts %d and %d", len(infs), len(calls), wantInf, wantCalls)
	}
	perSession := map[string]int{}
	for _, rec := range infs {
		perSession[rec.SessionID]++
	}
	for i, r := range rigs {
		want := 0
		for _, turn := range turns[i] {
			want += len(turn.Inferences)
		}
		if perSession[r.sess.ID()] != want {
			t.Errorf("session %d: %d inferences in the ledger, %d in its transcript", i, perSession[r.sess.ID()], want)
		}
	}
}

// On the README's config (a ledger and a reporting budget; no daily stop,
// the router off) a conversation through the real host waits for no call
// to Kora but for its own tools: the hooks on a model call's path are
// unserved, and the ledger still records every inference and tool call.
func TestReadmeConfigAsksKoraNothingOnAModelCall(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	routed := koraTOML(state, pluginDir, 0, "", "")
	src := strings.Replace(routed, "[plugins.entries.kora.config.router]\nenabled = true\n", "", 1)
	if src == routed {
		t.Fatal("koraTOML no longer turns the router on: update this test")
	}
	r := startTOML(t, state, host.Options{}, src)
	hedge := r.send(t, "show the tokens spent lately")
	for _, inf := range hedge.Inferences {
		if inf.Escalated {
			t.Fatalf("an answer was escalated with the router off: %+v", hedge.Inferences)
		}
	}
	clock := r.send(t, "what time is it")
	r.flush(t)
	for _, hs := range r.bus.Stats().Hooks {
		if hs.Hook.Observer() || hs.Calls == 0 {
			continue
		}
		if hs.Hook != hooks.PreToolCallCanProvideResult {
			t.Errorf("Kora was asked %s %d times on the README's config", hs.Hook, hs.Calls)
		}
	}
	infs, calls := r.settled(t, len(hedge.Inferences)+len(clock.Inferences), len(hedge.ToolCalls)+len(clock.ToolCalls))
	if len(infs) != len(hedge.Inferences)+len(clock.Inferences) || len(calls) != len(hedge.ToolCalls)+len(clock.ToolCalls) {
		t.Fatalf("ledger holds %d inferences and %d tool calls, the transcripts %d and %d",
			len(infs), len(calls), len(hedge.Inferences)+len(clock.Inferences), len(hedge.ToolCalls)+len(clock.ToolCalls))
	}
}
