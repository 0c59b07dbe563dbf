package sdk

import (
	"os"
	"syscall"

	"github.com/hookhost/hookhost/plugins/handshake"
)

// protectErr is why init could not make the plugin non-dumpable, for Serve
// to report once it has a logger.
var protectErr = protectEnviron()

// protectEnviron makes a plugin the host launched unreadable to other
// processes of its user, as the host makes itself: its entry's env list can
// hand it secrets, and without this every other plugin running as the same
// user reads them in /proc/<pid>/environ (and its memory through ptrace).
// Clearing the dumpable flag makes those files root's and refuses ptrace;
// it also turns off core dumps. It runs at package init, before main, so
// the window in which the environment is readable is as short as Go
// allows. A program that imports the SDK without being launched as a
// plugin (a test, a tool) is left alone, and so is a plugin started by hand
// for a debugger, which must be able to attach to it.
func protectEnviron() error {
	if os.Getenv(handshake.Config.MagicCookieKey) != handshake.Config.MagicCookieValue {
		return nil
	}
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_DUMPABLE, 0, 0); errno != 0 {
		return errno
	}
	return nil
}
