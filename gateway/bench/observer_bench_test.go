package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hookhost/hookhost"
	"github.com/hookhost/hookhost/hooks"
)

// serveObserved is serveGateway's gateway route with the observer plugin:
// one remote plugin answering pre_api_request_mutable and observing
// post_llm_call.
func serveObserved(b *testing.B, up string) (string, *hookhost.Host) {
	cfg := benchConfig(up)
	withPlugin(cfg, "observerplugin", buildPlugin(b, "./internal/observerplugin"), `{}`)
	return serveConfig(b, cfg, true)
}

// observed reports how the observer's events of one run fared: delivered,
// failed and dropped, per request. Every event must be delivered or
// counted; none may fail.
func observed(b *testing.B, h *hookhost.Host, before hookStats) {
	after := statsOf(h)
	reqs := float64(b.N)
	b.ReportMetric(float64(after.calls-before.calls)/reqs, "observed/op")
	b.ReportMetric(float64(after.dropped-before.dropped)/reqs, "dropped/op")
	if after.failed != before.failed {
		b.Fatalf("%d observer deliveries failed", after.failed-before.failed)
	}
}

type hookStats struct{ calls, failed, dropped uint64 }

// statsOf flushes the observer queue and reads its counters.
func statsOf(h *hookhost.Host) hookStats {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_ = h.Bus().Flush(ctx)
	st := h.Bus().Stats()
	var s hookStats
	for _, hs := range st.Hooks {
		if hs.Hook == hooks.PostLLMCall {
			s.calls += hs.Calls
			for _, n := range hs.Failures {
				s.failed += n
			}
		}
	}
	for _, n := range st.Dropped {
		s.dropped += n
	}
	return s
}

// cpu is CPU time spent so far by this process (the host, the fake
// upstream and the clients) and by the plugin processes of h.
type cpu struct{ self, plugins time.Duration }

func cpuOf(b *testing.B, h *hookhost.Host) cpu {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	c := cpu{self: time.Duration(ru.Utime.Nano() + ru.Stime.Nano())}
	if h == nil {
		return c
	}
	for _, st := range h.Plugins() {
		// schedstat's first field is the time the thread ran, in ns.
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", st.PID))
		for _, t := range tasks {
			data, err := os.ReadFile(t)
			if err != nil {
				continue // the thread ended
			}
			if f := strings.Fields(string(data)); len(f) > 0 {
				ns, _ := strconv.ParseInt(f[0], 10, 64)
				c.plugins += time.Duration(ns)
			}
		}
	}
	return c
}

// reportCPU reports the CPU time per request since before, in µs: this
// process's, and the plugins' (threads that ended during the run are not
// counted; the Go runtime keeps its threads).
func reportCPU(b *testing.B, h *hookhost.Host, before cpu) {
	after := cpuOf(b, h)
	b.ReportMetric(float64((after.self-before.self).Microseconds())/float64(b.N), "self-cpu-µs/op")
	if h != nil {
		b.ReportMetric(float64((after.plugins-before.plugins).Microseconds())/float64(b.N), "plugin-cpu-µs/op")
	}
}

// BenchmarkGatewayObserver is the gateway route with no plugin and with one
// remote plugin that answers pre_api_request_mutable and observes
// post_llm_call: what an observer adds to a request that it does not
// delay. The observer's events are reported per request (observed/op,
// dropped/op) once its queue is flushed, outside the timed part, and so is
// the CPU time per request of the benchmark's process (host, upstream and
// clients: self-cpu-µs/op) and of the plugin's (plugin-cpu-µs/op), which a
// loaded machine disturbs less than latency.
func BenchmarkGatewayObserver(b *testing.B) {
	up := fakeUpstream(b)
	plain, _ := serveGateway(b, up.url, true, false)
	withObserver, h := serveObserved(b, up.url)
	for _, tg := range []struct {
		name string
		root string
		host *hookhost.Host
	}{{"gateway", plain, nil}, {"observer", withObserver, h}} {
		for _, conc := range []int{1, 64} {
			b.Run(fmt.Sprintf("%s/clients=%d", tg.name, conc), func(b *testing.B) {
				var before hookStats
				if tg.host != nil {
					before = statsOf(tg.host)
				}
				cpu0 := cpuOf(b, tg.host)
				s := measure(b, up, tg.root, conc)
				if tg.host != nil {
					// The deliveries still queued are the run's too.
					statsOf(tg.host)
				}
				reportCPU(b, tg.host, cpu0)
				if s.errors > 0 {
					b.Fatalf("%d of %d requests failed; the first: %v", s.errors, b.N, s.firstErr)
				}
				if tg.host != nil {
					pluginAsked(b, tg.host, b.N)
					observed(b, tg.host, before)
				}
			})
		}
	}
}
