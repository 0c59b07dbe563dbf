package wire

import (
	"context"
	"net"
	"os"
	"syscall"
	"testing"

	"google.golang.org/grpc"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/hookstretch"
)

// SetRunStretch makes the version 2 server answer stretches with f until
// restore is called.
func SetRunStretch(f func(ctx context.Context, p hooks.Plugin, req hookstretch.Request, emit func(any, error))) (restore func()) {
	old := runStretch
	runStretch = f
	return func() { runStretch = old }
}

// SetMaxInFlight bounds the calls one version 2 stream runs at once until
// restore is called.
func SetMaxInFlight(n int) (restore func()) {
	old := maxInFlight
	maxInFlight = n
	return func() { maxInFlight = old }
}

// RegisterV2Lane serves protocol version 2 for p on s and on lane.
func RegisterV2Lane(s grpc.ServiceRegistrar, p hooks.Plugin, configure ConfigureFunc, lane net.Conn) {
	registerV2(s, p, configure, lane)
}

// LanePair makes a lane, as the host does: a connected pair of Unix
// sockets, the host's end and the plugin's, closed when the test ends.
func LanePair(t testing.TB) (hostEnd, pluginEnd net.Conn) {
	t.Helper()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	ends := make([]net.Conn, 2)
	for i, fd := range fds {
		f := os.NewFile(uintptr(fd), "lane")
		c, err := net.FileConn(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		ends[i] = c
	}
	return ends[0], ends[1]
}
