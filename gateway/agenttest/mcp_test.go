package agenttest

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hookhost/hookhost/internal/mcpgate/mcptest"
)

// The MCP scenario: an agent CLI is given hookhost mcp serve as its MCP
// server, in front of the reference filesystem server with the guard
// plugin allowing writes only under a folder. The fake model writes a file
// inside the folder, then one outside it.
const (
	markMCP = "agenttest mcp-guard:"
	// mcpServerName is what the CLI's MCP config names hookhost, and
	// mcpWriteTool hookhost's name of the filesystem server's write_file.
	mcpServerName = "guarded"
	mcpWriteTool  = "fs__write_file"
	// mcpGuardReason ends the guard's block message.
	mcpGuardReason = "writes stay in the allowed folder"
	// The ids of the model's two calls.
	mcpCallInside, mcpCallOutside = "toolu_agenttest_inside", "toolu_agenttest_outside"
)

// mcptestDir holds the reference MCP servers (make mcptest installs them).
const mcptestDir = "../../internal/mcpgate/mcptest"

// needFilesystemServer returns node and the reference filesystem server's
// script; the agent CLI tests, which run only when asked, fail without
// them.
func needFilesystemServer(t *testing.T) (node, script string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is not on PATH: %v (%s)", err, installCommand)
	}
	script, err = filepath.Abs(filepath.Join(mcptestDir, "node_modules", "@modelcontextprotocol", "server-filesystem", "dist", "index.js"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(script); err != nil {
		t.Fatalf("the reference filesystem MCP server is not installed (%v): make mcptest (or: cd internal/mcpgate/mcptest && npm ci)", err)
	}
	return node, script
}

// mcpConfig is hookhost's config for hookhost mcp serve: the reference
// filesystem server on root as fs, and the guard refusing its writes
// outside allowed.
func mcpConfig(node, script, root, allowed string) string {
	return fmt.Sprintf(`[plugins]
enabled = ["guard"]
dir = %q

[plugins.entries.guard]
fail_closed = true

[plugins.entries.guard.config]
message = "blocked by guard: {reason}"
deny = [{ tool = %q, args_match = '%s', reason = %q }]

[mcp.servers.fs]
command = %q
args = [%q, %q]
`, binDir, mcpWriteTool, mcptest.PathOutside(allowed), mcpGuardReason, node, script, root)
}

// claudeMCPConfig is Claude Code's --mcp-config giving it hookhost (bin)
// as its MCP server with config. The README shows it.
func claudeMCPConfig(bin, config string) string {
	return fmt.Sprintf(`{"mcpServers": {%q: {"command": %q, "args": ["mcp", "serve", "-c", %q]}}}`, mcpServerName, bin, config)
}

// claudeMCPTool is how Claude Code names an MCP server's tool.
func claudeMCPTool(server, tool string) string { return "mcp__" + server + "__" + tool }

// claudeMCPArgs are the flags that run Claude Code headless with only the
// MCP servers of mcpConfigFile, allowed to call tool. The README shows
// them.
func claudeMCPArgs(mcpConfigFile, tool string) []string {
	return []string{"--mcp-config", mcpConfigFile, "--strict-mcp-config", "--allowedTools", tool}
}

// mcpModel is the fake model of the MCP scenario: once a request offers
// the tool named offered, it calls write for a file inside the folder,
// then for one outside it, one call at a time, and answers quoting the
// results it got.
func mcpModel(offered, write, inside, outside string) model {
	return func(conv []item, tools []string) reply {
		last := -1
		for i, it := range conv {
			if it.Kind == "text" && it.Role == "user" && strings.Contains(it.Content, markMCP) {
				last = i
			}
		}
		if last < 0 {
			return reply{Text: "agenttest side reply"}
		}
		if !slices.Contains(tools, offered) {
			return reply{Text: fmt.Sprintf("agenttest: %s is not offered (tools: %s)", offered, strings.Join(tools, ", "))}
		}
		var results []string
		for _, it := range conv[last+1:] {
			if it.Kind == "result" {
				results = append(results, it.Content)
			}
		}
		switch len(results) {
		case 0:
			return reply{Calls: []call{{ID: mcpCallInside, Name: write, Args: jsonArgs(obj{"path": inside, "content": "written through hookhost"})}}}
		case 1:
			return reply{Calls: []call{{ID: mcpCallOutside, Name: write, Args: jsonArgs(obj{"path": outside, "content": "overwritten"})}}}
		}
		return reply{Text: finalPrefix + strings.Join(results, " | ")}
	}
}

// codexMCPConfig is the entry of Codex's config.toml giving it hookhost
// (bin) as its MCP server with config. The README shows it.
func codexMCPConfig(bin, config string) string {
	return fmt.Sprintf("[mcp_servers.%s]\ncommand = %q\nargs = [\"mcp\", \"serve\", \"-c\", %q]\nrequired = true\n", mcpServerName, bin, config)
}

// mcpRun is what an agent CLI's MCP run is given: hookhost's binary and
// config, and the model's name of hookhost's write tool.
type mcpRun struct {
	bin, config string
	write       string
}

// runMCPGuard runs a headless with hookhost mcp serve as its MCP server,
// wrapping the reference filesystem server, against a fake upstream of
// proto that it talks to directly, so that a block can only have come
// through hookhost. offered is the name under which a request offers the
// write tool, write the name the model calls it by; answers, if not nil,
// rewrites each answer of the fake. command
// replaces a's command line, given what to run. The model's write inside
// the allowed folder must go through to the server; its write outside
// must be blocked by the guard, whose message comes back to the model as
// the tool's result (an error where proto can say so), with the file
// outside untouched.
func runMCPGuard(t *testing.T, a agent, proto, offered, write string, answers func([]byte) []byte,
	command func(m mcpRun) func(t *testing.T, root, home, dir, model, prompt string) ([]string, []string)) {
	t.Helper()
	needAgents(t, a)
	node, script := needFilesystemServer(t)

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
	inside, outside := filepath.Join(allowed, "draft.txt"), filepath.Join(root, "notes.txt")
	if err := os.WriteFile(outside, []byte("original"), 0o644); err != nil {
		t.Fatal(err)
	}
	hookhostConfig := filepath.Join(t.TempDir(), "hookhost.toml")
	if err := os.WriteFile(hookhostConfig, []byte(mcpConfig(node, script, root, allowed)), 0o600); err != nil {
		t.Fatal(err)
	}

	up := newUpstream(t, proto)
	up.use(mcpModel(offered, write, inside, outside))
	a.command = command(mcpRun{bin: filepath.Join(binDir, "hookhost"), config: hookhostConfig, write: write})
	base := up.baseURL()
	if answers != nil {
		base = rewriting(t, up.URL(), answers) + strings.TrimPrefix(base, up.URL())
	}
	out := runAgent(t, a, base, t.TempDir(), a.modelFor(proto), markMCP+" Save a draft in the allowed folder, then update notes.txt.")
	reqs := up.requests()
	defer func() {
		if t.Failed() || os.Getenv(logEnv) != "" {
			t.Logf("%s stdout: %s\nstderr: %s", a.name, out.stdout, out.stderr)
			for i, rq := range reqs {
				tools, _ := toolsOf(proto, rq.Body)
				t.Logf("request %d upstream: tools %v", i+1, tools)
			}
		}
	}()

	wasOffered := false
	results := map[string]item{}
	for _, rq := range reqs {
		if tools, _ := toolsOf(proto, rq.Body); slices.Contains(tools, offered) {
			wasOffered = true
		}
		conv, err := conversationOf(proto, rq.Body)
		if err != nil {
			t.Errorf("a request upstream: %v", err)
		}
		for _, it := range conv {
			if it.Kind == "result" {
				results[it.ID] = it
			}
		}
	}
	if !wasOffered {
		t.Fatalf("no request upstream offered %s: %s did not get hookhost's tools", offered, a.name)
	}

	// The write inside went through hookhost to the server.
	if r, ok := results[mcpCallInside]; !ok || r.IsError {
		t.Errorf("the write inside the folder: %+v (sent: %v), want a result that is no error", r, ok)
	}
	if b, err := os.ReadFile(inside); err != nil || string(b) != "written through hookhost" {
		t.Errorf("the file inside the folder holds %q (%v): the allowed write did not reach the server", b, err)
	}

	// The write outside was blocked: its result is the guard's message,
	// as an error where the protocol says so, and the file is untouched.
	want := "blocked by guard: " + mcpGuardReason
	if r, ok := results[mcpCallOutside]; !ok || (proto == messages && !r.IsError) || !strings.Contains(r.Content, want) {
		t.Errorf("the write outside the folder: %+v (sent: %v), want an error result holding %q", r, ok, want)
	}
	if b, err := os.ReadFile(outside); err != nil || string(b) != "original" {
		t.Errorf("the file outside the folder now holds %q (%v)", b, err)
	}
	if out.err != nil {
		t.Errorf("%s failed: %v", a.name, out.err)
	}
	if !strings.Contains(out.stdout, finalPrefix) || !strings.Contains(out.stdout, want) {
		t.Errorf("%s printed no final answer quoting %q", a.name, want)
	}
}

// rewriting is a proxy to target that passes each answer through
// rewrite.
func rewriting(t *testing.T, target string, rewrite func([]byte) []byte) string {
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(u)
	proxy.ModifyResponse = func(resp *http.Response) error {
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		body = rewrite(body)
		resp.Body = io.NopCloser(bytes.NewReader(body))
		resp.ContentLength = int64(len(body))
		resp.Header.Set("Content-Length", strconv.Itoa(len(body)))
		return nil
	}
	srv := httptest.NewServer(proxy)
	t.Cleanup(srv.Close)
	return srv.URL
}

func agentNamed(name string) agent {
	return agents[slices.IndexFunc(agents, func(a agent) bool { return a.name == name })]
}

// TestClaudeCodeMCPThroughHookhost runs Claude Code headless with
// hookhost mcp serve as its MCP server (--mcp-config), wrapping the
// reference filesystem server, as the README shows: the guard blocks a
// write outside the allowed folder, the block reaches the model, and the
// file is untouched (see runMCPGuard).
func TestClaudeCodeMCPThroughHookhost(t *testing.T) {
	write := claudeMCPTool(mcpServerName, mcpWriteTool)
	runMCPGuard(t, agentNamed("claude-code"), messages, write, write, nil,
		func(m mcpRun) func(t *testing.T, root, home, dir, model, prompt string) ([]string, []string) {
			return func(t *testing.T, root, home, dir, model, prompt string) ([]string, []string) {
				mcpJSON := filepath.Join(home, "guarded.json")
				if err := os.WriteFile(mcpJSON, []byte(claudeMCPConfig(m.bin, m.config)), 0o600); err != nil {
					t.Fatal(err)
				}
				args := append([]string{"-p", prompt, "--model", model, "--output-format", "text"}, claudeMCPArgs(mcpJSON, m.write)...)
				env := append(claudeEnv(root, model), "ANTHROPIC_API_KEY="+clientKey, "DISABLE_TELEMETRY=1", "DISABLE_AUTOUPDATER=1", "DISABLE_ERROR_REPORTING=1",
					// Claude Code would otherwise offer MCP tools only
					// through its tool search, which the fake model does
					// not do.
					"ENABLE_TOOL_SEARCH=false")
				return args, env
			}
		})
}

// TestCodexMCPThroughHookhost runs Codex headless with hookhost mcp serve
// as its MCP server ([mcp_servers] in its config.toml), wrapping the
// reference filesystem server, as the README shows: the guard blocks a
// write outside the allowed folder, the block reaches the model, and the
// file is untouched (see runMCPGuard).
func TestCodexMCPThroughHookhost(t *testing.T) {
	a := agentNamed("codex")
	// Codex offers an MCP server's tools in a namespace named for the
	// server, and a call of one names the namespace apart from the tool,
	// which the fake upstream's calls cannot: its call is named in full,
	// and split on the way to Codex.
	namespace, write := "mcp__"+mcpServerName, codexMCPTool(mcpServerName, mcpWriteTool)
	split := func(answer []byte) []byte {
		return bytes.ReplaceAll(answer, []byte(`"name":"`+write+`"`), []byte(`"name":"`+mcpWriteTool+`","namespace":"`+namespace+`"`))
	}
	runMCPGuard(t, a, responses, namespace, write, split,
		func(m mcpRun) func(t *testing.T, root, home, dir, model, prompt string) ([]string, []string) {
			return func(t *testing.T, root, home, dir, model, prompt string) ([]string, []string) {
				codexHome := filepath.Join(home, ".codex")
				if err := os.MkdirAll(codexHome, 0o700); err != nil {
					t.Fatal(err)
				}
				cfg := fmt.Sprintf(codexConfig, model, root) + "\n" + codexMCPConfig(m.bin, m.config)
				if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(cfg), 0o600); err != nil {
					t.Fatal(err)
				}
				args := []string{"exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "-C", dir, prompt}
				return args, []string{"CODEX_HOME=" + codexHome, "HOOKHOST_API_KEY=" + clientKey}
			}
		})
}

// codexMCPTool is how Codex names an MCP server's tool.
func codexMCPTool(server, tool string) string { return "mcp__" + server + "__" + tool }

// TestREADMEMCPRecipe holds the README's recipes for giving Claude Code
// and Codex hookhost as their MCP server equal to what
// TestClaudeCodeMCPThroughHookhost and TestCodexMCPThroughHookhost run:
// the same --mcp-config and flags, the same [mcp_servers] entry, for
// hookhost on the PATH with its config in /srv/hookhost.
func TestREADMEMCPRecipe(t *testing.T) {
	raw, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(raw)
	for _, want := range []string{
		claudeMCPConfig("hookhost", "/srv/hookhost/hookhost.toml"),
		"claude -p \"save a draft of the notes\" " + strings.Join(claudeMCPArgs("guarded.json", claudeMCPTool(mcpServerName, mcpWriteTool)), " "),
		"[mcp.servers.fs]",
		"```toml\n" + codexMCPConfig("hookhost", "/srv/hookhost/hookhost.toml") + "```",
	} {
		if !strings.Contains(readme, want) {
			t.Errorf("README.md's recipes for guarding an agent's MCP servers do not hold, as the test runs it:\n%s", want)
		}
	}
}
