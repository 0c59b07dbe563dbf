package main

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// plugins list and check show the protocol version each plugin speaks,
// here pinned through the entry's protocol key.
func TestPluginsListAndCheckShowTheProtocol(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "lister")
	if out, err := exec.Command("go", "build", "-o", bin, "../../host/internal/testplugins/echo").CombinedOutput(); err != nil {
		t.Fatalf("building the test plugin: %v\n%s", err, out)
	}
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
