//go:build !unix

package mcpgate

import (
	"os"
	"syscall"
)

// procAttr has nothing to add where there are no process groups.
func procAttr() *syscall.SysProcAttr { return nil }

// killGroup kills the server's process; its children are on their own.
func killGroup(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return nil
	}
	_ = p.Kill()
	return nil
}
