package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hookhost/hookhost/config"
	"github.com/hookhost/hookhost/hookbus"
	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/host"
)

// languages are the conform plugins of internal/conformance, one per
// language, which answer the same provided tool (conform__echo) the same
// way; scripts are run as the host runs them, through their #! line.
var languages = []struct {
	name string
	path func(b *testing.B) string
	// missing says how to get the plugin when it is not there.
	missing string
}{
	{"go", func(b *testing.B) string { return binary(b, "goconform") }, ""},
	{"python", pythonPath("../plugins/python/conform/conform.py"), "it is part of the repository: is the clone whole?"},
	{"typescript", repoPath("../plugins/typescript/dist/conform/conform.js"), "run `make typescript` to build it"},
}

func repoPath(rel string) func(b *testing.B) string {
	return func(b *testing.B) string {
		p, err := filepath.Abs(rel)
		if err != nil {
			b.Fatal(err)
		}
		return p
	}
}

// pythonPath is repoPath for a Python plugin: it first makes sure that
// Debian's packages the plugin needs are installed (needPython).
func pythonPath(rel string) func(b *testing.B) string {
	path := repoPath(rel)
	return func(b *testing.B) string {
		needPython(b)
		return path(b)
	}
}

func languageConfig(b *testing.B, path, missing string) *config.Config {
	if _, err := os.Stat(path); err != nil {
		b.Fatalf("%s: %v (%s)", path, err, missing)
	}
	toml := fmt.Sprintf("[plugins]\nenabled = [\"conform\"]\n[plugins.entries.conform]\npath = %q\ntimeout = \"10s\"\ntool_timeout = \"10s\"\n", path)
	cfg, err := config.Parse([]byte(toml), "bench.toml", "")
	if err != nil {
		b.Fatal(err)
	}
	return cfg
}

var echoCall = hooks.ToolCallRequest{SessionID: "s", CallID: "c", Name: "conform__echo", Arguments: json.RawMessage(`{"text":"hello"}`)}

// BenchmarkLanguageProvide is one provided tool result
// (pre_tool_call_can_provide_result for conform__echo) answered by the
// conform plugin of each language, each speaking the protocol it
// negotiates (2 for all three SDKs).
func BenchmarkLanguageProvide(b *testing.B) {
	for _, l := range languages {
		b.Run(l.name, func(b *testing.B) {
			h := startHost(b, languageConfig(b, l.path(b), l.missing), 0)
			bus := newBus(b, h.Members())
			ctx := context.Background()
			for b.Loop() {
				if r := bus.PreToolCallCanProvideResult(ctx, echoCall); r == nil || r.IsError {
					b.Fatalf("no result: %+v", r)
				}
			}
			b.ReportMetric(float64(h.Plugins()[0].Protocol), "protocol")
		})
	}
}

// BenchmarkLanguageStartup is the time from Start to the conform plugin of
// each language described, configured and ready (the shutdown is not
// timed).
func BenchmarkLanguageStartup(b *testing.B) {
	for _, l := range languages {
		b.Run(l.name, func(b *testing.B) {
			cfg := languageConfig(b, l.path(b), l.missing)
			for b.Loop() {
				h, errs := host.Start(context.Background(), host.Specs(cfg), host.Options{})
				if len(errs) > 0 {
					b.Fatal(errs[0])
				}
				b.StopTimer()
				h.Close(context.Background())
				b.StartTimer()
			}
		})
	}
}

// BenchmarkLanguageIdleRSS reports the resident memory of the conform
// plugin of each language, idle after one call (its stream open, its
// handlers loaded).
func BenchmarkLanguageIdleRSS(b *testing.B) {
	for _, l := range languages {
		b.Run(l.name, func(b *testing.B) {
			h := startHost(b, languageConfig(b, l.path(b), l.missing), 0)
			bus := newBus(b, h.Members())
			if r := bus.PreToolCallCanProvideResult(context.Background(), echoCall); r == nil {
				b.Fatal("no result")
			}
			time.Sleep(200 * time.Millisecond)
			pid := h.Plugins()[0].PID
			var kib float64
			for b.Loop() {
				kib = rssKiB(b, pid)
			}
			b.ReportMetric(kib, "idle-rss-KiB")
		})
	}
}

