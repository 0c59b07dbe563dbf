//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package sdk

import (
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
)

// parentPollInterval bounds how long a plugin outlives its host.
const parentPollInterval = 250 * time.Millisecond

// watchParent makes the plugin exit when the process that started it is
// gone, however it went (a SIGKILLed host never shuts its plugins down).
//
// On Linux, hookhost starts plugins with a parent-death signal (SIGTERM),
// which the kernel delivers from the plugin's first instruction on, even
// before Serve. This function turns that SIGTERM into the same exit as an
// orphaned plugin. Polling the parent stays as the fallback for other
// systems and other hosts; a host that passes its pid in HostPIDEnv is
// also recognised as gone when it died before Serve was reached.
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
	terms := make(chan os.Signal, 1)
	signal.Notify(terms, syscall.SIGTERM)
	go func() {
		<-terms
		orphaned(log, parent, "received SIGTERM (the host is gone or asked the plugin to stop)")
	}()
	if host, err := strconv.Atoi(os.Getenv(HostPIDEnv)); err == nil && host > 0 && host != parent {
		orphaned(log, host, "host process died before the plugin was serving")
	}
	go func() {
		t := time.NewTicker(parentPollInterval)
		defer t.Stop()
		for range t.C {
			if os.Getppid() != parent {
				orphaned(log, parent, "host process is gone")
				return
			}
		}
	}()
}

func orphaned(log hclog.Logger, parent int, why string) {
	if pgid := syscall.Getpgrp(); pgid == os.Getpid() {
		log.Warn(why+"; killing the plugin's process group", "host_pid", parent, "pgid", pgid)
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
	log.Warn(why+"; exiting", "host_pid", parent)
	os.Exit(0)
}
