package config

import (
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestServerDefaults(t *testing.T) {
	c := mustParse(t, "")
	want := Server{
		Listen: "127.0.0.1:8080", MaxBodySize: 32 << 20, MaxBodyBytesInFlight: 256 << 20, MaxConcurrent: 256,
		HeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute, IdleTimeout: 2 * time.Minute,
		RequestTimeout: 10 * time.Minute, DrainTimeout: 30 * time.Second,
		StateTTL: time.Hour, StateEntries: 10000, ResponsesEntries: 100000, ResponsesMaxBytes: 256 << 20,
		OnAsk: OnAskBlock,
	}
	if !reflect.DeepEqual(c.Server, want) {
		t.Fatalf("defaults:\n got %+v\nwant %+v", c.Server, want)
	}
	if !reflect.DeepEqual(Default().Server, want) {
		t.Fatalf("Default().Server = %+v", Default().Server)
	}
}

func TestServerEveryKey(t *testing.T) {
	c := mustParse(t, `
[server]
listen = "0.0.0.0:9090"
api_key_env = "HOOKHOST_KEYS"
allow_no_key = true
forward_client_key = false
models = ["gpt-4.1", "claude-sonnet-4-5"]
max_body_size = 1048576
max_body_bytes_in_flight = 2097152
max_concurrent = 8
header_timeout = "1s"
read_timeout = "2s"
idle_timeout = "3s"
request_timeout = "4m"
drain_timeout = "5s"
state_ttl = "6h"
state_entries = 7
responses_entries = 9
responses_max_bytes = 0
on_ask = "allow"
`)
	want := Server{
		Listen: "0.0.0.0:9090", APIKeyEnv: "HOOKHOST_KEYS", AllowNoKey: true, ForwardClientKey: false,
		Models:      []string{"gpt-4.1", "claude-sonnet-4-5"},
		MaxBodySize: 1 << 20, MaxBodyBytesInFlight: 2 << 20, MaxConcurrent: 8,
		HeaderTimeout: time.Second, ReadTimeout: 2 * time.Second, IdleTimeout: 3 * time.Second,
		RequestTimeout: 4 * time.Minute, DrainTimeout: 5 * time.Second,
		StateTTL: 6 * time.Hour, StateEntries: 7, ResponsesEntries: 9, ResponsesMaxBytes: 0,
		OnAsk: OnAskAllow,
	}
	if !reflect.DeepEqual(c.Server, want) {
		t.Fatalf("\n got %+v\nwant %+v", c.Server, want)
	}
}

func TestServerListenForms(t *testing.T) {
	for _, addr := range []string{"127.0.0.1:0", ":8080", "localhost:8080", "[::1]:8080", "[::]:443"} {
		if got := mustParse(t, "[server]\nlisten = \""+addr+"\"\n").Server.Listen; got != addr {
			t.Errorf("listen %q parsed as %q", addr, got)
		}
	}
}

// Each bad value is reported at its own key and line, with what to write
// instead.
func TestServerBadValues(t *testing.T) {
	tests := []struct {
		name, line, key, msg string
	}{
		{"listen without port", `listen = "127.0.0.1"`, "listen", "is not host:port"},
		{"listen is a URL", `listen = "http://127.0.0.1:8080"`, "listen", "is not host:port"},
		{"listen port not a number", `listen = "127.0.0.1:http"`, "listen", "port \"http\" is not a number between 0 and 65535"},
		{"listen port too large", `listen = "127.0.0.1:65536"`, "listen", "between 0 and 65535"},
		{"listen IPv6 without brackets", `listen = "::1:8080"`, "listen", "brackets"},
		{"listen not a string", `listen = 8080`, "listen", "expected a string"},
		{"api_key_env holds a key", `api_key_env = "sk-abc123"`, "api_key_env", "not the key itself"},
		{"allow_no_key quoted", `allow_no_key = "yes"`, "allow_no_key", "expected true or false"},
		{"forward_client_key a number", `forward_client_key = 1`, "forward_client_key", "expected true or false"},
		{"models a string", `models = "gpt-4.1"`, "models", `write models = ["gpt-4.1"]`},
		{"models twice", `models = ["a", "a"]`, "models", `model "a" is listed twice`},
		{"models empty item", `models = ["a", ""]`, "models", "item 2 is empty"},
		{"max_body_size zero", `max_body_size = 0`, "max_body_size", "must be between 1 and 1073741824 bytes"},
		{"max_body_size over a GiB", `max_body_size = 1073741825`, "max_body_size", "must be between 1 and 1073741824 bytes"},
		{"max_body_size a string", `max_body_size = "32MiB"`, "max_body_size", "expected an integer"},
		{"max_body_size a float", `max_body_size = 1.5`, "max_body_size", "expected an integer"},
		{"max_body_bytes_in_flight zero", `max_body_bytes_in_flight = 0`, "max_body_bytes_in_flight", "must be between 1 and"},
		{"max_body_bytes_in_flight below max_body_size", `max_body_bytes_in_flight = 1048576`, "max_body_bytes_in_flight", "less than server.max_body_size (33554432)"},
		{"max_concurrent zero", `max_concurrent = 0`, "max_concurrent", "must be between 1 and"},
		{"max_concurrent negative", `max_concurrent = -3`, "max_concurrent", "got -3"},
		{"state_entries zero", `state_entries = 0`, "state_entries", "must be between 1 and"},
		{"state_entries huge", `state_entries = 9223372036854775807`, "state_entries", "must be between 1 and"},
		{"responses_entries zero", `responses_entries = 0`, "responses_entries", "must be between 1 and"},
		{"responses_max_bytes negative", `responses_max_bytes = -1`, "responses_max_bytes", "0 keeps no responses"},
		{"responses_max_bytes a string", `responses_max_bytes = "1GiB"`, "responses_max_bytes", "expected an integer"},
		{"header_timeout zero", `header_timeout = "0s"`, "header_timeout", "greater than zero"},
		{"read_timeout negative", `read_timeout = "-1s"`, "read_timeout", "greater than zero"},
		{"idle_timeout an integer", `idle_timeout = 30`, "idle_timeout", "expected a duration string"},
		{"request_timeout garbage", `request_timeout = "soon"`, "request_timeout", "bad duration"},
		{"drain_timeout overflows", `drain_timeout = "9999999999h"`, "drain_timeout", "too large"},
		{"state_ttl zero", `state_ttl = "0"`, "state_ttl", "greater than zero"},
		{"unknown key with suggestion", `max_body_sise = 10`, "max_body_sise", "did you mean max_body_size?"},
		{"key of another table", `provider = "openai"`, "provider", "provider belongs in [llm]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte("# gateway\n[server]\n"+tt.line+"\n"), "hookhost.toml", testDir)
			var ce *Error
			if !errors.As(err, &ce) || ce.Key != "server."+tt.key || ce.Line != 3 || ce.File != "hookhost.toml" {
				t.Fatalf("err = %v, want a config error at hookhost.toml:3 for server.%s", err, tt.key)
			}
			if !strings.Contains(ce.Msg, tt.msg) {
				t.Errorf("message %q, want it to say %q", ce.Msg, tt.msg)
			}
		})
	}
}

