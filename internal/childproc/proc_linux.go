package childproc

import "syscall"

// parentDeathSignal has the kernel send the child sig when the host dies,
// from the child's first instruction on, so it also covers a child still
// starting when a SIGKILLed host goes. Go's exec re-checks the parent right
// after setting it, so a host that dies during the exec is caught too. The
// signal is tied to the thread that forked, which is why children are
// started from a thread that never exits (see Start).
func parentDeathSignal(attr *syscall.SysProcAttr, sig syscall.Signal) {
	attr.Pdeathsig = sig
}
