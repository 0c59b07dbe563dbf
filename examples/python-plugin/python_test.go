package pythonplugin

// These tests run plugin.py under the real host, with Debian's Python
// (/usr/bin/python3) and its packages python3-grpcio, python3-protobuf and
// python3-cryptography. Without them the tests are skipped, saying why.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hookhost/hookhost/config"
	"github.com/hookhost/hookhost/examples/internal/exampletest"
	"github.com/hookhost/hookhost/hookbus"
	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/host"

	"github.com/hookhost/hookhost/internal/testenv"
)

const python = testenv.DebianPythonPath

// childHostEnv turns the test binary into a host of its own, for the test
// that SIGKILLs a host: it starts the plugin at the path it holds, prints
// the plugin's pid and waits to be killed.
const childHostEnv = "PYSHOUT_TEST_CHILD_HOST"

func TestMain(m *testing.M) {
	if path := os.Getenv(childHostEnv); path != "" {
		os.Exit(childHost(path))
	}
	os.Exit(m.Run())
}

func childHost(path string) int {
	cfg, err := config.Parse([]byte(configFor(path, "")), "child.toml", "")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	h, errs := host.Start(context.Background(), host.Specs(cfg), host.Options{})
	if len(errs) > 0 {
		fmt.Fprintln(os.Stderr, errs[0])
		return 1
	}
	fmt.Println(h.Plugins()[0].PID)
	time.Sleep(time.Minute)
	return 0
}

