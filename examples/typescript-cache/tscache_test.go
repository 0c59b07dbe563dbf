package typescriptcache

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hookhost/hookhost/config"
	"github.com/hookhost/hookhost/dispatch"
	"github.com/hookhost/hookhost/dispatch/builtin"
	"github.com/hookhost/hookhost/examples/internal/exampletest"
	"github.com/hookhost/hookhost/hookbus"
	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/host"
	"github.com/hookhost/hookhost/plugins/typescript/tsbuild"
)

const built = "examples/typescript-cache/dist/src/tscache.js"

func configFor(path, pluginConfig string) string {
	return fmt.Sprintf(`
[plugins]
enabled = ["tscache"]
[plugins.entries.tscache]
path = %q
[plugins.entries.tscache.config]
%s
`, path, pluginConfig)
}

// pipeline runs tool calls through the real dispatch pipeline over the
// builtin tools rooted at a temporary directory holding notes.txt.
func pipeline(t *testing.T, bus *hookbus.Bus) (run func(tool, args string) dispatch.Outcome, root string) {
	t.Helper()
	root = t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "notes.txt"), []byte("v1"), 0o644); err != nil {
		t.Fatal(err)
	}
	tools, err := builtin.All(root)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := dispatch.NewRegistry(tools...)
	if err != nil {
		t.Fatal(err)
	}
	p := &dispatch.Pipeline{Registry: reg, Bus: bus}
	return func(tool, args string) dispatch.Outcome {
		out := p.Run(context.Background(), "s1", hooks.ToolCall{ID: "c", Name: tool, Arguments: json.RawMessage(args)})
		// post_tool_call is delivered asynchronously; a real conversation
		// has a model call between two tool calls, a test does not.
		if err := bus.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
		return out
	}, root
}

func TestMissThenHitUnderTheHost(t *testing.T) {
	path := tsbuild.Need(t, built)
	cfg := exampletest.Parse(t, configFor(path, `tools = ["read_*", "calculate"]`))
	log := exampletest.NewLog(t)
	h, bus := exampletest.Start(t, cfg, host.Options{Logger: log.Logger()})
	if m := h.Plugins()[0].Manifest; m.Name != "tscache" || m.Version != "1.0.0" {
		t.Fatalf("manifest = %+v", m)
	}
	run, root := pipeline(t, bus)

	first := run("read_file", `{"path":"notes.txt"}`)
	if first.Path != dispatch.PathNative {
		t.Fatalf("first read: %+v, want native", first)
	}
	// Within the ttl the cache answers from memory, even though the file
	// changed: that is what caching a read-only tool means.
	if err := os.WriteFile(filepath.Join(root, "notes.txt"), []byte("v2"), 0o644); err != nil {
		t.Fatal(err)
	}
	second := run("read_file", `{ "path" : "notes.txt" }`)
	if second.Path != dispatch.PathProvided || second.AnsweredBy != "tscache" || second.Result != first.Result {
		t.Errorf("second read: %+v, want the first result provided by tscache", second)
	}
	if out := run("now", `{}`); out.Path != dispatch.PathNative {
		t.Errorf("now: %+v, want native (not configured)", out)
	}
	if out := run("now", `{}`); out.Path != dispatch.PathNative {
		t.Errorf("now again: %+v, want native (not configured)", out)
	}
	if st := bus.Stats(); failed(st) != 0 {
		t.Errorf("failed hook calls: %+v", st.Hooks)
	}
}

func failed(st hookbus.Stats) int {
	n := 0
	for _, h := range st.Hooks {
		for _, c := range h.Failures {
			n += int(c)
		}
	}
	return n
}

func TestEntriesExpireAfterTheirTTL(t *testing.T) {
	path := tsbuild.Need(t, built)
	cfg := exampletest.Parse(t, configFor(path, `tools = ["read_file"]
ttl = "400ms"`))
	_, bus := exampletest.Start(t, cfg, host.Options{})
	run, _ := pipeline(t, bus)
	if out := run("read_file", `{"path":"notes.txt"}`); out.Path != dispatch.PathNative {
		t.Fatalf("first read: %+v, want native", out)
	}
	if out := run("read_file", `{"path":"notes.txt"}`); out.Path != dispatch.PathProvided {
		t.Fatalf("read within the ttl: %+v, want provided", out)
	}
	time.Sleep(500 * time.Millisecond)
	if out := run("read_file", `{"path":"notes.txt"}`); out.Path != dispatch.PathNative {
		t.Errorf("read after the ttl: %+v, want native", out)
	}
	if out := run("read_file", `{"path":"notes.txt"}`); out.Path != dispatch.PathProvided {
		t.Errorf("read after the refill: %+v, want provided", out)
	}
}

