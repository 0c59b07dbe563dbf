package main

// These tests run the real cache binary under the real host.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/hookhost/hookhost/dispatch"
	"github.com/hookhost/hookhost/dispatch/builtin"
	"github.com/hookhost/hookhost/examples/internal/exampletest"
	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/host"
	"github.com/hookhost/hookhost/plugins/sdk/plugintest"
)

var bin string

func TestMain(m *testing.M) { exampletest.Main(m, "cache", &bin) }

func TestRealCacheServesRepeatedCalls(t *testing.T) {
	cfg := exampletest.Parse(t, fmt.Sprintf(`
[plugins]
enabled = ["cache"]
[plugins.entries.cache]
path = %q
[plugins.entries.cache.config]
tools = ["read_file", "calculate"]
ttl = "1m"
`, bin))
	_, bus := exampletest.Start(t, cfg, host.Options{})
	root := t.TempDir()
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
	run := func(tool, args string) dispatch.Outcome {
		out := p.Run(context.Background(), "s1", hooks.ToolCall{ID: "c", Name: tool, Arguments: json.RawMessage(args)})
		// post_tool_call is delivered asynchronously; a real conversation
		// has a model call between two tool calls, a test does not.
		if err := bus.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
		return out
	}

	first := run("read_file", `{"path":"notes.txt"}`)
	if first.Path != dispatch.PathNative {
		t.Fatalf("first read: %+v, want native", first)
	}
	// The file changes, but within the ttl the cache answers from memory:
	// that is what caching a tool means, and why only read-only tools
	// whose answers may be that old belong in tools.
	if err := os.WriteFile(filepath.Join(root, "notes.txt"), []byte("v2"), 0o644); err != nil {
		t.Fatal(err)
	}
	second := run("read_file", `{"path":"notes.txt"}`)
	if second.Path != dispatch.PathProvided || second.AnsweredBy != "cache" || second.Result != first.Result {
		t.Errorf("second read: %+v, want the first result provided by cache", second)
	}
	if out := run("now", `{}`); out.Path != dispatch.PathNative {
		t.Errorf("now: %+v, want native (not configured)", out)
	}
	if out := run("now", `{}`); out.Path != dispatch.PathNative {
		t.Errorf("now again: %+v, want native (not configured)", out)
	}
}

func TestExampleConfigLoadsAndConfigures(t *testing.T) {
	_, entry := exampletest.Example(t, "example.toml", "cache")
	h := plugintest.New(t, &cache{}, plugintest.WithConfig(string(entry.Config)))
	h.PostToolCall("calculate", `{"expression":"1+1"}`, okResult, hooks.StatusOK)
	h.Flush()
	if h.PreToolCallCanProvideResult("calculate", `{"expression":"1+1"}`) == nil {
		t.Error("example.toml does not cache calculate")
	}
}

// TestREADMEConfigsAreValid checks every config this plugin's README and
// the examples' README show: hookhost must parse it and the plugin accept it.
func TestREADMEConfigsAreValid(t *testing.T) {
	for _, readme := range []string{"README.md", "../README.md"} {
		configs := exampletest.PluginConfigs(exampletest.TOMLBlocks(t, readme), "cache")
		if len(configs) == 0 && readme == "README.md" {
			t.Errorf("%s shows no [plugins.entries.cache.config]", readme)
		}
		for _, c := range configs {
			if err := (&cache{}).Configure(context.Background(), json.RawMessage(c)); err != nil {
				t.Errorf("%s: config %s: %v", readme, c, err)
			}
		}
	}
}
