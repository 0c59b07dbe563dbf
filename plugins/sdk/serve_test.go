//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package sdk_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hookhost/hookhost/plugins/handshake"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/wire"

	"github.com/hookhost/hookhost/internal/testenv"
)

// These tests run internal/testplugin as a real plugin process, started the
// way a host starts it, and kill, hang and crash it.

const (
	envParent    = "TESTHOOK_PARENT"
	envPluginBin = "TESTHOOK_PLUGIN_BIN"
	envSetpgid   = "TESTHOOK_SETPGID"
)

var testPlugin struct {
	once sync.Once
	dir  string
	path string
	err  error
}

func TestMain(m *testing.M) {
	// Re-executed as a stand-in host for the parent-death test.
	if os.Getenv(envParent) == "1" {
		os.Exit(runParent())
	}
	dir, err := os.MkdirTemp("", "sdk-serve-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	testPlugin.dir = dir
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// pluginBinary builds the test plugin once per test run, with the race
// detector when the tests have it, so races in Serve fail the tests too.
func pluginBinary(t *testing.T) string {
	t.Helper()
	testPlugin.once.Do(func() {
		goBin, err := exec.LookPath("go")
		if err != nil {
			testPlugin.err = fmt.Errorf("go tool not found: %w", err)
			return
		}
		testPlugin.path = testPlugin.dir + "/testplugin"
		args := []string{"build", "-o", testPlugin.path}
		if raceEnabled {
			args = append(args, "-race")
		}
		cmd := exec.Command(goBin, append(args, "./internal/testplugin")...)
		if out, err := cmd.CombinedOutput(); err != nil {
			testPlugin.err = fmt.Errorf("building the test plugin: %v\n%s", err, out)
		}
	})
	if errors.Is(testPlugin.err, exec.ErrNotFound) {
		testenv.Skip(t, "the go tool is not on PATH", "install Go from https://go.dev/dl/ and put its bin on PATH", testPlugin.err)
	}
	if testPlugin.err != nil {
		t.Fatal(testPlugin.err)
	}
	return testPlugin.path
}

// logSink collects a go-plugin client's log and mirrors it to the test log
// while the test runs.
type logSink struct {
	mu   sync.Mutex
	t    testing.TB
	buf  bytes.Buffer
	done bool
}

func newLogSink(t testing.TB) *logSink {
	s := &logSink{t: t}
	t.Cleanup(func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.done = true
	})
	return s
}

func (s *logSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf.Write(p)
	if !s.done {
		s.t.Log(strings.TrimRight(string(p), "\n"))
	}
	return len(p), nil
}

func (s *logSink) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

func clientConfig(bin string, log hclog.Logger, env ...string) *plugin.ClientConfig {
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), env...)
	return &plugin.ClientConfig{
		HandshakeConfig:  handshake.Config,
		VersionedPlugins: handshake.VersionedPlugins(nil, nil),
		Cmd:              cmd,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		AutoMTLS:         true,
		StartTimeout:     30 * time.Second,
		Logger:           log,
	}
}

// versions are the protocol versions the host side of these tests offers
// one at a time; 0 offers every version, as hookhost does by default.
func versions() []int {
	vs := []int{0}
	for v := range handshake.VersionedPlugins(nil, nil) {
		vs = append(vs, v)
	}
	slices.Sort(vs)
	return vs
}

// hostConn is a plugin process as these tests talk to it: the dispensed
// wire.Conn of whichever version was negotiated, with typed helpers.
type hostConn struct {
	wire.Conn
	manifest hooks.Manifest
}

func (c *hostConn) Manifest() hooks.Manifest { return c.manifest }

func (c *hostConn) PreToolCall(ctx context.Context, req hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
	return ask[*hooks.PreToolCallDecision](ctx, c, hooks.PreToolCall, req)
}

func (c *hostConn) PreToolCallCanProvideResult(ctx context.Context, req hooks.ToolCallRequest) (*hooks.ToolResult, error) {
	return ask[*hooks.ToolResult](ctx, c, hooks.PreToolCallCanProvideResult, req)
}

