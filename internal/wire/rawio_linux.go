package wire

import (
	"syscall"
	"unsafe"
)

// rawRead and rawWrite are read(2) and write(2) on a lane's non-blocking
// socket, made without telling the runtime that a system call is under
// way. They never block (a socket with nothing to read, or no room, says
// EAGAIN at once), and the runtime's bookkeeping for one that might costs
// more than the call: on a process that was idle, entering a system call
// wakes the runtime's monitor thread, and on a small machine every thread
// woken is a context switch taken from the processes doing the work.
func rawRead(fd int, b []byte) (int, error) { return rawIO(syscall.SYS_READ, fd, b) }

func rawWrite(fd int, b []byte) (int, error) { return rawIO(syscall.SYS_WRITE, fd, b) }

func rawIO(trap uintptr, fd int, b []byte) (int, error) {
	var p unsafe.Pointer
	if len(b) > 0 {
		p = unsafe.Pointer(&b[0])
	}
	n, _, errno := syscall.RawSyscall(trap, uintptr(fd), uintptr(p), uintptr(len(b)))
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}
