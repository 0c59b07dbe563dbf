package config

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

const testDir = "/etc/hookhost"

func mustParse(t *testing.T, src string) *Config {
	t.Helper()
	c, err := Parse([]byte(src), "hookhost.toml", testDir)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return c
}

func TestDefaults(t *testing.T) {
	c := mustParse(t, "")
	want := &Config{
		LLM:          LLM{Provider: "offline", Model: "offline-small", Timeout: 60 * time.Second, CallTimeout: 10 * time.Minute, MaxRetries: 2},
		Routing:      Routing{Gateway: false},
		Conversation: Conversation{MaxIterations: 8, System: ""},
		Tools:        Tools{ReadRoot: testDir},
		Plugins: Plugins{
			Dir:     filepath.Join(testDir, "bin/plugins"),
			Entries: map[string]PluginEntry{},
		},
		Server: Server{
			Listen: "127.0.0.1:8080", MaxBodySize: 32 << 20, MaxBodyBytesInFlight: 256 << 20, MaxConcurrent: 256,
			HeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute, IdleTimeout: 2 * time.Minute,
			RequestTimeout: 10 * time.Minute, DrainTimeout: 30 * time.Second,
			StateTTL: time.Hour, StateEntries: 10000, ResponsesEntries: 100000, ResponsesMaxBytes: 256 << 20,
			OnAsk: OnAskBlock,
		},
		State: defaultState(), // spelled out by TestStateDefaults
		Trace: defaultTrace(), // spelled out by TestTraceDefaults
		Dir:   testDir,
	}
	// Where each key is written is TestWhereNamesTheLineOfAKeyInTheFile's business.
	want.file, want.pos = c.file, c.pos
	if !reflect.DeepEqual(c, want) {
		t.Errorf("Parse(\"\") =\n%+v\nwant\n%+v", c, want)
	}

	d := Default()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	if d.Dir != wd || d.Tools.ReadRoot != wd || d.Plugins.Dir != filepath.Join(wd, "bin/plugins") {
		t.Errorf("Default() paths = %q %q %q, want resolved against %q", d.Dir, d.Tools.ReadRoot, d.Plugins.Dir, wd)
	}
	if !reflect.DeepEqual(d.LLM, want.LLM) || d.Conversation != want.Conversation || d.Plugins.Entries == nil {
		t.Errorf("Default() = %+v", d)
	}
}

func TestParseWithoutDirUsesWorkingDirectory(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	c, err := Parse([]byte("[plugins]\nenabled = []\n[tools]\nread_root = \"docs\"\n"), "", "")
	if err != nil {
		t.Fatal(err)
	}
	if c.Dir != wd || c.Tools.ReadRoot != filepath.Join(wd, "docs") {
		t.Errorf("Dir = %q, ReadRoot = %q; want them under %q", c.Dir, c.Tools.ReadRoot, wd)
	}
	if c.Plugins.Enabled != nil {
		t.Errorf("enabled = [] gave %#v, want nil", c.Plugins.Enabled)
	}
}

func TestEnabledPluginGetsDefaultEntry(t *testing.T) {
	c := mustParse(t, `
[plugins]
enabled = ["kora", "guard"]

[plugins.entries.kora]
timeout = "500ms"
`)
	if got := c.Plugins.Enabled; !reflect.DeepEqual(got, []string{"kora", "guard"}) {
		t.Errorf("Enabled = %q", got)
	}
	guard, ok := c.Plugins.Entries["guard"]
	if !ok {
		t.Fatal("enabled plugin guard has no entry")
	}
	want := PluginEntry{
		Dir:         testDir,
		Path:        filepath.Join(testDir, "bin/plugins/guard"),
		Timeout:     2 * time.Second,
		ToolTimeout: 10 * time.Second,
		Config:      json.RawMessage("{}"),
	}
	if !reflect.DeepEqual(guard, want) {
		t.Errorf("guard entry = %+v, want %+v", guard, want)
	}
	if got := c.Entry("guard"); !reflect.DeepEqual(got, want) {
		t.Errorf("Entry(guard) = %+v, want %+v", got, want)
	}
	kora := c.Entry("kora")
	if kora.Timeout != 500*time.Millisecond || kora.ToolTimeout != 10*time.Second {
		t.Errorf("kora timeouts = %v, %v; want 500ms, 10s", kora.Timeout, kora.ToolTimeout)
	}
	// A name with no table and not enabled still gets usable defaults.
	other := c.Entry("other")
	if other.Path != filepath.Join(testDir, "bin/plugins/other") || other.Timeout != 2*time.Second || string(other.Config) != "{}" {
		t.Errorf("Entry(other) = %+v", other)
	}
}

