package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hookhost/hookhost/internal/mcpgate/mcptest"
	"github.com/hookhost/hookhost/internal/syncbuf"
	"github.com/hookhost/hookhost/internal/testenv"
)

// mcptestDir holds the official TypeScript SDK's client script and the
// reference MCP servers, installed by make mcptest.
const mcptestDir = "../../internal/mcpgate/mcptest"

// needMCPTest returns node and the reference filesystem server's script,
// or stops the test when they are not installed.
func needMCPTest(t *testing.T) (node, filesystemJS string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		testenv.Skip(t, "node is not on PATH, so the TypeScript MCP client and reference servers cannot run",
			"sudo apt-get install nodejs npm && make mcptest", err.Error())
	}
	for _, pkg := range []string{"@modelcontextprotocol/sdk", "@modelcontextprotocol/server-filesystem"} {
		if _, err := os.Stat(filepath.Join(mcptestDir, "node_modules", pkg, "package.json")); err != nil {
			testenv.Skip(t, "the MCP test packages are not installed in internal/mcpgate/mcptest/node_modules",
				"make mcptest (or: cd internal/mcpgate/mcptest && npm ci)", "missing "+pkg)
		}
	}
	filesystemJS, err = filepath.Abs(filepath.Join(mcptestDir, "node_modules", "@modelcontextprotocol", "server-filesystem", "dist", "index.js"))
	if err != nil {
		t.Fatal(err)
	}
	return node, filesystemJS
}

// buildExamplePlugins builds the named example plugins into one plugins
// directory.
func buildExamplePlugins(t *testing.T, names ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range names {
		if out, err := exec.Command("go", "build", "-o", filepath.Join(dir, name), "../../examples/"+name).CombinedOutput(); err != nil {
			t.Fatalf("building the %s plugin: %v\n%s", name, err, out)
		}
	}
	return dir
}

// filesystemSetup is a folder served by the reference filesystem server
// behind hookhost, with the guard, cache and redactor example plugins.
type filesystemSetup struct {
	root, allowed string
	config        string // the hookhost config file
}

// guardedFilesystem writes a hookhost config fronting the reference
// filesystem server on a new folder: the guard blocks writes outside its
// allowed/ subfolder, the cache answers repeated reads of a file from
// memory, and the redactor masks secrets in every result. plugins is the
// directory they were built into; extra is added to the config.
func guardedFilesystem(t *testing.T, node, filesystemJS, plugins, extra string) filesystemSetup {
	t.Helper()
	// The filesystem server resolves symbolic links in the paths it is
	// given, so the test names the folder as the server will.
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	allowed := filepath.Join(root, "allowed")
	if err := os.Mkdir(allowed, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, fmt.Sprintf(`[llm]
provider = "offline"
model = "offline-small"

[plugins]
enabled = ["guard", "cache", "redactor"]
dir = %q

[plugins.entries.guard.config]
message = "blocked by guard: {reason}"
deny = [{ tool = "fs__write_file", args_match = '%s', reason = "writes stay in %s" }]

[plugins.entries.cache.config]
tools = ["fs__read_text_file"]
ttl = "10m"

[mcp.servers.fs]
command = %q
args = [%q, %q]
%s`, plugins, mcptest.PathOutside(allowed), allowed, node, filesystemJS, root, extra))
	return filesystemSetup{root: root, allowed: allowed, config: cfg}
}

type mcpResult struct {
	IsError bool `json:"isError"`
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
}

func (r mcpResult) text() string {
	var b strings.Builder
	for _, c := range r.Content {
		b.WriteString(c.Text)
	}
	return b.String()
}

