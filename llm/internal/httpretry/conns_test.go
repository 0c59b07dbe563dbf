package httpretry

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// A provider under concurrent calls reuses its connections: batches of 32
// calls at once open about 32 connections in all, not about 30 more per
// batch as a transport that keeps 2 idle connections per host would.
func TestConcurrentCallsReuseConnections(t *testing.T) {
	var opened atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{}`)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			opened.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()

	c := &Client{Provider: "test", Timeout: 30 * time.Second}
	const batch, batches = 32, 5
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for range batches {
		var wg sync.WaitGroup
		start := make(chan struct{})
		for range batch {
			wg.Go(func() {
				<-start
				resp, err := c.Do(ctx, Request{Method: http.MethodPost, URL: srv.URL, Body: []byte(`{}`)})
				if err != nil {
					t.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			})
		}
		close(start)
		wg.Wait()
	}
	if n := opened.Load(); n > 2*batch {
		t.Fatalf("%d batches of %d concurrent calls opened %d connections; want at most %d (connections are not being reused)", batches, batch, n, 2*batch)
	}
}
