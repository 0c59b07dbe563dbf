package statestore_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hookhost/hookhost/gateway/statestore"
	"github.com/hookhost/hookhost/gateway/statestore/statestoretest"
)

// fakeClock is a time source the suite moves by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) sleep(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

const (
	memoryTenantBytes = 8 << 20
	redisMaxValue     = 2 << 20
)

func newMemory(t *testing.T) statestoretest.Harness {
	c := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	m := statestore.NewMemory(statestore.Limits{Entries: 1000, Bytes: 64 << 20, TenantBytes: memoryTenantBytes}, c.now)
	return statestoretest.Harness{
		Backend: m, Now: c.now, Sleep: c.sleep, TTL: time.Minute, Fits: 1 << 20, TooLarge: memoryTenantBytes,
		Bounded: func(t *testing.T, entries int, bytes int64) statestoretest.Backend {
			return statestore.NewMemory(statestore.Limits{Entries: 1000, Bytes: 64 << 20, TenantEntries: entries, TenantBytes: bytes}, c.now)
		},
	}
}

func TestMemoryConformance(t *testing.T) { statestoretest.Run(t, newMemory) }

// newRedis is a client of srv whose keys no other test's share.
func newRedis(t testing.TB, srv *statestoretest.RedisServer, opts statestore.RedisOptions) *statestore.Redis {
	t.Helper()
	opts.URL = srv.URL()
	if opts.Prefix == "" {
		opts.Prefix = "test:" + t.Name() + ":"
	}
	if opts.MaxValue == 0 {
		opts.MaxValue = redisMaxValue
	}
	r, err := statestore.NewRedis(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// The suite runs on values as they are without tenant bounds, and indexed
// with them.
func TestRedisConformance(t *testing.T) {
	srv := statestoretest.StartRedis(t)
	for _, tc := range []struct {
		name string
		opts statestore.RedisOptions
	}{
		{"plain", statestore.RedisOptions{}},
		{"indexed", statestore.RedisOptions{TenantEntries: 1000, TenantBytes: 64 << 20}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			statestoretest.Run(t, func(t *testing.T) statestoretest.Harness {
				return statestoretest.Harness{
					Backend: newRedis(t, srv, tc.opts),
					Now:     time.Now, Sleep: time.Sleep, TTL: 100 * time.Millisecond,
					Fits: 1 << 20, TooLarge: redisMaxValue + 1,
					Bounded: func(t *testing.T, entries int, bytes int64) statestoretest.Backend {
						return newRedis(t, srv, statestore.RedisOptions{Prefix: "test:" + t.Name() + fmt.Sprint(":", entries, ":", bytes, ":"), TenantEntries: entries, TenantBytes: bytes})
					},
				}
			})
		})
	}
}

// rawClient reads what the store wrote, as the server keeps it.
func rawClient(t *testing.T, srv *statestoretest.RedisServer) *redis.Client {
	o, err := redis.ParseURL(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(o)
	t.Cleanup(func() { c.Close() })
	return c
}

// Keys are <prefix>v1:<tenant>:<key>; large values are kept compressed.
func TestRedisKeysAndCompression(t *testing.T) {
	srv := statestoretest.StartRedis(t)
	s := newRedis(t, srv, statestore.RedisOptions{Prefix: "hh:"})
	raw := rawClient(t, srv)
	ctx := context.Background()
	big := []byte(strings.Repeat(`{"type":"message","role":"user","content":"hi"},`, 1000))
	if err := s.Put(ctx, "t:1", "resp_1", big, time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, "t:1", "small", []byte("v"), time.Hour); err != nil {
		t.Fatal(err)
	}
	n, err := raw.StrLen(ctx, "hh:v1:t%3A1:resp_1").Result()
	if err != nil || n == 0 || n > int64(len(big)/4) {
		t.Fatalf("the %d-byte value is kept in %d bytes (%v), want compressed under its key", len(big), n, err)
	}
	if v, err := raw.Get(ctx, "hh:v1:t%3A1:small").Result(); err != nil || !strings.HasSuffix(v, ":v") {
		t.Fatalf("a small value is kept as %q (%v)", v, err)
	}
	if ms, err := raw.PTTL(ctx, "hh:v1:t%3A1:small").Result(); err != nil || ms <= 0 || ms > time.Hour {
		t.Fatalf("PTTL = %v %v, want the ttl put", ms, err)
	}
}

// A key that holds something the store did not write is an error naming
// the key, not a value.
func TestRedisForeignValue(t *testing.T) {
	srv := statestoretest.StartRedis(t)
	s := newRedis(t, srv, statestore.RedisOptions{Prefix: "hh:"})
	raw := rawClient(t, srv)
	ctx := context.Background()
	for i, v := range []string{"plain", "x10:abc", "z10:not deflate"} {
		key := fmt.Sprint("k", i)
		raw.Set(ctx, "hh:v1:a:"+key, v, time.Hour)
		if got, ok, err := s.Get(ctx, "a", key); err == nil || ok || !strings.Contains(err.Error(), "hh:v1:a:"+key) {
			t.Fatalf("Get of %q = %q %v %v, want an error naming the key", v, got, ok, err)
		}
	}
}

func TestRedisURL(t *testing.T) {
	for _, url := range []string{"http://h:1", "redis://user:s3cret@h:1/notadb", "redis://user:s3cret@h:1/0/1", "redis://user:s3cret@h :1"} {
		_, err := statestore.NewRedis(statestore.RedisOptions{URL: url})
		if err == nil || !strings.HasPrefix(err.Error(), "statestore: redis URL: ") || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("NewRedis(%q): %v, want an error about the URL that does not show the password", url, err)
		}
	}
	s, err := statestore.NewRedis(statestore.RedisOptions{URL: "rediss://:pw@example.com:6380/2"})
	if err != nil || s.Addr() != "example.com:6380" {
		t.Fatalf("rediss URL: %v, addr %q", err, s.Addr())
	}
	s.Close()
}

// With tenant bounds, a value the server dropped by itself (maxmemory) is
// uncharged when next asked for, and the index lives no longer than the
// tenant's values.
func TestRedisIndexHeals(t *testing.T) {
	srv := statestoretest.StartRedis(t)
	s := newRedis(t, srv, statestore.RedisOptions{Prefix: "hh:", TenantEntries: 2})
	raw := rawClient(t, srv)
	ctx := context.Background()
	for _, k := range []string{"a", "b"} {
		if err := s.Put(ctx, "t", k, []byte("v"), time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	raw.Del(ctx, "hh:v1:t:a") // as maxmemory would
	if _, ok, err := s.Get(ctx, "t", "a"); ok || err != nil {
		t.Fatalf("Get of a dropped value = %v %v", ok, err)
	}
	if err := s.Put(ctx, "t", "c", []byte("v"), time.Hour); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.Get(ctx, "t", "b"); !ok || err != nil {
		t.Fatalf("b was dropped to make room a dropped value still held (%v)", err)
	}
	ms, err := raw.PTTL(ctx, "hh:i1:t").Result()
	if err != nil || ms <= 0 || ms > time.Hour {
		t.Fatalf("the index's PTTL = %v %v, want that of the tenant's last value", ms, err)
	}
	for _, k := range []string{"b", "c"} {
		if _, err := s.Delete(ctx, "t", k); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := raw.Exists(ctx, "hh:i1:t", "hh:s1:t").Result(); err != nil || n != 0 {
		t.Fatalf("%d index keys left for a tenant holding nothing (%v)", n, err)
	}
}
