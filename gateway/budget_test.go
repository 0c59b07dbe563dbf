package gateway

import (
	"bufio"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
)

// Clients that announce the largest body allowed and then send nothing
// hold only the bytes they sent: they cannot lock everyone else out of
// the body budget until read_timeout.
func TestIdleAnnouncedBodiesDoNotLockOthersOut(t *testing.T) {
	p := testParts()
	p.server.MaxBodySize = 32 << 20
	p.server.MaxBodyBytesInFlight = 64 << 20
	ts := newTest(t, p)
	for i := 0; i < 8; i++ {
		openRequest(t, ts.url, rawPost("/v1/chat/completions", "{", 32<<20))
	}
	eventually(t, "the idle bodies' first bytes to be read", func() bool { return ts.budget.inUse() == 8 })
	if a := postAside(ts.url, "/v1/chat/completions", chatBody); a.code != http.StatusOK {
		t.Fatalf("a request beside 8 idle 32 MiB announcements got %d %s %v", a.code, a.body, a.err)
	}
	if n := ts.budget.inUse(); n != 8 {
		t.Fatalf("%d bytes held, want the 8 sent", n)
	}
}

// A body that stops arriving is a 400 saying so, without the socket
// addresses net/http's own error carries.
func TestUnreadableBodyNamesNoAddresses(t *testing.T) {
	p := testParts()
	s, err := newServer(p)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewUnstartedServer(s.Handler())
	hs.Config.ReadTimeout = 300 * time.Millisecond
	hs.Config.ErrorLog = hclog.NewNullLogger().StandardLogger(nil)
	hs.Start()
	t.Cleanup(hs.Close)

	for name, send := range map[string]func(c net.Conn){
		"timeout":   func(net.Conn) {},
		"truncated": func(c net.Conn) { c.(*net.TCPConn).CloseWrite() },
	} {
		t.Run(name, func(t *testing.T) {
			conn := openRequest(t, hs.URL, rawPost("/v1/chat/completions", `{"model"`, 100))
			send(conn)
			conn.SetReadDeadline(time.Now().Add(10 * time.Second))
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatal(err)
			}
			msg := wantFrontError(t, resp, http.StatusBadRequest, "/v1/chat/completions", "invalid_request_error")
			local, remote := conn.LocalAddr().String(), conn.RemoteAddr().String()
			if strings.Contains(msg, local) || strings.Contains(msg, remote) || strings.Contains(msg, "127.0.0.1") {
				t.Errorf("the error names a socket address: %s", msg)
			}
			if !strings.Contains(msg, name) {
				t.Errorf("the error %q does not say %q", msg, name)
			}
		})
	}
}