func (c *hostConn) TransformLLMOutput(ctx context.Context, req hooks.LLMOutput) (*hooks.TextReplacement, error) {
	return ask[*hooks.TextReplacement](ctx, c, hooks.TransformLLMOutput, req)
}

func ask[T any](ctx context.Context, c wire.Conn, hook hooks.Name, req any) (T, error) {
	var zero T
	v, err := c.Handle(ctx, hook, req)
	if err != nil || v == nil {
		return zero, err
	}
	t, ok := v.(T)
	if !ok {
		return zero, fmt.Errorf("%s answered a %T, want %T", hook, v, zero)
	}
	return t, nil
}

// dispense returns the described hook client of a started go-plugin client.
func dispense(pc *plugin.Client) (*hostConn, error) {
	rpc, err := pc.Client()
	if err != nil {
		return nil, fmt.Errorf("starting the plugin: %w", err)
	}
	raw, err := rpc.Dispense(handshake.PluginKey)
	if err != nil {
		return nil, err
	}
	wc, ok := raw.(wire.Conn)
	if !ok {
		return nil, fmt.Errorf("dispensed %T, want a wire.Conn", raw)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	m, err := wc.Describe(ctx)
	if err != nil {
		return nil, err
	}
	return &hostConn{Conn: wc, manifest: m}, nil
}

// launch starts the test plugin as a host would, offering protocol version
// (0: every version), and returns its go-plugin client and the dispensed
// hook client, already described.
func launch(t *testing.T, version int) (*plugin.Client, *hostConn, *logSink) {
	t.Helper()
	sink := newLogSink(t)
	log := hclog.New(&hclog.LoggerOptions{Name: "host", Output: sink, Level: hclog.Debug})
	cfg := clientConfig(pluginBinary(t), log)
	if version != 0 {
		cfg.VersionedPlugins = map[int]plugin.PluginSet{version: cfg.VersionedPlugins[version]}
	}
	pc := plugin.NewClient(cfg)
	t.Cleanup(pc.Kill)
	c, err := dispense(pc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	want := version
	if want == 0 {
		want = highestVersion()
	}
	if c.Version() != want || pc.NegotiatedVersion() != want {
		t.Fatalf("negotiated protocol version %d (client %d), want %d", pc.NegotiatedVersion(), c.Version(), want)
	}
	return pc, c, sink
}

func provide(t *testing.T, c *hostConn, name, args string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	r, err := c.PreToolCallCanProvideResult(ctx, hooks.ToolCallRequest{Name: name, Arguments: []byte(args)})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if r == nil {
		t.Fatalf("%s: no result", name)
	}
	return r.Content
}

func TestServeProcess(t *testing.T) {
	for _, v := range versions() {
		t.Run(fmt.Sprintf("version %d", v), func(t *testing.T) { testServeProcess(t, v) })
	}
}

func testServeProcess(t *testing.T, version int) {
	pc, c, sink := launch(t, version)
	ctx := t.Context()

	want := hooks.Manifest{
		Name: "testplugin", Version: "0.1.0",
		Hooks: []hooks.Name{hooks.PreToolCall, hooks.PreToolCallCanProvideResult},
		Tools: []hooks.ToolSpec{
			{Name: "testplugin__echo", Description: "echoes its arguments", InputSchema: []byte(`{"type":"object"}`)},
			{Name: "testplugin__add", Description: "adds two integers", InputSchema: []byte(`{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"],"additionalProperties":false}`)},
		},
	}
	if got := c.Manifest(); !reflect.DeepEqual(got, want) {
		t.Fatalf("manifest\n got  %+v\n want %+v", got, want)
	}

	if _, err := c.Configure(ctx, []byte(`{"greeting":"hi"}`)); err != nil {
		t.Fatal(err)
	}
	if got := provide(t, c, "config", ""); got != `{"greeting":"hi"}` {
		t.Fatalf("plugin was configured with %q", got)
	}
	var ce *wire.CallError
	if _, err := c.Configure(ctx, []byte(`not json`)); !errors.As(err, &ce) || ce.Hook != "configure" || ce.Kind != nil || !strings.HasPrefix(ce.Msg, "config is not a JSON object") {
		t.Fatalf("bad config: got %v", err)
	}

	if got := provide(t, c, "testplugin__echo", `{"invalid json`); got != `{"invalid json` {
		t.Fatalf("echo: %q", got)
	}
	// The typed tool is answered by the SDK, its errors as error results.
	if got := provide(t, c, "testplugin__add", `{"a":2,"b":3}`); got != `{"sum":5}` {
		t.Fatalf("typed tool: %q", got)
	}
	if got := provide(t, c, "testplugin__add", `{"a":2,"b":"3"}`); got != `{"error":"tool testplugin__add: arguments: args.b: must be an integer, got string \"3\""}` {
		t.Fatalf("typed tool, bad arguments: %q", got)
	}
	if got := provide(t, c, "testplugin__add", `{"a":0,"b":0}`); got != `{"error":"tool testplugin__add failed: it panicked: zero"}` {
		t.Fatalf("typed tool, panic: %q", got)
	}
	if d, err := c.PreToolCall(ctx, hooks.ToolCallRequest{Name: "block"}); err != nil || d == nil || d.Block == nil || d.Block.Message != "blocked by testplugin" {
		t.Fatalf("block: %+v %v", d, err)
	}
	if d, err := c.PreToolCall(ctx, hooks.ToolCallRequest{Name: "anything"}); err != nil || d != nil {
		t.Fatalf("no opinion: %+v %v", d, err)
	}
	if r, err := c.TransformLLMOutput(ctx, hooks.LLMOutput{Text: "x"}); err != nil || r != nil {
		t.Fatalf("a hook the plugin does not implement: %+v %v", r, err)
	}

	// A panicking handler is an error for that call; the process serves on.
	_, err := c.PreToolCall(ctx, hooks.ToolCallRequest{Name: "panic"})
	if !errors.As(err, &ce) || ce.Hook != "pre_tool_call" || !strings.HasSuffix(ce.Msg, "panic in pre_tool_call handler: boom") {
		t.Fatalf("panic: got %v", err)
	}
	// Both versions say it was a panic.
	if !errors.Is(err, hooks.ErrPanicked) {
		t.Fatalf("panic over version %d: got %v, want hooks.ErrPanicked", c.Version(), err)
	}
	if got := provide(t, c, "testplugin__echo", `{"after":"panic"}`); got != `{"after":"panic"}` {
		t.Fatalf("after panic: %q", got)
	}

	// A handler that hangs costs the caller its deadline, no more.
	dctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	_, err = c.PreToolCall(dctx, hooks.ToolCallRequest{Name: "sleep"})
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("sleep: got %v, want a deadline error", err)
	}
	// The host gave up, and the handler's context ended with it.
	waitFor(t, 30*time.Second, "the sleeping handler's context to end", func() bool { return provide(t, c, "cancelled", "") == "1" })
	if got := provide(t, c, "testplugin__echo", `{"after":"sleep"}`); got != `{"after":"sleep"}` {
		t.Fatalf("after sleep: %q", got)
	}

	// Stray stdout after the handshake goes nowhere harmful.
	if got := provide(t, c, "stdout", ""); got != "printed" {
		t.Fatalf("stdout: %q", got)
	}
	if got := provide(t, c, "testplugin__echo", `{"after":"stdout"}`); got != `{"after":"stdout"}` {
		t.Fatalf("after stdout: %q", got)
	}

	// The plugin's logs reach the host's logger with their level, and the
	// panic's stack with them, at DEBUG.
	if log := sink.String(); !strings.Contains(log, "[DEBUG] host.testplugin: recovered a panic in a hook handler") || !strings.Contains(log, "stack=") {
		t.Errorf("the recovered panic was not logged to the host:\n%s", log)
	}

	// Kill asks the plugin to shut down, and Serve exits cleanly.
	pid := provide(t, c, "pid", "")
	pc.Kill()
	if !pc.Exited() {
		t.Fatal("Exited() is false after Kill")
	}
	if log := sink.String(); strings.Contains(log, "plugin failed to exit gracefully") || !strings.Contains(log, "plugin process exited") {
		t.Fatalf("the plugin did not exit on request:\n%s", log)
	}
	if n, _ := strconv.Atoi(pid); n <= 0 || !processGone(n) {
		t.Fatalf("plugin process %s still exists after Kill", pid)
	}
	_, err = c.PreToolCall(ctx, hooks.ToolCallRequest{Name: "block"})
	if !errors.Is(err, hooks.ErrUnavailable) {
		t.Fatalf("call after Kill: got %v, want hooks.ErrUnavailable", err)
	}
}

func TestServeProcessCrash(t *testing.T) {
	for _, v := range versions() {
		t.Run(fmt.Sprintf("version %d", v), func(t *testing.T) { testServeProcessCrash(t, v) })
	}
}

func testServeProcessCrash(t *testing.T, version int) {
	pc, c, _ := launch(t, version)
	_, err := c.PreToolCall(t.Context(), hooks.ToolCallRequest{Name: "crash"})
	if !errors.Is(err, hooks.ErrUnavailable) {
		t.Fatalf("crash mid-call: got %v, want hooks.ErrUnavailable", err)
	}
	waitFor(t, 10*time.Second, "go-plugin to notice the exit", pc.Exited)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if _, err := c.PreToolCallCanProvideResult(ctx, hooks.ToolCallRequest{Name: "testplugin__echo"}); !errors.Is(err, hooks.ErrUnavailable) {
		t.Fatalf("call after crash: got %v, want hooks.ErrUnavailable", err)
	}
}

func TestServeRefusesInvalidManifest(t *testing.T) {
	for env, reason := range map[string]string{
		"TESTPLUGIN_BAD_TOOL=bad tool!":       `manifest: tool name \"bad tool!\" must match`,
		"TESTPLUGIN_DUP_TOOL=testplugin__add": `manifest: tool \"testplugin__add\" declared twice`,
	} {
		t.Run(env, func(t *testing.T) {
			sink := newLogSink(t)
			log := hclog.New(&hclog.LoggerOptions{Name: "host", Output: sink, Level: hclog.Debug})
			pc := plugin.NewClient(clientConfig(pluginBinary(t), log, env))
			defer pc.Kill()
			if _, err := pc.Client(); err == nil {
				t.Fatal("a plugin with an invalid manifest started")
			}
			if log := sink.String(); !strings.Contains(log, "[ERROR] host.testplugin: plugin cannot start: invalid manifest") || !strings.Contains(log, reason) {
				t.Fatalf("the reason did not reach the host's log:\n%s", sink.String())
			}
		})
	}
}

func TestServeStartedByHand(t *testing.T) {
	cmd := exec.Command(pluginBinary(t))
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("got %v, want exit status 1", err)
	}
	if stdout.Len() != 0 {
		t.Errorf("wrote to stdout: %q", stdout.String())
	}
	if !strings.Contains(stderr.String(), "This binary is a hookhost plugin") || !strings.Contains(stderr.String(), "set HOOKHOST_PLUGIN_DEBUG=1") {
		t.Errorf("stderr: %q", stderr.String())
	}
}

