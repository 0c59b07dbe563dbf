//go:build unix

package childproc

import (
	"errors"
	"math"
	"syscall"
)

// Attr puts a child in a process group of its own, with the child as
// leader, so that stopping it can also take down whatever it spawned, and,
// where the OS offers it, has the kernel send the child deathSignal when
// the host dies.
func Attr(deathSignal syscall.Signal) *syscall.SysProcAttr {
	attr := &syscall.SysProcAttr{Setpgid: true}
	parentDeathSignal(attr, deathSignal)
	return attr
}

// KillGroup SIGKILLs the process group led by pid. A group that is already
// gone is not an error: the point is only that nothing is left.
func KillGroup(pid int) error {
	if pid <= 0 {
		return nil
	}
	if err := syscall.Kill(-pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return nil
}

// Alive reports whether a process with this pid exists (a zombie counts:
// its exit is up to whoever reaps it).
func Alive(pid int) bool {
	// kill(2) takes a 32-bit pid: a larger one would name another process.
	return pid > 0 && pid <= math.MaxInt32 && !errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}
