package mcpgate

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hookhost/hookhost/hookbus"
	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/testenv"
)

// gatewayMarker makes the test binary a gateway serving MCP on stdio in
// front of the reference filesystem server, with a guard plugin that
// allows writes only under ROOT/allowed. Arguments: gatewayMarker ROOT
// NODE SERVER_JS.
const gatewayMarker = "mcpgate-gateway"

func runGatewayProcess(args []string) int {
	root, node, serverJS := args[0], args[1], args[2]
	log := hclog.New(&hclog.LoggerOptions{Output: os.Stderr, Level: hclog.Warn})
	allowed := filepath.Join(root, "allowed") + string(filepath.Separator)
	guard := &hooks.Funcs{
		Name:     "guard",
		Matchers: []string{"fs__*"},
		PreToolCallFunc: func(_ context.Context, req hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
			var a struct {
				Path string `json:"path"`
			}
			_ = json.Unmarshal(req.Arguments, &a)
			if strings.Contains(req.Name, "write") && !strings.HasPrefix(filepath.Clean(a.Path)+"/", allowed) {
				return &hooks.PreToolCallDecision{Block: &hooks.Block{Message: "guard: writes outside " + allowed + " are not allowed"}}, nil
			}
			return nil, nil
		},
	}
	bus, err := hookbus.New([]hookbus.Member{{Plugin: guard}}, hookbus.Config{Logger: log})
	if err != nil {
		log.Error("bus", "error", err)
		return 1
	}
	u, err := New(ServerSpec{Name: "fs", Command: node, Args: []string{serverJS, root}}, Options{Logger: log})
	if err != nil {
		log.Error("spec", "error", err)
		return 1
	}
	defer u.Close(context.Background())
	if err := u.Start(context.Background()); err != nil {
		log.Error("upstream", "error", err)
		return 1
	}
	g, err := NewGateway([]*Upstream{u}, GatewayOptions{Bus: bus, Logger: log})
	if err != nil {
		log.Error("gateway", "error", err)
		return 1
	}
	if err := g.ServeStdio(context.Background(), os.Stdin, os.Stdout); err != nil {
		log.Error("serve", "error", err)
		return 1
	}
	return 0
}

// mcptestPackages are what the test runs from mcptest/node_modules.
var mcptestPackages = []string{"@modelcontextprotocol/sdk", "@modelcontextprotocol/server-filesystem", "@modelcontextprotocol/server-everything"}

func needMCPTest(t *testing.T) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		testenv.Skip(t, "node is not on PATH, so the TypeScript MCP client and reference servers cannot run",
			"sudo apt-get install nodejs npm && (cd internal/mcpgate/mcptest && npm ci)", err.Error())
	}
	for _, pkg := range mcptestPackages {
		if _, err := os.Stat(filepath.Join("mcptest", "node_modules", pkg, "package.json")); err != nil {
			testenv.Skip(t, "the MCP test packages are not installed in internal/mcpgate/mcptest/node_modules",
				"make mcptest (or: cd internal/mcpgate/mcptest && npm ci)", "missing "+pkg)
		}
	}
	return node
}