// A larger max_body_size raises the default budget of bodies in flight
// with it, so that one body of the largest size can always be read.
func TestServerBodyBudgetFollowsMaxBodySize(t *testing.T) {
	c := mustParse(t, "[server]\nmax_body_size = 536870912\n")
	if c.Server.MaxBodyBytesInFlight != 512<<20 {
		t.Fatalf("max_body_bytes_in_flight %d, want 512 MiB", c.Server.MaxBodyBytesInFlight)
	}
}

// Forwarding the client's key while requiring an inbound key would let the
// inbound key travel upstream: refused, naming both keys.
func TestServerForwardClientKeyWithInboundKey(t *testing.T) {
	_, err := Parse([]byte("[server]\napi_key_env = \"HOOKHOST_KEYS\"\nforward_client_key = true\n"), "hookhost.toml", testDir)
	var ce *Error
	if !errors.As(err, &ce) || ce.Key != "server.forward_client_key" || ce.Line != 3 || !strings.Contains(ce.Msg, "server.api_key_env") || !strings.Contains(ce.Msg, "upstream") {
		t.Fatalf("err = %v", err)
	}
}

func TestServerSecretsAreNotEchoed(t *testing.T) {
	_, err := Parse([]byte("[server]\napi_key_env = \"sk-live-0123456789\"\n"), "hookhost.toml", testDir)
	if err == nil || strings.Contains(err.Error(), "sk-live") {
		t.Fatalf("err = %v, want an error that does not repeat the value", err)
	}
}

