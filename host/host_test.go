//go:build unix

package host

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/hookhost/hookhost/config"
	"github.com/hookhost/hookhost/hookbus"
	"github.com/hookhost/hookhost/hooks"
)

// The tests run real plugin processes built from internal/testplugins.
var bins struct{ echo, garbage, oldproto, deaf, mute, stager string }

const (
	// childHostEnv switches the test binary into a host process of its own,
	// for the test that SIGKILLs a host.
	childHostEnv    = "HOST_TEST_CHILD_PLUGINS"
	visibleVar      = "HOST_TEST_VISIBLE"
	hiddenVar       = "HOST_TEST_HIDDEN"
	toolsVar        = "TESTPLUGIN_TOOLS"
	sharedTool      = "shared_tool"
	testLogVar      = "HOST_TEST_LOG" // set to see host and plugin logs
	livenessTimeout = 10 * time.Second
	// hangDirVar names the directory where the echo plugin records each
	// "hang" call it has entered, in <plugin name>.hang; only entries that
	// list it get it.
	hangDirVar = "TESTPLUGIN_HANG_DIR"
	// startDirVar names the directory where the echo plugin records its pid
	// as its first act and waits before serving while <name>.slow exists.
	startDirVar = "TESTPLUGIN_START_DIR"
	// cgroupBaseVar gives a child host another place to make plugin
	// cgroups in, for the fallback when it cannot.
	cgroupBaseVar = "HOST_TEST_CGROUP_BASE"
)

