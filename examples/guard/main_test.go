package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/hookhost/hookhost/hookbus"
	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/plugins/sdk/plugintest"
)

// The rules of the README and example.toml.
const readmeRules = `{
	"deny": [
		{"tool": "read_file", "args_match": "(?i)secret|\\.env"},
		{"tool": "calculate"}
	]
}`

// The guard is tested in-process and through both plugin protocols, which
// carry the arguments (and the escape below) as the host sends them.
func TestGuardBlocksByToolAndArguments(t *testing.T) {
	for _, v := range []int{0, 1, 2} {
		t.Run(fmt.Sprintf("protocol %d", v), func(t *testing.T) {
			h := plugintest.New(t, &guard{}, plugintest.WithConfig(readmeRules), plugintest.WithProtocol(v))
			testGuardBlocks(t, h)
		})
	}
}

func testGuardBlocks(t *testing.T, h *plugintest.Harness) {
	for _, tc := range []struct {
		tool, args string
		blocked    bool
	}{
		{"read_file", `{"path":"README.md"}`, false},
		{"read_file", `{"path":".env"}`, true},
		{"read_file", `{"path":"config/SECRETS.txt"}`, true},
		// The same path spelt with a JSON escape must not slip through.
		{"read_file", `{"path":"config/\u0073ecrets.txt"}`, true},
		{"read_file", `{"path":"notes.envelope"}`, true}, // the pattern is the user's: \.env matches here too
		{"calculate", `{"expression":"1+1"}`, true},
		{"now", `{}`, false},
	} {
		out := h.PreToolCall(tc.tool, tc.args)
		if out.Blocked != tc.blocked {
			t.Errorf("%s(%s): blocked = %v, want %v (message %q)", tc.tool, tc.args, out.Blocked, tc.blocked, out.Message)
		}
		if out.Blocked && out.BlockedBy != "guard" {
			t.Errorf("%s(%s): blocked by %q, want guard", tc.tool, tc.args, out.BlockedBy)
		}
	}
}

func TestGuardMessage(t *testing.T) {
	h := plugintest.New(t, &guard{}, plugintest.WithConfig(readmeRules))
	if got, want := h.PreToolCall("calculate", `{}`).Message,
		"blocked by guard: this tool is not allowed (rule deny[1], tool calculate)"; got != want {
		t.Errorf("default message = %q, want %q", got, want)
	}

	h = plugintest.New(t, &guard{}, plugintest.WithConfig(`{
		"message": "{tool} is off limits: {reason} [{rule}]",
		"deny": [{"tool": "read_*", "args_match": "id_rsa", "reason": "private keys stay private"}]
	}`))
	if got, want := h.PreToolCall("read_file", `{"path":".ssh/id_rsa"}`).Message,
		"read_file is off limits: private keys stay private [0]"; got != want {
		t.Errorf("templated message = %q, want %q", got, want)
	}
}

func TestGuardFirstMatchingRuleWins(t *testing.T) {
	h := plugintest.New(t, &guard{}, plugintest.WithConfig(`{"deny": [
		{"tool": "*", "args_match": "DROP TABLE", "reason": "first"},
		{"tool": "sql", "reason": "second"}
	]}`))
	if got := h.PreToolCall("sql", `{"q":"DROP TABLE users"}`).Message; !strings.Contains(got, "first") {
		t.Errorf("message = %q, want the first rule's", got)
	}
	if got := h.PreToolCall("sql", `{"q":"SELECT 1"}`).Message; !strings.Contains(got, "second") {
		t.Errorf("message = %q, want the second rule's", got)
	}
}

func TestGuardWithoutRulesAllowsEverything(t *testing.T) {
	h := plugintest.New(t, &guard{}, plugintest.WithConfig(`{}`))
	if out := h.PreToolCall("read_file", `{"path":".env"}`); out.Blocked {
		t.Errorf("blocked with no rules: %+v", out)
	}
}