func TestABadConfigIsRefusedWithItsKey(t *testing.T) {
	path := tsbuild.Need(t, built)
	for cfgText, want := range map[string]string{
		`tools = ["read_file"]
ttl = "soon"`: `ttl: "soon" is not a positive duration`,
		`tools = []`: `tools: list the read-only tools to cache`,
		`tools = ["read_file"]
max_entries = 0`: `config.max_entries: must be >= 1, got 0`,
		// Refused by the host, from the keys the config schema declares.
		`tool = ["read_file"]`: `test.toml:7: plugins.entries.tscache.config.tool: unknown key (the plugin takes max_entries, tools, ttl) (fix: did you mean tools?)`,
	} {
		cfg := exampletest.Parse(t, configFor(path, cfgText))
		h, errs := host.Start(context.Background(), host.Specs(cfg), host.Options{Logger: exampletest.NewLog(t).Logger()})
		if err := h.Close(context.Background()); err != nil {
			t.Errorf("close: %v", err)
		}
		if len(errs) != 1 || !strings.Contains(errs[0].Error(), want) {
			t.Errorf("config %s: start errors %v, want one saying %q", cfgText, errs, want)
		}
		res := host.Check(context.Background(), host.Specs(cfg), host.Options{Logger: exampletest.NewLog(t).Logger()})
		if len(res) != 1 || res[0].OK || res[0].Err == nil || !strings.Contains(res[0].Err.Error(), want) {
			t.Errorf("config %s: check %+v, want a failure saying %q", cfgText, res, want)
		}
	}
}

// TestExampleConfigStarts starts the plugin as example.toml configures it.
func TestExampleConfigStarts(t *testing.T) {
	want := tsbuild.Need(t, built)
	cfg, err := config.Load("example.toml")
	if err != nil {
		t.Fatal(err)
	}
	if e := cfg.Entry("tscache"); e.Path != want {
		t.Fatalf("example.toml: tscache's path resolves to %s, want %s", e.Path, want)
	}
	exampletest.Start(t, cfg, host.Options{})
}

// TestUnitTests runs the plugin's node:test unit tests (npm test).
func TestUnitTests(t *testing.T) {
	tsbuild.Need(t, "examples/typescript-cache/dist/test/cache.test.js")
	out, err := exec.Command("npm", "test", "--silent").CombinedOutput()
	if err != nil {
		t.Fatalf("npm test in examples/typescript-cache failed: %v\n%s", err, out)
	}
}

// TestREADMEConfigsAreValid starts the built plugin with every config this
// plugin's README and the SDK's README show for it, as `plugins check` does.
func TestREADMEConfigsAreValid(t *testing.T) {
	path := tsbuild.Need(t, built)
	configs := exampletest.PluginConfigs(exampletest.TOMLBlocks(t, "README.md"), "tscache")
	if len(configs) == 0 {
		t.Fatal("README.md shows no [plugins.entries.tscache.config]")
	}
	for _, c := range configs {
		var table map[string]any
		if err := json.Unmarshal(c, &table); err != nil {
			t.Fatal(err)
		}
		var lines []string
		for k, v := range table {
			js, _ := json.Marshal(v)
			lines = append(lines, fmt.Sprintf("%s = %s", k, js))
		}
		cfg := exampletest.Parse(t, configFor(path, strings.Join(lines, "\n")))
		res := host.Check(context.Background(), host.Specs(cfg), host.Options{Logger: exampletest.NewLog(t).Logger()})
		if len(res) != 1 || !res[0].OK {
			t.Errorf("README config %s: check %+v", c, res)
		}
	}
}

// TestDebugModeReattach starts tscache by hand in debug mode, as one would
// under a debugger, and has the host attach to it with the line it prints.
func TestDebugModeReattach(t *testing.T) {
	path := tsbuild.Need(t, built)
	cmd := exec.Command(path)
	cmd.Env = []string{"HOOKHOST_PLUGIN_DEBUG=1", "PLUGIN_UNIX_SOCKET_DIR=" + t.TempDir()}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() { _ = cmd.Process.Kill() }()
	lines := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		lines <- line
	}()
	var line string
	select {
	case line = <-lines:
	case <-time.After(exampletest.Liveness):
		t.Fatalf("no reattach line; stderr: %s", stderr.String())
	}
	value, ok := strings.CutPrefix(strings.TrimSpace(line), config.ReattachEnv+"='")
	if !ok || !strings.HasSuffix(value, "'") {
		t.Fatalf("line %q is not %s='...'", line, config.ReattachEnv)
	}
	value = strings.TrimSuffix(value, "'")

	cfg := exampletest.Parse(t, configFor(path, `tools = ["read_file"]`))
	getenv := func(k string) string {
		if k == config.ReattachEnv {
			return value
		}
		return ""
	}
	h, bus := exampletest.Start(t, cfg, host.Options{Getenv: getenv})
	if st := h.Plugins()[0]; !st.Attached || st.PID != cmd.Process.Pid {
		t.Fatalf("plugin state %+v, want attached to pid %d", st, cmd.Process.Pid)
	}
	run, _ := pipeline(t, bus)
	if out := run("read_file", `{"path":"notes.txt"}`); out.Path != dispatch.PathNative {
		t.Fatalf("first read: %+v, want native", out)
	}
	if out := run("read_file", `{"path":"notes.txt"}`); out.Path != dispatch.PathProvided {
		t.Fatalf("second read: %+v, want provided by the attached plugin", out)
	}
	if err := h.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	// The host leaves an attached plugin running; SIGTERM stops it, cleanly.
	select {
	case err := <-exited:
		t.Fatalf("the plugin exited when the host closed: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("after SIGTERM: %v; stderr: %s", err, stderr.String())
		}
	case <-time.After(exampletest.Liveness):
		t.Fatal("the plugin did not exit on SIGTERM")
	}
}