func TestMain(m *testing.M) {
	if code, ok := environHelper(); ok {
		os.Exit(code)
	}
	if paths := os.Getenv(childHostEnv); paths != "" {
		os.Exit(childHost(strings.Split(paths, string(os.PathListSeparator))))
	}
	for _, arg := range os.Args[1:] {
		// A fuzzing worker runs only the fuzz target, which needs no
		// plugin binaries; building them in every worker eats its time.
		if strings.HasPrefix(arg, "-test.fuzzworker") {
			os.Exit(m.Run())
		}
	}
	dir, err := os.MkdirTemp("", "hookhost-host-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	build := exec.Command("go", "build", "-o", dir+string(os.PathSeparator), "./internal/testplugins/...")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building test plugins:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	bins.echo = filepath.Join(dir, "echo")
	bins.garbage = filepath.Join(dir, "garbage")
	bins.oldproto = filepath.Join(dir, "oldproto")
	bins.deaf = filepath.Join(dir, "deaf")
	bins.mute = filepath.Join(dir, "mute")
	bins.stager = filepath.Join(dir, "stager")
	os.Setenv(visibleVar, "visible-value")
	os.Setenv(hiddenVar, "hidden-secret")
	os.Setenv(toolsVar, sharedTool)
	hangDir := filepath.Join(dir, "hang")
	if err := os.Mkdir(hangDir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	os.Setenv(hangDirVar, hangDir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// --- helpers ----------------------------------------------------------------

type plug struct {
	name  string
	entry config.PluginEntry
}

func entry(path string) config.PluginEntry {
	return config.PluginEntry{Path: path, Timeout: 2 * time.Second, ToolTimeout: 5 * time.Second, Config: json.RawMessage("{}")}
}

// echoAs returns a link to the echo plugin under name, which the plugin
// takes as its own.
func echoAs(t testing.TB, name string) string {
	t.Helper()
	return linkAs(t, bins.echo, name)
}

// linkAs returns a link to bin under name.
func linkAs(t testing.TB, bin, name string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.Symlink(bin, p); err != nil {
		t.Fatal(err)
	}
	return p
}

func configOf(ps ...plug) *config.Config {
	cfg := &config.Config{Plugins: config.Plugins{Entries: map[string]config.PluginEntry{}}}
	for _, p := range ps {
		cfg.Plugins.Enabled = append(cfg.Plugins.Enabled, p.name)
		cfg.Plugins.Entries[p.name] = p.entry
	}
	return cfg
}

func testLogger() hclog.Logger {
	if os.Getenv(testLogVar) == "" {
		return hclog.NewNullLogger()
	}
	return hclog.New(&hclog.LoggerOptions{Name: "test", Level: hclog.Debug, Output: os.Stderr})
}

func fastOptions() Options {
	return Options{
		Logger:  testLogger(),
		Backoff: BackoffPolicy{Initial: 10 * time.Millisecond, Max: 50 * time.Millisecond, Factor: 2},
	}
}

func start(t *testing.T, cfg *config.Config, opts Options) (*Host, []*StartError) {
	t.Helper()
	h, errs := Start(context.Background(), Specs(cfg), opts)
	t.Cleanup(func() {
		if err := h.Close(context.Background()); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return h, errs
}

// startOK starts cfg and fails the test on any StartError.
func startOK(t *testing.T, cfg *config.Config, opts Options) *Host {
	t.Helper()
	h, errs := start(t, cfg, opts)
	for _, e := range errs {
		t.Fatalf("unexpected start error: %v", e)
	}
	return h
}

func busOf(t *testing.T, h *Host) *hookbus.Bus {
	t.Helper()
	bus, err := hookbus.New(h.Members(), hookbus.Config{Logger: testLogger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bus.Close(context.Background()) })
	return bus
}

func provide(bus *hookbus.Bus, tool, args string) *hookbus.ProvidedResult {
	if args == "" {
		args = "{}"
	}
	return bus.PreToolCallCanProvideResult(context.Background(), hooks.ToolCallRequest{
		SessionID: "s1", CallID: "c1", Name: tool, Arguments: json.RawMessage(args),
	})
}

// callDirect asks one supervised plugin for a result, bypassing the Bus.
func callDirect(s *supervised, tool, args string, timeout time.Duration) (*hooks.ToolResult, error) {
	if args == "" {
		args = "{}"
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return hooks.Ask[*hooks.ToolResult](ctx, s, hooks.PreToolCallCanProvideResult, hooks.ToolCallRequest{Name: tool, Arguments: json.RawMessage(args)})
}

func memberOf(t *testing.T, h *Host, i int) *supervised {
	t.Helper()
	ms := h.Members()
	if len(ms) <= i {
		t.Fatalf("host has %d members, want more than %d", len(ms), i)
	}
	return ms[i].Plugin.(*supervised)
}

// waitFor polls cond until it holds or the liveness bound passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(livenessTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// gone reports whether pid no longer runs; a zombie counts as gone, since
// it only waits for a parent (possibly init) to reap it.
func gone(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
	}
	if i := strings.LastIndexByte(string(data), ')'); i >= 0 && i+2 < len(data) {
		return data[i+2] == 'Z' || data[i+2] == 'X'
	}
	return false
}

func findErr(errs []*StartError, plugin string) *StartError {
	for _, e := range errs {
		if e.Plugin == plugin {
			return e
		}
	}
	return nil
}

func wantErr(t *testing.T, errs []*StartError, plugin string, fragments ...string) *StartError {
	t.Helper()
	e := findErr(errs, plugin)
	if e == nil {
		t.Fatalf("no start error for %s; got %v", plugin, errs)
	}
	t.Log(e)
	for _, f := range fragments {
		if !strings.Contains(e.Error(), f) {
			t.Errorf("start error for %s does not mention %q:\n%v", plugin, f, e)
		}
	}
	return e
}

// protocols are the plugin protocol versions the process tests run over,
// each pinned through the entry's protocol key.
var protocols = []int{1, 2}

// overProtocols runs test once per protocol version, as parallel subtests.
func overProtocols(t *testing.T, test func(t *testing.T, v int)) {
	t.Helper()
	for _, v := range protocols {
		t.Run(fmt.Sprintf("v%d", v), func(t *testing.T) {
			t.Parallel()
			test(t, v)
		})
	}
}

// pinned is e with the plugin protocol pinned to version v.
func pinned(e config.PluginEntry, v int) config.PluginEntry {
	e.Protocol = v
	return e
}

// named gives each protocol's run of a test its own plugin name, so that
// what the plugins record in shared directories does not mix.
func named(name string, v int) string { return fmt.Sprintf("%s-v%d", name, v) }

// wantProtocol fails the test unless every running plugin of h speaks
// protocol version v.
func wantProtocol(t *testing.T, h *Host, v int) {
	t.Helper()
	for _, st := range h.Plugins() {
		if st.State == StateRunning && st.Protocol != v {
			t.Fatalf("plugin %s speaks protocol %d, want %d", st.Name, st.Protocol, v)
		}
	}
}

func names(h *Host) []string {
	var out []string
	for _, st := range h.Plugins() {
		out = append(out, st.Name)
	}
	return out
}

// --- calls ------------------------------------------------------------------

func TestFirstNonNilWinsAcrossRemotePlugins(t *testing.T) {
	t.Parallel()
	overProtocols(t, func(t *testing.T, v int) {
		alpha, beta := named("alpha", v), named("beta", v)
		h := startOK(t, configOf(
			plug{alpha, pinned(entry(echoAs(t, alpha)), v)},
			plug{beta, pinned(entry(echoAs(t, beta)), v)},
		), fastOptions())
		wantProtocol(t, h, v)
		if got := names(h); !slices.Equal(got, []string{alpha, beta}) {
			t.Fatalf("plugins = %v, want [%s %s] (priority order)", got, alpha, beta)
		}
		bus := busOf(t, h)

		r := provide(bus, "lookup", "")
		if r == nil || r.Plugin != alpha || r.Content != "answered by "+alpha {
			t.Fatalf("result = %+v, want %s's", r, alpha)
		}
		// alpha abstains: beta's answer is the first non-nil one.
		r = provide(bus, "pass", fmt.Sprintf(`{"who":%q}`, alpha))
		if r == nil || r.Plugin != beta || r.Content != "answered by "+beta {
			t.Fatalf("result = %+v, want %s's", r, beta)
		}
		for _, st := range h.Plugins() {
			if st.State != StateRunning || st.PID == 0 || st.Version != "1.0.0" || st.Restarts != 0 || st.Protocol != v {
				t.Errorf("status = %+v", st)
			}
			if !slices.Contains(st.Manifest.Hooks, hooks.PreToolCallCanProvideResult) {
				t.Errorf("%s manifest hooks = %v", st.Name, st.Manifest.Hooks)
			}
		}
	})
}

func TestCrashMidCallFallsThroughAndRestarts(t *testing.T) {
	t.Parallel()
	overProtocols(t, func(t *testing.T, v int) {
		name := named("crashy", v)
		h := startOK(t, configOf(plug{name, pinned(entry(echoAs(t, name)), v)}), fastOptions())
		wantProtocol(t, h, v)
		bus := busOf(t, h)
		first := h.Plugins()[0].PID

		if r := provide(bus, "crash", ""); r != nil {
			t.Fatalf("crashing call returned %+v, want nil (fall through)", r)
		}
		waitFor(t, "restart", func() bool {
			st := h.Plugins()[0]
			return st.State == StateRunning && st.Restarts == 1
		})
		st := h.Plugins()[0]
		if st.PID == first || st.PID == 0 {
			t.Errorf("pid after restart = %d, first was %d", st.PID, first)
		}
		if !gone(first) {
			t.Errorf("crashed process %d still running", first)
		}
		wantProtocol(t, h, v)
		if r := provide(bus, "lookup", ""); r == nil || r.Content != "answered by "+name {
			t.Fatalf("call after restart = %+v", r)
		}
	})
}

func TestSIGKILLDuringCallsRestartsOnce(t *testing.T) {
	t.Parallel()
	overProtocols(t, func(t *testing.T, v int) {
		name := named("victim", v)
		e := pinned(entry(echoAs(t, name)), v)
		e.ToolTimeout = time.Minute // only the kill may end these calls
		e.Env = []string{hangDirVar}
		// The plugin records every hang call it enters here; the name is
		// this test's alone, and a file left by an earlier run (-count)
		// must not count.
		entered := filepath.Join(os.Getenv(hangDirVar), name+".hang")
		if err := os.Remove(entered); err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		h := startOK(t, configOf(plug{name, e}), fastOptions())
		wantProtocol(t, h, v)
		bus := busOf(t, h)
		pid := h.Plugins()[0].PID

		const calls = 6
		results := make(chan *hookbus.ProvidedResult, calls)
		for range calls {
			go func() { results <- provide(bus, "hang", "") }()
		}
		// Kill only once every call is inside the process: a call that
		// reached the plugin after the kill would meet its replacement
		// instead.
		waitFor(t, fmt.Sprintf("%d hang calls inside the plugin (pid %d)", calls, pid), func() bool {
			return hangsIn(t, entered, pid) == calls
		})
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		for range calls {
			select {
			case r := <-results:
				if r != nil {
					t.Errorf("call on a killed plugin returned %+v, want nil", r)
				}
			case <-time.After(livenessTimeout):
				t.Fatal("call on a killed plugin did not return")
			}
		}
		waitFor(t, "restart", func() bool {
			st := h.Plugins()[0]
			return st.State == StateRunning && st.Restarts >= 1
		})
		wantProtocol(t, h, v)
		if r := provide(bus, "lookup", ""); r == nil || r.Content != "answered by "+name {
			t.Fatalf("call after restart = %+v", r)
		}
		if st := h.Plugins()[0]; st.Restarts != 1 {
			t.Errorf("restarts = %d after %d failing calls on one crash, want 1", st.Restarts, calls)
		}
		// Each call failed as soon as the process was gone, not by its
		// (one minute) deadline.
		stats := bus.Stats()
		if n := stats.Failures(name, hooks.PreToolCallCanProvideResult, hookbus.KindTimeout); n != 0 {
			t.Errorf("%d calls counted as timeouts; the kill should have ended them", n)
		}
		if n := stats.Failures(name, hooks.PreToolCallCanProvideResult, hookbus.KindUnavailable); n != calls {
			t.Errorf("%d calls counted as unavailable, want %d", n, calls)
		}
	})
}

// hangsIn counts the hang calls the echo plugin recorded in path as
// entered by process pid.
func hangsIn(t *testing.T, path string, pid int) int {
	t.Helper()
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for line := range strings.Lines(string(data)) {
		if strings.TrimSpace(line) == strconv.Itoa(pid) {
			n++
		}
	}
	return n
}

func TestHangingPluginTimesOut(t *testing.T) {
	t.Parallel()
	overProtocols(t, func(t *testing.T, v int) {
		name := named("sloth", v)
		e := pinned(entry(echoAs(t, name)), v)
		e.Timeout, e.ToolTimeout = 300*time.Millisecond, 300*time.Millisecond
		h := startOK(t, configOf(plug{name, e}), fastOptions())
		wantProtocol(t, h, v)
		bus := busOf(t, h)

		done := make(chan *hookbus.ProvidedResult, 1)
		go func() { done <- provide(bus, "hang", "") }()
		select {
		case r := <-done:
			if r != nil {
				t.Fatalf("hanging call returned %+v, want nil", r)
			}
		case <-time.After(livenessTimeout):
			t.Fatal("hanging call did not return")
		}
		if n := bus.Stats().Failures(name, hooks.PreToolCallCanProvideResult, hookbus.KindTimeout); n != 1 {
			t.Errorf("timeouts counted = %d, want 1", n)
		}
		// A hang is not a crash: the plugin keeps serving other calls.
		if r := provide(bus, "lookup", ""); r == nil || r.Content != "answered by "+name {
			t.Fatalf("call after a hang = %+v", r)
		}
		if st := h.Plugins()[0]; st.Restarts != 0 || st.State != StateRunning {
			t.Errorf("status after a hang = %+v", st)
		}
	})
}

func TestPanickingHandlerFallsThroughAndPluginStaysUp(t *testing.T) {
	t.Parallel()
	overProtocols(t, func(t *testing.T, v int) {
		name := named("jumpy", v)
		h := startOK(t, configOf(plug{name, pinned(entry(echoAs(t, name)), v)}), fastOptions())
		wantProtocol(t, h, v)
		bus := busOf(t, h)
		pid := h.Plugins()[0].PID

		if r := provide(bus, "panic", ""); r != nil {
			t.Fatalf("panicking call returned %+v, want nil", r)
		}
		st := bus.Stats()
		var failed uint64
		for _, hs := range st.Hooks {
			for _, n := range hs.Failures {
				failed += n
			}
		}
		if failed != 1 || st.Failures(name, hooks.PreToolCallCanProvideResult, hookbus.KindUnavailable) != 0 {
			t.Errorf("failures = %+v, want one that is not unavailability", st.Hooks)
		}
		if r := provide(bus, "lookup", ""); r == nil || r.Content != "answered by "+name {
			t.Fatalf("call after a panic = %+v", r)
		}
		if st := h.Plugins()[0]; st.Restarts != 0 || st.PID != pid {
			t.Errorf("status after a panic = %+v, want the same process (pid %d)", st, pid)
		}
	})
}

// --- start failures ---------------------------------------------------------

func TestGarbageOnStdoutIsRefusedOthersStart(t *testing.T) {
	t.Parallel()
	overProtocols(t, func(t *testing.T, v int) {
		noisy, fine := named("noisy", v), named("fine", v)
		h, errs := start(t, configOf(
			plug{noisy, pinned(entry(bins.garbage), v)},
			plug{fine, pinned(entry(echoAs(t, fine)), v)},
		), fastOptions())
		if len(errs) != 1 {
			t.Fatalf("start errors = %v, want one", errs)
		}
		wantErr(t, errs, noisy, "stdout", "handshake", `"hello world"`)
		if got := names(h); !slices.Equal(got, []string{fine}) {
			t.Fatalf("running = %v, want [%s]", got, fine)
		}
		wantProtocol(t, h, v)
	})
}

func TestChecksumPin(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(bins.echo)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	actual := hex.EncodeToString(sum[:])
	wrong := strings.Repeat("ab", sha256.Size)

	bad := entry(echoAs(t, "pinned"))
	bad.SHA256 = wrong
	good := entry(echoAs(t, "trusted"))
	good.SHA256 = actual
	h, errs := start(t, configOf(plug{"pinned", bad}, plug{"trusted", good}), fastOptions())
	e := wantErr(t, errs, "pinned", "checksum mismatch", "expected sha256 "+wrong, "actual "+actual, "plugins.entries.pinned.sha256")
	if !strings.Contains(e.Fix, actual) || !strings.Contains(e.Fix, "rebuild") {
		t.Errorf("fix = %q, want the actual hash and a rebuild hint", e.Fix)
	}
	if len(errs) != 1 || !slices.Equal(names(h), []string{"trusted"}) {
		t.Fatalf("errors %v, running %v; want only pinned refused", errs, names(h))
	}
}

func TestWrongProtocolVersionIsRefused(t *testing.T) {
	t.Parallel()
	_, errs := start(t, configOf(plug{"ancient", entry(bins.oldproto)}), fastOptions())
	wantErr(t, errs, "ancient", "protocol version 99", "this host speaks "+versionsText(spoken()), "rebuild")
}

// A plugin that speaks only version 1 (an older SDK, the Python example)
// gets version 1 when the version is negotiated, and a pin to version 2
// refuses it with the key to change.
func TestV1OnlyPluginNegotiatesV1AndRefusesAPinToV2(t *testing.T) {
	t.Parallel()
	old := entry(bigresultAs(t, "oldsdk-neg"))
	pin := pinned(entry(bigresultAs(t, "oldsdk-pin")), 2)
	h, errs := start(t, configOf(plug{"oldsdk-neg", old}, plug{"oldsdk-pin", pin}), fastOptions())
	wantErr(t, errs, "oldsdk-pin", "speaks plugin protocol version 1", "plugins.entries.oldsdk-pin.protocol pins version 2", "protocol = 0")
	if sts := h.Plugins(); len(sts) != 1 || sts[0].Name != "oldsdk-neg" || sts[0].Protocol != 1 {
		t.Fatalf("plugins = %+v, want oldsdk-neg running over protocol 1", sts)
	}
	if r, err := callDirect(memberOf(t, h, 0), "ping", "", 10*time.Second); err != nil || r == nil {
		t.Fatalf("call over protocol 1: %+v, %v", r, err)
	}
}

func TestToolOutsideNamespace(t *testing.T) {
	t.Parallel()
	e := entry(echoAs(t, "stray"))
	e.Env = []string{toolsVar}
	_, errs := start(t, configOf(plug{"stray", e}), fastOptions())
	err := wantErr(t, errs, "stray", "invalid manifest", sharedTool, `"stray__"`)
	if !strings.Contains(err.Fix, "plugins.entries.stray.allow_tool_override") {
		t.Errorf("fix = %q, want the override key", err.Fix)
	}

	e.AllowToolOverride = true
	h := startOK(t, configOf(plug{"stray", e}), fastOptions())
	m := h.Plugins()[0].Manifest
	if len(m.Tools) != 1 || m.Tools[0].Name != sharedTool {
		t.Fatalf("tools = %+v, want %s", m.Tools, sharedTool)
	}
	if !h.Members()[0].Options.AllowToolOverride {
		t.Error("member options lost allow_tool_override")
	}
	busOf(t, h) // the Bus accepts it too
}

func TestDuplicateToolAcrossPluginsRefusesTheLaterOne(t *testing.T) {
	t.Parallel()
	first, second := entry(echoAs(t, "first")), entry(echoAs(t, "second"))
	for _, e := range []*config.PluginEntry{&first, &second} {
		e.Env, e.AllowToolOverride = []string{toolsVar}, true
	}
	h, errs := start(t, configOf(plug{"first", first}, plug{"second", second}), fastOptions())
	wantErr(t, errs, "second", sharedTool, `"first"`, "second")
	if len(errs) != 1 || !slices.Equal(names(h), []string{"first"}) {
		t.Fatalf("errors %v, running %v; want second refused", errs, names(h))
	}
}

func TestMissingAndNonExecutableBinaries(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain")
	if err := os.WriteFile(plain, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "ghost")
	h, errs := start(t, configOf(plug{"ghost", entry(missing)}, plug{"plain", entry(plain)}), fastOptions())
	g := wantErr(t, errs, "ghost", missing, "does not exist")
	if !strings.Contains(g.Fix, "make plugins") || !strings.Contains(g.Fix, "plugins.entries.ghost.path") {
		t.Errorf("fix = %q", g.Fix)
	}
	p := wantErr(t, errs, "plain", "not executable")
	if p.Fix != "chmod +x "+plain {
		t.Errorf("fix = %q", p.Fix)
	}
	if len(h.Members()) != 0 {
		t.Errorf("members = %v", names(h))
	}
}

func TestStartTimeoutAndExitBeforeHandshake(t *testing.T) {
	t.Parallel()
	sleep := ""
	for _, p := range []string{"/bin/sleep", "/usr/bin/sleep"} {
		if _, err := os.Stat(p); err == nil {
			sleep = p
			break
		}
	}
	if sleep == "" {
		t.Skip("no sleep binary")
	}
	dir := t.TempDir()
	script := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	opts := fastOptions()
	opts.StartTimeout = 500 * time.Millisecond
	_, errs := start(t, configOf(
		plug{"mute", entry(script("mute", "exec "+sleep+" 30"))},
		plug{"quitter", entry(script("quitter", "echo 'cannot open state dir' >&2; exit 3"))},
	), opts)
	wantErr(t, errs, "mute", "did not complete the go-plugin handshake within 500ms")
	wantErr(t, errs, "quitter", "exited before completing the go-plugin handshake", "cannot open state dir")
}

// Options.StartTimeout bounds a start that never sees a handshake line,
// the probe that explains why included: it runs within the limit, so a
// hung plugin's start (and every restart, and a fail_closed guard's
// blocking) takes the timeout and no more, and a plugin that only forgot
// to flush is still named for it.
func TestStartOfAHungPluginIsBoundedByTheStartTimeout(t *testing.T) {
	t.Parallel()
	path := writeScript(t, t.TempDir(), "hung", "#!/bin/sh\nexec sleep 30\n")
	opts := fastOptions()
	opts.StartTimeout = time.Second
	began := time.Now()
	_, errs := start(t, configOf(plug{"hung", entry(path)}, plug{"unflushed", entry(handmadeAs(t, "unflushed"))}), opts)
	took := time.Since(began)
	if e := findErr(errs, "hung"); e == nil || e.Problem != ProblemHandshakeTimeout {
		t.Errorf("a plugin that prints nothing: %v, want %s", e, ProblemHandshakeTimeout)
	}
	if e := findErr(errs, "unflushed"); e == nil || e.Problem != ProblemUnflushed {
		t.Errorf("a plugin that does not flush its handshake line: %v, want %s", e, ProblemUnflushed)
	}
	if limit := opts.StartTimeout + 500*time.Millisecond; took > limit {
		t.Errorf("Start took %s with StartTimeout %s (want at most %s): %v", took.Round(time.Millisecond), opts.StartTimeout, limit, errs)
	}
}

func TestNameMismatchAndRejectedConfig(t *testing.T) {
	t.Parallel()
	rejecting := entry(echoAs(t, "picky"))
	rejecting.Config = json.RawMessage(`{"reject":"threshold must be positive"}`)
	// A Configure that panics is the plugin's fault, not its config's.
	panicking := entry(echoAs(t, "crashy"))
	panicking.Config = json.RawMessage(`{"panic":"assignment to entry in nil map"}`)
	_, errs := start(t, configOf(
		plug{"impostor", entry(bins.echo)},
		plug{"picky", rejecting},
		plug{"crashy", panicking},
	), fastOptions())
	wantErr(t, errs, "impostor", "plugin binary at "+bins.echo+` calls itself "echo"`)
	wantErr(t, errs, "picky", "rejected its config", "threshold must be positive", "[plugins.entries.picky.config]")
	wantErr(t, errs, "crashy", "failed in Configure", "assignment to entry in nil map", "a fault in the plugin", "look at the plugin's log")
	if e := findErr(errs, "crashy"); e != nil && strings.Contains(e.Error(), "rejected its config") {
		t.Errorf("a plugin whose Configure panicked is said to have rejected its config: %v", e)
	}
}

func TestEnvironmentIsScrubbed(t *testing.T) {
	t.Parallel()
	e := entry(echoAs(t, "nosy"))
	e.Env = []string{visibleVar, "HOST_TEST_NOT_SET_ANYWHERE"}
	h := startOK(t, configOf(plug{"nosy", e}), fastOptions())
	s := memberOf(t, h, 0)
	lookup := func(name string) (set bool, value string) {
		t.Helper()
		r, err := callDirect(s, "env", fmt.Sprintf(`{"name":%q}`, name), 5*time.Second)
		if err != nil || r == nil {
			t.Fatalf("env %s: %v, %v", name, r, err)
		}
		var out struct {
			Set   bool   `json:"set"`
			Value string `json:"value"`
		}
		if err := json.Unmarshal([]byte(r.Content), &out); err != nil {
			t.Fatal(err)
		}
		return out.Set, out.Value
	}
	if set, v := lookup(visibleVar); !set || v != "visible-value" {
		t.Errorf("listed %s: set=%v value=%q, want visible-value", visibleVar, set, v)
	}
	for _, name := range []string{hiddenVar, "HOST_TEST_NOT_SET_ANYWHERE", "PATH", "HOME"} {
		if set, v := lookup(name); set {
			t.Errorf("%s leaked into the plugin: %q", name, v)
		}
	}
}

// A plugin runs in its config file's directory, wherever the host was
// started, so that relative paths in its config table mean what the file
// says.
func TestPluginRunsInTheConfigFilesDirectory(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "hookhost.toml")
	src := fmt.Sprintf("[plugins]\nenabled = [\"where\"]\n[plugins.entries.where]\npath = %q\n", echoAs(t, "where"))
	if err := os.WriteFile(file, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	if wd, _ := os.Getwd(); wd == dir {
		t.Fatalf("the test runs in %s already and proves nothing", dir)
	}
	h := startOK(t, cfg, fastOptions())
	r, err := callDirect(memberOf(t, h, 0), "cwd", "", 5*time.Second)
	if err != nil || r == nil {
		t.Fatalf("cwd: %v, %v", r, err)
	}
	want, _ := filepath.EvalSymlinks(dir)
	if got, _ := filepath.EvalSymlinks(r.Content); got != want {
		t.Errorf("plugin runs in %q, want the config file's directory %q", r.Content, dir)
	}
}

// --- shutdown ---------------------------------------------------------------

func TestCloseKillsPluginAndItsChildren(t *testing.T) {
	t.Parallel()
	h, errs := Start(context.Background(), Specs(configOf(plug{"parent", entry(echoAs(t, "parent"))})), fastOptions())
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	s := memberOf(t, h, 0)
	pid := h.Plugins()[0].PID
	r, err := callDirect(s, "child", "", 5*time.Second)
	if err != nil || r == nil {
		h.Close(context.Background())
		t.Fatalf("child: %v, %v", r, err)
	}
	child, err := strconv.Atoi(r.Content)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(child, syscall.SIGKILL) })
	if gone(child) {
		t.Fatalf("child %d not running before Close", child)
	}

	if err := h.Close(context.Background()); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := h.Close(context.Background()); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	waitFor(t, "plugin and child to exit", func() bool { return gone(pid) && gone(child) })
	if st := h.Plugins()[0]; st.State != StateStopped || st.PID != 0 {
		t.Errorf("status after Close = %+v", st)
	}
	if _, err := callDirect(s, "lookup", "", time.Second); !errors.Is(err, hooks.ErrUnavailable) {
		t.Errorf("call after Close: %v, want ErrUnavailable", err)
	}
}

func TestCircuitOpensAfterRepeatedCrashesAndCloses(t *testing.T) {
	t.Parallel()
	overProtocols(t, func(t *testing.T, v int) {
		opts := fastOptions()
		opts.CircuitFailures = 2
		opts.CircuitWindow = time.Minute
		opts.CircuitCooldown = time.Second
		name := named("flaky", v)
		h := startOK(t, configOf(plug{name, pinned(entry(echoAs(t, name)), v)}), opts)
		wantProtocol(t, h, v)
		s := memberOf(t, h, 0)

		for i := 1; i <= 2; i++ {
			if _, err := callDirect(s, "crash", "", 5*time.Second); err == nil {
				t.Fatalf("crash %d: no error", i)
			}
			waitFor(t, fmt.Sprintf("restart %d", i), func() bool {
				st := s.Status()
				return st.State == StateRunning && st.Restarts == i
			})
		}
		callDirect(s, "crash", "", 5*time.Second)
		waitFor(t, "circuit to open", func() bool { return s.Status().State == StateCircuitOpen })

		// Calls fail at once while the circuit is open.
		_, err := callDirect(s, "lookup", "", 5*time.Second)
		if !errors.Is(err, hooks.ErrUnavailable) {
			t.Fatalf("call with circuit open: %v, want ErrUnavailable", err)
		}
		if st := s.Status(); st.Restarts != 2 || st.PID != 0 {
			t.Errorf("status with circuit open = %+v", st)
		}

		waitFor(t, "circuit to close", func() bool { return s.Status().State == StateRunning })
		if st := s.Status(); st.Restarts != 3 {
			t.Errorf("restarts after the trial start = %d, want 3", st.Restarts)
		}
		wantProtocol(t, h, v)
		if r, err := callDirect(s, "lookup", "", 5*time.Second); err != nil || r == nil || r.Content != "answered by "+name {
			t.Fatalf("call after the circuit closed: %+v, %v", r, err)
		}
	})
}

// childHost is the test binary acting as a host: it starts the plugins at
// paths, prints their pids and waits to be killed. The plugins get the
// start directory of the echo plugin, when the test set one.
func childHost(paths []string) int {
	if base := os.Getenv(cgroupBaseVar); base != "" {
		cgroupBaseOverride = base
	}
	var ps []plug
	for _, p := range paths {
		e := entry(p)
		e.Env = []string{startDirVar}
		ps = append(ps, plug{filepath.Base(p), e})
	}
	h, errs := Start(context.Background(), Specs(configOf(ps...)), Options{})
	if len(errs) > 0 {
		fmt.Fprintln(os.Stderr, errs)
		return 1
	}
	for _, st := range h.Plugins() {
		fmt.Printf("pid %d\n", st.PID)
	}
	fmt.Println("ready")
	for {
		time.Sleep(time.Hour)
	}
}

func TestNoPluginOutlivesASIGKILLedHost(t *testing.T) {
	t.Parallel()
	cmd, lines := startChildHost(t, nil, echoAs(t, "orphan1"), echoAs(t, "orphan2"))
	pids := waitChildHostReady(t, lines)
	t.Cleanup(func() {
		for _, pid := range pids {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	if len(pids) != 2 {
		t.Fatalf("child host reported pids %v", pids)
	}
	killHost(t, cmd)
	waitFor(t, "plugins of the killed host to exit", func() bool {
		return gone(pids[0]) && gone(pids[1])
	})
}

// --- check ------------------------------------------------------------------

func TestCheck(t *testing.T) {
	t.Parallel()
	good := entry(echoAs(t, "good"))
	results := Check(context.Background(), Specs(configOf(
		plug{"good", good},
		plug{"noisy", entry(bins.garbage)},
		plug{"missing", entry(filepath.Join(t.TempDir(), "missing"))},
	)), fastOptions())
	if len(results) != 3 {
		t.Fatalf("results = %+v, want 3", results)
	}
	g := results[0]
	if g.Name != "good" || !g.OK || g.Err != nil || g.Version != "1.0.0" || g.Path != good.Path ||
		!slices.Contains(g.Hooks, hooks.PreToolCallCanProvideResult) {
		t.Errorf("good = %+v", g)
	}
	for i, name := range []string{"noisy", "missing"} {
		r := results[i+1]
		if r.Name != name || r.OK || r.Err == nil || r.Err.Plugin != name {
			t.Errorf("%s = %+v, want a failure", name, r)
		}
	}
}

func TestCheckStopsWhatItStarted(t *testing.T) {
	t.Parallel()
	// Check does not report pids, so look for any process of the binary.
	path := echoAs(t, "checked")
	Check(context.Background(), Specs(configOf(plug{"checked", entry(path)})), fastOptions())
	waitFor(t, "no process of the checked plugin", func() bool { return len(processesOf(path)) == 0 })
}

// processesOf lists the live pids whose command line starts with path.
func processesOf(path string) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		arg0, _, _ := strings.Cut(string(cmdline), "\x00")
		if arg0 == path && !gone(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// --- units ------------------------------------------------------------------

func TestBackoffDelayGrowsWithJitterAndCaps(t *testing.T) {
	t.Parallel()
	p := Options{}.withDefaults().Backoff
	for n, step := range []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond} {
		for range 20 {
			if d := p.delay(n); d < step/2 || d > step {
				t.Fatalf("delay(%d) = %v, want within [%v, %v]", n, d, step/2, step)
			}
		}
	}
	if d := p.delay(100); d > p.Max || d < p.Max/2 {
		t.Fatalf("delay(100) = %v, want capped at %v", d, p.Max)
	}
}

func TestStartWithNoPlugins(t *testing.T) {
	t.Parallel()
	for _, cfg := range []*config.Config{nil, configOf()} {
		h, errs := Start(context.Background(), Specs(cfg), Options{})
		if len(errs) != 0 || len(h.Members()) != 0 || len(h.Plugins()) != 0 {
			t.Errorf("Start(%v) = %v, %v", cfg, h.Plugins(), errs)
		}
		if err := h.Close(context.Background()); err != nil {
			t.Error(err)
		}
	}
}