// TestServeParentDeath SIGKILLs a host and checks that its plugin goes too,
// and with it the plugin's own children when the plugin leads its process
// group.
func TestServeParentDeath(t *testing.T) {
	bin := pluginBinary(t)
	for _, setpgid := range []bool{true, false} {
		t.Run(fmt.Sprintf("setpgid=%v", setpgid), func(t *testing.T) {
			parent := exec.Command(os.Args[0], "-test.run=^$")
			parent.Env = append(os.Environ(), envParent+"=1", envPluginBin+"="+bin, envSetpgid+"="+strconv.FormatBool(setpgid))
			parent.Stderr = newLogSink(t)
			out, err := parent.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := parent.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				_ = parent.Process.Kill()
				_ = parent.Wait()
			})

			lines := make(chan string, 1)
			go func() {
				line, _ := bufio.NewReader(out).ReadString('\n')
				lines <- strings.TrimSpace(line)
			}()
			var line string
			select {
			case line = <-lines:
			case <-time.After(60 * time.Second):
				t.Fatal("the stand-in host never reported its plugin")
			}
			var pids []int
			for _, f := range strings.Fields(line) {
				pid, err := strconv.Atoi(f)
				if err != nil {
					t.Fatalf("stand-in host: %q", line)
				}
				pids = append(pids, pid)
			}
			if want := map[bool]int{true: 2, false: 1}[setpgid]; len(pids) != want {
				t.Fatalf("stand-in host reported %q, want %d pids", line, want)
			}
			t.Cleanup(func() {
				for _, pid := range pids {
					if !processGone(pid) {
						_ = syscall.Kill(pid, syscall.SIGKILL)
					}
				}
			})
			for _, pid := range pids {
				if processGone(pid) {
					t.Fatalf("process %d is gone before its host died", pid)
				}
			}

			if err := parent.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			_ = parent.Wait()

			for i, pid := range pids {
				what := map[int]string{0: "plugin", 1: "plugin's child"}[i]
				waitFor(t, 10*time.Second, fmt.Sprintf("the %s (pid %d) to exit", what, pid), func() bool { return processGone(pid) })
			}
		})
	}
}