// TestTypeScriptClientThroughGatewayToFilesystemServer has the official
// TypeScript client call the reference filesystem server through the
// gateway over stdio: the guard blocks a write outside the allowed
// folder, the file is untouched, and a write inside goes through.
func TestTypeScriptClientThroughGatewayToFilesystemServer(t *testing.T) {
	node := needMCPTest(t)
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(root, "allowed"), 0o755); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(root, "notes.txt")
	if err := os.WriteFile(outside, []byte("original"), 0o644); err != nil {
		t.Fatal(err)
	}
	inside := filepath.Join(root, "allowed", "new.txt")
	serverJS, err := filepath.Abs(filepath.Join("mcptest", "node_modules", "@modelcontextprotocol", "server-filesystem", "dist", "index.js"))
	if err != nil {
		t.Fatal(err)
	}
	plan, _ := json.Marshal(map[string]any{
		"command": os.Args[0],
		"args":    []string{gatewayMarker, root, node, serverJS},
		"calls": []map[string]any{
			{"name": "fs__write_file", "arguments": map[string]any{"path": outside, "content": "overwritten"}},
			{"name": "fs__write_file", "arguments": map[string]any{"path": inside, "content": "hello"}},
			{"name": "fs__read_text_file", "arguments": map[string]any{"path": inside}},
		},
	})
	cmd := exec.Command(node, "client.mjs", string(plan))
	cmd.Dir = "mcptest"
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("TypeScript client: %v\n%s", err, out)
	}
	var got struct {
		Protocol string   `json:"protocol"`
		Tools    []string `json:"tools"`
		Results  []struct {
			IsError bool `json:"isError"`
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
		} `json:"results"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("client output %q: %v", out, err)
	}
	t.Logf("negotiated with the TypeScript client: %s; tools: %v", got.Protocol, got.Tools)
	if got.Protocol == "" {
		t.Error("the client negotiated no protocol version")
	}
	for _, want := range []string{"fs__write_file", "fs__read_text_file", "fs__list_directory"} {
		if !slices.Contains(got.Tools, want) {
			t.Errorf("tools %v lack %s", got.Tools, want)
		}
	}
	if len(got.Results) != 3 {
		t.Fatalf("results = %+v", got.Results)
	}
	blocked := got.Results[0]
	if !blocked.IsError || len(blocked.Content) != 1 || !strings.Contains(blocked.Content[0].Text, "guard: writes outside") {
		t.Errorf("write outside the folder = %+v, want the guard's block", blocked)
	}
	if b, _ := os.ReadFile(outside); string(b) != "original" {
		t.Errorf("the guarded file now holds %q", b)
	}
	if r := got.Results[1]; r.IsError {
		t.Errorf("write inside the folder failed: %+v", r)
	}
	if b, _ := os.ReadFile(inside); string(b) != "hello" {
		t.Errorf("the allowed write left %q", b)
	}
	if r := got.Results[2]; r.IsError || len(r.Content) == 0 || r.Content[0].Text != "hello" {
		t.Errorf("read back = %+v", r)
	}
}

// TestEverythingServerThroughGateway runs the reference "everything"
// server behind the gateway: its structured content, resource links and
// image reach the client exactly as the server sent them, with hooks
// looking on, and its progress notifications reach the client.
func TestEverythingServerThroughGateway(t *testing.T) {
	node := needMCPTest(t)
	serverJS, err := filepath.Abs(filepath.Join("mcptest", "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js"))
	if err != nil {
		t.Fatal(err)
	}
	u := startUpstream(t, ServerSpec{Name: "every", Command: node, Args: []string{serverJS, "stdio"}}, Options{})
	t.Logf("negotiated protocol version with server-everything over stdio: %s", u.Status().Protocol)
	var observed atomic.Int64
	looker := &hooks.Funcs{Name: "looker",
		PostToolCallFunc: func(context.Context, hooks.ToolCallOutcome) error { observed.Add(1); return nil },
		TransformToolResultFunc: func(context.Context, hooks.ToolCallOutcome) (*hooks.ToolResult, error) {
			return nil, nil
		}}
	var progress atomic.Int64
	cs := connect(t, newBus(t, looker), &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
		if req.Params.ProgressToken == "op" {
			progress.Add(1)
		}
	}}, u)
	for _, c := range []struct {
		tool string
		args map[string]any
		has  string
	}{
		{"get-structured-content", map[string]any{"location": "Chicago"}, `"structuredContent"`},
		{"get-resource-links", map[string]any{"count": 2}, `"type":"resource_link"`},
		{"get-tiny-image", map[string]any{}, `"type":"image"`},
	} {
		args, _ := json.Marshal(c.args)
		direct, err := u.CallTool(context.Background(), c.tool, args, nil)
		if err != nil {
			t.Fatalf("%s straight to the server: %v", c.tool, err)
		}
		want, _ := json.Marshal(direct)
		if !strings.Contains(string(want), c.has) {
			t.Fatalf("%s: the server's result lacks %s: %s", c.tool, c.has, want)
		}
		got, _ := json.Marshal(call(t, cs, "every__"+c.tool, c.args))
		if got, want := withoutEnvelope(t, got), withoutEnvelope(t, want); got != want {
			t.Errorf("%s through the gateway:\n got %s\nwant %s", c.tool, got, want)
		}
	}
	params := &mcp.CallToolParams{Name: "every__trigger-long-running-operation", Arguments: map[string]any{"duration": 0.2, "steps": 2}}
	params.SetProgressToken("op")
	res, err := cs.CallTool(context.Background(), params)
	if err != nil || res.IsError {
		t.Fatalf("long-running operation = %+v, %v", res, err)
	}
	if progress.Load() == 0 {
		t.Error("none of the server's progress notifications reached the client")
	}
	if observed.Load() == 0 {
		eventually(t, "post_tool_call to see the calls", func() bool { return observed.Load() > 0 })
	}
}
