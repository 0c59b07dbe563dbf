package config

import (
	"reflect"
	"testing"
)

// Named keys decode with their name, variable, tool globs and limits; an
// empty mcp_tools allows no tool, an absent one every tool; a key's
// limits override [server.limits] only where it sets them.
func TestServerKeysAndLimits(t *testing.T) {
	c := mustParse(t, `
[server]
api_key_env = "HOOKHOST_KEYS"

[server.limits]
requests_per_minute = 100
tokens_per_minute = 50000

[server.keys.ci]
env = "HOOKHOST_KEY_CI"
mcp_tools = ["github__*", "fs__read_?"]
requests_per_minute = 0

[server.keys."team.ops-1"]
env = "HOOKHOST_KEY_OPS"
mcp_tools = []
tokens_per_minute = 10
`)
	ci, ops := c.Server.Keys["ci"], c.Server.Keys["team.ops-1"]
	if ci.Name != "ci" || ci.Env != "HOOKHOST_KEY_CI" || !reflect.DeepEqual(ci.MCPTools, []string{"github__*", "fs__read_?"}) || ci.Source.Line != 9 {
		t.Fatalf("ci = %+v", ci)
	}
	if ops.MCPTools == nil || len(ops.MCPTools) != 0 {
		t.Fatalf("mcp_tools = [] decoded as %#v, want an empty list that allows nothing", ops.MCPTools)
	}
	if c.Server.Limits != (Limits{RequestsPerMinute: 100, TokensPerMinute: 50000}) {
		t.Fatalf("limits = %+v", c.Server.Limits)
	}
	for name, want := range map[string][2]int64{"ci": {0, 50000}, "team.ops-1": {100, 10}, "default-1": {100, 50000}} {
		if r, tk := c.Server.KeyLimits(name); r != want[0] || tk != want[1] {
			t.Errorf("KeyLimits(%q) = %d, %d, want %v", name, r, tk, want)
		}
	}
	d := mustParse(t, "[server.keys.a]\nenv = \"A\"\n")
	if d.Server.Keys["a"].MCPTools != nil {
		t.Errorf("an absent mcp_tools decoded as %#v, want nil (every tool)", d.Server.Keys["a"].MCPTools)
	}
	if got := []string{UnnamedKeyName(0, 1), UnnamedKeyName(0, 3), UnnamedKeyName(2, 3)}; !reflect.DeepEqual(got, []string{"default", "default-1", "default-3"}) {
		t.Errorf("unnamed keys are named %q", got)
	}
}