// runParent is the stand-in host: it starts the plugin through go-plugin,
// prints the plugin's pid (and, in its own process group, the pid of a
// child the plugin spawned), and waits to be killed.
func runParent() int {
	setpgid, _ := strconv.ParseBool(os.Getenv(envSetpgid))
	cfg := clientConfig(os.Getenv(envPluginBin), hclog.New(&hclog.LoggerOptions{Output: os.Stderr, Level: hclog.Warn}))
	if setpgid {
		cfg.Cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	}
	pc := plugin.NewClient(cfg)
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, "stand-in host:", err)
		pc.Kill()
		return 1
	}
	c, err := dispense(pc)
	if err != nil {
		return fail(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	report := []string{}
	tools := []string{"pid"}
	if setpgid {
		tools = append(tools, "spawn")
	}
	for _, tool := range tools {
		r, err := c.PreToolCallCanProvideResult(ctx, hooks.ToolCallRequest{Name: tool})
		if err != nil || r == nil {
			return fail(fmt.Errorf("%s: %v %v", tool, r, err))
		}
		report = append(report, r.Content)
	}
	fmt.Println(strings.Join(report, " "))
	select {}
}

// processGone reports whether pid has exited. A zombie counts as gone: its
// new parent may be an init that never reaps (common in containers).
func processGone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return errors.Is(err, os.ErrNotExist) && procAvailable()
	}
	// The state follows the command name, which is parenthesised and may
	// itself contain spaces and parentheses.
	i := bytes.LastIndexByte(stat, ')')
	return i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z'
}

