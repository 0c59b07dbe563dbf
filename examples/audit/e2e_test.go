package main

// These tests run the real audit binary under the real host.

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/hookhost/hookhost/dispatch"
	"github.com/hookhost/hookhost/dispatch/builtin"
	"github.com/hookhost/hookhost/examples/internal/exampletest"
	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/host"
	"github.com/hookhost/hookhost/plugins/sdk/plugintest"
)

var bin string

func TestMain(m *testing.M) { exampletest.Main(m, "audit", &bin) }

// A native tool call costs the audit plugin no synchronous call: it is
// audited on post_tool_call, which never delays the call.
func TestRealAuditCostsNativeCallsNoRoundTrip(t *testing.T) {
	for _, protocol := range []int{1, 2} {
		t.Run(fmt.Sprintf("protocol %d", protocol), func(t *testing.T) { testCostsNoRoundTrip(t, protocol) })
	}
}

func testCostsNoRoundTrip(t *testing.T, protocol int) {
	cfg := exampletest.Parse(t, fmt.Sprintf(`
[plugins]
enabled = ["audit"]
[plugins.entries.audit]
path = %q
protocol = %d
`, bin, protocol))
	h, bus := exampletest.Start(t, cfg, host.Options{})
	if st := h.Plugins(); len(st) != 1 || st[0].Protocol != protocol {
		t.Fatalf("plugins %+v, want audit speaking protocol %d", st, protocol)
	}
	tools, err := builtin.All(t.TempDir())
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
		if err := bus.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
		return out
	}
	calls := func() uint64 { return bus.Stats().Calls() }

	if out := run("calculate", `{"expression":"6*7"}`); out.Path != dispatch.PathNative {
		t.Fatalf("calculate: %+v", out)
	}
	if n := calls(); n != 1 {
		t.Fatalf("%d plugin calls for one native tool call, want 1 (post_tool_call)", n)
	}
	out := run("audit__recent", `{"limit":5}`)
	if out.Path != dispatch.PathProvided || out.AnsweredBy != "audit" {
		t.Fatalf("audit__recent: %+v", out)
	}
	var body struct{ Calls []entry }
	if err := json.Unmarshal([]byte(out.Result.Content), &body); err != nil || len(body.Calls) != 1 || body.Calls[0].Tool != "calculate" || body.Calls[0].Status != hooks.StatusOK {
		t.Fatalf("audit__recent: %s (%v)", out.Result.Content, err)
	}
}

func TestExampleConfigLoadsAndConfigures(t *testing.T) {
	_, entry := exampletest.Example(t, "example.toml", "audit")
	h := plugintest.New(t, &audit{}, plugintest.WithConfig(string(entry.Config)))
	h.PostToolCall("now", `{}`, hooks.ToolResult{Content: `"12:00"`}, hooks.StatusOK)
	h.Flush()
	if r := h.PreToolCallCanProvideResult("audit__recent", `{}`); r == nil || r.IsError {
		t.Fatalf("audit__recent: %+v", r)
	}
}
