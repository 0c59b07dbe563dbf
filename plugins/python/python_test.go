package python

// These tests need Debian's Python (/usr/bin/python3) with python3-grpcio,
// python3-protobuf, python3-cryptography, python3-venv and python3-pip.
// Without them they are skipped, saying how to install them; under CI
// (CI set) they fail instead.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/hookhost/hookhost/config"
	"github.com/hookhost/hookhost/hookbus"
	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/host"

	"github.com/hookhost/hookhost/internal/testenv"
)

const python = "/usr/bin/python3"

// liveness bounds how long a test waits for a plugin process.
const liveness = 20 * time.Second

// needPython skips (or, under CI, fails) the test when Debian's Python
// lacks the modules the SDK needs.
func needPython(t *testing.T, modules ...string) {
	t.Helper()
	mods := append([]string{"grpc", "google.protobuf", "cryptography"}, modules...)
	out, err := exec.Command(python, "-c", "import "+strings.Join(mods, ", ")).CombinedOutput()
	if err != nil {
		install := testenv.DebianPython
		if len(modules) > 0 {
			install += " python3-venv python3-pip python3-setuptools"
		}
		// The same words as the other tests that need these modules, so
		// that make test's summary puts them in one group.
		last := len(mods) - 1
		testenv.Skip(t, python+" cannot import "+strings.Join(mods[:last], ", ")+" and "+mods[last], install,
			fmt.Sprintf("%v: %s", err, bytes.TrimSpace(out)))
	}
}

// TestUnitTests runs the SDK's own unit tests (tests/, stdlib unittest)
// with Debian's Python and the SDK from src/.
func TestUnitTests(t *testing.T) {
	needPython(t)
	cmd := exec.Command(python, "-B", "-m", "unittest", "discover", "-s", "tests", "-v")
	cmd.Env = append(os.Environ(), "PYTHONPATH="+abs(t, "src"), "PYTHONDONTWRITEBYTECODE=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("python unit tests failed: %v\n%s", err, out)
	}
	// unittest says OK even when it found nothing to run.
	if !bytes.Contains(out, []byte("\nOK")) || bytes.Contains(out, []byte("Ran 0 tests")) {
		t.Fatalf("python unit tests did not run:\n%s", out)
	}
	t.Logf("%s", lastLines(out, 4))
}

func lastLines(b []byte, n int) []byte {
	lines := bytes.Split(bytes.TrimSpace(b), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return bytes.Join(lines, []byte("\n"))
}

func abs(t *testing.T, p string) string {
	t.Helper()
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

type testLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *testLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *testLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func newLog(t *testing.T) *testLog {
	l := &testLog{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("host log:\n%s", l.String())
		}
	})
	return l
}

func (l *testLog) logger() hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{Name: "test", Level: hclog.Debug, Output: l})
}

func parse(t *testing.T, toml string) *config.Config {
	t.Helper()
	cfg, err := config.Parse([]byte(toml), "test.toml", t.TempDir())
	if err != nil {
		t.Fatalf("config:\n%s\n%v", toml, err)
	}
	return cfg
}

func start(t *testing.T, cfg *config.Config, log *testLog) (*host.Host, *hookbus.Bus) {
	t.Helper()
	h, errs := host.Start(context.Background(), host.Specs(cfg), host.Options{Logger: log.logger()})
	t.Cleanup(func() { _ = h.Close(context.Background()) })
	for _, e := range errs {
		t.Fatalf("plugin did not start: %v", e)
	}
	bus, err := hookbus.New(h.Members(), hookbus.Config{Logger: log.logger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bus.Close(context.Background()) })
	return h, bus
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(liveness)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", liveness, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// gone reports whether process pid has ended (a zombie has).
func gone(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return errors.Is(syscall.Kill(pid, syscall.Signal(0)), syscall.ESRCH)
	}
	if i := bytes.LastIndexByte(data, ')'); i >= 0 && i+2 < len(data) {
		return data[i+2] == 'Z' || data[i+2] == 'X'
	}
	return false
}

func failures(st hookbus.Stats) map[string]uint64 {
	out := map[string]uint64{}
	for _, h := range st.Hooks {
		for k, n := range h.Failures {
			out[string(h.Hook)+":"+k] += n
		}
	}
	return out
}

