//go:build !unix

package host

import (
	"os"
	"syscall"
)

// Without process groups only the plugin itself can be stopped; its
// children are its own responsibility.
func procAttr() *syscall.SysProcAttr { return nil }

func killGroup(int) error { return nil }

// processAlive reports whether a process with this pid can be found; where
// that cannot be told without signalling it, an attached plugin's exit shows
// as failed calls instead.
func processAlive(pid int) bool {
	_, err := os.FindProcess(pid)
	return pid > 0 && err == nil
}
