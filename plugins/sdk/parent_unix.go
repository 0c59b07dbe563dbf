//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package sdk

import (
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
)

// parentPollInterval bounds how long a plugin outlives its host.
const parentPollInterval = 250 * time.Millisecond

// watchParent makes the plugin exit when the process that started it is
// gone, however it went (a SIGKILLed host never shuts its plugins down).
// The parent is polled rather than using PR_SET_PDEATHSIG, which fires when
// the host's spawning OS thread exits, not the host process, and Go hosts
// start plugins from whatever thread they happen to run on.
//
// When the plugin leads its own process group (a host that starts plugins
// with Setpgid, as hookhost does), it kills the whole group, taking down any
// children the plugin started; otherwise it only exits itself.
func watchParent(log hclog.Logger) {
	parent := os.Getppid()
	// With the host gone, writing to stderr (its pipe) raises SIGPIPE, which
	// kills a Go program writing to fd 1 or 2, before it could take its
	// children down. Notifying, unlike ignoring, turns that into an EPIPE
	// error here without being inherited by the plugin's own children.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	go func() {
		t := time.NewTicker(parentPollInterval)
		defer t.Stop()
		for range t.C {
			if os.Getppid() != parent {
				orphaned(log, parent)
				return
			}
		}
	}()
}

func orphaned(log hclog.Logger, parent int) {
	if pgid := syscall.Getpgrp(); pgid == os.Getpid() {
		log.Warn("host process is gone; killing the plugin's process group", "host_pid", parent, "pgid", pgid)
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
	log.Warn("host process is gone; exiting", "host_pid", parent)
	os.Exit(0)
}
