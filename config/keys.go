package config

import (
	"cmp"
	"maps"
	"path"
	"reflect"
	"regexp"
	"slices"
	"strconv"

	"github.com/BurntSushi/toml"
)

// ServerKey is one [server.keys.<name>] table: an inbound key clients of
// `hookhost serve` present, known by its name in logs, metrics and the
// request's context, never by its secret, which sits in the environment
// variable Env names.
type ServerKey struct {
	// Name is the key's name, its key in [server.keys].
	Name string `toml:"-"`
	// Env names the environment variable holding the key's secret.
	Env string `toml:"env" rule:"key_env"`
	// MCPTools are globs (path.Match syntax, e.g. "github__*") on the
	// namespaced tool names /mcp offers; a key with a list sees and calls
	// only the tools one of them matches. nil allows every tool.
	MCPTools []string `toml:"mcp_tools" rule:"tool_globs"`
	// RequestsPerMinute and TokensPerMinute override [server.limits] for
	// this key when set; 0 means no limit.
	RequestsPerMinute *int64 `toml:"requests_per_minute" rule:"per_minute"`
	TokensPerMinute   *int64 `toml:"tokens_per_minute" rule:"per_minute"`

	// Source is where the table is written.
	Source Source `toml:"-"`
}

// Limits is the [server.limits] table: what every inbound key may use per
// minute, counted in the state backend ([state]) so that replicas sharing
// it share one budget per key. 0 means no limit. A key's own
// requests_per_minute and tokens_per_minute override these.
type Limits struct {
	// RequestsPerMinute bounds the requests to the /v1 endpoints.
	RequestsPerMinute int64 `toml:"requests_per_minute" rule:"per_minute"`
	// TokensPerMinute bounds input plus output tokens, as the upstream
	// reports them.
	TokensPerMinute int64 `toml:"tokens_per_minute" rule:"per_minute"`
}

// KeyLimits are the limits that hold for the key named name: its own
// where it sets them, [server.limits] otherwise. An unknown name (the keys
// of api_key_env, or none) gets [server.limits].
func (c Server) KeyLimits(name string) (requestsPerMinute, tokensPerMinute int64) {
	rpm, tpm := c.Limits.RequestsPerMinute, c.Limits.TokensPerMinute
	if k, ok := c.Keys[name]; ok {
		if k.RequestsPerMinute != nil {
			rpm = *k.RequestsPerMinute
		}
		if k.TokensPerMinute != nil {
			tpm = *k.TokensPerMinute
		}
	}
	return rpm, tpm
}

// UnnamedKeyName is the name of the i-th (from 0) of n keys in the
// variable server.api_key_env names: "default" when it holds one,
// "default-1", "default-2", ... when it holds several.
func UnnamedKeyName(i, n int) string {
	if n == 1 {
		return "default"
	}
	return "default-" + strconv.Itoa(i+1)
}

// maxPerMinute caps a per-minute limit where a typo would otherwise be
// taken for a limit.
const maxPerMinute = 1 << 40