func jsonEqual(t *testing.T, got []byte, want string) bool {
	t.Helper()
	var a, b any
	if json.Unmarshal(got, &a) != nil || json.Unmarshal([]byte(want), &b) != nil {
		return false
	}
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// warnConfigured is conform's WARN line as the host logs it; the fields
// come in any order.
var warnConfigured = regexp.MustCompile(`\[WARN\] +test\.plugin\.conform\.conform\.py: conform configured:[^\n]* tag=py`)

func conformConfig(path string, protocol int) string {
	return fmt.Sprintf(`
[plugins]
enabled = ["conform"]
[plugins.entries.conform]
path = %q
protocol = %d
[plugins.entries.conform.config]
tag = "py"
`, path, protocol)
}

// TestConformUnderTheHost runs conform.py, written with the SDK from the
// repository, under the real host over each protocol version: the tool
// pipeline (stretched on version 2), the other hooks, a failing handler,
// a deadline that does not hold up other calls, the lane on version 2, a
// restart after SIGKILL and a graceful close.
func TestConformUnderTheHost(t *testing.T) {
	needPython(t)
	path := abs(t, "conform/conform.py")
	for _, protocol := range []int{1, 2} {
		t.Run(fmt.Sprintf("protocol%d", protocol), func(t *testing.T) {
			log := newLog(t)
			h, bus := start(t, parse(t, conformConfig(path, protocol)), log)
			st := h.Plugins()[0]
			if st.Protocol != protocol {
				t.Fatalf("protocol = %d, want %d", st.Protocol, protocol)
			}
			m := st.Manifest
			if m.Name != "conform" || m.Version != "1.0.0" || len(m.Hooks) != len(hooks.Catalogue) || len(m.Tools) != 4 {
				t.Fatalf("manifest = %+v", m)
			}
			// Stderr is read apart from the calls: the line may follow Start.
			waitFor(t, "the WARN line \"conform configured\" in the host's log", func() bool {
				return warnConfigured.MatchString(log.String())
			})
			checkConform(t, bus)
			checkLane(t, h, protocol)

			if err := syscall.Kill(st.PID, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "conform to be restarted", func() bool {
				now := h.Plugins()[0]
				return now.State == host.StateRunning && now.PID != st.PID && now.PID != 0
			})
			checkConform(t, bus)
			// The restarted process serves the new lane the host handed it.
			checkLane(t, h, protocol)

			pid := h.Plugins()[0].PID
			if err := h.Close(context.Background()); err != nil {
				t.Fatalf("Close: %v", err)
			}
			waitFor(t, "conform to exit after Close", func() bool { return gone(pid) })
			if strings.Contains(log.String(), "failed to exit gracefully") {
				t.Error("conform did not exit when the host asked it to shut down; it was killed")
			}
		})
	}
}

// checkLane checks that the calls went on the lane over protocol 2 and
// on gRPC over protocol 1, as the host reports it.
func checkLane(t *testing.T, h *host.Host, protocol int) {
	t.Helper()
	if st := h.Plugins()[0]; st.Lane != (protocol == 2) {
		t.Errorf("over protocol %d Host.Plugins says Lane %v, want %v", protocol, st.Lane, protocol == 2)
	}
}

func checkConform(t *testing.T, bus *hookbus.Bus) {
	t.Helper()
	ctx := context.Background()
	call := func(name, args string) hooks.ToolCallRequest {
		return hooks.ToolCallRequest{SessionID: "s1", CallID: "c1", Name: name, Arguments: json.RawMessage(args)}
	}
	before := failures(bus.Stats())

	// The whole pipeline for one call: modify, provide, transform.
	run := bus.StartToolCall(call("conform__echo", `{"text":"shout:hey"}`))
	pre := run.PreToolCall(ctx)
	if pre.Blocked || !jsonEqual(t, pre.Arguments, `{"text":"HEY"}`) {
		t.Errorf("pre_tool_call shout: %+v (arguments %s)", pre, pre.Arguments)
	}
	got := run.ProvideResult(ctx)
	if got == nil || got.IsError || !jsonEqual(t, []byte(got.Content), `{"echo":"HEY","tag":"py"}`) {
		t.Errorf("provide conform__echo: %+v", got)
	} else {
		res, by := run.Transform(ctx, hooks.ToolCallOutcome{SessionID: "s1", CallID: "c1", Name: "conform__echo",
			Arguments: pre.Arguments, Result: got.AsJSON(), Status: hooks.ProvidedBy("conform")})
		if want := got.AsJSON().Content + " (transformed)"; res.Content != want || !slices.Equal(by, []string{"conform"}) {
			t.Errorf("transform: %q by %v, want %q", res.Content, by, want)
		}
	}
	run.Close()

	if pre := bus.PreToolCall(ctx, call("anything", `{"text":"forbidden"}`)); !pre.Blocked || pre.Message != "conform blocks forbidden text" {
		t.Errorf("pre_tool_call forbidden: %+v", pre)
	}
	if r := bus.PreToolCallCanProvideResult(ctx, call("conform__echo", `{"text":"fail"}`)); r == nil || !r.IsError || r.Content != "conform refuses to echo fail" {
		t.Errorf("provide fail: %+v", r)
	}
	if r := bus.PreToolCallCanProvideResult(ctx, call("conform__raise", `{}`)); r != nil {
		t.Errorf("provide conform__raise: %+v, want a failure (nil)", r)
	}
	if text, _ := bus.TransformLLMOutput(ctx, hooks.LLMOutput{SessionID: "s1", Text: "done"}); text != "done -- py" {
		t.Errorf("transform_llm_output: %q", text)
	}
	req, _ := bus.PreAPIRequestMutable(ctx, hooks.APIRequest{SessionID: "s1", Request: hooks.ModelRequest{Model: "patch-me"}})
	if req.System != "patched by py" || req.Temperature == nil || *req.Temperature != 0.5 {
		t.Errorf("pre_api_request_mutable: %+v", req)
	}

	// A slow call holds up no other: the quick one is answered while the
	// slow one still sleeps.
	slow := make(chan *hookbus.ProvidedResult, 1)
	go func() { slow <- bus.PreToolCallCanProvideResult(ctx, call("conform__sleep", `{"ms":3000}`)) }()
	time.Sleep(200 * time.Millisecond)
	if r := bus.PreToolCallCanProvideResult(ctx, call("conform__echo", `{"text":"quick"}`)); r == nil || r.IsError {
		t.Errorf("provide while another call sleeps: %+v", r)
	}
	if len(slow) != 0 {
		t.Error("a quick call was answered only after a sleeping one: calls are not concurrent")
	}
	if r := <-slow; r == nil || !strings.Contains(r.Content, "slept") {
		t.Errorf("provide conform__sleep: %+v", r)
	}

	after := failures(bus.Stats())
	if n := after["pre_tool_call_can_provide_result:error"] - before["pre_tool_call_can_provide_result:error"]; n != 1 {
		t.Errorf("provide errors: %d, want 1 (conform__raise); all failures: %v", n, after)
	}
	for k, n := range after {
		if k != "pre_tool_call_can_provide_result:error" && n != before[k] {
			t.Errorf("unexpected failures %s: %d", k, n-before[k])
		}
	}
}

// TestStartedByHand: without the host's cookie the plugin says what it is
// and exits 1, printing nothing on stdout.
func TestStartedByHand(t *testing.T) {
	needPython(t)
	cmd := exec.Command(abs(t, "conform/conform.py"))
	cmd.Env = []string{}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("exit: %v, want status 1", err)
	}
	if stdout.Len() != 0 || !strings.Contains(stderr.String(), "This is a hookhost plugin (conform)") {
		t.Errorf("stdout %q, stderr %q", stdout.String(), stderr.String())
	}
}

