//go:build unix

package host

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hookhost/hookhost/hookbus"
	"github.com/hookhost/hookhost/plugins/handshake"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/syncbuf"
)

// tracingOptions logs everything, so that go-plugin parses every stderr
// line of the plugins (it skips parsing for a logger that is off).
func tracingOptions(out *syncbuf.Buffer) Options {
	opts := fastOptions()
	opts.Logger = hclog.New(&hclog.LoggerOptions{Name: "test", Level: hclog.Trace, Output: out})
	return opts
}

// mustCall asks the plugin for tool and fails the test unless it answers
// want (any answer when want is empty).
func mustCall(t *testing.T, s *supervised, tool, args, want string) {
	t.Helper()
	r, err := callDirect(s, tool, args, 10*time.Second)
	if err != nil || r == nil {
		t.Fatalf("%s %s: %+v, %v", tool, args, r, err)
	}
	if want != "" && r.Content != want {
		t.Fatalf("%s %s = %q, want %q", tool, args, r.Content, want)
	}
}

func TestHostileStderrLinesDoNotCrashTheHost(t *testing.T) {
	t.Parallel()
	var logs syncbuf.Buffer
	h := startOK(t, configOf(plug{"noisy", entry(echoAs(t, "noisy"))}), tracingOptions(&logs))
	s := memberOf(t, h, 0)
	hostile := []string{
		`{"@message":1700000000}`,
		`{"@level":2,"@message":"level is a number"}`,
		`{"@timestamp":1700000000,"@message":"timestamp is a number"}`,
		`{"@timestamp":"yesterday","@message":"timestamp is not a time"}`,
		`{"@message":{"nested":true},"@level":["warn"],"@timestamp":null}`,
		`{"@level":"info","@message":"configured","@timestamp":"2024-01-02T03:04:05.000000Z","@timestamp":1700000000}`,
		`null`,
		`[1,2,3]`,
		`"just a string"`,
		"{\"@message\":\"bad utf-8 \xff\xfe\"}",
		`{"@message":"` + strings.Repeat("long ", 40000) + `"}`,
		`{"@message":` + strings.Repeat("[", 100000),
		`panic: not really`,
	}
	for _, line := range hostile {
		args, _ := json.Marshal(map[string]string{"line": line})
		mustCall(t, s, "log", string(args), "logged")
	}
	// The host survived every line; the plugin still answers, and the
	// lines reached the log as text.
	mustCall(t, s, "pid", "", "")
	waitFor(t, "the relayed lines", func() bool {
		out := logs.String()
		return strings.Contains(out, "1700000000") && strings.Contains(out, "timestamp is a number") &&
			strings.Contains(out, "line cut at")
	})
}

func TestSanitizeLogLineKeepsGoodLinesAndFixesBadOnes(t *testing.T) {
	t.Parallel()
	good := `{"@level":"info","@message":"hi","@timestamp":"2024-01-02T03:04:05.000000Z","n":12345678901234567890}`
	var in, out map[string]any
	json.Unmarshal([]byte(good), &in)
	if err := json.Unmarshal(sanitizeLogLine([]byte(good)), &out); err != nil || fmt.Sprint(in) != fmt.Sprint(out) {
		t.Errorf("good line changed: %s", sanitizeLogLine([]byte(good)))
	}
	if got := string(sanitizeLogLine([]byte(`{"@message":12345678901234567890}`))); got != `{"@message":"12345678901234567890"}` {
		t.Errorf("number message = %s", got)
	}
	if got := string(sanitizeLogLine([]byte("plain text"))); got != "plain text" {
		t.Errorf("plain line = %s", got)
	}

	// Escaping must not grow a line past what go-plugin reads whole, or an
	// ERROR line would reach the log as DEBUG fragments.
	amps := strings.Repeat("&", 32000)
	got := sanitizeLogLine([]byte(`{"@level":"error","@message":"` + amps + `","@timestamp":1}`))
	if len(got) > maxSanitizedLine {
		t.Errorf("32,000 '&' grew to %d bytes, over %d", len(got), maxSanitizedLine)
	}
	var amp map[string]any
	if err := json.Unmarshal(got, &amp); err != nil || amp["@message"] != amps || amp["@level"] != "error" {
		t.Errorf("32,000 '&' not kept as one JSON line: %.200s", got)
	}
	// A line that is still too long once sanitised keeps its level as
	// go-plugin's plain-text prefix.
	quotes := strings.Repeat(`"`, 20000)
	long, _ := json.Marshal(map[string]any{"@level": "warn", "@message": []string{quotes}})
	got = sanitizeLogLine(long)
	if len(got) > maxSanitizedLine || !bytes.HasPrefix(got, []byte("[WARN] ")) || !bytes.Contains(got, []byte("line cut at")) {
		t.Errorf("over-long sanitised line: %d bytes, %.100s", len(got), got)
	}
}