// keyNameRE is what a key's name may be: it is a label in metrics and logs.
var keyNameRE = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$`)

// defaultNameRE matches the names the keys of api_key_env take.
var defaultNameRE = regexp.MustCompile(`^default(-[0-9]+)?$`)

// perMinute is a limit per minute: a whole number, 0 for none.
var perMinute = rule{hint: "write a whole number, e.g. %[1]s = %[2]d", example: 60, decode: func(key toml.Key, v any, _ reflect.Value) (any, error) {
	n, ok := v.(int64)
	if !ok {
		return nil, fault("expected an integer, got %s (write a whole number without quotes, e.g. %s = 60; 0 means no limit)", describe(v), nameOf(key))
	}
	return n, when(n < 0 || n > maxPerMinute, "must be between 0 and %d per minute, got %d (0 means no limit)", int64(maxPerMinute), n)
}}

// toolGlobs are path.Match patterns on tool names, each listed once.
var toolGlobs = list(func(i int, g string) error {
	_, err := path.Match(g, "")
	return cmp.Or(
		when(g == "", "item %d is empty (write a tool name or a glob on it, e.g. %q)", i+1, "github__*"),
		when(err != nil, "item %d, %q, is not a valid glob (use * and ? and [...] as in path.Match, e.g. %q)", i+1, abbrev(g), "github__*"))
}, func(g string, j, i int) error {
	return fault("%q is listed twice, as items %d and %d (list it once)", abbrev(g), j+1, i+1)
})

// keyEnv is the variable holding a key's secret: a name, never the secret.
var keyEnv = text(func(s string) error {
	return cmp.Or(
		when(s == "", "must name the environment variable holding this key's secret, e.g. env = %q", "HOOKHOST_KEY_CI"),
		when(!envNameRE.MatchString(s), "must be the name of an environment variable (letters, digits and \"_\", e.g. %q), not the key itself", "HOOKHOST_KEY_CI"))
})

// serverKeys decodes [server.keys]: each table key by key, with a name fit
// for metrics and an env set.
func (d *decoder) serverKeys(key toml.Key, v any, dst reflect.Value) bool {
	m, err := asTable(key, v)
	if !d.report(key, err) {
		return false
	}
	keys := map[string]ServerKey{}
	ok := true
	for _, name := range slices.Sorted(maps.Keys(m)) {
		nk := join(key, toml.Key{name})
		if !keyNameRE.MatchString(name) {
			d.fail(nk, -1, "%q is not a key name: use 1 to 64 letters, digits, \"_\", \".\" or \"-\" (it names the key in logs and metrics), e.g. [server.keys.ci]", abbrev(name))
			ok = false
			continue
		}
		k := ServerKey{Name: name}
		set, _, clean := d.decodeTable(nk, m[name], &k)
		if !clean {
			ok = false
			continue
		}
		if _, written := set["env"]; !written {
			d.fail(nk, -1, "has no env: name the environment variable holding this key's secret, e.g. env = %q", "HOOKHOST_KEY_"+toEnvPart(name))
			ok = false
			continue
		}
		if _, written := set["mcp_tools"]; written && k.MCPTools == nil {
			// An empty list allows no tool, not every tool.
			k.MCPTools = []string{}
		}
		k.Source = Source{File: d.file, Line: d.pos.line(nk, -1)}
		keys[name] = k
	}
	if len(keys) > 0 {
		dst.Set(reflect.ValueOf(keys))
	}
	return ok
}

// toEnvPart is name as it could appear in a variable's name.
func toEnvPart(name string) string {
	b := []byte(name)
	for i, c := range b {
		switch {
		case c >= 'a' && c <= 'z':
			b[i] = c - 'a' + 'A'
		case c == '.' || c == '-':
			b[i] = '_'
		}
	}
	return string(b)
}

// validateKeys checks what spans the named keys and api_key_env: one
// variable, one name; no named key taking a name the keys of api_key_env
// take.
func (c *Server) validateKeys(d *decoder, key toml.Key) {
	owner := map[string]string{}
	if c.APIKeyEnv != "" {
		owner[c.APIKeyEnv] = "server.api_key_env"
	}
	for _, name := range slices.Sorted(maps.Keys(c.Keys)) {
		k := c.Keys[name]
		at := join(key, toml.Key{"keys", name, "env"})
		if other, taken := owner[k.Env]; taken {
			d.fail(at, -1, "%s is also the variable of %s: one variable holds one key, under one name; give each key its own variable", k.Env, other)
			continue
		}
		owner[k.Env] = "server.keys." + name
		if c.APIKeyEnv != "" && defaultNameRE.MatchString(name) {
			d.fail(join(key, toml.Key{"keys", name}), -1, "%q is the name the keys of server.api_key_env take (\"default\", or \"default-1\", \"default-2\", ... when it holds several); choose another name", name)
		}
	}
}
