package main

// These tests run the real guard binary under the real host.

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hookhost/hookhost/dispatch"
	"github.com/hookhost/hookhost/dispatch/builtin"
	"github.com/hookhost/hookhost/examples/internal/exampletest"
	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/host"
	"github.com/hookhost/hookhost/plugins/sdk/plugintest"
)

var bin string

const sixBySeven = `{"expression":"6*7","value":42}`

func TestMain(m *testing.M) { exampletest.Main(m, "guard", &bin) }

// pipeline runs tool calls through the guard, started from a config with
// the given fail_closed, and the native tools.
func pipeline(t *testing.T, failClosed bool, opts host.Options) (*dispatch.Pipeline, *host.Host) {
	t.Helper()
	cfg := exampletest.Parse(t, fmt.Sprintf(`
[plugins]
enabled = ["guard"]
[plugins.entries.guard]
path = %q
fail_closed = %v
[plugins.entries.guard.config]
deny = [{tool = "read_file", args_match = '(?i)secret|\.env'}]
`, bin, failClosed))
	h, bus := exampletest.Start(t, cfg, opts)
	tools, err := builtin.All(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	reg, err := dispatch.NewRegistry(tools...)
	if err != nil {
		t.Fatal(err)
	}
	return &dispatch.Pipeline{Registry: reg, Bus: bus}, h
}

func run(p *dispatch.Pipeline, tool, args string) dispatch.Outcome {
	return p.Run(context.Background(), "s1", hooks.ToolCall{ID: "c1", Name: tool, Arguments: json.RawMessage(args)})
}

func TestRealGuardBlocksAndAllows(t *testing.T) {
	p, _ := pipeline(t, false, host.Options{})
	out := run(p, "read_file", `{"path":".env"}`)
	if out.Path != dispatch.PathBlocked || out.AnsweredBy != "guard" || !out.Result.IsError ||
		!strings.Contains(out.Result.Content, "blocked by guard") {
		t.Errorf("read_file .env: %+v, want blocked by guard", out)
	}
	if out := run(p, "calculate", `{"expression":"6*7"}`); out.Path != dispatch.PathNative || out.Result.Content != sixBySeven {
		t.Errorf("calculate: %+v, want 42 from the native tool", out)
	}
}

// TestFailClosedIsHonoured takes the guard down (SIGKILL, with restarts
// held off) and sends a call no rule denies: a fail_closed guard blocks
// it, an ordinary one lets it run.
func TestFailClosedIsHonoured(t *testing.T) {
	for _, failClosed := range []bool{true, false} {
		t.Run(fmt.Sprintf("fail_closed=%v", failClosed), func(t *testing.T) {
			// Restarts wait an hour, so the guard stays down for the test;
			// Close ends the wait.
			p, h := pipeline(t, failClosed, host.Options{Backoff: host.BackoffPolicy{Initial: time.Hour, Max: time.Hour}})
			if out := run(p, "calculate", `{"expression":"6*7"}`); out.Path != dispatch.PathNative {
				t.Fatalf("with the guard up: %+v, want native", out)
			}
			pid := h.Plugins()[0].PID
			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			exampletest.WaitFor(t, "the host to see the guard down", func() bool {
				return h.Plugins()[0].State != host.StateRunning
			})

			out := run(p, "calculate", `{"expression":"6*7"}`)
			if failClosed {
				if out.Path != dispatch.PathBlocked || !strings.Contains(out.Result.Content, "fail_closed") {
					t.Errorf("guard down, fail_closed: %+v, want the call blocked", out)
				}
				return
			}
			if out.Path != dispatch.PathNative || out.Result.Content != sixBySeven {
				t.Errorf("guard down, not fail_closed: %+v, want the native tool to run", out)
			}
		})
	}
}

func TestRealGuardRejectsBadRulesAtStart(t *testing.T) {
	cfg := exampletest.Parse(t, fmt.Sprintf(`
[plugins]
enabled = ["guard"]
[plugins.entries.guard]
path = %q
[plugins.entries.guard.config]
deny = [{tool = "now"}, {tool = "read_file", args_match = "(unclosed"}]
`, bin))
	log := exampletest.NewLog(t)
	h, errs := host.Start(context.Background(), host.Specs(cfg), host.Options{Logger: log.Logger()})
	defer h.Close(context.Background())
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "deny[1]") {
		t.Fatalf("start errors = %v, want one naming deny[1]", errs)
	}
}

func TestExampleConfigLoadsAndConfigures(t *testing.T) {
	_, entry := exampletest.Example(t, "example.toml", "guard")
	if !entry.FailClosed {
		t.Error("example.toml: the guard should be fail_closed")
	}
	h := plugintest.New(t, &guard{}, plugintest.WithConfig(string(entry.Config)))
	if out := h.PreToolCall("read_file", `{"path":".env"}`); !out.Blocked {
		t.Errorf("example.toml's rules let read_file .env through")
	}
}

// TestREADMEConfigsAreValid checks every config this plugin's README and
// the examples' README show: hookhost must parse it and the plugin accept it.
func TestREADMEConfigsAreValid(t *testing.T) {
	for _, readme := range []string{"README.md", "../README.md"} {
		configs := exampletest.PluginConfigs(exampletest.TOMLBlocks(t, readme), "guard")
		if len(configs) == 0 && readme == "README.md" {
			t.Errorf("%s shows no [plugins.entries.guard.config]", readme)
		}
		for _, c := range configs {
			if err := (&guard{}).Configure(context.Background(), json.RawMessage(c)); err != nil {
				t.Errorf("%s: config %s: %v", readme, c, err)
			}
		}
	}
}