func procAvailable() bool {
	_, err := os.Stat("/proc/self/stat")
	return err == nil
}

func waitFor(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting %v for %s", limit, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// debugPlugin is the test plugin started by hand in debug mode.
type debugPlugin struct {
	cmd    *exec.Cmd
	line   string
	stdout chan string // the lines after the first, then closed
	stderr *logSink
	exited chan error
}

func startDebug(t *testing.T, env ...string) *debugPlugin {
	t.Helper()
	cmd := exec.Command(pluginBinary(t))
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOOKHOST_PLUGIN_DEBUG=1"}, env...)
	d := &debugPlugin{cmd: cmd, stdout: make(chan string, 100), stderr: newLogSink(t), exited: make(chan error, 1)}
	cmd.Stderr = d.stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if !processGone(cmd.Process.Pid) {
			_ = cmd.Process.Kill()
		}
	})
	first := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 1<<20)
		for n := 0; sc.Scan(); n++ {
			if n == 0 {
				first <- sc.Text()
			} else {
				d.stdout <- sc.Text()
			}
		}
		close(first)
		close(d.stdout)
		d.exited <- cmd.Wait()
	}()
	select {
	case line, ok := <-first:
		if !ok {
			t.Fatalf("the plugin printed nothing to stdout in debug mode; stderr:\n%s", d.stderr.String())
		}
		d.line = line
	case <-time.After(60 * time.Second):
		t.Fatalf("no reattach line from the plugin in debug mode; stderr:\n%s", d.stderr.String())
	}
	return d
}