// script is plugin.py's absolute path, as a config would give it.
func script(t *testing.T) string {
	t.Helper()
	// CI installs them (.ci/run), so there a missing module is a broken
	// install, not a reason to skip.
	testenv.NeedDebianPython(t)
	p, err := filepath.Abs("plugin.py")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func configFor(path, pluginConfig string) string {
	return fmt.Sprintf(`
[plugins]
enabled = ["pyshout"]
[plugins.entries.pyshout]
path = %q
[plugins.entries.pyshout.config]
%s
`, path, pluginConfig)
}

func TestPythonPluginUnderTheHost(t *testing.T) {
	path := script(t)
	cfg := exampletest.Parse(t, configFor(path, `signature = "-- shouted by pyshout"`))
	log := exampletest.NewLog(t)
	h, bus := exampletest.Start(t, cfg, host.Options{Logger: log.Logger()})

	st := h.Plugins()[0]
	m := st.Manifest
	if m.Name != "pyshout" || m.Version != "0.1.0" ||
		!slices.Equal(m.Hooks, []hooks.Name{hooks.PreToolCall, hooks.PreToolCallCanProvideResult, hooks.TransformLLMOutput}) ||
		!slices.Equal(m.Matchers, []string{"pyshout__*"}) || len(m.Tools) != 1 || m.Tools[0].Name != "pyshout__echo" {
		t.Fatalf("manifest = %+v", m)
	}
	var schema map[string]any
	if err := json.Unmarshal(m.Tools[0].InputSchema, &schema); err != nil || schema["type"] != "object" {
		t.Errorf("pyshout__echo input schema = %s (%v)", m.Tools[0].InputSchema, err)
	}
	if tools := bus.Tools(); len(tools) != 1 || tools[0].Name != "pyshout__echo" {
		t.Errorf("tools offered = %+v", tools)
	}

	checkHooks(t, bus)

	// The tool hooks are asked only for pyshout's own tools.
	if bus.Subscribed(hooks.PreToolCall, "read_file") {
		t.Error("pyshout is asked pre_tool_call for read_file; its matchers say pyshout__* only")
	}

	// Killed, it is restarted and answers again.
	if err := syscall.Kill(st.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	exampletest.WaitFor(t, "pyshout to be restarted", func() bool {
		now := h.Plugins()[0]
		return now.State == host.StateRunning && now.PID != st.PID && now.PID != 0
	})
	checkHooks(t, bus)
	if r := h.Plugins()[0].Restarts; r != 1 {
		t.Errorf("restarts = %d, want 1", r)
	}

	// Close leaves no process behind.
	pid := h.Plugins()[0].PID
	if err := h.Close(context.Background()); err != nil {
		t.Fatalf("Close: %v", err)
	}
	exampletest.WaitFor(t, "pyshout to exit after Close", func() bool {
		return exampletest.Gone(pid) && exampletest.Gone(st.PID) && len(running(path)) == 0
	})
	checkGraceful(t, log)
}

// checkGraceful fails the test if a plugin had to be killed because it did
// not exit when the host asked it to shut down (GRPCController.Shutdown).
func checkGraceful(t *testing.T, log *exampletest.Log) {
	t.Helper()
	if strings.Contains(log.String(), "failed to exit gracefully") {
		t.Error("pyshout did not exit when the host asked it to shut down; it was killed")
	}
}

func checkHooks(t *testing.T, bus *hookbus.Bus) {
	t.Helper()
	ctx := context.Background()
	call := func(args string) hooks.ToolCallRequest {
		return hooks.ToolCallRequest{SessionID: "s1", CallID: "c1", Name: "pyshout__echo", Arguments: json.RawMessage(args)}
	}

	pre := bus.PreToolCall(ctx, call(`{"text":"hello"}`))
	if pre.Blocked || !slices.Equal(pre.ModifiedBy, []string{"pyshout"}) || !jsonEqual(pre.Arguments, `{"text":"HELLO"}`) {
		t.Errorf("pre_tool_call hello: %+v (arguments %s), want the text shouted", pre, pre.Arguments)
	}
	if pre := bus.PreToolCall(ctx, call(`{"text":"LOUD"}`)); pre.Blocked || len(pre.ModifiedBy) != 0 {
		t.Errorf("pre_tool_call LOUD: %+v, want no opinion", pre)
	}
	if pre := bus.PreToolCall(ctx, call(`{}`)); !pre.Blocked || pre.BlockedBy != "pyshout" || !strings.Contains(pre.Message, `non-empty "text"`) {
		t.Errorf("pre_tool_call without text: %+v, want blocked", pre)
	}

	r := bus.PreToolCallCanProvideResult(ctx, call(`{"text":"HELLO"}`))
	if r == nil || r.Plugin != "pyshout" || r.IsError || !jsonEqual([]byte(r.Content), `{"echo":"HELLO"}`) {
		t.Errorf("provide pyshout__echo: %+v", r)
	}

	text, by := bus.TransformLLMOutput(ctx, hooks.LLMOutput{SessionID: "s1", Text: "The answer is 42."})
	if text != "The answer is 42.\n\n-- shouted by pyshout" || !slices.Equal(by, []string{"pyshout"}) {
		t.Errorf("transform_llm_output: %q by %v", text, by)
	}
	if st := bus.Stats(); failures(st) != 0 {
		t.Errorf("failed calls: %+v", st.Hooks)
	}
}

func TestPythonPluginPassesCheck(t *testing.T) {
	path := script(t)
	cfg := exampletest.Parse(t, configFor(path, ""))
	log := exampletest.NewLog(t)
	results := host.Check(context.Background(), host.Specs(cfg), host.Options{Logger: log.Logger()})
	if len(results) != 1 || !results[0].OK {
		t.Fatalf("check: %+v (error %v)", results, results[0].Err)
	}
	if r := results[0]; r.Version != "0.1.0" || !slices.Equal(r.Tools, []string{"pyshout__echo"}) || len(r.Hooks) != 3 {
		t.Errorf("check result = %+v", r)
	}
	exampletest.WaitFor(t, "the checked plugin to exit", func() bool { return len(running(path)) == 0 })
	checkGraceful(t, log)
}

func TestPythonPluginRejectsBadConfig(t *testing.T) {
	path := script(t)
	cfg := exampletest.Parse(t, configFor(path, `shout = "yes"`))
	log := exampletest.NewLog(t)
	h, errs := host.Start(context.Background(), host.Specs(cfg), host.Options{Logger: log.Logger()})
	defer h.Close(context.Background())
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "shout must be true or false") {
		t.Fatalf("start errors = %v, want pyshout's own complaint about shout", errs)
	}
	exampletest.WaitFor(t, "the refused plugin to exit", func() bool { return len(running(path)) == 0 })
}

func TestExampleConfigStartsThePlugin(t *testing.T) {
	path := script(t)
	cfg, err := config.Load("example.toml")
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Entry("pyshout").Path; got != path {
		t.Errorf("example.toml: pyshout's path resolves to %s, want %s", got, path)
	}
	log := exampletest.NewLog(t)
	if r := host.Check(context.Background(), host.Specs(cfg), host.Options{Logger: log.Logger()}); len(r) != 1 || !r[0].OK {
		t.Errorf("example.toml: check = %+v", r)
	}
}

func TestREADMEConfigIsValid(t *testing.T) {
	for _, cfg := range exampletest.TOMLBlocks(t, "README.md") {
		e, ok := cfg.Plugins.Entries["pyshout"]
		if !ok || !strings.HasSuffix(e.Path, "examples/python-plugin/plugin.py") {
			t.Errorf("README config: pyshout entry %+v, want its path to end in examples/python-plugin/plugin.py", e)
		}
		var c struct {
			Signature *string
			Shout     *bool
		}
		if err := json.Unmarshal(e.Config, &c); err != nil || c.Signature == nil || c.Shout == nil {
			t.Errorf("README config: %s, want signature and shout (%v)", e.Config, err)
		}
	}
}

// TestPythonPluginExitsWhenTheHostDies SIGKILLs a host, which then cannot
// shut its plugins down: pyshout must notice on its own and exit.
func TestPythonPluginExitsWhenTheHostDies(t *testing.T) {
	path := script(t)
	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), childHostEnv+"="+path)
	var stderr bytes.Buffer
	child.Stderr = &stderr
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { child.Process.Kill(); child.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("the child host did not report the plugin's pid: %v; its stderr: %s", err, stderr.String())
	}
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("the child host printed %q, want a pid", line)
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })

	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	child.Wait()
	exampletest.WaitFor(t, "pyshout to exit after its host was SIGKILLed", func() bool { return exampletest.Gone(pid) })
}

