package statestore_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hookhost/hookhost/gateway/statestore"
	"github.com/hookhost/hookhost/gateway/statestore/statestoretest"
)

// BenchmarkStore is what each backend adds to a request, one call at a
// time: put and get of a 4 KiB stored response (compressed by Redis), and
// a counter's reserve and settle as a rate-limited request makes them.
// redis-bounded keeps each tenant's index, for TenantEntries and
// TenantBytes.
func BenchmarkStore(b *testing.B) {
	value := []byte(strings.Repeat(`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Here is the answer."}]},`, 40))[:4<<10]
	backends := []struct {
		name string
		open func(*testing.B) statestoretest.Backend
	}{
		{"memory", func(*testing.B) statestoretest.Backend {
			return statestore.NewMemory(statestore.Limits{Entries: 1 << 20, Bytes: 1 << 30}, nil)
		}},
		{"redis", func(b *testing.B) statestoretest.Backend {
			return newRedis(b, statestoretest.StartRedis(b), statestore.RedisOptions{})
		}},
		{"redis-bounded", func(b *testing.B) statestoretest.Backend {
			return newRedis(b, statestoretest.StartRedis(b), statestore.RedisOptions{TenantEntries: 1 << 20, TenantBytes: 1 << 30})
		}},
	}
	for _, be := range backends {
		b.Run(be.name, func(b *testing.B) {
			s, ctx := be.open(b), context.Background()
			const keys = 1000
			for i := range keys {
				if err := s.Put(ctx, "tenant", fmt.Sprint("resp_", i), value, time.Hour); err != nil {
					b.Fatal(err)
				}
			}
			b.Run("put", func(b *testing.B) {
				b.SetBytes(int64(len(value)))
				i := 0
				for b.Loop() {
					if err := s.Put(ctx, "tenant", fmt.Sprint("resp_", i%keys), value, time.Hour); err != nil {
						b.Fatal(err)
					}
					i++
				}
			})
			b.Run("get", func(b *testing.B) {
				b.SetBytes(int64(len(value)))
				i := 0
				for b.Loop() {
					if _, ok, err := s.Get(ctx, "tenant", fmt.Sprint("resp_", i%keys)); err != nil || !ok {
						b.Fatal(ok, err)
					}
					i++
				}
			})
			b.Run("counter", func(b *testing.B) {
				for b.Loop() {
					r, err := s.Reserve(ctx, "tenant", "tpm", 1000, 0, time.Minute)
					if err == nil {
						err = s.Settle(ctx, r, -100)
					}
					if err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}
