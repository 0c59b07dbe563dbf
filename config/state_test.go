package config

import (
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestStateDefaults(t *testing.T) {
	want := State{Backend: "memory", Prefix: "hookhost:", DialTimeout: 2 * time.Second, ReadTimeout: 3 * time.Second, WriteTimeout: 3 * time.Second}
	if got := mustParse(t, "").State; !reflect.DeepEqual(got, want) {
		t.Fatalf("defaults:\n got %+v\nwant %+v", got, want)
	}
	if got := Default().State; !reflect.DeepEqual(got, want) {
		t.Fatalf("Default().State = %+v", got)
	}
}

func TestStateEveryKey(t *testing.T) {
	c := mustParse(t, `
[state]
backend = "redis"
url_env = "HOOKHOST_REDIS_URL"
prefix = "prod:gw:"
dial_timeout = "500ms"
read_timeout = "1s"
write_timeout = "2s"
`)
	want := State{Backend: "redis", URLEnv: "HOOKHOST_REDIS_URL", Prefix: "prod:gw:", DialTimeout: 500 * time.Millisecond, ReadTimeout: time.Second, WriteTimeout: 2 * time.Second}
	if !reflect.DeepEqual(c.State, want) {
		t.Fatalf("\n got %+v\nwant %+v", c.State, want)
	}
	if w := c.Where("state.url_env"); w != "hookhost.toml:4" {
		t.Errorf("Where(state.url_env) = %q", w)
	}
	if got := mustParse(t, "[state]\nprefix = \"\"\n").State.Prefix; got != "" {
		t.Errorf("an empty prefix is allowed (a server of its own), got %q", got)
	}
}

func TestStateBadValues(t *testing.T) {
	tests := []struct {
		name, lines, key, msg string
		line                  int
	}{
		{"unknown backend", `backend = "valkey"`, "backend", `unknown state backend "valkey"`, 3},
		{"misspelt backend", `backend = "rediss"`, "backend", `did you mean "redis"?`, 3},
		{"backend not a string", `backend = 1`, "backend", "expected a string", 3},
		{"redis without url_env", `backend = "redis"`, "backend", `state.url_env is not set; name the environment variable holding the redis:// or rediss:// URL, e.g. url_env = "HOOKHOST_REDIS_URL"`, 3},
		{"redis with empty url_env", "backend = \"redis\"\nurl_env = \"\"", "url_env", "must name the environment variable", 4},
		{"url_env holds the URL", `url_env = "redis://:secret@db:6379/0"`, "url_env", "not the URL itself", 3},
		{"url_env not a name", `url_env = "9LIVES"`, "url_env", "is not an environment variable name", 3},
		{"prefix with a space", `prefix = "my app:"`, "prefix", "without spaces", 3},
		{"prefix too long", `prefix = "` + strings.Repeat("p", 65) + `"`, "prefix", "at most 64 characters", 3},
		{"dial_timeout zero", `dial_timeout = "0s"`, "dial_timeout", "greater than zero", 3},
		{"read_timeout garbage", `read_timeout = "soon"`, "read_timeout", "bad duration", 3},
		{"write_timeout an integer", `write_timeout = 3`, "write_timeout", "expected a duration string", 3},
		{"unknown key with suggestion", `url_evn = "X"`, "url_evn", "did you mean url_env?", 3},
		{"key of another table", `listen = "127.0.0.1:1"`, "listen", "listen belongs in [server]", 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte("# replicas\n[state]\n"+tt.lines+"\n"), "hookhost.toml", testDir)
			var ce *Error
			if !errors.As(err, &ce) || ce.Key != "state."+tt.key || ce.Line != tt.line || ce.File != "hookhost.toml" {
				t.Fatalf("err = %v, want a config error at hookhost.toml:%d for state.%s", err, tt.line, tt.key)
			}
			if !strings.Contains(ce.Msg, tt.msg) {
				t.Errorf("message %q, want it to say %q", ce.Msg, tt.msg)
			}
			if strings.Contains(err.Error(), "secret") {
				t.Errorf("the error repeats the URL: %v", err)
			}
		})
	}
}

// A [state] key written in [server] is pointed home.
func TestStateKeyInServer(t *testing.T) {
	_, err := Parse([]byte("[server]\nbackend = \"redis\"\n"), "hookhost.toml", testDir)
	var ce *Error
	if !errors.As(err, &ce) || ce.Key != "server.backend" || !strings.Contains(ce.Msg, "backend belongs in [state]") {
		t.Fatalf("err = %v, want server.backend pointed to [state]", err)
	}
}

func TestStateSyntaxHint(t *testing.T) {
	_, err := Parse([]byte("[state]\nbackend = redis\n"), "hookhost.toml", testDir)
	var ce *Error
	if !errors.As(err, &ce) || ce.Line != 2 || !strings.Contains(ce.Msg, `backend = "redis"`) {
		t.Fatalf("err = %v, want line 2 and the quoted form", err)
	}
}

// config.toml.example's commented [state] block, uncommented, is a valid
// redis backend with the defaults.
func TestExampleStateBlock(t *testing.T) {
	data, err := os.ReadFile("../config.toml.example")
	if err != nil {
		t.Fatal(err)
	}
	_, block, found := strings.Cut(string(data), "\n# [state]\n")
	if !found {
		t.Fatal("config.toml.example has no commented [state] block")
	}
	block, _, _ = strings.Cut(block, "\n\n")
	var lines []string
	for _, l := range strings.Split(block, "\n") {
		if l = strings.TrimPrefix(l, "# "); !strings.HasPrefix(l, "#") {
			lines = append(lines, l)
		}
	}
	c := mustParse(t, "[state]\n"+strings.Join(lines, "\n")+"\n")
	want := defaultState()
	want.Backend, want.URLEnv = "redis", "HOOKHOST_REDIS_URL"
	if !reflect.DeepEqual(c.State, want) {
		t.Fatalf("the example [state] block:\n got %+v\nwant %+v", c.State, want)
	}
}
