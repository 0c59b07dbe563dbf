package hookhost_test

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hookhost/hookhost"
	"github.com/hookhost/hookhost/config"
	"github.com/hookhost/hookhost/internal/mcpgate"
)

// Open starts the enabled MCP servers; one that does not start is
// reported and left out, as a plugin is, and Close stops the others.
func TestOpenStartsMCPServersAndSkipsAFailingOne(t *testing.T) {
	fake := filepath.Join(t.TempDir(), "mcpfake")
	build := exec.Command("go", "build", "-o", fake, "./cmd/hookhost/testdata/mcpfake")
	build.Dir = repoRoot
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the fake MCP server: %v\n%s", err, out)
	}
	cfg, err := config.Parse([]byte(`[mcp.servers.fake]
command = "`+fake+`"

[mcp.servers.broken]
command = "./missing"

[mcp.servers.off]
command = "./missing"
enabled = false
`), "hookhost.toml", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	h, err := hookhost.Open(context.Background(), cfg, hookhost.Options{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	sts := h.MCPServers()
	if len(sts) != 2 || sts[0].Name != "fake" || sts[0].State != mcpgate.StateRunning || strings.Join(sts[0].Tools, ",") != "fake__echo,fake__write" {
		t.Fatalf("MCP servers %+v, want fake running with its two tools first", sts)
	}
	if sts[1].Name != "broken" || sts[1].State != mcpgate.StateStopped || !strings.Contains(sts[1].Reason, "missing") {
		t.Errorf("broken server %+v, want stopped with the reason", sts[1])
	}
	errs := h.MCPStartErrors()
	var se *hookhost.MCPStartError
	if len(errs) != 1 || !errors.As(errs[0], &se) || se.Server != "broken" {
		t.Errorf("start errors %v, want one for broken", errs)
	}
	gw, err := h.MCPGateway(nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(gw.Tools()); n != 2 {
		t.Errorf("the gateway offers %d tools, want 2", n)
	}
	gw.Close()
	if err := h.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := h.MCPServers()[0]; st.State != mcpgate.StateStopped || st.PID != 0 {
		t.Errorf("after Close fake is %s (pid %d), want stopped", st.State, st.PID)
	}
}

// With offer_to_model, a server's allowlisted tools are offered in chat
// sessions beside the native tools, and the offline model's call to one
// is run by hookhost on the server, its result read back by the model.
func TestSessionOffersMCPToolsToTheModel(t *testing.T) {
	fake := filepath.Join(t.TempDir(), "mcpfake")
	build := exec.Command("go", "build", "-o", fake, "./cmd/hookhost/testdata/mcpfake")
	build.Dir = repoRoot
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the fake MCP server: %v\n%s", err, out)
	}
	cfg, err := config.Parse([]byte(`[llm]
model = "offline-large"

[mcp.servers.fake]
command = "`+fake+`"
tools = ["echo"]
offer_to_model = true

[mcp.servers.hidden]
command = "`+fake+`"
`), "hookhost.toml", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	h, err := hookhost.Open(context.Background(), cfg, hookhost.Options{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(context.Background())
	s, err := h.NewSession(hookhost.SessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range s.Tools() {
		names = append(names, tool.Name)
	}
	if got := strings.Join(names, ","); !strings.HasSuffix(got, ",fake__echo") || strings.Contains(got, "hidden__") || strings.Contains(got, "fake__write") {
		t.Fatalf("offered %s: want the native tools then fake__echo alone", got)
	}
	turn, err := s.Send(context.Background(), "please echo hello")
	if err != nil {
		t.Fatal(err)
	}
	if len(turn.ToolCalls) != 1 || turn.ToolCalls[0].Call.Name != "fake__echo" || turn.ToolCalls[0].Result.IsError {
		t.Fatalf("tool calls %+v, want one successful fake__echo", turn.ToolCalls)
	}
	if want := "From fake__echo: echo: please echo hello."; turn.Answer != want {
		t.Errorf("answer %q, want %q", turn.Answer, want)
	}
	stats := h.MCPCallStats()
	if len(stats) != 1 || stats[0].Server != "fake" || stats[0].Tool != "echo" || stats[0].Outcomes[mcpgate.OutcomeOK] != 1 {
		t.Errorf("call stats %+v, want one ok call of fake's echo", stats)
	}
}