// TestPipInstalledPluginUnderTheHost installs the SDK with pip from its
// path, with no network, into a virtual environment that sees Debian's
// packages, and runs README.md's plugin in 20 lines with that
// environment's interpreter under the real host: `plugins check`, its
// hooks, its typed tool, and its log.
func TestPipInstalledPluginUnderTheHost(t *testing.T) {
	needPython(t, "venv", "setuptools", "pip")
	dir := t.TempDir()
	// Install from a copy, so that pip's build files stay out of the tree.
	src := filepath.Join(dir, "hookhost-plugin")
	copyTree(t, ".", src, func(rel string) bool {
		return rel == "src" || rel == "pyproject.toml" || rel == "README.md" || strings.HasPrefix(rel, "src/")
	})
	venv := filepath.Join(dir, "venv")
	runOK(t, exec.Command(python, "-m", "venv", "--system-site-packages", venv))
	pip := exec.Command(filepath.Join(venv, "bin", "pip"), "install", "--no-build-isolation", "--no-index", "--disable-pip-version-check", src)
	pip.Env = append(os.Environ(), "PIP_NO_CACHE_DIR=1")
	runOK(t, pip)
	// The venv's interpreter imports the installed package, not src/.
	out := runOK(t, exec.Command(filepath.Join(venv, "bin", "python"), "-c", "import hookhost_plugin; print(hookhost_plugin.__file__)"))
	if !strings.HasPrefix(strings.TrimSpace(out), venv) {
		t.Fatalf("hookhost_plugin imported from %s, want the virtual environment", out)
	}

	script := filepath.Join(dir, "shout.py")
	if err := os.WriteFile(script, readmePlugin(t, filepath.Join(venv, "bin", "python")), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := parse(t, fmt.Sprintf("[plugins]\nenabled = [\"shout\"]\n[plugins.entries.shout]\npath = %q\n", script))

	log := newLog(t)
	results := host.Check(context.Background(), host.Specs(cfg), host.Options{Logger: log.logger()})
	if len(results) != 1 || !results[0].OK {
		t.Fatalf("plugins check: %+v", results)
	}
	if r := results[0]; r.Protocol != 2 || !slices.Equal(r.Tools, []string{"shout__echo"}) {
		t.Errorf("check result = %+v", r)
	}

	_, bus := start(t, cfg, log)
	ctx := context.Background()
	if pre := bus.PreToolCall(ctx, hooks.ToolCallRequest{Name: "shout__echo", Arguments: json.RawMessage(`{"text":"my password"}`)}); !pre.Blocked {
		t.Errorf("pre_tool_call with a password: %+v", pre)
	}
	r := bus.PreToolCallCanProvideResult(ctx, hooks.ToolCallRequest{Name: "shout__echo", Arguments: json.RawMessage(`{"text":"hi","times":2}`)})
	if r == nil || r.IsError || !jsonEqual(t, []byte(r.Content), `{"echo":"HI HI"}`) {
		t.Errorf("shout__echo: %+v", r)
	}
	r = bus.PreToolCallCanProvideResult(ctx, hooks.ToolCallRequest{Name: "shout__echo", Arguments: json.RawMessage(`{"text":"hi","times":"2"}`)})
	if r == nil || !r.IsError || !strings.Contains(r.Content, `args.times: must be an integer, got string \"2\"`) {
		t.Errorf("shout__echo with a string count: %+v", r)
	}
	if bus.Subscribed(hooks.PreToolCallCanProvideResult, "read_file") {
		t.Error("shout is asked to provide read_file; its typed tools' matchers say shout__echo only")
	}
	if text, _ := bus.TransformLLMOutput(ctx, hooks.LLMOutput{Text: "quiet"}); text != "QUIET" {
		t.Errorf("transform_llm_output: %q", text)
	}
}

// readmePlugin is README.md's plugin in 20 lines, with interpreter in its
// #! line instead of the README's.
func readmePlugin(t *testing.T, interpreter string) []byte {
	t.Helper()
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := bytes.Cut(readme, []byte("## A plugin in 20 lines\n\n```python\n"))
	code, _, ok2 := bytes.Cut(rest, []byte("```\n"))
	if !ok || !ok2 || !bytes.HasPrefix(code, []byte("#!")) || !bytes.Contains(code, []byte("hp.serve(Shout())")) {
		t.Fatal("README.md has no \"## A plugin in 20 lines\" section with a python block starting #! and serving Shout")
	}
	_, body, _ := bytes.Cut(code, []byte("\n"))
	return append([]byte("#!"+interpreter+"\n"), body...)
}

func runOK(t *testing.T, cmd *exec.Cmd) string {
	t.Helper()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, out)
	}
	return string(out)
}

// copyTree copies the files under from whose relative paths keep accepts.
func copyTree(t *testing.T, from, to string, keep func(rel string) bool) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if rel == "." {
			return os.MkdirAll(to, 0o755)
		}
		if !keep(rel) || d.Name() == "__pycache__" || strings.HasSuffix(d.Name(), ".egg-info") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		in, err := os.Open(p)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.Create(filepath.Join(to, rel))
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	})
	if err != nil {
		t.Fatal(err)
	}
}