// A syntax error on a [server] key gets a hint fitted to its type.
func TestServerSyntaxHints(t *testing.T) {
	for line, want := range map[string]string{
		"allow_no_key = yes":      "write allow_no_key = true or allow_no_key = false",
		"max_body_size = lots":    "write the size in bytes, e.g. max_body_size = 33554432",
		"max_concurrent = many":   "write a whole number, e.g. max_concurrent = 256",
		"listen = localhost:8080": "invalid TOML",
	} {
		_, err := Parse([]byte("[server]\n"+line+"\n"), "hookhost.toml", testDir)
		var ce *Error
		if !errors.As(err, &ce) || ce.Line != 2 || !strings.Contains(ce.Msg, want) {
			t.Errorf("%s: err = %v, want line 2 and %q", line, err, want)
		}
	}
}

func TestServerIsATable(t *testing.T) {
	_, err := Parse([]byte("server = \"127.0.0.1:8080\"\n"), "hookhost.toml", testDir)
	var ce *Error
	if !errors.As(err, &ce) || ce.Key != "server" || ce.Line != 1 || !strings.Contains(ce.Msg, "expected a table") {
		t.Fatalf("err = %v", err)
	}
}

// config.toml.example documents the [server] defaults: loaded, it must
// describe what an empty file does.
func TestExampleServerTableIsTheDefaults(t *testing.T) {
	c, err := Load("../config.toml.example")
	if err != nil {
		t.Fatal(err)
	}
	if d := mustParse(t, ""); !reflect.DeepEqual(c.Server, d.Server) {
		t.Fatalf("example [server] disagrees with the defaults:\n got %+v\nwant %+v", c.Server, d.Server)
	}
	data, err := os.ReadFile("../config.toml.example")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range serverKeys {
		if !strings.Contains(string(data), "\n"+k+" = ") {
			t.Errorf("config.toml.example does not document server.%s", k)
		}
	}
}

func TestServerModelAliases(t *testing.T) {
	c := mustParse(t, `
[llm]
provider = "openai"
model = "gpt-4.1-mini"

[server]
models = ["gpt-4.1"]

[server.model_aliases]
"claude-sonnet-4-5-20250929" = "gpt-4.1"
"claude-haiku-4-5-20251001" = "gpt-4.1-mini"
`)
	want := map[string]string{"claude-sonnet-4-5-20250929": "gpt-4.1", "claude-haiku-4-5-20251001": "gpt-4.1-mini"}
	if !reflect.DeepEqual(c.Server.ModelAliases, want) {
		t.Fatalf("model_aliases = %v, want %v", c.Server.ModelAliases, want)
	}
	if c := mustParse(t, "[server]\nmodel_aliases = {}\n"); c.Server.ModelAliases != nil {
		t.Errorf("an empty table gives %v, want nil", c.Server.ModelAliases)
	}
}

func TestServerModelAliasErrors(t *testing.T) {
	tests := []struct {
		name, doc, key string
		line           int
		msg            string
	}{
		{"not a table", "[server]\nmodel_aliases = [\"a\"]\n", "server.model_aliases", 2, "expected a table"},
		{"target not a string", "[server.model_aliases]\nclaude-x = 3\n", "server.model_aliases.claude-x", 2, "expected a string"},
		{"empty target", "[server.model_aliases]\nclaude-x = \"\"\n", "server.model_aliases.claude-x", 2, "names no upstream model"},
		{"empty name", "[server.model_aliases]\n\"\" = \"gpt-4.1\"\n", `server.model_aliases.""`, 2, "an empty model name cannot be an alias"},
		{"alias of itself", "[server.model_aliases]\nclaude-x = \"claude-x\"\n", "server.model_aliases.claude-x", 2, "alias of itself"},
		{"chain", "[server.model_aliases]\nclaude-x = \"claude-y\"\nclaude-y = \"gpt-4.1\"\n", "server.model_aliases.claude-x", 2, `its target "claude-y" is itself an alias (of "gpt-4.1")`},
		{"also in server.models", "[server]\nmodels = [\"claude-x\"]\n[server.model_aliases]\nclaude-x = \"gpt-4.1\"\n", "server.model_aliases.claude-x", 4, `"claude-x" is also server.models`},
		{"also llm.model", "[server.model_aliases]\noffline-small = \"offline-large\"\n", "server.model_aliases.offline-small", 2, `"offline-small" is also llm.model`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.doc), "hookhost.toml", testDir)
			var ce *Error
			if !errors.As(err, &ce) || ce.Key != tt.key || ce.Line != tt.line || ce.File != "hookhost.toml" {
				t.Fatalf("err = %v, want a config error at hookhost.toml:%d for %s", err, tt.line, tt.key)
			}
			if !strings.Contains(ce.Msg, tt.msg) {
				t.Errorf("message %q, want it to say %q", ce.Msg, tt.msg)
			}
		})
	}
}
