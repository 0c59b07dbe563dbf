package host

import (
	"fmt"
	"os"
	"syscall"
	"unsafe"
)

// openPTY opens a pseudo-terminal pair: the master to read from, the slave
// to give a child as its stdout. Neither becomes a controlling terminal.
func openPTY() (master, slave *os.File, err error) {
	master, err = os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", errNoPTY, err)
	}
	var n uint32
	// SyscallConn rather than Fd, which would make the master blocking
	// and so take away its read deadlines and its unblocking Close.
	rc, err := master.SyscallConn()
	if err == nil {
		cerr := rc.Control(func(fd uintptr) {
			var unlock int32
			if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
				err = e
				return
			}
			if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
				err = e
			}
		})
		if err == nil {
			err = cerr
		}
	}
	if err != nil {
		master.Close()
		return nil, nil, fmt.Errorf("%w: %v", errNoPTY, err)
	}
	slave, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		master.Close()
		return nil, nil, fmt.Errorf("%w: %v", errNoPTY, err)
	}
	return master, slave, nil
}
