//go:build !unix

package childproc

import (
	"os"
	"syscall"
)

// Attr has nothing to add where there are no process groups: only the
// child itself can be stopped; its children are its own responsibility.
func Attr(syscall.Signal) *syscall.SysProcAttr { return nil }

// KillGroup kills the child's process; its children are on their own.
func KillGroup(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return nil
	}
	_ = p.Kill()
	return nil
}

// Alive reports whether a process with this pid can be found; where that
// cannot be told without signalling it, a child's exit shows as failed
// calls instead.
func Alive(pid int) bool {
	_, err := os.FindProcess(pid)
	return pid > 0 && err == nil
}
