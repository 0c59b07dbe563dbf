package mcpgate

import "syscall"

// parentDeathSignal has the kernel SIGKILL the server when the host dies.
// SIGKILL rather than the SIGTERM plugins get: an MCP server has no SDK
// that would take its children down on SIGTERM, and its children see
// their stdin close with the host and exit, as stdio MCP servers do. The
// signal is tied to the thread that forked, which is why servers are
// started from a thread that never exits (startOnSpawnThread).
func parentDeathSignal(attr *syscall.SysProcAttr) {
	attr.Pdeathsig = syscall.SIGKILL
}