// reattachEntry is one plugin in HOOKHOST_REATTACH_PLUGINS, as a host reads
// it.
type reattachEntry struct {
	Protocol        string
	ProtocolVersion int
	Pid             int
	Test            bool
	Addr            struct{ Network, String string }
}

// parseReattachLine reads the shell assignment the plugin printed.
func parseReattachLine(t *testing.T, line string) map[string]reattachEntry {
	t.Helper()
	const prefix = "HOOKHOST_REATTACH_PLUGINS='"
	if !strings.HasPrefix(line, prefix) || !strings.HasSuffix(line, "'") {
		t.Fatalf("reattach line %q", line)
	}
	var m map[string]reattachEntry
	dec := json.NewDecoder(strings.NewReader(strings.TrimSuffix(strings.TrimPrefix(line, prefix), "'")))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("reattach line %q: %v", line, err)
	}
	return m
}

func highestVersion() int {
	v := 0
	for k := range handshake.VersionedPlugins(nil, nil) {
		v = max(v, k)
	}
	return v
}

func TestServeDebugMode(t *testing.T) {
	cases := []struct {
		name    string
		env     []string
		version int
		signal  syscall.Signal
	}{
		{"highest version, SIGINT", nil, highestVersion(), syscall.SIGINT},
		{"version 1 pinned, SIGTERM", []string{"PLUGIN_PROTOCOL_VERSIONS=1"}, 1, syscall.SIGTERM},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := startDebug(t, c.env...)
			entries := parseReattachLine(t, d.line)
			e, ok := entries["testplugin"]
			if len(entries) != 1 || !ok {
				t.Fatalf("reattach line names %v, want testplugin only", entries)
			}
			if e.Protocol != string(plugin.ProtocolGRPC) || e.ProtocolVersion != c.version || e.Pid != d.cmd.Process.Pid || !e.Test || e.Addr.Network == "" || e.Addr.String == "" {
				t.Fatalf("reattach config %+v (plugin pid %d), want grpc version %d in test mode", e, d.cmd.Process.Pid, c.version)
			}
			waitFor(t, 30*time.Second, "the explanation on stderr", func() bool {
				log := d.stderr.String()
				return strings.Contains(log, "plugin testplugin is serving in debug mode") && strings.Contains(log, "start hookhost with the line above in its environment; Ctrl-C stops it")
			})

			// A host attaches to it the way go-plugin reattaches.
			var addr net.Addr
			switch e.Addr.Network {
			case "unix":
				addr = &net.UnixAddr{Net: "unix", Name: e.Addr.String}
			default:
				a, err := net.ResolveTCPAddr(e.Addr.Network, e.Addr.String)
				if err != nil {
					t.Fatal(err)
				}
				addr = a
			}
			sink := newLogSink(t)
			// On reattach go-plugin dispenses from Plugins, not from
			// VersionedPlugins: the host picks the set of the version the
			// plugin reported.
			pc := plugin.NewClient(&plugin.ClientConfig{
				HandshakeConfig:  handshake.Config,
				Plugins:          handshake.VersionedPlugins(nil, nil)[e.ProtocolVersion],
				Reattach:         &plugin.ReattachConfig{Protocol: plugin.Protocol(e.Protocol), ProtocolVersion: e.ProtocolVersion, Pid: e.Pid, Test: e.Test, Addr: addr},
				AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
				Logger:           hclog.New(&hclog.LoggerOptions{Name: "host", Output: sink, Level: hclog.Debug}),
			})
			rpc, err := pc.Client()
			if err != nil {
				t.Fatalf("attaching: %v", err)
			}
			raw, err := rpc.Dispense(handshake.PluginKey)
			if err != nil {
				t.Fatal(err)
			}
			conn, ok := raw.(wire.Conn)
			if !ok {
				t.Fatalf("dispensed %T, want a wire.Conn", raw)
			}
			if conn.Version() != c.version {
				t.Fatalf("attached over version %d, want %d", conn.Version(), c.version)
			}
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			if m, err := conn.Describe(ctx); err != nil || m.Name != "testplugin" {
				t.Fatalf("describe: %+v %v", m, err)
			}
			ans, err := conn.Handle(ctx, hooks.PreToolCall, hooks.ToolCallRequest{Name: "block"})
			if d, ok := ans.(*hooks.PreToolCallDecision); err != nil || !ok || d == nil || d.Block == nil || d.Block.Message != "blocked by testplugin" {
				t.Fatalf("pre_tool_call: %#v %v", ans, err)
			}
			for name, want := range map[string]string{"testplugin__add": `{"sum":5}`, "stdout": "printed"} {
				ans, err := conn.Handle(ctx, hooks.PreToolCallCanProvideResult, hooks.ToolCallRequest{Name: name, Arguments: json.RawMessage(`{"a":2,"b":3}`)})
				if r, ok := ans.(*hooks.ToolResult); err != nil || !ok || r == nil || r.Content != want {
					t.Fatalf("%s: %#v %v", name, ans, err)
				}
			}

			// A host that lets go leaves it running: it was started by hand.
			conn.Close()
			pc.Kill()
			if processGone(d.cmd.Process.Pid) {
				t.Fatal("the host's Kill ended a plugin it had attached to")
			}

			if err := d.cmd.Process.Signal(c.signal); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-d.exited:
				if err != nil {
					t.Fatalf("after %v: %v, want exit status 0; stderr:\n%s", c.signal, err, d.stderr.String())
				}
			case <-time.After(60 * time.Second):
				t.Fatalf("the plugin did not stop on %v", c.signal)
			}
			// The reattach line is the only line on stdout, stray prints
			// included.
			var rest []string
			for l := range d.stdout {
				rest = append(rest, l)
			}
			if len(rest) != 0 {
				t.Fatalf("stdout had more lines: %q", rest)
			}
			if log := d.stderr.String(); !strings.Contains(log, "stray output after the handshake") {
				t.Fatalf("the stray print did not go to stderr:\n%s", log)
			}
			if log := d.stderr.String(); strings.Contains(log, "[ERROR]") {
				t.Fatalf("a clean stop logged an error:\n%s", log)
			}
		})
	}
}

