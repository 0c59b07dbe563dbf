package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/hookhost/hookhost/config"
	"github.com/hookhost/hookhost/dispatch"
	"github.com/hookhost/hookhost/dispatch/builtin"
	"github.com/hookhost/hookhost/hookbus"
	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/host"
	"github.com/hookhost/hookhost/internal/syncbuf"
	"github.com/hookhost/hookhost/plugins/kora/internal/bridge"
)

// demoHost starts the plugins of the demo config (examples/demo.toml, the
// one `make run` uses) from the binaries built for these tests, each with
// a fresh state directory and its protocol pinned to protocol (0:
// negotiated), and returns a Bus over them.
func demoHost(t *testing.T, protocol int) *hookbus.Bus {
	t.Helper()
	const demo = "../../examples/demo.toml"
	src, err := os.ReadFile(demo)
	if err != nil {
		t.Fatal(err)
	}
	dir, err := filepath.Abs(filepath.Dir(demo))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse(src, demo, dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range cfg.Plugins.Enabled {
		e := cfg.Plugins.Entries[name]
		e.Path = filepath.Join(pluginDir, name)
		e.Protocol = protocol
		var table map[string]any
		if err := json.Unmarshal(e.Config, &table); err != nil {
			t.Fatal(err)
		}
		if _, ok := table["state_dir"]; ok {
			table["state_dir"] = t.TempDir()
		}
		if e.Config, err = json.Marshal(table); err != nil {
			t.Fatal(err)
		}
		cfg.Plugins.Entries[name] = e
	}
	logs := &syncbuf.Buffer{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("host and plugin log:\n%s", logs.String())
		}
	})
	log := hclog.New(&hclog.LoggerOptions{Name: "hookhost", Output: logs, Level: hclog.Debug})
	h, errs := host.Start(context.Background(), host.Specs(cfg), host.Options{Logger: log})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		h.Close(ctx)
	})
	if len(errs) > 0 {
		t.Fatalf("the demo config's plugins did not start: %v", errs)
	}
	for _, st := range h.Plugins() {
		// Unpinned, negotiation settles on the newest version both speak.
		want := protocol
		if want == 0 {
			want = 2
		}
		if st.Protocol != want {
			t.Fatalf("plugin %s speaks protocol %d, want %d", st.Name, st.Protocol, want)
		}
	}
	bus, err := hookbus.New(h.Members(), hookbus.Config{Logger: log.Named("hooks")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		bus.Close(ctx)
	})
	return bus
}

// callsByHook sums a Stats snapshot per hook, over every plugin.
func callsByHook(st hookbus.Stats) map[hooks.Name]uint64 {
	n := map[hooks.Name]uint64{}
	for _, h := range st.Hooks {
		n[h.Hook] += h.Calls
	}
	return n
}

// With the demo config a native tool call makes no synchronous plugin
// call: Kora is asked for results only for its own tools, and sees the
// native call only through post_tool_call, an observer, which is queued
// and never delays the call.
func TestDemoConfigNativeToolCallMakesNoSynchronousPluginCall(t *testing.T) {
	for _, protocol := range []int{0, 1, 2} {
		t.Run(fmt.Sprintf("protocol=%d", protocol), func(t *testing.T) { testDemoConfigNativeToolCall(t, protocol) })
	}
}

func testDemoConfigNativeToolCall(t *testing.T, protocol int) {
	bus := demoHost(t, protocol)
	native, err := builtin.All(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	reg, err := dispatch.NewRegistry(native...)
	if err != nil {
		t.Fatal(err)
	}
	p := &dispatch.Pipeline{Registry: reg, Bus: bus}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	flush := func() {
		t.Helper()
		if err := bus.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}

	out := p.Run(ctx, "s", hooks.ToolCall{ID: "c1", Name: "now", Arguments: json.RawMessage(`{}`)})
	if out.Path != dispatch.PathNative || out.Result.IsError {
		t.Fatalf("native call: %+v", out)
	}
	flush()
	calls := callsByHook(bus.Stats())
	for hook, n := range calls {
		if n > 0 && !hook.Observer() {
			t.Errorf("a native tool call made %d synchronous %s call(s)", n, hook)
		}
	}
	if calls[hooks.PostToolCall] == 0 {
		t.Error("no plugin observed the native call: the audit must still see it")
	}
	if n := bus.Stats().SyncCalls(); n != 0 {
		t.Errorf("Stats.SyncCalls = %d after a native tool call, want 0", n)
	}

	// Arguments Kora's schema refuses never reach the Kora process.
	out = p.Run(ctx, "s", hooks.ToolCall{ID: "c2", Name: bridge.ToolAuditTail, Arguments: json.RawMessage(`{"limit":0}`)})
	if out.Path != dispatch.PathRejected || !strings.Contains(out.Result.Content, "args.limit") {
		t.Fatalf("kora call with a bad limit: %+v", out)
	}
	if n := callsByHook(bus.Stats())[hooks.PreToolCallCanProvideResult]; n != 0 {
		t.Fatalf("Kora was asked %d times for a call its schema refuses", n)
	}

	// The same Bus does ask Kora about its own tools, so the counts above
	// measure something.
	out = p.Run(ctx, "s", hooks.ToolCall{ID: "c3", Name: bridge.ToolBudget, Arguments: json.RawMessage(`{}`)})
	if out.Path != dispatch.PathProvided || out.AnsweredBy != "kora" {
		t.Fatalf("kora call: %+v", out)
	}
	if n := callsByHook(bus.Stats())[hooks.PreToolCallCanProvideResult]; n != 1 {
		t.Fatalf("Kora was asked for %d results for its own tool, want 1", n)
	}
}
