package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hookhost/hookhost/internal/syncbuf"
)

func runCLI(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	// Plugins' stderr is relayed to the host's log from go-plugin's own
	// goroutine while the chat writes its trace: both reach stderr at once,
	// which os.Stderr takes and a bytes.Buffer does not.
	var out, errb syncbuf.Buffer
	code = run(args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func writeConfig(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "hookhost.toml")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestChatWhatTimeIsItOnBothRoutes(t *testing.T) {
	cfg := writeConfig(t, "[llm]\nprovider = \"offline\"\nmodel = \"offline-small\"\n")
	for _, gw := range []string{"1", "0"} {
		t.Run("HOOKHOST_USE_GATEWAY="+gw, func(t *testing.T) {
			t.Setenv("HOOKHOST_USE_GATEWAY", gw)
			code, out, errOut := runCLI(t, "", "chat", "-c", cfg, "-v", "what time is it")
			if code != 0 {
				t.Fatalf("exit %d\n%s", code, errOut)
			}
			if !strings.Contains(out, "From now:") {
				t.Fatalf("answer does not come from the now tool: %q", out)
			}
			if !strings.Contains(errOut, "tool now({}) [native] → native, ok") {
				t.Fatalf("trace does not show the native now call:\n%s", errOut)
			}
			wantRoute := map[string]string{"1": "route gateway", "0": "route bypass"}[gw]
			if !strings.Contains(errOut, wantRoute+" (from HOOKHOST_USE_GATEWAY)") {
				t.Fatalf("route not stated:\n%s", errOut)
			}
			if gw == "0" && !strings.Contains(errOut, "no hook fired") {
				t.Fatalf("bypass trace does not say no hook fired:\n%s", errOut)
			}
		})
	}
}

func TestExitCodes(t *testing.T) {
	t.Setenv("HOOKHOST_USE_GATEWAY", "")
	bad := writeConfig(t, "[plugins]\nenabled = [\"a\", \"a\"]\n")
	cases := []struct {
		name string
		env  string
		args []string
		code int
		want string
	}{
		{"no command", "", nil, 2, "usage"},
		{"unknown command", "", []string{"frobnicate"}, 2, `unknown command "frobnicate"`},
		{"bad flag", "", []string{"chat", "-nope"}, 2, "flag provided but not defined"},
		{"missing explicit config", "", []string{"chat", "-c", "/nonexistent/hookhost.toml", "hi"}, 2, "config"},
		{"config error names key and line", "", []string{"chat", "-c", bad, "hi"}, 2, ":2: plugins.enabled"},
		{"bad gateway flag", "maybe", []string{"chat", "hi"}, 2, "HOOKHOST_USE_GATEWAY"},
		{"version", "", []string{"version"}, 0, ""},
		{"plugins without subcommand", "", []string{"plugins"}, 2, "list or check"},
		{"serve with an argument", "", []string{"serve", "now"}, 2, `serve takes no arguments, got "now"`},
		{"serve bad flag", "", []string{"serve", "-port", "80"}, 2, "flag provided but not defined: -port"},
		{"serve config error names key and line", "", []string{"serve", "-c", bad}, 2, ":2: plugins.enabled"},
		{"serve bad gateway flag", "maybe", []string{"serve"}, 2, "HOOKHOST_USE_GATEWAY"},
		{"serve on every interface with no key", "", []string{"serve", "-listen", "0.0.0.0:0"}, 2, "allow_no_key"},
		{"serve on a bad address", "", []string{"serve", "-listen", "localhost"}, 2, "host:port"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("HOOKHOST_USE_GATEWAY", c.env)
			code, out, errOut := runCLI(t, "", c.args...)
			if code != c.code || !strings.Contains(out+errOut, c.want) {
				t.Fatalf("exit %d (want %d), output:\n%s%s", code, c.code, out, errOut)
			}
		})
	}
}

func TestREPL(t *testing.T) {
	t.Setenv("HOOKHOST_USE_GATEWAY", "1")
	cfg := writeConfig(t, "")
	code, out, errOut := runCLI(t, "what is 6*7\n\nwhat time is it\n/exit\nnever sent\n", "chat", "-c", cfg)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "42") || !strings.Contains(lines[1], "From now:") {
		t.Fatalf("REPL answers:\n%s", out)
	}
}

func TestFlagsAfterTheMessage(t *testing.T) {
	t.Setenv("HOOKHOST_USE_GATEWAY", "")
	cfg := writeConfig(t, "[routing]\ngateway = false\n")
	code, out, errOut := runCLI(t, "", "chat", "what time is it", "-v", "-c", cfg)
	if code != 0 || !strings.Contains(errOut, "tool now({})") || strings.Contains(out, "-v") {
		t.Fatalf("exit %d, stdout %q, stderr:\n%s", code, out, errOut)
	}
	if !strings.Contains(errOut, "(from routing.gateway)") {
		t.Fatalf("route source not the config file:\n%s", errOut)
	}
}

