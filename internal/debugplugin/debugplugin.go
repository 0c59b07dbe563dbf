// Package debugplugin starts a plugin binary by hand in debug mode, as a
// developer does under a debugger, and reads the reattach line it prints,
// for the tests of everything that attaches to such a plugin.
package debugplugin

import (
	"bufio"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/hookhost/hookhost/config"
	"github.com/hookhost/hookhost/internal/syncbuf"
)

// Plugin is a plugin process serving in debug mode.
type Plugin struct {
	// Line is the value of HOOKHOST_REATTACH_PLUGINS the plugin printed.
	Line string
	// Exited is closed once the process has exited.
	Exited <-chan struct{}
}

// Start runs cmd (its environment, if any, already set) with
// HOOKHOST_PLUGIN_DEBUG=1 added, and waits up to timeout for its reattach
// line. The test's cleanup kills the process.
func Start(t testing.TB, cmd *exec.Cmd, timeout time.Duration) *Plugin {
	t.Helper()
	cmd.Env = append(cmd.Env, "HOOKHOST_PLUGIN_DEBUG=1")
	stderr := &syncbuf.Buffer{}
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default:
			}
		}
		cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
	})
	select {
	case line := <-lines:
		v, ok := strings.CutPrefix(line, config.ReattachEnv+"='")
		if !ok || !strings.HasSuffix(v, "'") {
			t.Fatalf("debug-mode plugin printed %q, want %s='<json>'", line, config.ReattachEnv)
		}
		return &Plugin{Line: strings.TrimSuffix(v, "'"), Exited: exited}
	case <-exited:
		t.Fatalf("debug-mode plugin exited before printing its reattach line; stderr:\n%s", stderr)
	case <-time.After(timeout):
		t.Fatal("debug-mode plugin printed no reattach line")
	}
	return nil
}
