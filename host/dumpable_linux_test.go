package host

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A Go plugin marks itself non-dumpable from its start, so the secrets its
// env list hands it are not readable by other processes of its user: its
// own flag says so, and so do its /proc files, which the kernel makes
// root's.
func TestGoPluginIsNotDumpable(t *testing.T) {
	t.Parallel()
	h := startOK(t, configOf(plug{"sealed", entry(echoAs(t, "sealed"))}), fastOptions())
	res, err := callDirect(memberOf(t, h, 0), "dumpable", "", livenessTimeout)
	if err != nil || res.Content != "0" {
		t.Fatalf("the plugin's dumpable flag is %+v (err %v), want 0", res, err)
	}

	// Run as a user of its own, the same binary is seen from outside as
	// not dumpable; and one that sets the flag again is seen as dumpable.
	for _, c := range []struct {
		config string
		want   bool
	}{{`{}`, false}, {`{"dumpable":true}`, true}} {
		e := entry(ownUser(t, bins.echo, "sealed"))
		e.Config = json.RawMessage(c.config)
		h := startOK(t, configOf(plug{"sealed", e}), fastOptions())
		pid := h.Plugins()[0].PID
		if d, known := dumpable(pid); !known || d != c.want {
			t.Errorf("config %s: dumpable(%d) = %v (known %v), want %v", c.config, pid, d, known, c.want)
		}
	}
}

// plugins check warns of a plugin that receives variables from its env
// list and is dumpable, naming them; not of one that is not dumpable, nor
// of one that receives none but PATH.
func TestCheckWarnsOfADumpablePluginGivenSecrets(t *testing.T) {
	t.Parallel()
	leaky := entry(ownUser(t, bins.echo, "leaky"))
	leaky.Config = json.RawMessage(`{"dumpable":true}`)
	leaky.Env = []string{hiddenVar, "PATH"}
	sealed := entry(ownUser(t, bins.echo, "sealed"))
	sealed.Env = []string{hiddenVar}
	plain := entry(ownUser(t, bins.echo, "plain"))
	plain.Config = json.RawMessage(`{"dumpable":true}`)
	plain.Env = []string{"PATH"}
	results := Check(context.Background(), Specs(configOf(plug{"leaky", leaky}, plug{"sealed", sealed}, plug{"plain", plain})), fastOptions())
	warned := map[string][]Warning{}
	for _, r := range results {
		if !r.OK {
			t.Fatalf("%s: %v", r.Name, r.Err)
		}
		for _, w := range r.Warnings {
			if w.Problem == ProblemDumpable {
				warned[r.Name] = append(warned[r.Name], w)
			}
		}
	}
	ws := warned["leaky"]
	if len(ws) != 1 || !strings.Contains(ws[0].Reason, hiddenVar) || strings.Contains(ws[0].Reason, "PATH") ||
		!strings.Contains(ws[0].Reason, "/environ") || !strings.Contains(ws[0].Fix, "PR_SET_DUMPABLE") {
		t.Errorf("leaky: warnings %+v, want one naming %s (not PATH), /environ and the fix", ws, hiddenVar)
	}
	if len(warned["sealed"]) != 0 || len(warned["plain"]) != 0 {
		t.Errorf("warned of sealed %+v and plain %+v, want neither", warned["sealed"], warned["plain"])
	}
}

// ownUser returns a plugin path that runs bin, linked as name, as a user
// other than the host's, as README says to run an untrusted plugin: from
// root, through a wrapper that hands the user go-plugin's socket directory
// and drops to it with setpriv. A process's dumpable flag can only be seen
// from outside when it does not run as root.
func ownUser(t *testing.T, bin, name string) string {
	t.Helper()
	dir := worldReadableDir(t)
	p := filepath.Join(dir, "bin", name)
	if err := os.Mkdir(filepath.Dir(p), 0o755); err != nil && !os.IsExist(err) {
		t.Fatal(err)
	}
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o755); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() != 0 {
		return p // already a user that is not root
	}
	if _, err := os.Stat("/usr/bin/setpriv"); err != nil {
		t.Fatalf("running a plugin as another user from root needs setpriv (util-linux): %v", err)
	}
	return writeScript(t, dir, name, fmt.Sprintf(`#!/bin/sh
/usr/bin/chown 65534:65534 "$PLUGIN_UNIX_SOCKET_DIR" || exit 1
exec /usr/bin/setpriv --reuid=65534 --regid=65534 --clear-groups %s
`, p))
}

// worldReadableDir is a temporary directory that a user other than the
// test's can enter, which t.TempDir is not.
func worldReadableDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "hookhost-own-user-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}