func TestFullEntry(t *testing.T) {
	sum := strings.Repeat("AB", 32)
	c := mustParse(t, `
[llm]
provider = "anthropic"
model = "claude-x"

[routing]
gateway = true

[conversation]
max_iterations = 3
system = "be brief"

[plugins]
enabled = ["kora"]

[plugins.entries.kora]
path = "/opt/kora"
sha256 = "`+sum+`"
timeout = "1s"
tool_timeout = "1m"
fail_closed = true
allow_tool_override = true
env = ["KORA_TOKEN", "HOME"]

[plugins.entries.spare]
timeout = "3s"
`)
	wantLLM := LLM{
		Provider: "anthropic", Model: "claude-x", BaseURL: "https://api.anthropic.com",
		APIKeyEnv: "ANTHROPIC_API_KEY", MaxTokens: 1024, Timeout: time.Minute, CallTimeout: 10 * time.Minute, MaxRetries: 2,
	}
	if !reflect.DeepEqual(c.LLM, wantLLM) || !c.Routing.Gateway ||
		c.Conversation != (Conversation{MaxIterations: 3, System: "be brief"}) {
		t.Errorf("top-level tables = %+v %+v %+v", c.LLM, c.Routing, c.Conversation)
	}
	want := PluginEntry{
		Dir:               testDir,
		Path:              "/opt/kora",
		SHA256:            strings.ToLower(sum),
		Timeout:           time.Second,
		ToolTimeout:       time.Minute,
		FailClosed:        true,
		AllowToolOverride: true,
		Env:               []string{"KORA_TOKEN", "HOME"},
		Config:            json.RawMessage("{}"),
		Source:            Source{File: "hookhost.toml", Line: 16},
	}
	if got := c.Plugins.Entries["kora"]; !reflect.DeepEqual(got, want) {
		t.Errorf("kora = %+v\nwant %+v", got, want)
	}
	if spare, ok := c.Plugins.Entries["spare"]; !ok || spare.Timeout != 3*time.Second {
		t.Errorf("entry for a plugin that is not enabled was not kept: %+v", c.Plugins.Entries)
	}
}

func TestPathsResolveAgainstConfigDir(t *testing.T) {
	c := mustParse(t, `
[tools]
read_root = "data/../docs"

[plugins]
enabled = ["a", "b", "c"]
dir = "plugins"

[plugins.entries.a]
path = "custom/a-bin"

[plugins.entries.b]
path = "/usr/local/bin/b"
`)
	checks := []struct{ name, got, want string }{
		{"tools.read_root", c.Tools.ReadRoot, "/etc/hookhost/docs"},
		{"plugins.dir", c.Plugins.Dir, "/etc/hookhost/plugins"},
		{"relative path", c.Entry("a").Path, "/etc/hookhost/custom/a-bin"},
		{"absolute path", c.Entry("b").Path, "/usr/local/bin/b"},
		{"default path", c.Entry("c").Path, "/etc/hookhost/plugins/c"},
	}
	for _, ck := range checks {
		if ck.got != ck.want {
			t.Errorf("%s = %q, want %q", ck.name, ck.got, ck.want)
		}
	}
}

