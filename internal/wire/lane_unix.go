//go:build unix

package wire

import (
	"io"
	"net"
	"runtime"
	"syscall"
	"time"
)

// laneReader is what a lane is read through: a spinReader where the
// socket's descriptor can be reached.
func laneReader(conn net.Conn) io.Reader {
	if raw := rawConnOf(conn); raw != nil {
		return &spinReader{raw: raw}
	}
	return conn
}

// laneWriter is what a lane is written through: a rawWriter where the
// socket's descriptor can be reached.
func laneWriter(conn net.Conn) io.Writer {
	if raw := rawConnOf(conn); raw != nil {
		return &rawWriter{raw: raw}
	}
	return conn
}

func rawConnOf(conn net.Conn) syscall.RawConn {
	if sc, ok := conn.(syscall.Conn); ok {
		if raw, err := sc.SyscallConn(); err == nil {
			return raw
		}
	}
	return nil
}

// rawWriter writes a lane with rawWrite, waiting through the runtime's
// poller only when the socket has no room.
type rawWriter struct{ raw syscall.RawConn }

func (w *rawWriter) Write(b []byte) (int, error) {
	var n int
	var werr error
	err := w.raw.Write(func(fd uintptr) bool {
		for n < len(b) {
			m, err := rawWrite(int(fd), b[n:])
			switch err {
			case nil:
				n += m
			case syscall.EINTR:
			case syscall.EAGAIN:
				return false
			default:
				werr = err
				return true
			}
		}
		return true
	})
	if err == nil {
		err = werr
	}
	return n, err
}

// sendRoom is what conn surely buffers: a quarter of its send buffer, as
// the kernel counts its own bookkeeping of each write against it too; at
// least laneRoom.
func sendRoom(conn net.Conn) int {
	room := laneRoom
	if sc, ok := conn.(syscall.Conn); ok {
		if raw, err := sc.SyscallConn(); err == nil {
			_ = raw.Control(func(fd uintptr) {
				if n, err := syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_SNDBUF); err == nil && n/4 > room {
					room = n / 4
				}
			})
		}
	}
	return room
}

// spinReader reads a lane, polling it for a while before it waits. An
// answer usually comes within a few hundred microseconds; a thread that
// went to sleep waiting for it takes tens of microseconds to wake, each
// time, and leaves the next step of the request on a cold processor.
// Between polls it lets other goroutines run. It polls only while the
// machine's processors are partly idle (machineIdle): on a busy machine a
// thread that polls instead of sleeping is scheduled as one that
// computes, behind the others, and the plugin it waits for gets less of
// the processors.
type spinReader struct {
	raw syscall.RawConn
	// Spin is set while polling is worth it: while the reader is the
	// only call waiting.
	spin bool
}

func (s *spinReader) setPolling(on bool) { s.spin = on }

// laneSpin bounds the polling of one read.
const laneSpin = 200 * time.Microsecond

func (s *spinReader) Read(b []byte) (int, error) {
	var n int
	var rerr error
	var until time.Time
	spin := s.spin && machineIdle()
	err := s.raw.Read(func(fd uintptr) bool {
		for {
			n, rerr = rawRead(int(fd), b)
			if rerr == syscall.EINTR {
				continue
			}
			if rerr != syscall.EAGAIN {
				return true
			}
			if !spin {
				return false
			}
			now := time.Now()
			if until.IsZero() {
				until = now.Add(laneSpin)
			} else if now.After(until) {
				return false
			}
			runtime.Gosched()
		}
	})
	if err != nil {
		return 0, err
	}
	if rerr != nil {
		return 0, rerr
	}
	if n == 0 && len(b) > 0 {
		return 0, io.EOF
	}
	return n, nil
}
