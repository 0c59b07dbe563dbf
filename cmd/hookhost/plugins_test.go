package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hookhost/hookhost/config"
	"github.com/hookhost/hookhost/internal/debugplugin"
)

// buildTestPlugin builds the host's test plugin of that name
// (host/internal/testplugins/<plugin>) and links it under each of names,
// which for most of them choose what it does.
func buildTestPlugin(t *testing.T, plugin string, names ...string) map[string]string {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, plugin)
	if out, err := exec.Command("go", "build", "-o", bin, "../../host/internal/testplugins/"+plugin).CombinedOutput(); err != nil {
		t.Fatalf("building the test plugin %s: %v\n%s", plugin, err, out)
	}
	paths := map[string]string{}
	for _, n := range names {
		paths[n] = filepath.Join(dir, n)
		if err := os.Symlink(bin, paths[n]); err != nil {
			t.Fatal(err)
		}
	}
	return paths
}

// buildLister builds the host's echo test plugin as "lister".
func buildLister(t *testing.T) string {
	t.Helper()
	return buildTestPlugin(t, "echo", "lister")["lister"]
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

// A plugin's Describe answer and Configure refusal are third-party text:
// neither its version (here a newline, a forged "ok" row and escape
// sequences that retitle the window and erase the line) nor its refusal
// reaches the plugins check and list tables unescaped.
func TestPluginsCheckAndListPrintNoControlCharactersOfAPlugin(t *testing.T) {
	path := buildTestPlugin(t, "onemistake", "escversion")["escversion"]
	picky := filepath.Join(t.TempDir(), "picky")
	if err := os.Symlink(buildLister(t), picky); err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, "[plugins]\nenabled = [\"escversion\", \"picky\"]\n[plugins.entries.escversion]\npath = \""+path+"\"\n"+
		"[plugins.entries.picky]\npath = \""+picky+"\"\n[plugins.entries.picky.config]\nreject = \"no\\u001b]0;owned\\u0007\\r\\nevil  ok\"\n")
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

// buildHandmade builds the host's hand-written test plugin and links it
// under each name; the name chooses the mistake it makes.
func buildHandmade(t *testing.T, names ...string) map[string]string {
	t.Helper()
	return buildTestPlugin(t, "handmade", names...)
}

// plugins check passes a plugin with a warning (exit 0), counts the
// warning in its row and prints it with its fix below the table; a
// plugin that fails makes the exit code 1 whatever the warnings.
func TestPluginsCheckWarnings(t *testing.T) {
	paths := buildHandmade(t, "nocontroller", "padded")
	entries := func(names ...string) string {
		var b strings.Builder
		fmt.Fprintf(&b, "[plugins]\nenabled = [%q", names[0])
		for _, n := range names[1:] {
			fmt.Fprintf(&b, ", %q", n)
		}
		b.WriteString("]\n")
		for _, n := range names {
			fmt.Fprintf(&b, "[plugins.entries.%s]\npath = %q\n", n, paths[n])
		}
		return b.String()
	}

	code, out, errOut := runCLI(t, "", "plugins", "check", "-c", writeConfig(t, entries("nocontroller")))
	t.Logf("plugins check:\n%s", out)
	if code != 0 {
		t.Errorf("exit %d with a warning only, want 0\n%s%s", code, out, errOut)
	}
	if !regexp.MustCompile(`(?m)^nocontroller\s+ok\s+1\.0\.0\s+v2\s.*healthy, 1 warning$`).MatchString(out) {
		t.Errorf("no ok row counting one warning:\n%s", out)
	}
	warning := regexp.MustCompile(`(?m)^warning: plugin nocontroller: .*controller.*2 s.*SIGKILL.*\(fix: .*PROTOCOL\.md#controller.*\)$`)
	if !warning.MatchString(out) {
		t.Errorf("no warning line with its cost and fix:\n%s", out)
	}

	code, out, errOut = runCLI(t, "", "plugins", "check", "-c", writeConfig(t, entries("nocontroller", "padded")))
	t.Logf("plugins check:\n%s", out)
	if code != 1 {
		t.Errorf("exit %d with a failed plugin, want 1\n%s%s", code, out, errOut)
	}
	if !regexp.MustCompile(`(?m)^padded\s+FAILED\s.*padded base64.*illegal base64 data`).MatchString(out) || !warning.MatchString(out) {
		t.Errorf("want padded FAILED and the warning of nocontroller:\n%s", out)
	}
}

// chat logs the plugins' start and exit only with -v, and without
// timestamps: a person reads it, not a log collector.
func TestChatLogsPluginLifecycleOnlyWithV(t *testing.T) {
	t.Setenv("HOOKHOST_USE_GATEWAY", "1")
	cfg := writeConfig(t, fmt.Sprintf("[plugins]\nenabled = [\"lister\"]\n[plugins.entries.lister]\npath = %q\n", buildLister(t)))
	stamp := regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d`)

	code, out, errOut := runCLI(t, "", "chat", "-c", cfg, "what is 6*7")
	if code != 0 || !strings.Contains(out, "answered by lister") {
		t.Fatalf("exit %d, stdout %q, stderr:\n%s", code, out, errOut)
	}
	if want := "hookhost: route gateway (from HOOKHOST_USE_GATEWAY), model offline/offline-small, plugins: lister\n"; errOut != want {
		t.Errorf("stderr without -v:\n%s\nwant only the start line:\n%s", errOut, want)
	}

	code, _, errOut = runCLI(t, "", "chat", "-v", "-c", cfg, "what is 6*7")
	if code != 0 || !strings.Contains(errOut, "[INFO]  hookhost: plugin started: plugin=lister") ||
		!strings.Contains(errOut, "plugin process exited") || stamp.MatchString(errOut) {
		t.Errorf("stderr with -v, want the plugin's start and exit without timestamps:\n%s", errOut)
	}
}

// plugins list shows the config keys each plugin declares, that it takes
// none, or that it did not say (the host then passes its config on
// unchecked).
func TestPluginsListShowsTheDeclaredConfigKeys(t *testing.T) {
	want := map[string]string{"declared": "deny,message", "bare": `\(none\)`, "based": `\(any\)`}
	paths := buildTestPlugin(t, "keyed", "declared", "bare", "based")
	var cfg strings.Builder
	cfg.WriteString("[plugins]\nenabled = [\"declared\", \"bare\", \"based\"]\n")
	for name := range want {
		fmt.Fprintf(&cfg, "[plugins.entries.%s]\npath = %q\n", name, paths[name])
	}
	code, out, errOut := runCLI(t, "", "plugins", "list", "-c", writeConfig(t, cfg.String()))
	if code != 0 || !strings.Contains(out, "CONFIG") {
		t.Fatalf("plugins list: exit %d\n%s%s", code, out, errOut)
	}
	for name, keys := range want {
		if !regexp.MustCompile(`(?m)^` + name + `\s.*\s` + keys + `$`).MatchString(out) {
			t.Errorf("plugins list: the %s row does not end with its config keys %s:\n%s", name, keys, out)
		}
	}
}

// A line go-plugin relays from a plugin carries the plugin's time as a
// timestamp pair; chat's log drops it as it drops the host's own time.
func TestChatLogDropsTheRelayedTimestamp(t *testing.T) {
	var out strings.Builder
	log := logger(&out, true, false).Named("plugin").Named("guard")
	log.Info("blocked", "@module", "guard", "tool", "read_file", "timestamp", "2026-11-27T06:28:50.576Z")
	log.Info("kept", "at", "2026-11-27T06:28:50Z")
	want := "[INFO]  hookhost.plugin.guard: blocked: @module=guard tool=read_file\n[INFO]  hookhost.plugin.guard: kept: at=2026-11-27T06:28:50Z\n"
	if out.String() != want {
		t.Errorf("chat's log:\n%s\nwant:\n%s", out.String(), want)
	}
	var daemon strings.Builder
	logger(&daemon, true, true).Info("blocked", "timestamp", "2026-11-27T06:28:50.576Z")
	if !strings.Contains(daemon.String(), "timestamp=2026-11-27T06:28:50.576Z") {
		t.Errorf("serve's log lost the plugin's time: %s", daemon.String())
	}
}
