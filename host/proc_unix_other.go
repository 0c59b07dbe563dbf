//go:build unix && !linux

package host

import "syscall"

// parentDeathSignal does nothing where the kernel has no parent-death
// signal; the SDK's parent watch is what stops plugins of a dead host there.
func parentDeathSignal(*syscall.SysProcAttr) {}
