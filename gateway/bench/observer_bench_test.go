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
// upstream and the clients) and by the plugin processes of h, with what
// the scheduler says of their threads (see schedOf).
type cpu struct {
	self, plugins          time.Duration
	selfSched, pluginSched sched
}

// sched is what /proc/PID/task/*/schedstat says of a process's threads,
// summed: how long they waited, runnable, for a processor, and how many
// times one was given to them. On a small or virtual machine a switch
// between processes costs tens of microseconds, and these say how many a
// request took and how long the plugin waited to run.
type sched struct {
	waited   time.Duration
	switches int64
	read     bool // some thread's schedstat was read
}

func cpuOf(b *testing.B, h *hookhost.Host) cpu {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	c := cpu{self: time.Duration(ru.Utime.Nano() + ru.Stime.Nano())}
	_, c.selfSched = schedOf(os.Getpid())
	if h == nil {
		return c
	}
	for _, st := range h.Plugins() {
		ran, s := schedOf(st.PID)
		c.plugins += ran
		c.pluginSched.waited += s.waited
		c.pluginSched.switches += s.switches
		c.pluginSched.read = c.pluginSched.read || s.read
	}
	return c
}

// schedOf sums the schedstat of pid's threads: the time they ran, the time
// they waited to run, and the times they were run. Threads that ended are
// not counted; the Go runtime keeps its threads. Where the kernel keeps no
// schedstat, read is false.
func schedOf(pid int) (time.Duration, sched) {
	var ran time.Duration
	var s sched
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	for _, t := range tasks {
		data, err := os.ReadFile(t)
		if err != nil {
			continue // the thread ended
		}
		f := strings.Fields(string(data))
		if len(f) < 3 {
			continue
		}
		r, _ := strconv.ParseInt(f[0], 10, 64)
		w, _ := strconv.ParseInt(f[1], 10, 64)
		n, _ := strconv.ParseInt(f[2], 10, 64)
		ran += time.Duration(r)
		s.waited += time.Duration(w)
		s.switches += n
		s.read = true
	}
	return ran, s
}

// reportCPU reports, per request since before, the CPU time in µs of this
// process and of the plugins, the times each was given a processor, and
// how long the plugins waited for one.
func reportCPU(b *testing.B, h *hookhost.Host, before cpu) {
	after := cpuOf(b, h)
	n := float64(b.N)
	b.ReportMetric(float64((after.self-before.self).Microseconds())/n, "self-cpu-µs/op")
	// Without schedstat nothing is reported, rather than zeros that would
	// read as measured.
	if after.selfSched.read {
		b.ReportMetric(float64(after.selfSched.switches-before.selfSched.switches)/n, "self-switches/op")
	}
	if h != nil && after.pluginSched.read {
		b.ReportMetric(float64((after.plugins-before.plugins).Microseconds())/n, "plugin-cpu-µs/op")
		b.ReportMetric(float64(after.pluginSched.switches-before.pluginSched.switches)/n, "plugin-switches/op")
		b.ReportMetric(float64((after.pluginSched.waited-before.pluginSched.waited).Microseconds())/n, "plugin-wait-µs/op")
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
