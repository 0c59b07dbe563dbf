package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hookhost/hookhost/examples/internal/exampletest"
	"github.com/hookhost/hookhost/hookbus"
	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/plugins/sdk/plugintest"
)

// recentCalls decodes an audit__recent result.
func recentCalls(t *testing.T, r *hookbus.ProvidedResult) []entry {
	t.Helper()
	if r == nil || r.IsError {
		t.Fatalf("audit__recent: %+v", r)
	}
	var body struct{ Calls []entry }
	if err := json.Unmarshal([]byte(r.Content), &body); err != nil {
		t.Fatalf("audit__recent: %v in %s", err, r.Content)
	}
	return body.Calls
}

func tools(es []entry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Tool+" "+string(e.Status))
	}
	return out
}

func TestAuditsEveryToolAndAnswersOnlyItsOwn(t *testing.T) {
	h := plugintest.New(t, &audit{}, plugintest.WithConfig(`{"keep": 3}`))
	m := h.Plugin.Manifest()
	if got := m.MatchersFor(hooks.PostToolCall); len(got) != 0 {
		t.Fatalf("post_tool_call matchers %q, want every tool", got)
	}
	if got := m.MatchersFor(hooks.PreToolCallCanProvideResult); !reflect.DeepEqual(got, []string{"audit__*"}) {
		t.Fatalf("provide matchers %q", got)
	}

	h.PostToolCall("read_file", `{"path":"a"}`, hooks.ToolResult{Content: `"a"`}, hooks.StatusOK)
	h.PostToolCall("calculate", `{}`, hooks.ToolResult{Content: `"no"`, IsError: true}, hooks.StatusBlocked)
	h.PostToolCall("now", `{}`, hooks.ToolResult{Content: `"12:00"`}, hooks.StatusOK)
	h.PostToolCall("read_file", `{"path":"b"}`, hooks.ToolResult{Content: `"b"`}, hooks.StatusOK)
	h.Flush()

	// The oldest call is gone: keep is 3.
	if got := tools(recentCalls(t, h.PreToolCallCanProvideResult("audit__recent", `{}`))); !reflect.DeepEqual(got, []string{"read_file ok", "now ok", "calculate blocked"}) {
		t.Fatalf("recent: %q", got)
	}
	if got := tools(recentCalls(t, h.PreToolCallCanProvideResult("audit__recent", `{"limit":1}`))); !reflect.DeepEqual(got, []string{"read_file ok"}) {
		t.Fatalf("recent, limit 1: %q", got)
	}
	if got := tools(recentCalls(t, h.PreToolCallCanProvideResult("audit__recent", `{"tool":"calculate"}`))); !reflect.DeepEqual(got, []string{"calculate blocked"}) {
		t.Fatalf("recent of calculate: %q", got)
	}
	if r := h.PreToolCallCanProvideResult("audit__recent", `{"limit":0}`); r == nil || !r.IsError || !strings.Contains(r.Content, "args.limit: must be >= 1, got 0") {
		t.Fatalf("bad limit: %+v", r)
	}

	// Other tools never reach the plugin's provide hook.
	if r := h.PreToolCallCanProvideResult("read_file", `{}`); r != nil {
		t.Fatalf("provided read_file: %+v", r)
	}
	if n := h.Calls(hooks.PreToolCallCanProvideResult); n != 4 {
		t.Fatalf("provide called %d times, want 4 (audit__recent only)", n)
	}
}

func TestAppendsToTheFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "audit.jsonl")
	h := plugintest.New(t, &audit{}, plugintest.WithConfig(fmt.Sprintf(`{"file": %q}`, file)))
	h.PostToolCall("now", `{}`, hooks.ToolResult{Content: `"12:00"`}, hooks.StatusOK)
	h.PostToolCall("calculate", `{}`, hooks.ToolResult{Content: `"x"`, IsError: true}, hooks.StatusError)
	h.Flush()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 2 {
		t.Fatalf("file:\n%s", data)
	}
	var e entry
	if err := json.Unmarshal([]byte(lines[1]), &e); err != nil || e.Tool != "calculate" || e.Status != hooks.StatusError || !e.IsError || e.Session != plugintest.SessionID {
		t.Fatalf("line %s: %+v %v", lines[1], e, err)
	}
	if time.Since(e.Time) > time.Hour || e.Time.IsZero() {
		t.Fatalf("time %v", e.Time)
	}
}

func TestConfigureRejectsBadConfig(t *testing.T) {
	for raw, want := range map[string]string{
		`{"keep": 0}`:      "keep: 0 is outside 1..100000",
		`{"keep": "many"}`: "keep: wrong type",
		`{"kept": 1}`:      `unknown key "kept"`,
		`{"file": "/nonexistent/dir/audit.jsonl"}`: "file: open /nonexistent/dir/audit.jsonl",
	} {
		err := (&audit{}).Configure(context.Background(), json.RawMessage(raw))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want %q", raw, err, want)
		}
	}
}

func TestUnconfiguredAuditAnswersAnError(t *testing.T) {
	a := &audit{}
	r := a.Info().ToolFuncs[0].Call(context.Background(), json.RawMessage(`{}`))
	if !r.IsError || !strings.Contains(r.Content, "not configured") {
		t.Fatalf("%+v", r)
	}
}

// TestREADMEConfigsAreValid checks every config this plugin's README and
// the examples' README show: hookhost must parse it and the plugin accept it.
func TestREADMEConfigsAreValid(t *testing.T) {
	configs := exampletest.PluginConfigs(exampletest.TOMLBlocks(t, "README.md"), "audit")
	if len(configs) == 0 {
		t.Fatal("README.md shows no [plugins.entries.audit.config]")
	}
	for _, c := range configs {
		if err := (&audit{}).Configure(context.Background(), json.RawMessage(c)); err != nil {
			t.Errorf("config %s: %v", c, err)
		}
	}
}