// The start line says the route is the default when neither the
// environment nor the file sets it, with a file and without one.
func TestStartLineSaysWhereTheRouteComesFrom(t *testing.T) {
	t.Chdir(t.TempDir()) // no hookhost.toml here
	cases := []struct {
		name, env string
		args      []string
		want      string
	}{
		{"no config file", "", nil, "hookhost: route bypass (default), model offline/offline-small"},
		{"a file without routing.gateway", "", []string{"-c", writeConfig(t, "[llm]\nmodel = \"offline-large\"\n")}, "hookhost: route bypass (default), model offline/offline-large"},
		{"a file with routing.gateway", "", []string{"-c", writeConfig(t, "[routing]\ngateway = true\n")}, "hookhost: route gateway (from routing.gateway)"},
		{"the environment over the file", "0", []string{"-c", writeConfig(t, "[routing]\ngateway = true\n")}, "hookhost: route bypass (from HOOKHOST_USE_GATEWAY)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("HOOKHOST_USE_GATEWAY", c.env)
			code, _, errOut := runCLI(t, "", append([]string{"chat", "what is 6*7"}, c.args...)...)
			if code != 0 || !strings.Contains(errOut, c.want) {
				t.Fatalf("exit %d, want %q in stderr:\n%s", code, c.want, errOut)
			}
		})
	}
}

// plugins list and check refuse a mistyped HOOKHOST_USE_GATEWAY with the
// message and exit code of chat and serve, before starting any plugin.
func TestPluginsRefuseABadGatewaySwitch(t *testing.T) {
	cfg := writeConfig(t, "[plugins]\nenabled = [\"ghost\"]\ndir = \"nowhere\"\n")
	t.Setenv("HOOKHOST_USE_GATEWAY", "yes")
	_, _, chatErr := runCLI(t, "", "chat", "-c", cfg, "hi")
	want := `hookhost: config: HOOKHOST_USE_GATEWAY="yes" is not a valid value`
	if !strings.HasPrefix(chatErr, want) {
		t.Fatalf("chat says:\n%s", chatErr)
	}
	for _, sub := range []string{"check", "list"} {
		code, out, errOut := runCLI(t, "", "plugins", sub, "-c", cfg)
		if code != 2 || out != "" || errOut != chatErr {
			t.Errorf("plugins %s: exit %d, stdout %q, stderr %q; want exit 2 and chat's %q", sub, code, out, errOut, chatErr)
		}
	}
}

func TestFlagErrorsAreReportedOnce(t *testing.T) {
	_, _, errOut := runCLI(t, "", "chat", "-nope")
	if n := strings.Count(errOut, "flag provided but not defined"); n != 1 {
		t.Fatalf("reported %d times:\n%s", n, errOut)
	}
}

func TestPluginsListSaysWhyAPluginDidNotStart(t *testing.T) {
	cfg := writeConfig(t, "[plugins]\nenabled = [\"ghost\"]\ndir = \"nowhere\"\n")
	code, out, _ := runCLI(t, "", "plugins", "list", "-c", cfg)
	if code != 1 || !strings.Contains(out, "ghost did not start") || !strings.Contains(out, "does not exist") {
		t.Fatalf("exit %d, output:\n%s", code, out)
	}
}

// A fail_closed guard that cannot start is reported as blocking, and
// blocks: with a wrong sha256 pin on a real binary and with no binary.
func TestFailClosedGuardThatDoesNotStartBlocks(t *testing.T) {
	for name, entry := range map[string]string{
		"wrong sha256":   "path = \"/bin/true\"\nsha256 = \"" + strings.Repeat("ab", 32) + "\"\n",
		"missing binary": "path = \"" + filepath.Join(t.TempDir(), "nowhere") + "\"\n",
	} {
		t.Run(name, func(t *testing.T) {
			cfg := writeConfig(t, "[llm]\nprovider = \"offline\"\nmodel = \"offline-large\"\n"+
				"[plugins]\nenabled = [\"guard\"]\n[plugins.entries.guard]\nfail_closed = true\n"+entry)
			code, out, errOut := runCLI(t, "", "plugins", "check", "-c", cfg)
			if code != 1 || !strings.Contains(out, "DOWN (fail_closed: blocking every tool call)") {
				t.Errorf("plugins check: exit %d\n%s%s", code, out, errOut)
			}
			t.Setenv("HOOKHOST_USE_GATEWAY", "1")
			code, out, errOut = runCLI(t, "", "chat", "-c", cfg, "-v", "what time is it")
			if !strings.Contains(errOut, "plugins: guard DOWN (fail_closed: blocking every tool call)") ||
				!strings.Contains(errOut, "blocked") || strings.Contains(out, "From now:") {
				t.Errorf("chat: exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
			}
			t.Logf("chat stderr:\n%s", errOut)
		})
	}
}
