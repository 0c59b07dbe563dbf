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
