package pythonguard

// These tests run pyguard.py under the real host with Debian's Python
// (/usr/bin/python3) and its python3-grpcio, python3-protobuf and
// python3-cryptography, importing the SDK from plugins/python/src.
// Without them the tests are skipped, saying why; under CI they fail.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hookhost/hookhost/config"
	"github.com/hookhost/hookhost/examples/internal/exampletest"
	"github.com/hookhost/hookhost/hookbus"
	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/host"

	"github.com/hookhost/hookhost/internal/testenv"
)

const python = testenv.DebianPythonPath

func needPython(t *testing.T) {
	t.Helper()
	testenv.NeedDebianPython(t)
}

func script(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs("pyguard.py")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func configFor(t *testing.T, policy string) *config.Config {
	return exampletest.Parse(t, fmt.Sprintf(`
[plugins]
enabled = ["pyguard"]
[plugins.entries.pyguard]
path = %q
[plugins.entries.pyguard.config]
policy = %q
`, script(t), policy))
}

// TestExampleUnderTheHost starts pyguard from example.toml, as hookhost
// would, and checks its decisions and its explain tool.
func TestExampleUnderTheHost(t *testing.T) {
	needPython(t)
	cfg, err := config.Load("example.toml")
	if err != nil {
		t.Fatalf("example.toml does not load: %v", err)
	}
	if e := cfg.Entry("pyguard"); e.Path != script(t) || !e.FailClosed {
		t.Fatalf("example.toml: pyguard entry = %+v, want path %s and fail_closed", e, script(t))
	}
	results := host.Check(context.Background(), host.Specs(cfg), host.Options{Logger: exampletest.NewLog(t).Logger()})
	if len(results) != 1 || !results[0].OK || results[0].Protocol != 2 {
		t.Fatalf("plugins check: %+v", results)
	}

	h, bus := exampletest.Start(t, cfg, host.Options{})
	if m := h.Plugins()[0].Manifest; m.Name != "pyguard" || len(m.Tools) != 1 || m.Tools[0].Name != "pyguard__explain" {
		t.Fatalf("manifest = %+v", m)
	}
	ctx := context.Background()
	pre := func(tool, args string) hookbus.PreToolCallOutcome {
		return bus.PreToolCall(ctx, hooks.ToolCallRequest{SessionID: "s", CallID: "c", Name: tool, Arguments: json.RawMessage(args)})
	}
	for _, c := range []struct {
		tool, args string
		blocked    bool
		message    string
	}{
		{"read_file", `{"path":"config/.env"}`, true, "blocked by pyguard: secrets stay out of the conversation (rule secrets, tool read_file)"},
		// Escaped in JSON, the same text: the guard sees it decoded.
		{"read_file", `{"path":"my_\u0073ecret.txt"}`, true, "blocked by pyguard: secrets stay out of the conversation (rule secrets, tool read_file)"},
		{"read_file", `{"path":"docs/README.md"}`, false, ""},
		{"read_file", `{"path":"main.go"}`, false, ""},
		{"shell_exec", `{"cmd":"ls"}`, true, "blocked by pyguard: this deployment runs no shell commands (rule no-shell, tool shell_exec)"},
		{"calculate", `{"expression":"6*7"}`, false, ""},
	} {
		out := pre(c.tool, c.args)
		if out.Blocked != c.blocked || out.Message != c.message || (c.blocked && out.BlockedBy != "pyguard") {
			t.Errorf("%s(%s): %+v, want blocked=%v message %q", c.tool, c.args, out, c.blocked, c.message)
		}
	}

	explain := func(args string) *hookbus.ProvidedResult {
		return bus.PreToolCallCanProvideResult(ctx, hooks.ToolCallRequest{SessionID: "s", CallID: "c", Name: "pyguard__explain", Arguments: json.RawMessage(args)})
	}
	r := explain(`{"tool":"read_file","arguments":{"path":".env"}}`)
	var got map[string]any
	if r == nil || r.IsError || json.Unmarshal([]byte(r.Content), &got) != nil ||
		got["action"] != "block" || got["rule"] != "secrets" || !strings.Contains(fmt.Sprint(got["message"]), "secrets stay out") {
		t.Errorf("explain read_file .env: %+v", r)
	}
	r = explain(`{"tool":"calculate"}`)
	if r == nil || r.IsError || !strings.Contains(r.Content, `"action":"allow"`) || !strings.Contains(r.Content, `"rule":null`) {
		t.Errorf("explain calculate: %+v", r)
	}
	r = explain(`{"tool":3}`)
	if r == nil || !r.IsError || !strings.Contains(r.Content, "tool pyguard__explain: arguments: args.tool: must be a string, got number 3") {
		t.Errorf("explain with a bad argument: %+v", r)
	}
	if bus.Subscribed(hooks.PreToolCallCanProvideResult, "read_file") {
		t.Error("pyguard is asked to provide read_file; it provides only pyguard__explain")
	}
	if st := bus.Stats(); failuresOf(st) != 0 {
		t.Errorf("failed calls: %+v", st.Hooks)
	}
}

func failuresOf(st hookbus.Stats) uint64 {
	var n uint64
	for _, h := range st.Hooks {
		for _, f := range h.Failures {
			n += f
		}
	}
	return n
}

// TestBadPolicyFails: a policy or config pyguard cannot use stops it from
// starting, and `plugins check` says what and where.
func TestBadPolicyFails(t *testing.T) {
	needPython(t)
	dir := t.TempDir()
	for _, c := range []struct {
		name, policy, config, want string
	}{
		{"toml", "default = \"allow\"\n[[rule]]\ntool = \"x\nreason = 1\n", "", "is not valid TOML: "},
		{"key", "[[rule]]\ntool = \"read_*\"\n[[rule]]\ntol = \"x\"\n", "", "rule[1]: unknown key 'tol'"},
		{"regexp", "[[rule]]\ntool = \"read_*\"\nargs_match = '(secret'\n", "", "rule[0]: args_match '(secret' is not a valid regular expression: missing ), unterminated subpattern"},
		{"action", "[[rule]]\ntool = \"x\"\naction = \"deny\"\n", "", `rule[0]: action = 'deny', want "allow" or "block"`},
		{"default", "default = \"maybe\"\n", "", `default = 'maybe', want "allow" or "block"`},
		{"missing", "", "", "cannot be read: No such file or directory"},
		{"config", "", "polcy = \"x\"\n", "test.toml:6: plugins.entries.pyguard.config.polcy: unknown key (the plugin takes policy) (fix: did you mean policy?)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, c.name+".toml")
			if c.policy != "" {
				if err := os.WriteFile(path, []byte(c.policy), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			cfg := configFor(t, path)
			if c.config != "" {
				cfg = exampletest.Parse(t, fmt.Sprintf("[plugins]\nenabled = [\"pyguard\"]\n[plugins.entries.pyguard]\npath = %q\n[plugins.entries.pyguard.config]\n%s", script(t), c.config))
			}
			results := host.Check(context.Background(), host.Specs(cfg), host.Options{Logger: exampletest.NewLog(t).Logger()})
			if len(results) != 1 || results[0].OK || results[0].Err == nil {
				t.Fatalf("plugins check passed a bad policy: %+v", results)
			}
			if msg := results[0].Err.Error(); !strings.Contains(msg, c.want) || !strings.Contains(msg, "config") {
				t.Errorf("check error = %q, want it to say %q", msg, c.want)
			}
		})
	}
	// The TOML error names the line.
	results := host.Check(context.Background(), host.Specs(configFor(t, filepath.Join(dir, "toml.toml"))), host.Options{Logger: exampletest.NewLog(t).Logger()})
	if msg := results[0].Err.Error(); !strings.Contains(msg, "line 3") {
		t.Errorf("a TOML error does not name its line: %q", msg)
	}
}

// TestREADMEConfigIsValid: every TOML block of README.md is a config the
// host accepts, and its policy blocks are policies pyguard accepts.
func TestREADMEConfigIsValid(t *testing.T) {
	exampletest.TOMLBlocks(t, "README.md")
}

// TestPythonUnitTests runs test_pyguard.py, pyguard's tests written with
// the SDK's harness (hookhost_plugin.testing), with Debian's Python.
func TestPythonUnitTests(t *testing.T) {
	needPython(t)
	cmd := exec.Command(python, "-B", "-m", "unittest", "-v", "test_pyguard")
	cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("test_pyguard.py failed: %v\n%s", err, out)
	}
	if !bytes.Contains(out, []byte("\nOK")) || bytes.Contains(out, []byte("Ran 0 tests")) {
		t.Fatalf("test_pyguard.py did not run:\n%s", out)
	}
}
