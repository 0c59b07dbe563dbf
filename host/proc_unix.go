//go:build unix

package host

import (
	"errors"
	"math"
	"syscall"
)

// procAttr puts the plugin in a process group of its own, with the plugin
// as leader, so that stopping it can also take down whatever it spawned,
// and, where the OS offers it, has the kernel signal the plugin when the
// host dies (see parentDeathSignal).
func procAttr() *syscall.SysProcAttr {
	attr := &syscall.SysProcAttr{Setpgid: true}
	parentDeathSignal(attr)
	return attr
}

// killGroup SIGKILLs the process group led by pid. A group that is already
// gone is not an error: the point is only that nothing is left.
func killGroup(pid int) error {
	if pid <= 0 {
		return nil
	}
	if err := syscall.Kill(-pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return nil
}

// processAlive reports whether a process with this pid exists (a zombie
// counts: its exit is up to whoever reaps it).
func processAlive(pid int) bool {
	// kill(2) takes a 32-bit pid: a larger one would name another process.
	return pid > 0 && pid <= math.MaxInt32 && !errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}
