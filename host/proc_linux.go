package host

import "syscall"

// parentDeathSignal has the kernel send the plugin SIGTERM when the host
// dies, from the plugin's first instruction on: unlike the SDK's own parent
// watch, it also covers a plugin that is still starting when a SIGKILLed
// host goes. Go's exec re-checks the parent right after setting it, so a
// host that dies during the exec is caught too. SIGTERM rather than
// SIGKILL lets the SDK take the plugin's own children down with it. The
// signal is tied to the thread that forked, which is why plugins are
// started from a thread that never exits (see startOnSpawnThread).
func parentDeathSignal(attr *syscall.SysProcAttr) {
	attr.Pdeathsig = syscall.SIGTERM
}
