package hookhost_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hookhost/hookhost"
	"github.com/hookhost/hookhost/config"
	"github.com/hookhost/hookhost/dispatch"
	"github.com/hookhost/hookhost/hooks"
)

// README.md's "Writing a plugin" walkthrough works as written: its Go
// plugin, built where and as it says, enabled by its TOML and asked the
// question it shows, blocks the read of the secret file. The plugin source
// is laid over the module with go build -overlay, so no file is written
// into the source tree.
func TestREADMEPluginWalkthrough(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	section := readmeSection(t, string(raw), "## Writing a plugin")
	blocks := fencedBlocks(section)
	if len(blocks["go"]) == 0 || len(blocks["toml"]) == 0 || len(blocks["sh"]) < 2 {
		t.Fatalf("the walkthrough should show the plugin (go), its config (toml) and the commands (sh); found %v blocks", len(blocks))
	}
	shell := strings.Join(blocks["sh"], "\n")
	build := regexp.MustCompile(`go build -o (\S+) (\./\S+)`).FindStringSubmatch(shell)
	save := regexp.MustCompile("save it as `([^`]+)`").FindStringSubmatch(section)
	secret := regexp.MustCompile(`echo "([^"]*)" > (\S+)`).FindStringSubmatch(shell)
	chat := regexp.MustCompile(`hookhost chat -c (\S+) -v "([^"]+)"`).FindStringSubmatch(shell)
	if build == nil || save == nil || secret == nil || chat == nil {
		t.Fatalf("the walkthrough should say where to save the plugin, how to build it, which file to create and what to ask:\nbuild %q\nsave %q\nsecret %q\nchat %q", build, save, secret, chat)
	}
	if filepath.Dir(save[1]) != strings.TrimPrefix(build[2], "./") {
		t.Fatalf("the plugin is saved as %s but built from %s", save[1], build[2])
	}

	// Build the plugin from the README's source, as if saved where it says.
	dir := t.TempDir()
	src := filepath.Join(t.TempDir(), "main.go")
	if err := os.WriteFile(src, []byte(blocks["go"][0]), 0o644); err != nil {
		t.Fatal(err)
	}
	overlay, err := json.Marshal(map[string]map[string]string{"Replace": {filepath.Join(repoRoot, save[1]): src}})
	if err != nil {
		t.Fatal(err)
	}
	overlayFile := filepath.Join(t.TempDir(), "overlay.json")
	if err := os.WriteFile(overlayFile, overlay, 0o644); err != nil {
		t.Fatal(err)
	}
	goBuild := exec.Command("go", "build", "-overlay", overlayFile, "-o", filepath.Join(dir, build[1]), build[2])
	goBuild.Dir = repoRoot
	if out, err := goBuild.CombinedOutput(); err != nil {
		t.Fatalf("building the README's plugin: %v\n%s", err, out)
	}

	// Its config and the secret file, beside the binary as the README has them.
	if err := os.WriteFile(filepath.Join(dir, chat[1]), []byte(blocks["toml"][0]), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, secret[2]), []byte(secret[1]+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(filepath.Join(dir, chat[1]))
	if err != nil {
		t.Fatalf("the README's config does not load: %v", err)
	}
	h := open(t, cfg, env())
	if errs := h.StartErrors(); len(errs) != 0 {
		t.Fatalf("the README's plugin does not start: %v", errs)
	}
	if route, _ := h.Route(); route != hooks.RouteGateway {
		t.Fatalf("route %s: the README's config must turn the gateway route on, or no hook fires", route)
	}
	s, err := h.NewSession(hookhost.SessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	turn, err := s.Send(context.Background(), chat[2])
	if err != nil {
		t.Fatal(err)
	}
	if len(turn.ToolCalls) == 0 || turn.ToolCalls[0].Call.Name != "read_file" || turn.ToolCalls[0].Path != dispatch.PathBlocked || turn.ToolCalls[0].AnsweredBy != "guard" {
		t.Fatalf("asking %q: tool calls %+v, want read_file blocked by guard", chat[2], turn.ToolCalls)
	}
	if strings.Contains(turn.Answer, secret[1]) || !strings.Contains(turn.Answer, "secrets stay put") {
		t.Errorf("answer %q, want the guard's message and not the secret", turn.Answer)
	}
}
