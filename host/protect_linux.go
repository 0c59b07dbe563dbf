package host

import (
	"sync"
	"syscall"
)

var protectOnce sync.Once

// protectProcess makes the host's memory and /proc/<pid>/environ
// unreadable to other processes of the same user, plugins included: the
// host's environment holds API keys, and a plugin's scrubbed environment
// is worth little if the host's is one file away. Clearing the dumpable
// flag does this (the files become root's, ptrace is refused) and also
// turns off core dumps. Root and holders of CAP_SYS_PTRACE can still read
// them.
func protectProcess(opts *Options) {
	protectOnce.Do(func() {
		if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_DUMPABLE, 0, 0); errno != 0 {
			opts.Logger.Warn("host: cannot make the host's memory and environment unreadable to plugins", "error", errno.Error())
		}
	})
}
