//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package sdk

import (
	"errors"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/hookhost/hookhost/plugins/handshake"

	"github.com/hashicorp/go-hclog"
)

// parentPollInterval bounds how long a plugin outlives its host.
const parentPollInterval = 250 * time.Millisecond

// firstParent is the parent as early as Go lets a plugin look, before main
// runs, so that a host that dies while the plugin starts is still seen to
// go (see hostGone).
var firstParent = os.Getppid()

// watchParent makes the plugin exit when the host that started it is gone,
// however it went (a SIGKILLed host never shuts its plugins down).
//
// On Linux, hookhost starts plugins with a parent-death signal (SIGTERM),
// which the kernel delivers from the plugin's first instruction on, even
// before Serve. This function turns that SIGTERM into the same exit as an
// orphaned plugin. Polling stays as the fallback for other systems, other
// hosts, and plugins started through a wrapper script (the signal then goes
// to the wrapper): see hostGone.
//
// When the plugin leads its own process group (a host that starts plugins
// with Setpgid, as hookhost does), it kills the whole group, taking down any
// children the plugin started; otherwise it only exits itself. Before that,
// when the host started it in a cgroup of its own (Linux, cgroup v2), it
// kills the cgroup, which also takes children that left the group.
func watchParent(log hclog.Logger) {
	named, _ := strconv.Atoi(os.Getenv(handshake.HostPIDEnv))
	host := named
	if host <= 0 {
		host = firstParent
	}
	// With the host gone, writing to stderr (its pipe) raises SIGPIPE, which
	// kills a Go program writing to fd 1 or 2, before it could take its
	// children down. Notifying, unlike ignoring, turns that into an EPIPE
	// error here without being inherited by the plugin's own children.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	terms := make(chan os.Signal, 1)
	signal.Notify(terms, syscall.SIGTERM)
	go func() {
		<-terms
		orphaned(log, host, "received SIGTERM (the host is gone or asked the plugin to stop)")
	}()
	if hostGone(named) {
		orphaned(log, host, "host process died before the plugin was serving")
	}
	go func() {
		t := time.NewTicker(parentPollInterval)
		defer t.Stop()
		for range t.C {
			if hostGone(named) {
				orphaned(log, host, "host process is gone")
				return
			}
		}
	}()
}

// hostGone reports whether the host is gone. A host that passed its pid
// (named, from handshake.HostPIDEnv; 0 when it did not) is gone when no process has
// that pid any more, or when it was the plugin's first parent and the
// plugin has been re-parented (a killed host not yet reaped still has its
// pid). A parent that differs from the host is no sign of anything: a
// wrapper script that does not exec the plugin sits between them. Without
// the variable, the host is the first parent, gone once the plugin has
// another parent.
func hostGone(named int) bool {
	ppid := os.Getppid()
	if named <= 0 {
		return ppid != firstParent
	}
	if named == firstParent && ppid != firstParent {
		return true
	}
	return errors.Is(syscall.Kill(named, 0), syscall.ESRCH)
}

func orphaned(log hclog.Logger, parent int, why string) {
	killOwnCgroup(log)
	if pgid := syscall.Getpgrp(); pgid == os.Getpid() {
		log.Warn(why+"; killing the plugin's process group", "host_pid", parent, "pgid", pgid)
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
	log.Warn(why+"; exiting", "host_pid", parent)
	os.Exit(0)
}
