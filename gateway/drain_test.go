package gateway

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hookhost/hookhost/internal/fakeapi"
)

// serve runs s.ListenAndServe until the returned cancel, and returns the
// address it listens on and a channel that gets its result.
func serve(t *testing.T, s *Server) (addr string, cancel context.CancelFunc, done <-chan error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	result := make(chan error, 1)
	returned := make(chan struct{})
	go func() {
		defer close(returned)
		result <- s.ListenAndServe(ctx, func(a string) { ready <- a })
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-returned:
		case <-time.After(60 * time.Second):
			t.Error("ListenAndServe did not return")
		}
	})
	select {
	case addr = <-ready:
	case err := <-result:
		t.Fatalf("ListenAndServe: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the server did not start listening")
	}
	return addr, cancel, result
}

// wantReturned waits for the result serve's done channel gets, which must
// be no error and come within 30 s of what should end ListenAndServe
// (after names it).
func wantReturned(t *testing.T, done <-chan error, after string) {
	t.Helper()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("ListenAndServe: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("ListenAndServe did not return after %s", after)
	}
}

func TestDrainLetsInFlightRequestsFinish(t *testing.T) {
	h := newHeld()
	fake := fakeapi.New(t, h.reply)
	p := bypassParts(t, "openai", fake.URL()+"/v1")
	s, err := newServer(p)
	if err != nil {
		t.Fatal(err)
	}
	addr, stop, done := serve(t, s)
	if s.Addr() != addr {
		t.Fatalf("Addr %q, ready said %q", s.Addr(), addr)
	}
	url := "http://" + addr

	inFlight := make(chan answer, 1)
	go func() { inFlight <- postAside(url, "/v1/chat/completions", chatBody) }()
	<-h.arrived

	ready := func() int {
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
		return rec.Code
	}
	if c := ready(); c != 200 {
		t.Fatalf("readyz %d while serving", c)
	}

	stop()
	eventually(t, "readyz to report draining", func() bool { return ready() == http.StatusServiceUnavailable })
	eventually(t, "the listener to close", func() bool {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err != nil
	})
	select {
	case err := <-done:
		t.Fatalf("ListenAndServe returned (%v) with a request in flight", err)
	default:
	}

	close(h.release)
	a := <-inFlight
	if a.err != nil || a.code != 200 || a.body != `{"ok":true}` {
		t.Fatalf("the in-flight request got %d %q %v", a.code, a.body, a.err)
	}
	wantReturned(t, done, "the drain")
}

// A request still running when drain_timeout passes is cut, and the
// server returns.
func TestDrainDeadlineCutsWhatRemains(t *testing.T) {
	h := newHeld()
	fake := fakeapi.New(t, h.reply)
	p := bypassParts(t, "openai", fake.URL()+"/v1")
	p.server.DrainTimeout = 10 * time.Millisecond
	s, err := newServer(p)
	if err != nil {
		t.Fatal(err)
	}
	addr, stop, done := serve(t, s)
	cut := make(chan error, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/v1/chat/completions", strings.NewReader(chatBody))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		cut <- err
	}()
	<-h.arrived
	stop()
	wantReturned(t, done, "drain_timeout")
	select {
	case err := <-cut:
		if err == nil {
			t.Fatal("the request still running at the drain deadline got an answer")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the request still running at the drain deadline was not cut")
	}
}

func TestListenFailureSaysWhere(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	p := testParts()
	p.server.Listen = ln.Addr().String()
	s, err := newServer(p)
	if err != nil {
		t.Fatal(err)
	}
	err = s.ListenAndServe(context.Background(), nil)
	if err == nil || !strings.Contains(err.Error(), "server.listen") {
		t.Fatalf("listening on a taken port: %v", err)
	}
}

// A client that stops sending half-way through its headers or its body is
// cut when server.header_timeout or server.read_timeout passes, and one
// whose headers are over 1 MiB is refused: neither holds the server.
func TestSlowAndHugeClientsAreCut(t *testing.T) {
	p := testParts()
	p.server.HeaderTimeout = 100 * time.Millisecond
	p.server.ReadTimeout = 200 * time.Millisecond
	s, err := newServer(p)
	if err != nil {
		t.Fatal(err)
	}
	addr, _, _ := serve(t, s)
	for name, send := range map[string]string{
		"headers":      "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: appl",
		"body":         "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"model\":",
		"huge headers": "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("a", 1<<20+64<<10) + "\r\n\r\n",
	} {
		t.Run(name, func(t *testing.T) {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			// A bound for the test, far past the server's timeouts.
			c.SetDeadline(time.Now().Add(30 * time.Second))
			// Written aside: the server may stop reading before the end.
			go io.WriteString(c, send)
			got, err := io.ReadAll(c)
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				t.Fatalf("the server still held the connection after 30 s; read %q", got)
			}
			// The 431 may be lost to the reset of a connection whose
			// unread bytes the server dropped; what it must not be is
			// anything else.
			if name == "huge headers" && len(got) > 0 && !strings.Contains(string(got), " 431 ") {
				t.Errorf("huge headers: %q, want 431", got)
			}
		})
	}
	resp, err := http.Get("http://" + addr + "/healthz")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("the server does not serve after cutting slow clients: %v", err)
	}
	resp.Body.Close()
}
