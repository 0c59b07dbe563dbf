package config

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestMCPServersDecode(t *testing.T) {
	dir := t.TempDir()
	c, err := Parse([]byte(`[mcp]
expose_native = true

[mcp.servers.fs]
command = "bin/fs-server"
args = ["--root", "."]
env = ["HOME", "PATH"]
tools = ["read_*", "list_*"]
timeout = "30s"
max_result_size = 1048576
offer_to_model = true

[mcp.servers.remote]
url = "https://example.com/mcp"
headers = { X-Team = "infra" }
bearer_token_env = "REMOTE_TOKEN"
dir = "work"

[mcp.servers.off]
command = "npx"
enabled = false
`), "hookhost.toml", dir)
	if err != nil {
		t.Fatal(err)
	}
	if !c.MCP.ExposeNative {
		t.Error("expose_native not read")
	}
	fs := c.MCP.Servers["fs"]
	if fs.Name != "fs" || fs.Command != filepath.Join(dir, "bin/fs-server") || fs.Dir != dir {
		t.Errorf("fs: command %q dir %q name %q; want the path and dir resolved against %s", fs.Command, fs.Dir, fs.Name, dir)
	}
	if strings.Join(fs.Args, " ") != "--root ." || strings.Join(fs.Env, ",") != "HOME,PATH" || len(fs.Tools) != 2 ||
		fs.Timeout != 30*time.Second || fs.MaxResultSize != 1<<20 || !fs.OfferToModel || !fs.IsEnabled() {
		t.Errorf("fs decoded as %+v", fs)
	}
	if fs.Source.Line != 4 || fs.Source.File != "hookhost.toml" {
		t.Errorf("fs source %+v, want hookhost.toml line 4", fs.Source)
	}
	r := c.MCP.Servers["remote"]
	if r.URL != "https://example.com/mcp" || r.Headers["X-Team"] != "infra" || r.BearerTokenEnv != "REMOTE_TOKEN" || r.Dir != filepath.Join(dir, "work") {
		t.Errorf("remote decoded as %+v", r)
	}
	if off := c.MCP.Servers["off"]; off.Command != "npx" || off.IsEnabled() {
		t.Errorf("off: command %q (a program name stays for PATH), enabled %v", off.Command, off.IsEnabled())
	}
	var names []string
	for _, s := range c.MCP.EnabledServers() {
		names = append(names, s.Name)
	}
	if strings.Join(names, ",") != "fs,remote" {
		t.Errorf("enabled servers %v, want fs,remote", names)
	}
	if err := c.MCP.Servers["fs"].Spec().Validate(); err != nil {
		t.Errorf("the decoded spec does not validate: %v", err)
	}
}

func TestMCPServersRefused(t *testing.T) {
	for _, c := range []struct{ name, src, want string }{
		{"bad duration", "[mcp.servers.fs]\ncommand = \"x\"\n\ntimeout = \"2x\"\n",
			`config: hookhost.toml:4: mcp.servers.fs.timeout: bad duration "2x" (use Go durations such as "500ms" or "2s")`},
		{"misspelt key", "[mcp.servers.fs]\ncomand = \"x\"\n",
			`config: hookhost.toml:2: mcp.servers.fs.comand: unknown key (did you mean command?)`},
		{"misspelt mcp key", "[mcp]\nexpose_nativ = true\n",
			`config: hookhost.toml:2: mcp.expose_nativ: unknown key (did you mean expose_native?)`},
		{"neither command nor url", "[mcp]\n[mcp.servers.fs]\nenabled = true\n",
			`config: hookhost.toml:2: mcp.servers.fs: neither command nor url is set (set command (and args) for a local server, or url for a remote one)`},
		{"both", "[mcp.servers.fs]\ncommand = \"x\"\nurl = \"https://e.com/mcp\"\n",
			`config: hookhost.toml:3: mcp.servers.fs.url: both command and url are set (keep command for a local server or url for a remote one)`},
		{"bad url", "[mcp.servers.r]\nurl = \"ftp://e.com\"\n",
			`config: hookhost.toml:2: mcp.servers.r.url: "ftp://e.com" is not an http(s) URL`},
		{"bad server name", "[mcp.servers.a__b]\ncommand = \"x\"\n",
			`config: hookhost.toml:1: mcp.servers.a__b: server name "a__b" cannot namespace tools`},
		{"env with a value", "[mcp.servers.fs]\ncommand = \"x\"\nenv = [\"TOKEN=abc\"]\n",
			`config: hookhost.toml:3: mcp.servers.fs.env: item 1 looks like NAME=value`},
		{"headers on stdio", "[mcp.servers.fs]\ncommand = \"x\"\nheaders = { A = \"b\" }\n",
			`config: hookhost.toml:3: mcp.servers.fs.headers: headers apply to a url server only`},
		{"bad glob", "[mcp.servers.fs]\ncommand = \"x\"\ntools = [\"[\"]\n",
			`config: hookhost.toml:3: mcp.servers.fs.tools: "[" is not a valid glob`},
		{"enabled not a bool", "[mcp.servers.fs]\ncommand = \"x\"\nenabled = \"yes\"\n",
			`config: hookhost.toml:3: mcp.servers.fs.enabled: expected true or false, got string "yes"`},
		{"size out of range", "[mcp.servers.fs]\ncommand = \"x\"\nmax_result_size = 0\n",
			`config: hookhost.toml:3: mcp.servers.fs.max_result_size: must be between 1 and`},
		{"args not a list", "[mcp.servers.fs]\ncommand = \"x\"\nargs = \"-v\"\n",
			`config: hookhost.toml:3: mcp.servers.fs.args: expected an array of strings, got string "-v" (write args = ["-v"])`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.src), "hookhost.toml", t.TempDir())
			if err == nil || !strings.HasPrefix(err.Error(), c.want) {
				t.Errorf("got  %v\nwant %s...", err, c.want)
			}
		})
	}
}
