package main

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hookhost/hookhost/config"
	"github.com/hookhost/hookhost/internal/debugplugin"
)

// buildLister builds the host's echo test plugin as "lister".
func buildLister(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "lister")
	if out, err := exec.Command("go", "build", "-o", bin, "../../host/internal/testplugins/echo").CombinedOutput(); err != nil {
		t.Fatalf("building the test plugin: %v\n%s", err, out)
	}
	return bin
}

// plugins list and check show the protocol version each plugin speaks,
// here pinned through the entry's protocol key.
func TestPluginsListAndCheckShowTheProtocol(t *testing.T) {
	bin := buildLister(t)
	for _, v := range []int{1, 2} {
		t.Run(fmt.Sprintf("v%d", v), func(t *testing.T) {
			cfg := writeConfig(t, fmt.Sprintf("[plugins]\nenabled = [\"lister\"]\n[plugins.entries.lister]\npath = %q\nprotocol = %d\n", bin, v))
			code, out, errOut := runCLI(t, "", "plugins", "list", "-c", cfg)
			row := regexp.MustCompile(fmt.Sprintf(`(?m)^lister\s+1\.0\.0\s+v%d\s`, v))
			if code != 0 || !strings.Contains(out, "PROTOCOL") || !row.MatchString(out) {
				t.Errorf("plugins list: exit %d\n%s%s", code, out, errOut)
			}
			code, out, errOut = runCLI(t, "", "plugins", "check", "-c", cfg)
			row = regexp.MustCompile(fmt.Sprintf(`(?m)^lister\s+ok\s+1\.0\.0\s+v%d\s.*healthy`, v))
			if code != 0 || !row.MatchString(out) {
				t.Errorf("plugins check: exit %d\n%s%s", code, out, errOut)
			}
			t.Logf("plugins check:\n%s", out)
		})
	}
}

// With HOOKHOST_REATTACH_PLUGINS in its environment, plugins list attaches
// to the plugin started by hand, says so, and leaves it running.
func TestPluginsListAttachesThroughTheEnvironment(t *testing.T) {
	plugin := debugplugin.Start(t, exec.Command(buildLister(t)), 30*time.Second)
	t.Setenv(config.ReattachEnv, plugin.Line)
	cfg := writeConfig(t, "[plugins]\nenabled = [\"lister\"]\n[plugins.entries.lister]\npath = \"not-built\"\n")
	code, stdout, stderr := runCLI(t, "", "plugins", "list", "-c", cfg)
	if code != 0 || !regexp.MustCompile(`(?m)^lister\s+1\.0\.0\s+v\d\s+\(attached\)\s`).MatchString(stdout) {
		t.Fatalf("plugins list: exit %d\n%s%s", code, stdout, stderr)
	}
	select {
	case <-plugin.Exited:
		t.Fatal("the attached plugin exited after plugins list")
	default:
	}
}
