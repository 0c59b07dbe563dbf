//go:build unix

package host

import (
	"fmt"
	"net"
	"os"
	"syscall"
)

// newLane makes the two ends of a plugin's lane (see wire.LaneFDEnv): the
// host's, and the plugin's, to be handed to the process it starts.
func newLane() (hostEnd net.Conn, pluginEnd *os.File, err error) {
	// Held so that no process started meanwhile inherits the descriptors
	// before they are close-on-exec.
	syscall.ForkLock.RLock()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err == nil {
		syscall.CloseOnExec(fds[0])
		syscall.CloseOnExec(fds[1])
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return nil, nil, fmt.Errorf("host: cannot make a plugin's lane: %w", err)
	}
	f := os.NewFile(uintptr(fds[0]), "hookhost-lane")
	hostEnd, err = net.FileConn(f)
	_ = f.Close()
	if err != nil {
		_ = syscall.Close(fds[1])
		return nil, nil, fmt.Errorf("host: cannot make a plugin's lane: %w", err)
	}
	return hostEnd, os.NewFile(uintptr(fds[1]), "hookhost-lane-plugin"), nil
}
