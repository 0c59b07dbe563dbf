//go:build !linux

package host

// protectProcess does nothing where the OS offers no per-process switch:
// there, plugins running as the host's user may read the host's memory and
// environment (see README, Security).
func protectProcess(*Options) {}
