package main

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hookhost/hookhost/internal/syncbuf"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// buildMCPFake builds the MCP server of testdata/mcpfake.
func buildMCPFake(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "mcpfake")
	if out, err := exec.Command("go", "build", "-o", bin, "./testdata/mcpfake").CombinedOutput(); err != nil {
		t.Fatalf("building the fake MCP server: %v\n%s", err, out)
	}
	return bin
}

// buildGuard builds the guard example plugin into a plugins directory.
func buildGuard(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("go", "build", "-o", filepath.Join(dir, "guard"), "../../examples/guard").CombinedOutput(); err != nil {
		t.Fatalf("building the guard plugin: %v\n%s", err, out)
	}
	return dir
}

// guardedConfig fronts the fake server, its write calls logged to
// writeLog, with the guard refusing writes outside /tmp/ok and, by the
// calls' origin, any text "secret" on their way to the fake server.
func guardedConfig(t *testing.T, writeLog string) string {
	fake, plugins := buildMCPFake(t), buildGuard(t)
	t.Setenv("MCPFAKE_LOG", writeLog)
	return writeConfig(t, `[plugins]
enabled = ["guard"]
dir = "`+plugins+`"

[plugins.entries.guard.config]
message = "blocked by guard: {reason}"
deny = [
  { tool = "fake__write", args_match = '"path":"(?:[^/]|/[^t]|/t[^m]|/tm[^p])', reason = "writes stay in /tmp" },
  { origin = "mcp:fake", args_match = 'secret', reason = "secrets stay away from the fake server" },
]

[mcp.servers.fake]
command = "`+fake+`"
env = ["MCPFAKE_LOG"]
`)
}

func resultText(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// An MCP client that runs hookhost mcp serve as its server sees the fake
// server's tools under its namespace, calls them through hookhost, and
// gets the guard's block instead of a write the guard refuses, which
// never reaches the server.
func TestMCPServeOverStdio(t *testing.T) {
	writeLog := filepath.Join(t.TempDir(), "writes")
	cfg := guardedConfig(t, writeLog)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.Command(hookhostBinary(t), "mcp", "serve", "-c", cfg)
	// Written by exec's copying goroutine while the test reads it.
	var stderr syncbuf.Buffer
	cmd.Stderr = &stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connecting to hookhost mcp serve: %v\n%s", err, stderr.String())
	}
	defer cs.Close()

	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
	}
	if strings.Join(names, ",") != "fake__echo,fake__write" {
		t.Errorf("tools %v, want fake__echo,fake__write", names)
	}

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "fake__echo", Arguments: map[string]any{"text": "hi"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || resultText(res) != "echo: hi" {
		t.Errorf("fake__echo: isError %v, %q; want echo: hi", res.IsError, resultText(res))
	}

	// The guard, a plugin process, is told the call goes to the server
	// named fake: its rule keyed by that origin blocks.
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "fake__echo", Arguments: map[string]any{"text": "a secret"}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || !strings.Contains(resultText(res), "blocked by guard: secrets stay away from the fake server") {
		t.Errorf("fake__echo of a secret: isError %v, %q; want the guard's block by origin", res.IsError, resultText(res))
	}

	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "fake__write", Arguments: map[string]any{"path": "/etc/passwd"}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || !strings.Contains(resultText(res), "blocked by guard: writes stay in /tmp") {
		t.Errorf("fake__write outside /tmp: isError %v, %q; want the guard's block", res.IsError, resultText(res))
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "fake__write", Arguments: map[string]any{"path": "/tmp/ok"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || resultText(res) != "wrote /tmp/ok" {
		t.Errorf("fake__write in /tmp: isError %v, %q; want it written", res.IsError, resultText(res))
	}
	got, err := os.ReadFile(writeLog)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != "/tmp/ok\n" {
		t.Errorf("the server saw writes %q, want only /tmp/ok", got)
	}
	// Closing waits for hookhost to exit, so all it wrote to stderr has
	// been copied by then.
	if err := cs.Close(); err != nil {
		t.Logf("closing the session: %v", err)
	}
	if !strings.Contains(stderr.String(), "serving MCP on stdio: 2 tools from MCP servers fake") {
		t.Errorf("no start line on stderr:\n%s", stderr.String())
	}
}

// mcp list and check start each server and show its tools; a server that
// cannot start fails both, with the reason.
func TestMCPListAndCheck(t *testing.T) {
	fake := buildMCPFake(t)
	cfg := writeConfig(t, `[mcp.servers.fake]
command = "`+fake+`"
tools = ["echo"]

[mcp.servers.offered]
command = "`+fake+`"
offer_to_model = true

[mcp.servers.off]
command = "./missing"
enabled = false
`)
	code, out, errOut := runCLI(t, "", "mcp", "list", "-c", cfg)
	if code != 0 || !strings.Contains(out, "fake") || !strings.Contains(out, "running") || !strings.Contains(out, "fake__echo") || strings.Contains(out, "fake__write") || strings.Contains(out, "off ") {
		t.Errorf("mcp list: exit %d\n%s\n%s", code, out, errOut)
	}
	// The OFFERED column says whose tools join the model's.
	rows := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			rows[f[0]] = f
		}
	}
	header := rows["NAME"]
	col := slices.Index(header, "OFFERED")
	if col < 0 || len(rows["fake"]) <= col || len(rows["offered"]) <= col || rows["fake"][col] != "no" || rows["offered"][col] != "yes" {
		t.Errorf("mcp list: want an OFFERED column, no for fake and yes for offered:\n%s", out)
	}
	code, out, errOut = runCLI(t, "", "mcp", "check", "-c", cfg)
	if code != 0 || !strings.Contains(out, "ok") || !strings.Contains(out, "1 tools") {
		t.Errorf("mcp check: exit %d\n%s\n%s", code, out, errOut)
	}

	bad := writeConfig(t, "[mcp.servers.gone]\ncommand = \"./missing\"\n")
	for _, sub := range []string{"list", "check"} {
		code, out, errOut = runCLI(t, "", "mcp", sub, "-c", bad)
		if code != 1 || !strings.Contains(out, "FAILED") || !strings.Contains(out, "missing") || !strings.Contains(errOut, "1 of 1 MCP servers failed") {
			t.Errorf("mcp %s of a missing server: exit %d\n%s\n%s", sub, code, out, errOut)
		}
	}

	code, _, errOut = runCLI(t, "", "mcp", "frob")
	if code != 2 || !strings.Contains(errOut, "serve, list or check") {
		t.Errorf("mcp frob: exit %d, %s", code, errOut)
	}
	code, _, errOut = runCLI(t, "", "mcp", "check", "-c", writeConfig(t, "[mcp.servers.x]\ncommand = \"a\"\ntimeout = \"2x\"\n"))
	if code != 2 || !strings.Contains(errOut, `hookhost.toml:3: mcp.servers.x.timeout: bad duration "2x"`) {
		t.Errorf("mcp check with a bad config: exit %d, %s", code, errOut)
	}
}

