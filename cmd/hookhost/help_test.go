package main

import (
	"strings"
	"testing"
)

// Every command prints its own help on stdout, exits 0 and prints nothing
// on stderr, whichever way the help is asked for.
func TestHelp(t *testing.T) {
	cases := []struct {
		args []string
		want []string // what the help must mention: its usage line, its flags
	}{
		{[]string{"--help"}, []string{"hookhost chat", "hookhost serve", "hookhost plugins list", "HOOKHOST_USE_GATEWAY", "hookhost help"}},
		{[]string{"-h"}, []string{"hookhost chat", "hookhost serve"}},
		{[]string{"help"}, []string{"hookhost chat", "hookhost plugins check"}},
		{[]string{"help", "chat"}, []string{"usage: hookhost chat", "-c file", "-stream", "-v\t", "HOOKHOST_USE_GATEWAY", "examples:"}},
		{[]string{"chat", "--help"}, []string{"usage: hookhost chat", "-c file", "-stream", "-v\t", "HOOKHOST_USE_GATEWAY", "examples:"}},
		{[]string{"chat", "-h"}, []string{"usage: hookhost chat", "-stream"}},
		{[]string{"chat", "hello", "--help"}, []string{"usage: hookhost chat", "-stream"}},
		{[]string{"serve", "--help"}, []string{"usage: hookhost serve", "-listen host:port", "127.0.0.1:8080", "-c file", "-v\t", "HOOKHOST_USE_GATEWAY", "examples:"}},
		{[]string{"help", "serve"}, []string{"usage: hookhost serve", "-listen host:port"}},
		{[]string{"plugins", "--help"}, []string{"usage: hookhost plugins list|check", "-c file", "list", "check", "examples:"}},
		{[]string{"plugins", "-h"}, []string{"usage: hookhost plugins list|check"}},
		{[]string{"help", "plugins"}, []string{"usage: hookhost plugins list|check"}},
		{[]string{"plugins", "list", "--help"}, []string{"usage: hookhost plugins list", "-c file", `(default "hookhost.toml")`, "HOOKHOST_REATTACH_PLUGINS", "examples:"}},
		{[]string{"plugins", "check", "--help"}, []string{"usage: hookhost plugins check", "-c file", "warnings", "examples:"}},
		{[]string{"help", "plugins", "check"}, []string{"usage: hookhost plugins check", "-c file"}},
		{[]string{"version", "--help"}, []string{"usage: hookhost version", "protocol"}},
		{[]string{"help", "version"}, []string{"usage: hookhost version"}},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			code, out, errOut := runCLI(t, "", c.args...)
			if code != 0 || errOut != "" {
				t.Fatalf("exit %d, stderr %q", code, errOut)
			}
			for _, w := range c.want {
				if !strings.Contains(out, w) {
					t.Errorf("help does not mention %q:\n%s", w, out)
				}
			}
		})
	}
}

// Bad usage exits 2 with one short line that points at the help, and
// prints nothing on stdout.
func TestBadUsagePointsAtHelp(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"chat", "-nope"}, "hookhost: chat: flag provided but not defined: -nope (see hookhost chat --help)\n"},
		{[]string{"serve", "-port", "80"}, "hookhost: serve: flag provided but not defined: -port (see hookhost serve --help)\n"},
		{[]string{"serve", "now"}, "hookhost: serve takes no arguments, got \"now\" (see hookhost serve --help)\n"},
		{[]string{"plugins"}, "hookhost: plugins needs a subcommand: list or check (see hookhost plugins --help)\n"},
		{[]string{"plugins", "lsit"}, "hookhost: plugins has no subcommand \"lsit\": use list or check (see hookhost plugins --help)\n"},
		{[]string{"plugins", "check", "-x"}, "hookhost: plugins check: flag provided but not defined: -x (see hookhost plugins check --help)\n"},
		{[]string{"version", "now"}, "hookhost: version takes no arguments, got \"now\" (see hookhost version --help)\n"},
		{[]string{"frobnicate"}, "hookhost: unknown command \"frobnicate\" (see hookhost --help)\n"},
		{[]string{"help", "frobnicate"}, "hookhost: unknown command \"frobnicate\" (see hookhost --help)\n"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			code, out, errOut := runCLI(t, "", c.args...)
			if code != 2 || out != "" || errOut != c.want {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit 2 and %q", code, out, errOut, c.want)
			}
		})
	}
}
