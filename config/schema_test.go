package config

import (
	"reflect"
	"strings"
	"testing"
)

var (
	entryKeys  = keysOf(PluginEntry{})
	serverKeys = keysOf(Server{})
)

// TestSchemaDecodesEveryKey checks that each key of the config structs has
// a way to be decoded, so that no file can reach the walk's panic: a rule
// tag or range tag that exists, a Go type with a rule, or a nested table.
func TestSchemaDecodesEveryKey(t *testing.T) {
	var walk func(path string, typ reflect.Type)
	walk = func(path string, typ reflect.Type) {
		for i := range typ.NumField() {
			f := typ.Field(i)
			key := f.Tag.Get("toml")
			if key == "" || key == "-" {
				continue
			}
			at := path + key
			name, rng := f.Tag.Get("rule"), f.Tag.Get("range")
			_, hasRule := rules[name]
			_, hasRange := ranges[rng]
			_, decodable := ruleOf(f, f.Type)
			switch {
			case name == "entries", name == "reattach", name == "mcp_servers", name == "server_keys":
			case name != "" && !hasRule:
				t.Errorf("%s: rule %q does not exist", at, name)
			case rng != "" && !hasRange:
				t.Errorf("%s: range %q does not exist", at, rng)
			case f.Type.Kind() == reflect.Struct:
				walk(at+".", f.Type)
			case !decodable:
				t.Errorf("%s: no rule for a field of type %s", at, f.Type)
			}
		}
	}
	walk("", reflect.TypeOf(Config{}))
	walk("plugins.entries.<name>.", reflect.TypeOf(PluginEntry{}))
	walk("mcp.servers.<name>.", reflect.TypeOf(MCPServer{}))
	walk("server.keys.<name>.", reflect.TypeOf(ServerKey{}))
}

func TestHomeOfFollowsTheStructs(t *testing.T) {
	for key, want := range map[string][]string{
		"timeout":   {"llm", "plugins.entries.<name>", "mcp.servers.<name>"},
		"server":    {""},
		"small":     {"llm.tiers"},
		"read_root": {"tools"},
		"listen":    {"server"},
	} {
		if got := homeOf[key]; !reflect.DeepEqual(got, want) {
			t.Errorf("homeOf[%q] = %q, want %q", key, got, want)
		}
	}
}

func TestSyntaxHintFollowsTheField(t *testing.T) {
	for key, want := range map[string]string{
		"routing.gateway":                         "write gateway = true or gateway = false",
		"plugins.entries.kora.fail_closed":        "write fail_closed = true or fail_closed = false",
		"conversation.max_iterations":             "write a whole number, e.g. max_iterations = 8",
		"llm.max_tokens":                          "write a whole number, e.g. max_tokens = 1024",
		"llm.max_retries":                         "write a whole number, e.g. max_retries = 2",
		"llm.temperature":                         "write a number, e.g. temperature = 0.2",
		"server.max_body_size":                    "write the size in bytes, e.g. max_body_size = 33554432",
		"server.max_concurrent":                   "write a whole number, e.g. max_concurrent = 256",
		"server.state_entries":                    "write a whole number, e.g. state_entries = 10000",
		"server.responses_entries":                "write a whole number, e.g. responses_entries = 100000",
		"server.responses_max_bytes":              "write the size in bytes, e.g. responses_max_bytes = 268435456",
		"server.max_body_bytes_in_flight":         "write the size in bytes, e.g. max_body_bytes_in_flight = 268435456",
		"plugins.entries.kora.max_result_size":    "write the size in bytes, e.g. max_result_size = 4194304",
		"plugins.entries.kora.protocol":           "write a whole number, e.g. protocol = 2",
		"plugins.entries.kora.timeout":            `strings need double quotes: timeout = "word"`,
		"llm.model":                               `strings need double quotes: model = "word"`,
		"llm.gateway":                             "write gateway = true or gateway = false",
		"tools.timeout":                           `strings need double quotes: timeout = "word"`,
		"routing.max_tokens":                      "write a whole number, e.g. max_tokens = 1024",
		"llm.tiers.small.extra":                   `strings need double quotes: extra = "word"`,
		"nowhere":                                 `strings need double quotes: nowhere = "word"`,
		"plugins.entries.kora.config.fail_closed": "write fail_closed = true or fail_closed = false",
		"plugins.entries.kora.config.path":        `strings need double quotes: path = "word"`,
	} {
		if got := syntaxHint(strings.Split(key, "."), "word"); got != want {
			t.Errorf("syntaxHint(%s) = %q, want %q", key, got, want)
		}
	}
}
