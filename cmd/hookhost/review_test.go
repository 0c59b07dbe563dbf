package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A plugin's Describe answer is third-party text: its version is printed
// as it is in the plugins check and list tables, so a plugin can forge a
// row (a newline and a fake "ok" line) and send the operator's terminal
// escape sequences (here one that retitles the window and one that
// erases the line).
func TestReviewPluginsCheckPrintsNoControlCharactersOfAPlugin(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "reviewplug")
	if out, err := exec.Command("go", "build", "-o", bin, "../../host/internal/testplugins/reviewplug").CombinedOutput(); err != nil {
		t.Fatalf("building the test plugin: %v\n%s", err, out)
	}
	path := filepath.Join(dir, "escversion")
	if err := os.Symlink(bin, path); err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, "[plugins]\nenabled = [\"escversion\"]\n[plugins.entries.escversion]\npath = \""+path+"\"\n")
	for _, sub := range []string{"check", "list"} {
		code, out, errOut := runCLI(t, "", "plugins", sub, "-c", cfg)
		t.Logf("plugins %s: exit %d\n%q\n%s", sub, code, out, errOut)
		if strings.ContainsAny(out, "\x1b\x07\r") {
			t.Errorf("plugins %s printed the plugin's control characters: %q", sub, out)
		}
		if strings.Contains(out, "\nevil ") {
			t.Errorf("plugins %s printed a row the plugin forged:\n%s", sub, out)
		}
	}
}
