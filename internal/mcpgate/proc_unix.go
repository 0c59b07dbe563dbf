//go:build unix

package mcpgate

import (
	"errors"
	"syscall"
)

// procAttr puts a server in a process group of its own, with the server as
// leader, so that stopping it also stops whatever it spawned (npx starts
// node, a shell wrapper starts the server), and, where the OS offers it,
// has the kernel kill the server when the host dies (parentDeathSignal).
func procAttr() *syscall.SysProcAttr {
	attr := &syscall.SysProcAttr{Setpgid: true}
	parentDeathSignal(attr)
	return attr
}

// killGroup SIGKILLs the process group led by pid; a group already gone is
// not an error.
func killGroup(pid int) error {
	if pid <= 0 {
		return nil
	}
	if err := syscall.Kill(-pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return nil
}
