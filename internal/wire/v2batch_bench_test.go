package wire_test

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/hookstretch"
)

// cpuTime is the process's user and system CPU time so far: the host's
// and the plugin's side together, both being in this process here.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkV2ObserverDelivery delivers post_llm_call events over protocol
// v2, one call per event and in batches, and reports the wall time and the
// CPU time (host and plugin together) per event.
func BenchmarkV2ObserverDelivery(b *testing.B) {
	p := &hooks.Funcs{Name: "ledger", PostLLMCallFunc: func(context.Context, hooks.Inference) error { return nil }}
	ev := hooks.Inference{SessionID: "s", Model: "m"}
	for _, size := range []int{1, 4, 16, 64} {
		name := fmt.Sprintf("batch=%d", size)
		if size == 1 {
			name = "one-by-one"
		}
		b.Run(name, func(b *testing.B) {
			c := connect(b, 2, p, nil).client
			if _, err := c.Describe(context.Background()); err != nil {
				b.Fatal(err)
			}
			events := make([]hookstretch.Event, size)
			for i := range events {
				events[i] = hookstretch.Event{Hook: hooks.PostLLMCall, Payload: ev, Timeout: time.Minute}
			}
			batcher := c.(hookstretch.Batcher)
			ctx := context.Background()
			deliver := func() {
				if size == 1 {
					cctx, cancel := context.WithTimeout(ctx, time.Minute)
					_, err := c.Handle(cctx, hooks.PostLLMCall, ev)
					cancel()
					if err != nil {
						b.Fatal(err)
					}
					return
				}
				err := batcher.ObserveBatch(ctx, events, func(_ int, err error) {
					if err != nil {
						b.Fatal(err)
					}
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			deliver() // opens the stream
			rounds := (b.N + size - 1) / size
			cpu0 := cpuTime(b)
			b.ResetTimer()
			for range rounds {
				deliver()
			}
			b.StopTimer()
			n := float64(rounds * size)
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n, "ns/event")
			b.ReportMetric(float64((cpuTime(b)-cpu0).Nanoseconds())/n, "cpu-ns/event")
		})
	}
}
