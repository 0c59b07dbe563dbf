package statestore_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookhost/hookhost/gateway/statestore"
	"github.com/hookhost/hookhost/gateway/statestore/statestoretest"
)

// recoverWithin bounds the wait for a restarted server to be used again:
// go-redis paces its dials once they fail.
const recoverWithin = 30 * time.Second

// While the server is down every call fails with an error naming it, and
// the outage is reported once; when it is back the same client serves
// again, and the recovery is reported once.
func TestRedisRestart(t *testing.T) {
	srv := statestoretest.StartRedis(t)
	var (
		mu     sync.Mutex
		states []error
	)
	s := newRedis(t, srv, statestore.RedisOptions{
		DialTimeout: time.Second, ReadTimeout: time.Second, WriteTimeout: time.Second,
		OnStateChange: func(err error) {
			mu.Lock()
			defer mu.Unlock()
			states = append(states, err)
		},
	})
	seen := func() []error {
		mu.Lock()
		defer mu.Unlock()
		return append([]error(nil), states...)
	}
	ctx := context.Background()
	if err := s.Put(ctx, "a", "k", []byte("v"), time.Hour); err != nil {
		t.Fatal(err)
	}
	r, err := s.Reserve(ctx, "a", "rpm", 1, 10, time.Hour)
	if err != nil {
		t.Fatal(err)
	}

	srv.Stop()
	named := "statestore: redis at " + srv.Addr() + ": "
	for range 2 {
		_, ok, err := s.Get(ctx, "a", "k")
		if ok {
			t.Fatal("Get found a value on a server that is down")
		}
		_, rerr := s.Reserve(ctx, "a", "rpm", 1, 10, time.Hour)
		_, derr := s.Delete(ctx, "a", "k")
		for op, err := range map[string]error{
			"Put": s.Put(ctx, "a", "k", []byte("v"), time.Hour), "Get": err, "Delete": derr,
			"Reserve": rerr, "Settle": s.Settle(ctx, r, 1), "Health": s.Health(ctx),
		} {
			if err == nil || !strings.HasPrefix(err.Error(), named) {
				t.Fatalf("%s with the server down: %v, want an error starting %q", op, err, named)
			}
		}
	}
	if got := seen(); len(got) != 1 || got[0] == nil || !strings.HasPrefix(got[0].Error(), named) {
		t.Fatalf("state changes during one outage: %v, want one error naming the server", got)
	}

	srv.Restart()
	deadline := time.Now().Add(recoverWithin)
	for err := s.Health(ctx); err != nil; err = s.Health(ctx) {
		if time.Now().After(deadline) {
			t.Fatalf("the restarted server is still not used after %v: %v", recoverWithin, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := s.Put(ctx, "a", "k2", []byte("again"), time.Hour); err != nil {
		t.Fatal(err)
	}
	if v, ok, err := s.Get(ctx, "a", "k2"); err != nil || !ok || string(v) != "again" {
		t.Fatalf("Get after the restart = %q %v %v", v, ok, err)
	}
	if r, err := s.Reserve(ctx, "a", "rpm", 1, 10, time.Hour); err != nil || !r.OK {
		t.Fatalf("Reserve after the restart = %+v %v", r, err)
	}
	if got := seen(); len(got) != 2 || got[1] != nil {
		t.Fatalf("state changes over one outage and its end: %v, want the error then nil", got)
	}
}

// Two clients of one server with one prefix, as two replicas, see each
// other's values and share one budget exactly under concurrent load.
func TestRedisReplicasShare(t *testing.T) {
	srv := statestoretest.StartRedis(t)
	replicas := []*statestore.Redis{
		newRedis(t, srv, statestore.RedisOptions{Prefix: "shared:"}),
		newRedis(t, srv, statestore.RedisOptions{Prefix: "shared:"}),
	}
	a, b := replicas[0], replicas[1]
	ctx := context.Background()
	if err := a.Put(ctx, "t", "resp_1", []byte("from a"), time.Hour); err != nil {
		t.Fatal(err)
	}
	if v, ok, err := b.Get(ctx, "t", "resp_1"); err != nil || !ok || string(v) != "from a" {
		t.Fatalf("b reads %q %v %v, want a's value", v, ok, err)
	}
	if gone, err := b.Delete(ctx, "t", "resp_1"); err != nil || !gone {
		t.Fatalf("b's Delete = %v %v", gone, err)
	}
	if _, ok, err := a.Get(ctx, "t", "resp_1"); err != nil || ok {
		t.Fatalf("a still reads a value b deleted (%v)", err)
	}

	// Each replica runs requests that take one of a requests budget, then
	// reserve an estimate of 10 tokens and settle 7 used.
	const (
		workers, each       = 6, 40
		rpm, tpm            = 150, 1000
		estimate, used      = 10, 7
		window              = time.Hour
		attempts            = 4
		reqKey, tokKey, who = "rpm", "tpm", "tenant"
	)
	for try := range attempts {
		reqs, toks := fmt.Sprint(reqKey, try), fmt.Sprint(tokKey, try)
		var (
			wg                 sync.WaitGroup
			mu                 sync.Mutex
			admitted, tokensOK int64
			starts             = map[time.Time]bool{}
			errs               []error
		)
		for _, s := range replicas {
			for range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range each {
						r, err := s.Reserve(ctx, who, reqs, 1, rpm, window)
						var tr statestore.Reservation
						if err == nil {
							tr, err = s.Reserve(ctx, who, toks, estimate, tpm, window)
						}
						if err == nil && tr.OK {
							err = s.Settle(ctx, tr, used-estimate)
						}
						mu.Lock()
						if err != nil {
							errs = append(errs, err)
						}
						if r.OK {
							admitted++
						}
						if tr.OK {
							tokensOK++
						}
						starts[r.Start], starts[tr.Start] = true, true
						mu.Unlock()
					}
				}()
			}
		}
		wg.Wait()
		if len(errs) > 0 {
			t.Fatal(errors.Join(errs...))
		}
		r, _ := a.Reserve(ctx, who, reqs, 0, 0, window)
		tr, err := b.Reserve(ctx, who, toks, 0, 0, window)
		if err != nil {
			t.Fatal(err)
		}
		starts[r.Start], starts[tr.Start] = true, true
		if len(starts) != 1 {
			continue // a window ended during the run: try again
		}
		if admitted != rpm || r.Count != rpm {
			t.Fatalf("%d requests from 2 replicas under a limit of %d: %d admitted, count %d", 2*workers*each, rpm, admitted, r.Count)
		}
		if tr.Count != used*tokensOK || tr.Count > tpm || tokensOK < tpm/estimate {
			t.Fatalf("%d token reservations admitted, count %d: want %d used each, within %d, and at least %d admitted",
				tokensOK, tr.Count, used, tpm, tpm/estimate)
		}
		return
	}
	t.Fatalf("every one of %d tries straddled a window's end", attempts)
}

// The password comes from the URL; a wrong one is an outage, named.
func TestRedisPassword(t *testing.T) {
	srv := statestoretest.StartRedis(t)
	raw := rawClient(t, srv)
	ctx := context.Background()
	if err := raw.ConfigSet(ctx, "requirepass", "s3cret").Err(); err != nil {
		t.Fatal(err)
	}
	good, err := statestore.NewRedis(statestore.RedisOptions{URL: "redis://:s3cret@" + srv.Addr()})
	if err != nil {
		t.Fatal(err)
	}
	defer good.Close()
	if err := good.Put(ctx, "a", "k", []byte("v"), time.Hour); err != nil {
		t.Fatalf("Put with the password from the URL: %v", err)
	}
	var down []error
	bad, err := statestore.NewRedis(statestore.RedisOptions{
		URL:           "redis://:wrong@" + srv.Addr(),
		OnStateChange: func(err error) { down = append(down, err) },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer bad.Close()
	_, ok, err := bad.Get(ctx, "a", "k")
	named := "statestore: redis at " + srv.Addr() + ": "
	if ok || err == nil || !strings.HasPrefix(err.Error(), named) || strings.Contains(err.Error(), ":wrong@") {
		t.Fatalf("Get with a wrong password = %v %v, want an error starting %q", ok, err, named)
	}
	if len(down) != 1 || down[0] == nil {
		t.Fatalf("state changes with a wrong password: %v, want one outage", down)
	}
}
