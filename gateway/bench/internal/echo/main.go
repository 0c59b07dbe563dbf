// Command echo is the far end of BenchmarkGatewayThroughput's floor: it
// accepts connections on the Unix listener it inherits as file descriptor
// 3 and sends every byte back, one goroutine per connection, on one
// processor as the Go SDK runs a plugin. It speaks no protocol, so what a
// request pays for crossing to it is the cost of the crossing alone: a
// plain write and a blocking read each way.
package main

import (
	"net"
	"os"
	"runtime"
)

func main() {
	runtime.GOMAXPROCS(1)
	l, err := net.FileListener(os.NewFile(3, "listener"))
	if err != nil {
		os.Stderr.WriteString("echo: no listener on fd 3: " + err.Error() + "\n")
		os.Exit(2)
	}
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			buf := make([]byte, 64)
			for {
				n, err := c.Read(buf)
				if err != nil {
					return
				}
				if _, err := c.Write(buf[:n]); err != nil {
					return
				}
			}
		}()
	}
}