func TestGuardUnconfiguredFailsSoFailClosedBlocks(t *testing.T) {
	h := plugintest.New(t, &guard{}, plugintest.WithOptions(hookbus.Options{FailClosed: true}))
	out := h.PreToolCall("now", `{}`)
	if !out.Blocked || !strings.Contains(out.Message, "fail_closed") {
		t.Errorf("unconfigured fail_closed guard: %+v, want a fail_closed block", out)
	}
}

func TestConfigureRejectsBadRules(t *testing.T) {
	for _, tc := range []struct{ config, want string }{
		{`{"deny": [{"tool": "now"}, {"tool": "read_file", "args_match": "(secret"}]}`,
			`deny[1]: args_match "(secret" is not a valid regular expression`},
		{`{"deny": [{"args_match": "x"}]}`, `deny[0]: tool or origin is required`},
		{`{"deny": [{"origin": "mcp:["}]}`, `deny[0]: origin "mcp:[" is not a valid glob`},
		{`{"deny": [{"tool": "read_[file"}]}`, `deny[0]: tool "read_[file" is not a valid glob`},
		{`{"deny": [{"tool": "now", "arg_match": "x"}]}`, `unknown key "arg_match"`},
		{`{"message": "no {toool} here"}`, `message: unknown placeholder {toool}`},
		{`{"deny": {"tool": "now"}}`, `deny: wrong type: got object, want list`},
		{`{"deny": [{"tool": 7}]}`, `deny.tool: wrong type: got number, want string`},
	} {
		err := (&guard{}).Configure(context.Background(), json.RawMessage(tc.config))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Configure(%s) = %v, want an error containing %q", tc.config, err, tc.want)
		}
	}
}

func TestCanonicalJSON(t *testing.T) {
	for in, want := range map[string]string{
		`{ "b": 1, "a": "\u0073x" }`:   `{"a":"sx","b":1}`,
		`{"n": 12345678901234567890}`:  `{"n":12345678901234567890}`,
		`{"html": "<a href=\"x\">"}`:   `{"html":"<a href=\"x\">"}`,
		`not json`:                     `not json`,
		`{"nested": {"z": [1, "\/"]}}`: `{"nested":{"z":[1,"/"]}}`,
	} {
		if got := canonicalJSON(json.RawMessage(in)); got != want {
			t.Errorf("canonicalJSON(%s) = %s, want %s", in, got, want)
		}
	}
}

// A rule keyed by origin blocks the calls going there whatever the tool's
// name, and only those; it is told the origin over both protocols.
func TestGuardBlocksByOrigin(t *testing.T) {
	const rules = `{"deny": [
		{"origin": "mcp:fs", "args_match": "/etc/", "reason": "the fs server stays out of /etc"},
		{"tool": "*__delete", "origin": "mcp:*", "reason": "no deleting through an MCP server"}
	]}`
	for _, v := range []int{0, 1, 2} {
		t.Run(fmt.Sprintf("protocol %d", v), func(t *testing.T) {
			h := plugintest.New(t, &guard{}, plugintest.WithConfig(rules), plugintest.WithProtocol(v))
			for _, tc := range []struct {
				tool, origin, args string
				blocked            bool
			}{
				{"fs__read", "mcp:fs", `{"path":"/etc/passwd"}`, true},
				{"fs__read", "mcp:fs", `{"path":"/tmp/a"}`, false},
				{"read_file", "native", `{"path":"/etc/passwd"}`, false},
				{"read_file", "client", `{"path":"/etc/passwd"}`, false},
				{"github__delete", "mcp:github", `{}`, true},
				{"kora__delete", "plugin", `{}`, false},
			} {
				out := h.Bus.PreToolCall(context.Background(), hooks.ToolCallRequest{
					SessionID: "s", CallID: "c", Name: tc.tool, Arguments: json.RawMessage(tc.args), Origin: hooks.Origin(tc.origin)})
				if out.Blocked != tc.blocked {
					t.Errorf("%s from %s (%s): blocked = %v, want %v (%q)", tc.tool, tc.origin, tc.args, out.Blocked, tc.blocked, out.Message)
				}
			}
		})
	}
}