func TestLoadUsesFileDirectory(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "hookhost.toml")
	if err := os.Mkdir(filepath.Join(dir, "work"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("[tools]\nread_root = \"work\"\n[conversation]\nmax_iterations = 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(path)
	var ce *Error
	if !errors.As(err, &ce) || ce.File != path || ce.Line != 4 {
		t.Fatalf("Load error = %v, want one naming %s line 4", err, path)
	}

	if err := os.WriteFile(path, []byte("[tools]\nread_root = \"work\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if c.Dir != dir || c.Tools.ReadRoot != filepath.Join(dir, "work") {
		t.Errorf("Dir = %q, ReadRoot = %q; want %q and %q", c.Dir, c.Tools.ReadRoot, dir, filepath.Join(dir, "work"))
	}

	_, err = Load(filepath.Join(dir, "missing.toml"))
	if err == nil || !strings.HasPrefix(err.Error(), "config: ") || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Load(missing) = %v, want a config: error wrapping os.ErrNotExist", err)
	}
}

func TestPluginConfigBecomesJSON(t *testing.T) {
	c := mustParse(t, `
[plugins]
enabled = ["kora"]

[plugins.entries.kora.config]
state_dir = ".kora"
budget = 12.5
limits = { daily = 3, models = ["small", "big"] }
since = 2024-01-02
at = 1979-05-27T07:32:00Z

[[plugins.entries.kora.config.prices]]
model = "small"
usd = 0.25
`)
	var got map[string]any
	if err := json.Unmarshal(c.Entry("kora").Config, &got); err != nil {
		t.Fatalf("Config is not JSON: %v (%s)", err, c.Entry("kora").Config)
	}
	want := map[string]any{
		"state_dir": ".kora",
		"budget":    12.5,
		"limits":    map[string]any{"daily": float64(3), "models": []any{"small", "big"}},
		"since":     "2024-01-02",
		"at":        "1979-05-27T07:32:00Z",
		"prices":    []any{map[string]any{"model": "small", "usd": 0.25}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Config = %s\nwant %v", c.Entry("kora").Config, want)
	}
}

func TestExampleFileLoads(t *testing.T) {
	c, err := Load("../config.toml.example")
	if err != nil {
		t.Fatal(err)
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if c.Dir != root {
		t.Errorf("Dir = %q, want %q", c.Dir, root)
	}
	kora := c.Entry("kora")
	if !reflect.DeepEqual(c.Plugins.Enabled, []string{"kora"}) ||
		kora.Path != filepath.Join(root, "bin/plugins/kora") ||
		kora.Timeout != 2*time.Second || kora.ToolTimeout != 10*time.Second ||
		!reflect.DeepEqual(kora.Env, []string{"KORA_TOKEN"}) {
		t.Errorf("example kora entry = %+v", kora)
	}
	var koraConfig map[string]any
	if err := json.Unmarshal(kora.Config, &koraConfig); err != nil || koraConfig["state_dir"] != ".kora" {
		t.Errorf("example kora config table = %s (%v)", kora.Config, err)
	}
	// The example documents defaults, so apart from the kora plugin it must
	// describe exactly what an empty file does.
	d := mustParse(t, "")
	if !reflect.DeepEqual(c.LLM, d.LLM) || c.Routing != d.Routing || c.Conversation != d.Conversation {
		t.Errorf("example disagrees with defaults: %+v %+v %+v", c.LLM, c.Routing, c.Conversation)
	}
}

func TestErrors(t *testing.T) {
	tests := []struct {
		name string
		src  string
		key  string
		line int
		msg  string // substring of the message
	}{
		{
			name: "syntax error",
			src:  "[llm]\nprovider = \"offline\n",
			key:  "llm.provider", line: 2, msg: "invalid TOML",
		},
		{
			name: "unquoted duration",
			src:  "[plugins.entries.kora]\npath = \"\"\ntimeout = 2s\n",
			key:  "plugins.entries.kora.timeout", line: 3, msg: `timeout = "2s"`,
		},
		{
			name: "duplicate key",
			src:  "[routing]\ngateway = true\ngateway = false\n",
			key:  "routing.gateway", line: 3, msg: "already been defined",
		},
		{
			name: "unterminated header",
			src:  "[llm]\nmodel = \"m\"\n[conversation\n",
			key:  "conversation", line: 3, msg: "invalid TOML",
		},
		{
			name: "unknown top-level table",
			src:  "[llm]\nmodel = \"m\"\n\n[plugin]\nenabled = []\n",
			key:  "plugin", line: 4, msg: "did you mean plugins?",
		},
		{
			name: "unknown entry key with suggestion",
			src:  "[plugins]\nenabled = [\"kora\"]\n[plugins.entries.kora]\ntimout = \"2s\"\n",
			key:  "plugins.entries.kora.timout", line: 4, msg: "did you mean timeout?",
		},
		{
			name: "unknown key in wrong table",
			src:  "[routing]\ngateway = true\nprovider = \"openai\"\n",
			key:  "routing.provider", line: 3, msg: "provider belongs in [llm]",
		},
		{
			name: "unknown key lists allowed keys",
			src:  "[tools]\nroot_dir = \"x\"\n",
			key:  "tools.root_dir", line: 2, msg: "keys allowed in [tools] are read_root",
		},
		{
			name: "plugin table outside entries",
			src:  "[plugins]\nenabled = [\"kora\"]\n\n[plugins.kora]\ntimeout = \"1s\"\n",
			key:  "plugins.kora", line: 4, msg: "[plugins.entries.kora]",
		},
		{
			name: "unknown dotted key",
			src:  "llm.provider = \"offline\"\nllm.top_p = 0.2\n",
			key:  "llm.top_p", line: 2, msg: "unknown key",
		},
		{
			name: "unknown key in inline table",
			src:  "[plugins.entries]\nkora = { timeout = \"1s\", colour = \"red\" }\n",
			key:  "plugins.entries.kora.colour", line: 2, msg: "unknown key",
		},
		{
			name: "enabled is a string",
			src:  "[llm]\n\n[plugins]\nenabled = \"kora\"\n",
			key:  "plugins.enabled", line: 4, msg: `enabled = ["kora"]`,
		},
		{
			name: "enabled item is not a string",
			src:  "[plugins]\nenabled = [\n  \"kora\",\n  7,\n]\n",
			key:  "plugins.enabled", line: 4, msg: "item 2: expected a string, got integer 7",
		},
		{
			name: "gateway is a string",
			src:  "[routing]\ngateway = \"yes\"\n",
			key:  "routing.gateway", line: 2, msg: "gateway = true or gateway = false",
		},
		{
			name: "max_iterations is a string",
			src:  "# comment\n[conversation]\nmax_iterations = \"8\"\n",
			key:  "conversation.max_iterations", line: 3, msg: "max_iterations = 8",
		},
		{
			name: "table is a value",
			src:  "llm = \"openai\"\n",
			key:  "llm", line: 1, msg: "expected a table",
		},
		{
			name: "bad duration",
			src:  "[plugins]\nenabled = [\"kora\"]\n\n[plugins.entries.kora]\ntimeout = \"2x\"\n",
			key:  "plugins.entries.kora.timeout", line: 5, msg: `bad duration "2x" (use Go durations such as "500ms" or "2s")`,
		},
		{
			name: "duration is a number",
			src:  "[plugins.entries.kora]\ntool_timeout = 10\n",
			key:  "plugins.entries.kora.tool_timeout", line: 2, msg: `tool_timeout = "10s"`,
		},
		{
			name: "zero duration",
			src:  "[plugins.entries.kora]\n\ntimeout = \"0s\"\n",
			key:  "plugins.entries.kora.timeout", line: 3, msg: "greater than zero",
		},
		{
			name: "negative duration",
			src:  "[plugins.entries.kora]\ntool_timeout = \"-1s\"\n",
			key:  "plugins.entries.kora.tool_timeout", line: 2, msg: "greater than zero",
		},
		{
			name: "zero max_iterations",
			src:  "[conversation]\nmax_iterations = 0\n",
			key:  "conversation.max_iterations", line: 2, msg: "at least 1",
		},
		{
			name: "negative max_iterations",
			src:  "[conversation]\nsystem = \"\"\"\nmulti\nline\n\"\"\"\nmax_iterations = -3\n",
			key:  "conversation.max_iterations", line: 6, msg: "at least 1",
		},
		{
			name: "plugin enabled twice",
			src:  "[plugins]\nenabled = [\n  \"kora\",\n  \"guard\",\n  \"kora\",\n]\n",
			key:  "plugins.enabled", line: 5, msg: "enabled twice, as items 1 and 3",
		},
		{
			name: "plugin name with double underscore",
			src:  "[plugins]\nenabled = [\"my__plugin\"]\n",
			key:  "plugins.enabled", line: 2, msg: `"__"`,
		},
		{
			name: "plugin name with bad character",
			src:  "[plugins]\nenabled = [\"my.plugin\"]\n",
			key:  "plugins.enabled", line: 2, msg: "bad plugin name",
		},
		{
			name: "plugin name too long",
			src:  "[plugins]\nenabled = [\"" + strings.Repeat("a", 49) + "\"]\n",
			key:  "plugins.enabled", line: 2, msg: "at most 48",
		},
		{
			name: "plugin name trailing underscore",
			src:  "[plugins]\nenabled = [\"kora_\"]\n",
			key:  "plugins.enabled", line: 2, msg: "bad plugin name",
		},
		{
			name: "entry with bad plugin name",
			src:  "[plugins]\n[plugins.entries.bad__name]\ntimeout = \"1s\"\n",
			key:  "plugins.entries.bad__name", line: 2, msg: `"__"`,
		},
		{
			name: "entry with quoted bad plugin name",
			src:  "[plugins.entries.\"a b\"]\ntimeout = \"1s\"\n",
			key:  `plugins.entries."a b"`, line: 1, msg: "bad plugin name",
		},
		{
			name: "sha256 too short",
			src:  "[plugins.entries.kora]\nsha256 = \"abc123\"\n",
			key:  "plugins.entries.kora.sha256", line: 2, msg: "64 hexadecimal characters",
		},
		{
			name: "sha256 not hex",
			src:  "[plugins.entries.kora]\nsha256 = \"" + strings.Repeat("zz", 32) + "\"\n",
			key:  "plugins.entries.kora.sha256", line: 2, msg: "64 hexadecimal characters",
		},
		{
			name: "env name invalid",
			src:  "[plugins.entries.kora]\nenv = [\n  \"HOME\",\n  \"KORA-TOKEN\",\n]\n",
			key:  "plugins.entries.kora.env", line: 4, msg: `item 2, "KORA-TOKEN", is not an environment variable name`,
		},
		{
			name: "env name starts with digit",
			src:  "[plugins.entries.kora]\nenv = [\"1PASS\"]\n",
			key:  "plugins.entries.kora.env", line: 2, msg: "not an environment variable name",
		},
		{
			name: "env value instead of name",
			src:  "[plugins.entries.kora]\nenv = [\"KORA_TOKEN=s3cret\"]\n",
			key:  "plugins.entries.kora.env", line: 2, msg: `list only the name "KORA_TOKEN"`,
		},
		{
			name: "unknown provider",
			src:  "[llm]\nprovider = \"opanai\"\n",
			key:  "llm.provider", line: 2, msg: `unknown provider "opanai" (did you mean "openai"? use one of: offline, openai, anthropic)`,
		},
		{
			name: "empty model",
			src:  "[llm]\nmodel = \"\"\n",
			key:  "llm.model", line: 2, msg: "must not be empty",
		},
		{
			name: "config is not a table",
			src:  "[plugins.entries.kora]\nconfig = \"state_dir=.kora\"\n",
			key:  "plugins.entries.kora.config", line: 2, msg: "expected a table",
		},
		{
			name: "config value JSON cannot hold",
			src:  "[plugins.entries.kora.config]\nok = 1\nratio = nan\n",
			key:  "plugins.entries.kora.config.ratio", line: 3, msg: "JSON",
		},
		{
			name: "dotted table key under header",
			src:  "[plugins]\nentries.kora.timeout = \"soon\"\n",
			key:  "plugins.entries.kora.timeout", line: 2, msg: "bad duration",
		},
		{
			name: "string is a number",
			src:  "[plugins.entries.kora]\npath = 42\n",
			key:  "plugins.entries.kora.path", line: 2, msg: `expected a string, got integer 42 (put the value in double quotes: path = "...")`,
		},
		{
			name: "CRLF line endings",
			src:  "[llm]\r\nmodel = \"m\"\r\n\r\nprovider = \"x\"\r\n",
			key:  "llm.provider", line: 4, msg: "unknown provider",
		},
		{
			name: "empty enabled list is fine but empty name is not",
			src:  "[plugins]\nenabled = [\n\"\"]\n",
			key:  "plugins.enabled", line: 3, msg: "plugin name is empty",
		},
		{
			name: "array of tables where a table belongs",
			src:  "[[llm]]\nprovider = \"offline\"\n",
			key:  "llm", line: 1, msg: "expected a table",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.src), "hookhost.toml", testDir)
			if err == nil {
				t.Fatalf("Parse succeeded, want an error for %s", tt.key)
			}
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("error %v (%T) is not a *config.Error", err, err)
			}
			if ce.Key != tt.key || ce.Line != tt.line || ce.File != "hookhost.toml" {
				t.Errorf("error at %s:%d key %q, want hookhost.toml:%d key %q\n%v", ce.File, ce.Line, ce.Key, tt.line, tt.key, err)
			}
			prefix := "config: hookhost.toml:" + itoa(tt.line) + ": " + tt.key + ": "
			if !strings.HasPrefix(err.Error(), prefix) {
				t.Errorf("error = %q, want prefix %q", err, prefix)
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error = %q, want it to contain %q", err, tt.msg)
			}
		})
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

func TestAllProblemsReportedInFileOrder(t *testing.T) {
	_, err := Parse([]byte(`[llm]
provider = "nope"
colour = "red"

[plugins]
enabled = ["a", "a"]

[plugins.entries.a]
timeout = "x"
`), "h.toml", testDir)
	if err == nil {
		t.Fatal("want errors")
	}
	lines := strings.Split(err.Error(), "\n")
	want := []string{
		"config: h.toml:2: llm.provider: ",
		"config: h.toml:3: llm.colour: ",
		"config: h.toml:6: plugins.enabled: ",
		"config: h.toml:9: plugins.entries.a.timeout: ",
	}
	if len(lines) != len(want) {
		t.Fatalf("got %d errors, want %d:\n%v", len(lines), len(want), err)
	}
	for i := range want {
		if !strings.HasPrefix(lines[i], want[i]) {
			t.Errorf("error %d = %q, want prefix %q", i, lines[i], want[i])
		}
	}
}

func TestErrorFormat(t *testing.T) {
	tests := []struct {
		e    Error
		want string
	}{
		{Error{File: "h.toml", Line: 7, Key: "a.b", Msg: "m"}, "config: h.toml:7: a.b: m"},
		{Error{File: "h.toml", Key: "a.b", Msg: "m"}, "config: h.toml: a.b: m"},
		{Error{Line: 7, Key: "a.b", Msg: "m"}, "config: line 7: a.b: m"},
		{Error{File: "h.toml", Line: 7, Msg: "m"}, "config: h.toml:7: m"},
	}
	for _, tt := range tests {
		if got := tt.e.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
}

func TestPositions(t *testing.T) {
	src := `# leading comment
title = "x # not a comment"   # comment
multi = """
[not.a.table]
fake = 1
"""
lit = '''
also = 'not' a key
'''
[a."b.c"]
d = [
  1,
  [2, 3],
  { e = 4 },
]
"quoted key" = { f.g = 5,
  h = 6 }

[[arr]]
x = 1
[[arr]]
x = 2
dt = 1979-05-27 07:32:00
after = true
`
	p := scanPositions(src)
	tests := []struct {
		key  []string
		elem int
		line int
	}{
		{[]string{"title"}, -1, 2},
		{[]string{"multi"}, -1, 3},
		{[]string{"lit"}, -1, 7},
		{[]string{"not"}, -1, 0},
		{[]string{"also"}, -1, 0},
		{[]string{"a"}, -1, 10},
		{[]string{"a", "b.c"}, -1, 10},
		{[]string{"a", "b.c", "d"}, -1, 11},
		{[]string{"a", "b.c", "d"}, 0, 12},
		{[]string{"a", "b.c", "d"}, 1, 13},
		{[]string{"a", "b.c", "d"}, 2, 14},
		{[]string{"a", "b.c", "d", "e"}, -1, 14},
		{[]string{"a", "b.c", "quoted key", "f", "g"}, -1, 16},
		{[]string{"a", "b.c", "quoted key", "h"}, -1, 17},
		{[]string{"a", "b.c", "missing"}, -1, 10},
		{[]string{"arr"}, -1, 19},
		{[]string{"arr", "x"}, -1, 20},
		{[]string{"arr", "dt"}, -1, 23},
		{[]string{"arr", "after"}, -1, 24},
	}
	for _, tt := range tests {
		if got := p.line(tt.key, tt.elem); got != tt.line {
			t.Errorf("line(%q, %d) = %d, want %d", tt.key, tt.elem, got, tt.line)
		}
	}
}

func TestResolveGateway(t *testing.T) {
	on := mustParse(t, "[routing]\ngateway = true\n")
	off := mustParse(t, "")
	offInFile := mustParse(t, "[routing]\ngateway = false\n")
	onInCode := Default()
	onInCode.Routing.Gateway = true
	tests := []struct {
		name   string
		cfg    *Config
		env    *string // nil: unset
		want   bool
		source string
	}{
		{"unset uses config on", on, nil, true, "routing.gateway"},
		{"unset uses config off", offInFile, nil, false, "routing.gateway"},
		{"unset and not in the file is the default", off, nil, false, "default"},
		{"empty uses config", on, ptr(""), true, "routing.gateway"},
		{"1", off, ptr("1"), true, GatewayEnv},
		{"0", on, ptr("0"), false, GatewayEnv},
		{"true", off, ptr("true"), true, GatewayEnv},
		{"false", on, ptr("false"), false, GatewayEnv},
		{"TRUE", off, ptr("TRUE"), true, GatewayEnv},
		{"spaces", off, ptr(" 1 "), true, GatewayEnv},
		{"nil config", nil, nil, false, "default"},
		{"set in code", onInCode, nil, true, "routing.gateway"},
		{"default config", Default(), nil, false, "default"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, source, err := ResolveGateway(tt.cfg, fakeEnv(tt.env))
			if err != nil || got != tt.want || source != tt.source {
				t.Errorf("ResolveGateway = %v, %q, %v; want %v, %q, nil", got, source, err, tt.want, tt.source)
			}
		})
	}

	for _, bad := range []string{"yes", "on", "2", "tru"} {
		_, _, err := ResolveGateway(on, fakeEnv(ptr(bad)))
		if err == nil {
			t.Errorf("ResolveGateway(%q) succeeded, want an error", bad)
			continue
		}
		for _, want := range []string{"config: ", GatewayEnv, `"` + bad + `"`, "1, 0, true or false"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("ResolveGateway(%q) error %q does not mention %q", bad, err, want)
			}
		}
	}
}

func ptr(s string) *string { return &s }

func TestWhereNamesTheLineOfAKeyInTheFile(t *testing.T) {
	c, err := Parse([]byte("[llm]\nprovider = \"offline\"\n\n[server]\nlisten = \"127.0.0.1:9000\"\n"), "hh.toml", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{
		"server.listen":        "hh.toml:5",
		"llm.provider":         "hh.toml:2",
		"routing.gateway":      "",
		"server.drain_timeout": "",
	} {
		if got := c.Where(key); got != want {
			t.Errorf("Where(%q) = %q, want %q", key, got, want)
		}
	}
	if got := Default().Where("server.listen"); got != "" {
		t.Errorf("Default().Where = %q, want \"\"", got)
	}
}

func fakeEnv(v *string) func(string) string {
	return func(name string) string {
		if name != GatewayEnv || v == nil {
			return ""
		}
		return *v
	}
}

func TestClosest(t *testing.T) {
	tests := []struct{ in, want string }{
		{"timout", "timeout"},
		{"Timeout", "timeout"},
		{"tool_timout", "tool_timeout"},
		{"sha265", "sha256"},
		{"xyz", ""},
		{"ev", "env"},
		{"x", ""},
	}
	for _, tt := range tests {
		if got := closest(tt.in, entryKeys); got != tt.want {
			t.Errorf("closest(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