// keyed adds an inbound key to every request.
type keyed struct{ key string }

func (k keyed) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+k.key)
	return http.DefaultTransport.RoundTrip(r)
}

// hookhost serve offers the MCP gateway at /mcp over Streamable HTTP,
// behind the inbound keys: a client with the key lists and calls the
// guarded tools, one with a wrong key or none is refused.
func TestMCPOverHTTPOnServe(t *testing.T) {
	writeLog := filepath.Join(t.TempDir(), "writes")
	cfg := guardedConfig(t, writeLog)
	src, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOOKHOST_TEST_MCP_KEYS", "right-key")
	base, _, out, sigs, done := startServe(t, string(src)+"\n[server]\napi_key_env = \"HOOKHOST_TEST_MCP_KEYS\"\n")
	defer func() {
		sigs <- os.Interrupt
		if err := <-done; err != nil {
			t.Errorf("serve: %v\n%s", err, out.String())
		}
	}()
	want := "hookhost: serving MCP on " + base + "/mcp"
	waitFor(t, "the line "+want, func() bool { return strings.Contains(out.String(), want) })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	connect := func(key string) (*mcp.ClientSession, error) {
		var hc *http.Client
		if key != "" {
			hc = &http.Client{Transport: keyed{key}}
		}
		client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
		return client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: hc}, nil)
	}
	for _, key := range []string{"", "wrong-key"} {
		if cs, err := connect(key); err == nil {
			cs.Close()
			t.Errorf("connected to /mcp with key %q", key)
		} else if !strings.Contains(err.Error(), "401") && !strings.Contains(strings.ToLower(err.Error()), "unauthorized") {
			t.Errorf("key %q refused with %v, want a 401", key, err)
		}
	}
	resp, err := http.Post(base+"/mcp", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("POST /mcp without a key: status %d, want 401", resp.StatusCode)
	}

	cs, err := connect("right-key")
	if err != nil {
		t.Fatalf("connecting with the key: %v\n%s", err, out.String())
	}
	defer cs.Close()
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Tools) != 2 || list.Tools[0].Name != "fake__echo" {
		t.Errorf("tools over /mcp: %+v", list.Tools)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "fake__echo", Arguments: map[string]any{"text": "over http"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || resultText(res) != "echo: over http" {
		t.Errorf("fake__echo over /mcp: isError %v, %q", res.IsError, resultText(res))
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "fake__write", Arguments: map[string]any{"path": "/etc/passwd"}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || !strings.Contains(resultText(res), "blocked by guard") {
		t.Errorf("fake__write over /mcp: isError %v, %q; want the guard's block", res.IsError, resultText(res))
	}
	if _, err := os.Stat(writeLog); !os.IsNotExist(err) {
		t.Errorf("the blocked write reached the server (%v)", err)
	}
}
