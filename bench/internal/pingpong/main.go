// Command pingpong is the far end of the benchmarks' floor for an exchange
// between two processes: it reads one byte from descriptor 3 and writes it
// back on descriptor 4, with blocking system calls, until the read ends.
// Whatever a plugin boundary does, an exchange costs at least what this
// does: two switches between processes and four system calls.
package main

import (
	"os"
	"syscall"
)

func main() {
	b := make([]byte, 1)
	for {
		n, err := syscall.Read(3, b)
		if err == syscall.EINTR {
			continue
		}
		if n != 1 || err != nil {
			os.Exit(0)
		}
		for {
			if _, err = syscall.Write(4, b); err != syscall.EINTR {
				break
			}
		}
		if err != nil {
			os.Exit(0)
		}
	}
}
