//go:build unix && !linux

package childproc

import "syscall"

// parentDeathSignal does nothing where the kernel has no parent-death
// signal; plugins' SDK parent watch, and stdio servers' closed stdin, stop
// the children of a dead host there.
func parentDeathSignal(*syscall.SysProcAttr, syscall.Signal) {}