// examplePlugins are the example plugins that answer a provided tool: the
// result cache in Go and in TypeScript (one cache hit per op), and the
// Python guard's pyguard__explain.
var examplePlugins = []struct {
	name, plugin string
	path         func(b *testing.B) string
	missing      string
	config       func(b *testing.B) string // the plugin's config table, TOML
	fill         func(b *testing.B, bus *hookbus.Bus)
	call         hooks.ToolCallRequest
}{
	{
		name: "go-cache", plugin: "cache", path: func(b *testing.B) string { return binary(b, "cache") },
		config: cacheConfig, fill: fillCache, call: lookupCall,
	},
	{
		name: "typescript-cache", plugin: "tscache", path: repoPath("../examples/typescript-cache/dist/src/tscache.js"),
		missing: "run `make typescript` to build it", config: cacheConfig, fill: fillCache, call: lookupCall,
	},
	{
		name: "python-guard", plugin: "pyguard", path: pythonPath("../examples/python-guard/pyguard.py"),
		missing: "it is part of the repository: is the clone whole?",
		config: func(b *testing.B) string {
			return fmt.Sprintf("policy = %q\n", repoPath("../examples/python-guard/policy.toml")(b))
		},
		fill: func(*testing.B, *hookbus.Bus) {},
		call: hooks.ToolCallRequest{SessionID: "s", CallID: "c", Name: "pyguard__explain", Arguments: json.RawMessage(`{"tool":"read_file","arguments":{"path":"notes.txt"}}`)},
	},
}

var lookupCall = hooks.ToolCallRequest{SessionID: "s", CallID: "c", Name: "lookup", Arguments: json.RawMessage(`{"key":"k"}`)}

func cacheConfig(*testing.B) string { return "tools = [\"lookup\"]\nttl = \"1h\"\n" }

// fillCache has the cache see one successful native call of lookup, so
// that every call after it is a hit.
func fillCache(b *testing.B, bus *hookbus.Bus) {
	bus.PostToolCall(hooks.ToolCallOutcome{
		SessionID: "s", CallID: "fill", Name: lookupCall.Name, Arguments: lookupCall.Arguments,
		Result: hooks.ToolResult{Content: `{"ok":true}`}, Status: hooks.StatusOK,
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := bus.Flush(ctx); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkExampleProvide is one provided tool result answered by an
// example plugin: a cache hit in Go's and TypeScript's result cache, and
// the Python guard explaining its policy for a call.
func BenchmarkExampleProvide(b *testing.B) {
	for _, e := range examplePlugins {
		b.Run(e.name, func(b *testing.B) {
			path := e.path(b)
			if _, err := os.Stat(path); err != nil {
				b.Fatalf("%s: %v (%s)", path, err, e.missing)
			}
			toml := fmt.Sprintf("[plugins]\nenabled = [%q]\n[plugins.entries.%s]\npath = %q\ntimeout = \"10s\"\ntool_timeout = \"10s\"\n[plugins.entries.%s.config]\n%s",
				e.plugin, e.plugin, path, e.plugin, e.config(b))
			cfg, err := config.Parse([]byte(toml), "bench.toml", "")
			if err != nil {
				b.Fatal(err)
			}
			h := startHost(b, cfg, 0)
			bus := newBus(b, h.Members())
			e.fill(b, bus)
			ctx := context.Background()
			for b.Loop() {
				if r := bus.PreToolCallCanProvideResult(ctx, e.call); r == nil || r.IsError || r.Plugin != e.plugin {
					b.Fatalf("no result from %s: %+v", e.plugin, r)
				}
			}
		})
	}
}