// Many calls at once share the plugin's connection (version 2: one stream),
// and each gets its own answer, hanging calls among them.
func TestServeConcurrentCalls(t *testing.T) {
	for _, v := range versions()[1:] {
		t.Run(fmt.Sprintf("version %d", v), func(t *testing.T) {
			_, c, _ := launch(t, v)
			const n = 64
			var wg sync.WaitGroup
			errs := make(chan error, n)
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
					defer cancel()
					if i%8 == 0 {
						// A call that hangs until its deadline holds up
						// nothing else.
						hctx, hcancel := context.WithTimeout(ctx, 100*time.Millisecond)
						defer hcancel()
						if _, err := c.PreToolCall(hctx, hooks.ToolCallRequest{Name: "sleep"}); !errors.Is(err, context.DeadlineExceeded) {
							errs <- fmt.Errorf("sleep %d: %v", i, err)
						}
						return
					}
					args := fmt.Sprintf(`{"a":%d,"b":1}`, i)
					r, err := c.PreToolCallCanProvideResult(ctx, hooks.ToolCallRequest{Name: "testplugin__add", Arguments: json.RawMessage(args)})
					if want := fmt.Sprintf(`{"sum":%d}`, i+1); err != nil || r == nil || r.Content != want {
						errs <- fmt.Errorf("call %d: %+v %v, want %s", i, r, err, want)
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
		})
	}
}
