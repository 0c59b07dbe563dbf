//go:build unix && !linux

package mcpgate

import "syscall"

// parentDeathSignal does nothing where the kernel has no parent-death
// signal: the server sees its stdin close when the host dies.
func parentDeathSignal(*syscall.SysProcAttr) {}
