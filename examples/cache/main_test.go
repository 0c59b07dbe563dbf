package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/plugins/sdk/plugintest"
)

const readmeConfig = `{"tools": ["read_file", "calculate"], "ttl": "30s", "max_entries": 256}`

var okResult = hooks.ToolResult{Content: `{"expression":"6*7","value":42}`}

// clock is a time source the tests move by hand.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func TestServesARepeatedCall(t *testing.T) {
	h := plugintest.New(t, &cache{}, plugintest.WithConfig(readmeConfig))
	if r := h.PreToolCallCanProvideResult("calculate", `{"expression":"6*7"}`); r != nil {
		t.Fatalf("first call served %+v from an empty cache", r)
	}
	h.PostToolCall("calculate", `{"expression":"6*7"}`, okResult, hooks.StatusOK)
	h.Flush()

	r := h.PreToolCallCanProvideResult("calculate", `{ "expression" : "6*7" }`) // same arguments, spelt differently
	if r == nil || r.Plugin != "cache" || r.ToolResult != okResult {
		t.Fatalf("repeated call: %+v, want %+v provided by cache", r, okResult)
	}
	if r := h.PreToolCallCanProvideResult("calculate", `{"expression":"6*8"}`); r != nil {
		t.Errorf("other arguments served %+v", r)
	}
}

func TestKeyIgnoresKeyOrderAndSpace(t *testing.T) {
	if key("t", json.RawMessage(`{"b":2,"a":[1, 2]}`)) != key("t", json.RawMessage(`{ "a":[1,2], "b":2 }`)) {
		t.Error("equal arguments give different keys")
	}
	if key("t", json.RawMessage(`{"id":12345678901234567890}`)) == key("t", json.RawMessage(`{"id":12345678901234567891}`)) {
		t.Error("large numbers were rounded into one key")
	}
	if key("a", json.RawMessage(`{}`)) == key("b", json.RawMessage(`{}`)) {
		t.Error("the tool name is not part of the key")
	}
}

func TestCachesOnlyConfiguredToolsAndCleanResults(t *testing.T) {
	h := plugintest.New(t, &cache{}, plugintest.WithConfig(`{"tools": ["read_*"]}`))
	h.PostToolCall("now", `{}`, okResult, hooks.StatusOK)                                             // not configured
	h.PostToolCall("read_file", `{"path":"a"}`, hooks.ToolResult{Content: `{}`}, hooks.StatusOK)      // cached
	h.PostToolCall("read_file", `{"path":"b"}`, hooks.ToolResult{Content: `{}`}, hooks.StatusError)   // the tool failed
	h.PostToolCall("read_file", `{"path":"c"}`, hooks.ToolResult{Content: `{}`, IsError: true}, "ok") // an error result
	h.PostToolCall("read_file", `{"path":"d"}`, hooks.ToolResult{Content: `{}`}, hooks.ProvidedBy("other"))
	h.PostToolCall("read_file", `{"path":"e"}`, hooks.ToolResult{Content: `{}`}, hooks.StatusBlocked)
	h.Flush()

	for tool, args := range map[string]string{"now": `{}`, "read_file": `{"path":"a"}`} {
		want := tool == "read_file"
		if got := h.PreToolCallCanProvideResult(tool, args) != nil; got != want {
			t.Errorf("%s(%s) served = %v, want %v", tool, args, got, want)
		}
	}
	for _, p := range []string{"b", "c", "d", "e"} {
		if r := h.PreToolCallCanProvideResult("read_file", `{"path":"`+p+`"}`); r != nil {
			t.Errorf("read_file %s served %+v; only clean native results may be cached", p, r)
		}
	}
}

// TestServedResultsDoNotExtendTheirLife checks that a result the cache
// served, which post_tool_call then reports as provided_by:cache, is not
// stored again: the entry still expires ttl after the tool really ran.
func TestServedResultsDoNotExtendTheirLife(t *testing.T) {
	c := &cache{}
	if err := c.Configure(context.Background(), json.RawMessage(`{"tools": ["calculate"], "ttl": "30s"}`)); err != nil {
		t.Fatal(err)
	}
	clk := &clock{t: time.Unix(1000, 0)}
	c.live.Load().store.now = clk.now
	h := plugintest.New(t, c)

	h.PostToolCall("calculate", `{}`, okResult, hooks.StatusOK)
	h.Flush()
	clk.t = clk.t.Add(20 * time.Second)
	if h.PreToolCallCanProvideResult("calculate", `{}`) == nil {
		t.Fatal("not served within the ttl")
	}
	h.PostToolCall("calculate", `{}`, okResult, hooks.ProvidedBy("cache"))
	h.Flush()
	clk.t = clk.t.Add(15 * time.Second)
	if r := h.PreToolCallCanProvideResult("calculate", `{}`); r != nil {
		t.Errorf("served %+v 35s after the tool ran, with a 30s ttl", r)
	}
}

func TestStoreExpiresAndEvictsLeastRecentlyUsed(t *testing.T) {
	clk := &clock{t: time.Unix(1000, 0)}
	s := newStore(2, time.Minute, clk.now)
	r := hooks.ToolResult{Content: "x"}
	s.put("a", r)
	s.put("b", r)
	s.get("a") // a is now the most recently used
	s.put("c", r)
	if _, ok := s.get("b"); ok {
		t.Error("b survived; it was the least recently used")
	}
	for _, k := range []string{"a", "c"} {
		if _, ok := s.get(k); !ok {
			t.Errorf("%s was evicted", k)
		}
	}
	clk.t = clk.t.Add(time.Minute)
	if _, ok := s.get("a"); ok {
		t.Error("a is served at its expiry time")
	}
	if s.len() != 1 {
		t.Errorf("len = %d after a expired and was looked up, want 1", s.len())
	}
}

func TestConfigureRejectsBadConfig(t *testing.T) {
	for _, tc := range []struct{ config, want string }{
		{`{}`, `tools: list the read-only tools to cache`},
		{`{"tools": ["read_[file"]}`, `tools[0]: "read_[file" is not a tool name or glob`},
		{`{"tools": ["now"], "ttl": "30"}`, `ttl: "30" is not a positive duration`},
		{`{"tools": ["now"], "ttl": "-1s"}`, `ttl: "-1s" is not a positive duration`},
		{`{"tools": ["now"], "max_entries": 0}`, `max_entries: 0, want at least 1`},
		{`{"tools": ["now"], "max_entry": 3}`, `unknown key "max_entry"`},
		{`{"tools": "now"}`, `tools: wrong type: got string, want list`},
	} {
		err := (&cache{}).Configure(context.Background(), json.RawMessage(tc.config))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Configure(%s) = %v, want an error containing %q", tc.config, err, tc.want)
		}
	}
}

func TestUnconfiguredCacheServesNothing(t *testing.T) {
	h := plugintest.New(t, &cache{})
	h.PostToolCall("calculate", `{}`, okResult, hooks.StatusOK)
	h.Flush()
	if r := h.PreToolCallCanProvideResult("calculate", `{}`); r != nil {
		t.Errorf("served %+v before Configure", r)
	}
}
