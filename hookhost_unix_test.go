//go:build unix

package hookhost_test

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/hookhost/hookhost"
	"github.com/hookhost/hookhost/config"
	"github.com/hookhost/hookhost/dispatch"
	"github.com/hookhost/hookhost/host"
	"github.com/hookhost/hookhost/internal/debugplugin"
)

// Close stops the plugin processes, and a second Close is harmless.
func TestCloseStopsThePlugins(t *testing.T) {
	h := open(t, guardConfig(t, ""), env())
	ps := h.Plugins()
	if len(ps) != 1 || ps[0].PID == 0 {
		t.Fatalf("plugins %+v, want guard with a process", ps)
	}
	pid := ps[0].PID
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := h.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := h.Close(ctx); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if st := h.Plugins()[0].State; st != host.StateStopped {
		t.Errorf("state after Close %s, want %s", st, host.StateStopped)
	}
	// The host reaped its child, so the pid no longer names a process (a
	// reuse within the test is beyond unlikely).
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("plugin process %d still exists after Close (kill 0: %v)", pid, err)
	}
}

// HOOKHOST_REATTACH_PLUGINS, read through Options.Getenv, attaches Open to
// a plugin started by hand in debug mode; Close leaves it running.
func TestOpenAttachesToAPluginStartedByHand(t *testing.T) {
	cmd := exec.Command(guardBin)
	plugin := debugplugin.Start(t, cmd, 30*time.Second)
	value := plugin.Line

	cfg := guardConfig(t, "")
	e := cfg.Plugins.Entries["guard"]
	e.Path = filepath.Join(t.TempDir(), "not-built") // nothing is launched
	cfg.Plugins.Entries["guard"] = e
	h := open(t, cfg, env(config.ReattachEnv, value))
	if errs := h.StartErrors(); len(errs) != 0 {
		t.Fatalf("start errors: %v", errs)
	}
	if ps := h.Plugins(); len(ps) != 1 || !ps[0].Attached || ps[0].PID != cmd.Process.Pid || ps[0].State != host.StateRunning {
		t.Fatalf("plugins %+v, want guard attached and running", ps)
	}
	s, err := h.NewSession(hookhost.SessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	turn, err := s.Send(context.Background(), "read the file .env")
	if err != nil || len(turn.ToolCalls) == 0 || turn.ToolCalls[0].Path != dispatch.PathBlocked || turn.ToolCalls[0].AnsweredBy != "guard" {
		t.Fatalf("reading .env through the attached guard: %+v, %v; want it blocked", turn.ToolCalls, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := h.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	select {
	case <-plugin.Exited:
		t.Fatal("the attached plugin exited when the host closed")
	default:
	}
}
