//go:build unix

package hookhost_test

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/hookhost/hookhost/host"
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
