//go:build unix && !linux

package wire

import "syscall"

// rawRead and rawWrite are read(2) and write(2) on a lane's socket, made
// as the runtime's own are elsewhere than on Linux.
func rawRead(fd int, b []byte) (int, error) { return syscall.Read(fd, b) }

func rawWrite(fd int, b []byte) (int, error) { return syscall.Write(fd, b) }