// runTypeScriptClient runs the official TypeScript SDK's client
// (mcptest/client.mjs) on plan and returns what it printed.
func runTypeScriptClient(t *testing.T, node string, plan map[string]any) (protocol string, tools []string, results []mcpResult) {
	t.Helper()
	arg, err := json.Marshal(plan)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, "client.mjs", string(arg))
	cmd.Dir = mcptestDir
	var stderr syncbuf.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("TypeScript client: %v\nstdout: %s\nstderr:\n%s", err, out, stderr.String())
	}
	var got struct {
		Protocol string      `json:"protocol"`
		Tools    []string    `json:"tools"`
		Results  []mcpResult `json:"results"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("client output %q: %v\nstderr:\n%s", out, err, stderr.String())
	}
	return got.Protocol, got.Tools, got.Results
}

// The TypeScript SDK's client, over stdio (hookhost mcp serve) and over
// Streamable HTTP (/mcp on hookhost serve, with an inbound key), calls the
// reference filesystem server through hookhost with the guard, cache and
// redactor example plugins: the guard's block comes back as an error
// result and the file is untouched; a repeated read is answered by the
// cache, which the server was not asked for, since the file changed on
// disk in between; a secret the server read is masked.
func TestTypeScriptClientThroughHookhostToFilesystemServer(t *testing.T) {
	node, filesystemJS := needMCPTest(t)
	bin := hookhostBinary(t)
	plugins := buildExamplePlugins(t, "guard", "cache", "redactor")
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			const key = "inbound-key-for-the-mcp-test"
			extra := ""
			if transport == "http" {
				t.Setenv("HOOKHOST_TEST_MCP_KEYS", key)
				extra = "\n[server]\napi_key_env = \"HOOKHOST_TEST_MCP_KEYS\"\n"
			}
			fs := guardedFilesystem(t, node, filesystemJS, plugins, extra)
			outside := filepath.Join(fs.root, "notes.txt")
			counter := filepath.Join(fs.allowed, "counter.txt")
			secrets := filepath.Join(fs.allowed, "app.env")
			for path, content := range map[string]string{
				outside: "original",
				counter: "v1",
				secrets: "REGION=eu-west-1\nOPENAI_API_KEY=sk-proj-Zx8Qw3Er5Ty7Ui9Op1As2Df4Gh6Jk8L\nDB_PASSWORD=correct-horse-battery\n",
			} {
				if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			calls := []map[string]any{
				{"name": "fs__write_file", "arguments": map[string]any{"path": outside, "content": "overwritten"}},
				{"name": "fs__read_text_file", "arguments": map[string]any{"path": counter}},
				{"name": "fs__write_file", "arguments": map[string]any{"path": counter, "content": "v2"}},
				{"name": "fs__read_text_file", "arguments": map[string]any{"path": counter}},
				{"name": "fs__read_text_file", "arguments": map[string]any{"path": counter, "head": 1}},
				{"name": "fs__read_text_file", "arguments": map[string]any{"path": secrets}},
			}
			plan := map[string]any{"calls": calls}
			var serveLog *syncbuf.Buffer
			if transport == "stdio" {
				plan["command"], plan["args"] = bin, []string{"mcp", "serve", "-c", fs.config}
			} else {
				var base string
				base, serveLog = startServeProcess(t, bin, fs.config)
				plan["url"], plan["headers"] = base+"/mcp", map[string]string{"Authorization": "Bearer " + key}
			}
			if transport == "http" {
				// The TypeScript client with a wrong key is refused.
				wrong, _ := json.Marshal(map[string]any{"url": plan["url"], "headers": map[string]string{"Authorization": "Bearer wrong-key"}, "calls": []any{}})
				cmd := exec.Command(node, "client.mjs", string(wrong))
				cmd.Dir = mcptestDir
				if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "code: 401") || !strings.Contains(string(out), "invalid_api_key") {
					t.Errorf("the TypeScript client with a wrong key: %v, want refused with a 401\n%s", err, out)
				}
			}
			protocol, tools, results := runTypeScriptClient(t, node, plan)
			t.Logf("negotiated %s with the TypeScript client over %s; tools: %v", protocol, transport, tools)
			if serveLog != nil && t.Failed() {
				t.Logf("hookhost serve:\n%s", serveLog.String())
			}
			if protocol == "" {
				t.Error("the client negotiated no protocol version")
			}
			for _, want := range []string{"fs__write_file", "fs__read_text_file", "fs__list_directory"} {
				if !slices.Contains(tools, want) {
					t.Errorf("tools %v lack %s", tools, want)
				}
			}
			if len(results) != len(calls) {
				t.Fatalf("%d results for %d calls: %+v", len(results), len(calls), results)
			}

			blocked := results[0]
			if want := "blocked by guard: writes stay in " + fs.allowed; !blocked.IsError || blocked.text() != want {
				t.Errorf("write outside the folder: isError %v, %q; want the guard's block %q", blocked.IsError, blocked.text(), want)
			}
			if b, err := os.ReadFile(outside); err != nil || string(b) != "original" {
				t.Errorf("the file the guard kept the write from now holds %q (%v)", b, err)
			}

			if r := results[1]; r.IsError || r.text() != "v1" {
				t.Errorf("first read: isError %v, %q; want v1", r.IsError, r.text())
			}
			if r := results[2]; r.IsError {
				t.Errorf("write inside the folder: %q", r.text())
			}
			if b, err := os.ReadFile(counter); err != nil || string(b) != "v2" {
				t.Fatalf("the allowed write left %q (%v), want v2", b, err)
			}
			// The server would read v2; only the cache still has v1.
			if r := results[3]; r.IsError || r.text() != "v1" {
				t.Errorf("repeated read: isError %v, %q; want v1 from the cache, not the server", r.IsError, r.text())
			}
			// Other arguments are another entry, so the server answers.
			if r := results[4]; r.IsError || r.text() != "v2" {
				t.Errorf("read with head=1: isError %v, %q; want v2 from the server", r.IsError, r.text())
			}

			redacted := results[5]
			if redacted.IsError {
				t.Fatalf("reading the secrets: %q", redacted.text())
			}
			for _, secret := range []string{"sk-proj-Zx8Qw3Er5Ty7Ui9Op1As2Df4Gh6Jk8L", "correct-horse-battery"} {
				if strings.Contains(redacted.text(), secret) {
					t.Errorf("the secret %s reached the client: %q", secret, redacted.text())
				}
			}
			for _, want := range []string{"REGION=eu-west-1", "OPENAI_API_KEY=[REDACTED:openai_key]", "DB_PASSWORD=[REDACTED:secret_assignment]"} {
				if !strings.Contains(redacted.text(), want) {
					t.Errorf("the redacted file lacks %q: %q", want, redacted.text())
				}
			}
		})
	}
}

// startServeProcess runs hookhost serve on a free port with config and
// returns its base URL and all it writes to stderr. It is stopped with
// SIGTERM when the test ends, and must exit cleanly.
func startServeProcess(t *testing.T, bin, config string) (string, *syncbuf.Buffer) {
	t.Helper()
	cmd := exec.Command(bin, "serve", "-listen", "127.0.0.1:0", "-c", config)
	// A pipe of our own rather than StderrPipe: Wait then waits for the
	// copy, which waitServing's reader keeps draining.
	stderr, pw := io.Pipe()
	all := &syncbuf.Buffer{}
	cmd.Stderr = io.MultiWriter(pw, all)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() {
		err := cmd.Wait()
		pw.Close()
		exited <- err
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("hookhost serve exited with %v after SIGTERM\n%s", err, all.String())
			}
		case <-time.After(time.Minute):
			_ = cmd.Process.Kill()
			t.Errorf("hookhost serve did not exit within a minute of SIGTERM\n%s", all.String())
		}
	})
	var log strings.Builder
	return waitServing(t, stderr, &log), all
}