// TestPythonPluginStartedByHand checks that run outside the host, without
// the magic cookie, it says what it is on stderr and writes nothing on
// stdout.
func TestPythonPluginStartedByHand(t *testing.T) {
	path := script(t)
	cmd := exec.Command(path)
	cmd.Env = []string{}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Errorf("exit: %v, want status 1", err)
	}
	if stdout.Len() != 0 || !strings.Contains(stderr.String(), "hookhost plugin") {
		t.Errorf("stdout %q, stderr %q", stdout.String(), stderr.String())
	}
}

// running returns the pids of live processes running script.
func running(script string) []int {
	var pids []int
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		cmdline, err := os.ReadFile(filepath.Join(d, "cmdline"))
		if err != nil || !bytes.Contains(cmdline, []byte(script)) {
			continue
		}
		var pid int
		if _, err := fmt.Sscanf(filepath.Base(d), "%d", &pid); err == nil && pid != os.Getpid() && !exampletest.Gone(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

func failures(st hookbus.Stats) int {
	n := 0
	for _, h := range st.Hooks {
		for _, c := range h.Failures {
			n += int(c)
		}
	}
	return n
}

func jsonEqual(got []byte, want string) bool {
	var a, b any
	if json.Unmarshal(got, &a) != nil || json.Unmarshal([]byte(want), &b) != nil {
		return false
	}
	return fmt.Sprint(a) == fmt.Sprint(b)
}

// pluginEnv is what a host passes pyshout, naming hostPID as the host.
func pluginEnv(t *testing.T, hostPID int) []string {
	return []string{
		"HOOKHOST_PLUGIN=d3c1b0a2-hookhost-plugin-v1",
		"PLUGIN_PROTOCOL_VERSIONS=1",
		"PLUGIN_CLIENT_CERT=" + selfSignedPEM(t),
		"HOOKHOST_HOST_PID=" + strconv.Itoa(hostPID),
	}
}

// TestPythonPluginExitsWhenItsHostDiedBeforeItStarted has a host (a shell)
// start pyshout and die at once, before pyshout could record its parent:
// pyshout must notice on its own that its host is gone and exit, whatever
// the OS.
func TestPythonPluginExitsWhenItsHostDiedBeforeItStarted(t *testing.T) {
	path := script(t)
	logPath := filepath.Join(t.TempDir(), "stderr")
	// The shell passes its own pid as the host's, starts the plugin in the
	// background and exits: the plugin's host is dead (and reaped by Run)
	// while the plugin is still importing grpc.
	host := exec.Command("/bin/sh", "-c", `HOOKHOST_HOST_PID=$$ "$0" >/dev/null 2>"$1" & echo $!`, path, logPath)
	host.Env = pluginEnv(t, 0)[:3]
	out, err := host.Output()
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatalf("the host printed %q, want the plugin's pid", out)
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	exampletest.WaitFor(t, "pyshout to exit after its host died", func() bool { return exampletest.Gone(pid) })
	if stderr, _ := os.ReadFile(logPath); !strings.Contains(string(stderr), "is gone") {
		t.Errorf("pyshout did not say why it exited: %s", stderr)
	}
}

// TestPythonPluginServesUnderAWrapperScript starts pyshout through a shell
// that does not exec it, so that its parent is not the host it was given:
// with that host alive it must start and complete the handshake.
func TestPythonPluginServesUnderAWrapperScript(t *testing.T) {
	path := script(t)
	// The trailing command keeps the shell from exec'ing the plugin.
	cmd := exec.Command("/bin/sh", "-c", `"$0"; exit $?`, path)
	cmd.Env = pluginEnv(t, os.Getpid())
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	logPath := filepath.Join(t.TempDir(), "stderr")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	cmd.Stderr = logFile
	stderr := func() string { b, _ := os.ReadFile(logPath); return string(b) }
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The shell's group: the plugin, a child of the shell, is in it.
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	})
	lines := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(out).ReadString('\n')
		lines <- line
	}()
	select {
	case line := <-lines:
		if !strings.HasPrefix(line, "1|1|tcp|") && !strings.HasPrefix(line, "1|1|unix|") {
			t.Fatalf("handshake line %q; stderr: %s", line, stderr())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("no handshake; stderr: %s", stderr())
	}
}