// FuzzSanitizeLogLine checks that no line, once sanitised, can trip
// go-plugin's log parser: a JSON object must come out with string @message
// and @level and a parseable @timestamp, or none.
func FuzzSanitizeLogLine(f *testing.F) {
	for _, s := range []string{
		`{"@message":1}`, `{"@level":{}}`, `{"@timestamp":1700000000}`, `{"@timestamp":"x"}`,
		`null`, `[]`, `{"@message":"ok","@level":"warn"}`, "{\"a\":\"\xff\"}", ` {"@message":true} `, `{`,
	} {
		f.Add([]byte(s))
	}
	f.Add([]byte(`{"@level":"error","@message":"` + strings.Repeat("&<>", 11000) + `"}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		out := sanitizeLogLine(line)
		if len(out) > max(len(line), maxSanitizedLine) {
			t.Fatalf("a %d-byte line grew to %d bytes, over %d", len(line), len(out), maxSanitizedLine)
		}
		var raw map[string]any
		if json.Unmarshal(out, &raw) != nil {
			return // go-plugin logs it as text
		}
		for _, k := range []string{"@message", "@level"} {
			if v, ok := raw[k]; ok {
				if _, isString := v.(string); !isString {
					t.Fatalf("%s is %T after sanitising %q: %s", k, v, line, out)
				}
			}
		}
		if v, ok := raw["@timestamp"]; ok {
			s, isString := v.(string)
			if _, err := time.Parse(hclogTimeFormat, s); !isString || err != nil {
				t.Fatalf("@timestamp %v survived sanitising %q", v, line)
			}
		}
	})
}

func TestLongStdoutLinesAreRead(t *testing.T) {
	t.Parallel()
	var logs syncbuf.Buffer
	h := startOK(t, configOf(plug{"chatty", entry(echoAs(t, "chatty"))}), tracingOptions(&logs))
	s := memberOf(t, h, 0)
	// Each line is far over bufio.Scanner's 64 KiB token and the pipe's
	// buffer: a stalled reader blocks the plugin in its write.
	for i := range 5 {
		mustCall(t, s, "bigout", `{"size":300000}`, "wrote")
		t.Logf("line %d read", i)
	}
	mustCall(t, s, "pid", "", "")
	if st := s.Status(); st.Restarts != 0 || st.State != StateRunning {
		t.Fatalf("status = %+v", st)
	}
	waitFor(t, "the cut stdout lines in the log", func() bool {
		return strings.Count(logs.String(), "more dropped") >= 5
	})
}

// openFDs counts this process's open file descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd:", err)
	}
	return len(ents)
}

// pidsIn reads the pids a test plugin appended to path.
func pidsIn(path string) []int {
	data, _ := os.ReadFile(path)
	var pids []int
	for _, f := range strings.Fields(string(data)) {
		if pid, err := strconv.Atoi(f); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// Not parallel: it counts the goroutines and descriptors of the whole test
// process.
func TestEscapedChildHoldingPipesStallsNeitherRestartNorClose(t *testing.T) {
	name := "escaper"
	e := entry(echoAs(t, name))
	e.Env = []string{hangDirVar}
	record := filepath.Join(os.Getenv(hangDirVar), name+".escape")
	t.Cleanup(func() {
		for _, pid := range pidsIn(record) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		os.Remove(record)
	})
	opts := fastOptions()
	opts.CircuitFailures = 100
	h, errs := Start(context.Background(), Specs(configOf(plug{name, e})), opts)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	s := memberOf(t, h, 0)
	crash := func(i int) {
		t.Helper()
		began := time.Now()
		defer func() { t.Logf("crash %d: running again after %v", i, time.Since(began).Round(time.Millisecond)) }()
		if _, err := callDirect(s, "escape", "", 5*time.Second); err == nil {
			t.Fatalf("escape %d: no error", i)
		}
		waitFor(t, fmt.Sprintf("restart %d", i), func() bool {
			st := s.Status()
			return st.State == StateRunning && st.Restarts == i
		})
		mustCall(t, s, "pid", "", "")
	}
	crash(1) // warms up what is started once
	runtime.GC()
	goroutines, fds := runtime.NumGoroutine(), openFDs(t)
	const cycles = 5
	for i := 2; i <= cycles+1; i++ {
		crash(i)
	}
	if n := len(pidsIn(record)); n != cycles+1 {
		t.Fatalf("%d escaped children recorded, want %d", n, cycles+1)
	}
	// A little slack for gRPC and runtime goroutines that come and go; a
	// leak per crash would exceed it.
	waitFor(t, "goroutines and descriptors back to their level", func() bool {
		return runtime.NumGoroutine() <= goroutines+4 && openFDs(t) <= fds+3
	})

	// Besides the escaped children, an ordinary child holding the pipes
	// (the default for children of shell or Python plugins), which must
	// not hold up Close either, and goes with the plugin.
	r, err := callDirect(s, "pipechild", "", 5*time.Second)
	if err != nil || r == nil {
		t.Fatalf("pipechild: %v, %v", r, err)
	}
	child, _ := strconv.Atoi(r.Content)
	t.Cleanup(func() { syscall.Kill(child, syscall.SIGKILL) })
	pid := s.Status().PID

	ctx, cancel := context.WithTimeout(context.Background(), DefaultCloseTimeout)
	defer cancel()
	began := time.Now()
	if err := h.Close(ctx); err != nil {
		t.Fatalf("Close with children holding the pipes: %v", err)
	}
	waitFor(t, "the plugin and its ordinary child to exit", func() bool { return gone(pid) && gone(child) })
	t.Logf("Close took %v; goroutines %d → %d, descriptors %d → %d", time.Since(began).Round(time.Millisecond),
		goroutines, runtime.NumGoroutine(), fds, openFDs(t))
}

// startChildHost runs the test binary as a host of the plugins at paths,
// with env added, and returns it with its stdout lines. The test kills it.
func startChildHost(t *testing.T, env []string, paths ...string) (*exec.Cmd, <-chan string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childHostEnv+"="+strings.Join(paths, string(os.PathListSeparator)))
	cmd.Env = append(cmd.Env, env...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	removeCgroupsOf(t, cmd.Process.Pid) // runs after the kill below
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	return cmd, lines
}

func killHost(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
}

// A host SIGKILLed while its plugin has not reached sdk.Serve yet: before
// the first start completes, and during a restart.
func TestNoPluginOutlivesAHostKilledWhileItStarts(t *testing.T) {
	t.Parallel()
	t.Run("first start", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		name := "slowpoke"
		slow := filepath.Join(dir, name+".slow")
		if err := os.WriteFile(slow, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		cmd, _ := startChildHost(t, []string{startDirVar + "=" + dir}, echoAs(t, name))
		var pid int
		waitFor(t, "the plugin to begin starting", func() bool {
			pids := pidsIn(filepath.Join(dir, name+".pids"))
			if len(pids) > 0 {
				pid = pids[0]
			}
			return pid != 0
		})
		t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
		killHost(t, cmd)
		// Let a surviving plugin go on to serve, as it would.
		os.Remove(slow)
		waitFor(t, "the plugin of the killed host to exit", func() bool { return gone(pid) })
	})
	t.Run("restart", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		name := "phoenix"
		cmd, lines := startChildHost(t, []string{startDirVar + "=" + dir}, echoAs(t, name))
		first := onePID(t, waitChildHostReady(t, lines))
		slow := filepath.Join(dir, name+".slow")
		if err := os.WriteFile(slow, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Kill(first, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		var second int
		waitFor(t, "the restarted plugin to begin starting", func() bool {
			if pids := pidsIn(filepath.Join(dir, name+".pids")); len(pids) > 1 {
				second = pids[1]
			}
			return second != 0
		})
		t.Cleanup(func() { syscall.Kill(second, syscall.SIGKILL) })
		killHost(t, cmd)
		os.Remove(slow)
		waitFor(t, "the restarting plugin of the killed host to exit", func() bool { return gone(second) })
	})
}

// A fail_closed guard that never started has no manifest, so it must block
// every tool call, through the Bus's own fail_closed rule.
func TestFailClosedGuardThatDoesNotStartBlocksEveryTool(t *testing.T) {
	t.Parallel()
	overProtocols(t, func(t *testing.T, v int) {
		guard, witness, missingName, lenientName := named("pinned", v), named("witness", v), named("missing", v), named("lenient", v)
		pinnedGuard := pinned(entry(echoAs(t, guard)), v)
		pinnedGuard.SHA256 = strings.Repeat("ab", 32)
		pinnedGuard.FailClosed = true
		missing := pinned(entry(filepath.Join(t.TempDir(), "missing")), v)
		missing.FailClosed = true
		lenient := pinned(entry(filepath.Join(t.TempDir(), "lenient")), v)
		h, errs := start(t, configOf(
			plug{guard, pinnedGuard},
			plug{witness, pinned(entry(echoAs(t, witness)), v)},
			plug{missingName, missing},
			plug{lenientName, lenient},
		), fastOptions())
		wantErr(t, errs, guard, "checksum mismatch")
		wantErr(t, errs, missingName, "does not exist")
		wantErr(t, errs, lenientName, "does not exist")
		wantProtocol(t, h, v)

		sts := h.Plugins()
		var got []string
		for _, st := range sts {
			got = append(got, st.Name+":"+st.State)
		}
		if want := guard + ":down " + witness + ":running " + missingName + ":down"; strings.Join(got, " ") != want {
			t.Fatalf("plugins = %v, want %s", got, want)
		}
		if !strings.Contains(sts[0].Reason, "checksum mismatch") || !strings.Contains(sts[2].Reason, "does not exist") {
			t.Errorf("reasons = %q, %q", sts[0].Reason, sts[2].Reason)
		}

		var logs syncbuf.Buffer
		bus, err := hookbus.New(h.Members(), hookbus.Config{Logger: hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Debug})})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { bus.Close(context.Background()) })
		for _, tool := range []string{"read_file", "calculate", witness + "__anything", "shared_tool"} {
			out := bus.PreToolCall(context.Background(), hooks.ToolCallRequest{Name: tool, Arguments: json.RawMessage("{}")})
			if !out.Blocked || out.BlockedBy != guard || !strings.Contains(out.Message, "fail_closed") ||
				!strings.Contains(out.Message, "checksum mismatch") || !strings.Contains(out.Message, "sha256") {
				t.Errorf("%s: %+v, want blocked by the pinned guard, saying why it is down and what to do", tool, out)
			}
		}
		// The reason the guard is down reaches the log, once.
		if out := logs.String(); !strings.Contains(out, "checksum mismatch") || !strings.Contains(out, "not running") {
			t.Errorf("log does not say why the guard is down:\n%s", out)
		}
		// Other hooks are not the guard's business.
		if r := provide(bus, "pid", ""); r == nil || r.Plugin != witness {
			t.Errorf("provide = %+v, want the witness to answer", r)
		}
	})
}

// A plugin started through a wrapper script that does not exec it has the
// shell, not the host, as its parent: it must still start and answer.
func TestPluginStartedThroughAWrapperScriptAnswers(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	plugin := echoAs(t, "wrapped")
	wrapper := filepath.Join(dir, "wrapper.sh")
	// No exec: the shell stays between the host and the plugin. Absolute
	// paths only, since the host passes no PATH.
	script := fmt.Sprintf("#!/bin/sh\ncd %s || exit 1\n%s\n", dir, plugin)
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	h := startOK(t, configOf(plug{"wrapped", entry(wrapper)}), fastOptions())
	s := memberOf(t, h, 0)
	mustCall(t, s, "hello", "", "answered by wrapped")
	r, err := callDirect(s, "pid", "", 10*time.Second)
	if err != nil || r == nil {
		t.Fatalf("pid: %+v, %v", r, err)
	}
	if st := s.Status(); st.State != StateRunning || st.Restarts != 0 {
		t.Fatalf("status = %+v, want running without restarts", st)
	}
}

// groupLeader starts a process leading its own group, standing for an
// unrelated process that got a reaped plugin's pid.
func groupLeader(t *testing.T) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(sleepPath(t), "300")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	return cmd
}

// wasKilled reports whether cmd was SIGKILLed before this call: it sends
// SIGTERM and waits, and a SIGKILL already pending is what ends it then.
func wasKilled(t *testing.T, cmd *exec.Cmd) bool {
	t.Helper()
	cmd.Process.Signal(syscall.SIGTERM)
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("sleep ended with %v", err)
	}
	ws := ee.Sys().(syscall.WaitStatus)
	return ws.Signaled() && ws.Signal() == syscall.SIGKILL
}

func sleepPath(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"/bin/sleep", "/usr/bin/sleep"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	t.Skip("no sleep binary")
	return ""
}

// A plugin process that has been reaped has given its pid back: killing
// its group later (go-plugin calls Kill again when Close fails, possibly
// much later) would hit whoever got the pid since.
func TestNoGroupKillAfterThePluginWasReaped(t *testing.T) {
	t.Parallel()
	done := exec.Command("/bin/true")
	if err := done.Run(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	close(exited)

	t.Run("runner", func(t *testing.T) {
		t.Parallel()
		other := groupLeader(t)
		r := &procRunner{cmd: done, pid: other.Process.Pid, exited: exited}
		if err := r.Kill(context.Background()); err != nil {
			t.Fatalf("Kill: %v", err)
		}
		if wasKilled(t, other) {
			t.Fatal("Kill of a reaped plugin killed the process group that reused its pid")
		}
	})
	t.Run("instance", func(t *testing.T) {
		t.Parallel()
		other := groupLeader(t)
		in := &instance{client: plugin.NewClient(&plugin.ClientConfig{
			HandshakeConfig: handshake.Config, Plugins: handshake.VersionedPlugins(nil, nil)[handshake.ProtocolVersion], Cmd: exec.Command("/bin/true"),
		}), pid: other.Process.Pid, exited: exited}
		for _, graceful := range []bool{false, true} {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			if err := in.stop(ctx, graceful); err != nil {
				t.Fatalf("stop(graceful=%v): %v", graceful, err)
			}
			cancel()
		}
		if wasKilled(t, other) {
			t.Fatal("stopping a reaped plugin killed the process group that reused its pid")
		}
	})
}

// A plugin that is serving and has a child of its own, under a host that
// is SIGKILLed: the SDK's SIGTERM handler (the parent-death signal) must
// take the plugin's whole process group down, the child included.
func TestServingPluginTakesItsChildrenAlongWhenItsHostIsKilled(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	name := "parent"
	if err := os.WriteFile(filepath.Join(dir, name+".spawn"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd, lines := startChildHost(t, []string{startDirVar + "=" + dir}, echoAs(t, name))
	pid := onePID(t, waitChildHostReady(t, lines))
	children := pidsIn(filepath.Join(dir, name+".children"))
	if pid == 0 || len(children) != 1 {
		t.Fatalf("plugin pid %d, children %v; want a serving plugin with one child", pid, children)
	}
	child := children[0]
	t.Cleanup(func() {
		syscall.Kill(pid, syscall.SIGKILL)
		syscall.Kill(child, syscall.SIGKILL)
	})
	killHost(t, cmd)
	waitFor(t, "the plugin and its child to exit after the host was SIGKILLed", func() bool { return gone(pid) && gone(child) })
}

// waitChildHostReady reads a child host's report lines until it says it is
// ready, and returns the plugin pids it reported on the way.
func waitChildHostReady(t *testing.T, lines <-chan string) []int {
	t.Helper()
	var pids []int
	timeout := time.After(livenessTimeout)
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatal("child host exited before it was ready")
			}
			if p, ok := strings.CutPrefix(line, "pid "); ok {
				pid, err := strconv.Atoi(p)
				if err != nil {
					t.Fatalf("child host reported pid %q: %v", p, err)
				}
				pids = append(pids, pid)
			}
			if line == "ready" {
				return pids
			}
		case <-timeout:
			t.Fatal("child host not ready")
		}
	}
}

// onePID is the single plugin pid a child host of one plugin reported.
func onePID(t *testing.T, pids []int) int {
	t.Helper()
	if len(pids) != 1 {
		t.Fatalf("child host reported pids %v, want one", pids)
	}
	return pids[0]
}
