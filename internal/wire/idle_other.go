//go:build !linux

package wire

// machineIdle is false where the host cannot tell: lane readers never
// poll there.
func machineIdle() bool { return false }