func selfSignedPEM(t *testing.T) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "localhost"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

// reentrantLeave runs plugin.py's own log and leave, as the SIGTERM handler
// does, with a stderr whose write raises what Python raises when a signal
// handler writes to a stream it interrupted. It starts a child first and
// prints its pid.
const reentrantLeave = `
import ast, datetime, json, os, signal, subprocess, sys
tree = ast.parse(open(sys.argv[1]).read())
funcs = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name in ("log", "leave")]
ns = {"os": os, "sys": sys, "signal": signal, "json": json, "datetime": datetime,
      "NAME": "pyshout", "PARENT_PID": os.getppid(), "HOST_PID_ENV": "HOOKHOST_HOST_PID"}
exec(compile(ast.Module(body=funcs, type_ignores=[]), "plugin.py", "exec"), ns)
class Reentrant:
    def write(self, s):
        raise RuntimeError("reentrant call inside <_io.BufferedWriter name='<stderr>'>")
    def flush(self):
        pass
child = subprocess.Popen(["` + "%s" + `", "300"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print(child.pid, flush=True)
sys.stderr = Reentrant()
ns["leave"]("test")
`

// TestPythonPluginLeavingKillsItsGroupEvenIfLoggingFails: pyshout's SIGTERM
// handler must kill its process group even when its log line cannot be
// written.
func TestPythonPluginLeavingKillsItsGroupEvenIfLoggingFails(t *testing.T) {
	path := script(t)
	sleep := "/bin/sleep"
	if _, err := os.Stat(sleep); err != nil {
		sleep = "/usr/bin/sleep"
	}
	cmd := exec.Command(python, "-c", fmt.Sprintf(reentrantLeave, sleep), path)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	pid, perr := strconv.Atoi(strings.TrimSpace(string(out)))
	if perr != nil {
		t.Fatalf("no child pid (%q): %v; stderr: %s", out, err, stderr.String())
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	exampletest.WaitFor(t, "the plugin's child to be killed with its group", func() bool { return exampletest.Gone(pid) })
}
