package agenttest

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
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

// pathOutside is a guard args_match pattern matching a call whose "path"
// argument is not under dir. RE2 has no negative lookahead, so it spells
// out every way of leaving the prefix dir+"/": ending early, or differing
// at some byte.
func pathOutside(dir string) string {
	prefix := dir + "/"
	alts := make([]string, 0, len(prefix))
	for i := 0; i < len(prefix); i++ {
		alts = append(alts, fmt.Sprintf(`%s(?:"|[^"\x{%x}])`, regexp.QuoteMeta(prefix[:i]), prefix[i]))
	}
	return `"path":"(?:` + strings.Join(alts, "|") + `)`
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
`, binDir, mcpWriteTool, pathOutside(allowed), mcpGuardReason, node, script, root)
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

// mcpModel is the fake model of the MCP scenario: offered write, it
// writes inside then outside, one call at a time, and answers quoting the
// results it got.
func mcpModel(write, inside, outside string) model {
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
		if !slices.Contains(tools, write) {
			return reply{Text: fmt.Sprintf("agenttest: %s is not offered (tools: %s)", write, strings.Join(tools, ", "))}
		}
		var results []string
		for _, it := range conv[last+1:] {
			if it.Kind == "result" {
				results = append(results, it.Content)
			}
		}
		switch len(results) {
		case 0:
			return reply{Calls: []call{{ID: "toolu_agenttest_inside", Name: write, Args: jsonArgs(obj{"path": inside, "content": "written through hookhost"})}}}
		case 1:
			return reply{Calls: []call{{ID: "toolu_agenttest_outside", Name: write, Args: jsonArgs(obj{"path": outside, "content": "overwritten"})}}}
		}
		return reply{Text: finalPrefix + strings.Join(results, " | ")}
	}
}

// anthropicToolResults is every tool result in an Anthropic Messages
// request body, by tool_use_id.
func anthropicToolResults(t *testing.T, body []byte) map[string]item {
	t.Helper()
	var r struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatalf("a request upstream is not JSON: %v", err)
	}
	out := map[string]item{}
	for _, m := range r.Messages {
		var blocks []struct {
			Type      string          `json:"type"`
			ToolUseID string          `json:"tool_use_id"`
			Content   json.RawMessage `json:"content"`
			IsError   bool            `json:"is_error"`
		}
		if json.Unmarshal(m.Content, &blocks) != nil {
			continue
		}
		for _, b := range blocks {
			if b.Type == "tool_result" {
				out[b.ToolUseID] = item{Kind: "result", Role: m.Role, ID: b.ToolUseID, Content: text(b.Content), IsError: b.IsError}
			}
		}
	}
	return out
}

// TestClaudeCodeMCPThroughHookhost runs Claude Code headless with
// hookhost mcp serve as its MCP server (--mcp-config), wrapping the
// reference filesystem server: the model's write inside the allowed
// folder goes through to the server, its write outside is blocked by the
// guard, whose message comes back to the model as the tool's error result,
// and the file outside is untouched.
func TestClaudeCodeMCPThroughHookhost(t *testing.T) {
	a := agents[slices.IndexFunc(agents, func(a agent) bool { return a.name == "claude-code" })]
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
	cfgDir := t.TempDir()
	hookhostConfig := filepath.Join(cfgDir, "hookhost.toml")
	mcpJSON := filepath.Join(cfgDir, "guarded.json")
	for path, content := range map[string]string{
		hookhostConfig: mcpConfig(node, script, root, allowed),
		mcpJSON:        claudeMCPConfig(filepath.Join(binDir, "hookhost"), hookhostConfig),
	} {
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	up := newUpstream(t, messages)
	write := claudeMCPTool(mcpServerName, mcpWriteTool)
	up.use(mcpModel(write, inside, outside))
	// Claude Code talks to the fake model directly: the block can only
	// have come through its MCP server, hookhost.
	a.command = func(t *testing.T, root, home, dir, model, prompt string) ([]string, []string) {
		args := append([]string{"-p", prompt, "--model", model, "--output-format", "text"}, claudeMCPArgs(mcpJSON, write)...)
		env := append(claudeEnv(root, model), "ANTHROPIC_API_KEY="+clientKey, "DISABLE_TELEMETRY=1", "DISABLE_AUTOUPDATER=1", "DISABLE_ERROR_REPORTING=1",
			// Claude Code would otherwise offer MCP tools only through its
			// tool search, which the fake model does not do.
			"ENABLE_TOOL_SEARCH=false")
		return args, env
	}
	dir := t.TempDir()
	out := runAgent(t, a, up.srv.URL, dir, a.model, markMCP+" Save a draft in the allowed folder, then update notes.txt.")
	reqs := up.requests()
	defer func() {
		if t.Failed() || os.Getenv(logEnv) != "" {
			t.Logf("%s stdout: %s\nstderr: %s", a.name, out.stdout, out.stderr)
			for i, rq := range reqs {
				tools, _ := toolsOf(messages, rq.Body)
				t.Logf("request %d upstream: tools %v", i+1, tools)
			}
		}
	}()

	offered := false
	results := map[string]item{}
	for _, rq := range reqs {
		if tools, _ := toolsOf(messages, rq.Body); slices.Contains(tools, write) {
			offered = true
		}
		for id, r := range anthropicToolResults(t, rq.Body) {
			results[id] = r
		}
	}
	if !offered {
		t.Fatalf("no request upstream offered %s: Claude Code did not get hookhost's tools", write)
	}

	// The write inside went through hookhost to the server.
	if r, ok := results["toolu_agenttest_inside"]; !ok || r.IsError {
		t.Errorf("the write inside the folder: %+v (sent: %v), want a result that is no error", r, ok)
	}
	if b, err := os.ReadFile(inside); err != nil || string(b) != "written through hookhost" {
		t.Errorf("the file inside the folder holds %q (%v): the allowed write did not reach the server", b, err)
	}

	// The write outside was blocked: its result is the guard's message,
	// as an error, and the file is untouched.
	want := "blocked by guard: " + mcpGuardReason
	if r, ok := results["toolu_agenttest_outside"]; !ok || !r.IsError || !strings.Contains(r.Content, want) {
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

// TestREADMEMCPRecipe holds the README's recipe for giving Claude Code
// hookhost as its MCP server equal to what TestClaudeCodeMCPThroughHookhost
// runs: the same --mcp-config and flags, for hookhost on the PATH with its
// config in /srv/hookhost.
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
	} {
		if !strings.Contains(readme, want) {
			t.Errorf("README.md's recipe for guarding Claude Code's MCP servers does not hold, as the test runs it:\n%s", want)
		}
	}
}
