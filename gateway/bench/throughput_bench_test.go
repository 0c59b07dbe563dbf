package bench

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The throughput benchmark's shape: sixteen clients, as the goal is read
// at; each target run for a slice in turn, the order turning each round.
const (
	throughputClients = 16
	throughputRounds  = 6
	throughputSlice   = 500 * time.Millisecond
)

// BenchmarkGatewayThroughput measures the throughput goal's figures side
// by side: the gateway route at sixteen clients with no plugin, with the
// remote plugin of BenchmarkGatewayLatency, and a floor, each for half a
// second in turn, six rounds, the order turning each round. Each round's
// ratios divide figures taken within a second or two of each other. Run
// one after the other, as BenchmarkGatewayLatency runs its targets, two
// targets' figures are minutes apart, and a shared machine's speed moves
// by a fifth in minutes: the same no-plugin route has measured 9,411 and
// 7,683 req/s in one run of make bench, in two benchmarks.
//
// The floor is the gateway route with no plugin that, in each request's
// path, crosses to another process and back twice, as the plugin's two
// stages do: one byte to an echo process (internal/echo) and back as the
// upstream takes the request, and again as the client has its answer. It
// speaks no protocol: it is what two crossings cost on this machine when
// each is a plain write and a blocking read, the bound a plugin's protocol
// is held to. A plugin route can do better only by what the crossings
// themselves do, sharing writes between requests or polling instead of
// sleeping; plugin/floor is the share of the floor's throughput the
// plugin route reaches.
//
// Per target it reports the median req/s over the rounds and the CPU time
// per request of the benchmark's process with its child (the plugin, the
// echo process), and of the child alone, and the medians of each round's
// ratios.
func BenchmarkGatewayThroughput(b *testing.B) {
	up := fakeUpstream(b)
	plain, _ := serveGateway(b, up.url, true, false)
	withPlugin, h := serveGateway(b, up.url, true, true)
	cross, echoPID := echoCrossing(b, 2*throughputClients)
	floorUp := fakeUpstreamWith(b, cross)
	floor, _ := serveGateway(b, floorUp.url, true, false)
	pluginPID := 0
	for _, st := range h.Plugins() {
		pluginPID = st.PID
	}
	targets := []throughputTarget{
		{name: "gateway", root: plain},
		{name: "plugin", root: withPlugin, child: pluginPID},
		{name: "floor", root: floor, child: echoPID, after: cross},
	}
	c := client(throughputClients)
	defer c.CloseIdleConnections()
	for i := range targets {
		// Opens every client's connection and warms first-call paths.
		targets[i].run(b, c, throughputSlice/5)
	}
	pluginRequests := 0
	rps := map[string][]float64{}
	cpu := map[string][]float64{}
	childCPU := map[string][]float64{}
	ratios := map[string][]float64{}
	for i := range b.N * throughputRounds {
		round := map[string]float64{}
		for j := range targets {
			t := &targets[(i+j)%len(targets)]
			s := t.run(b, c, throughputSlice)
			round[t.name] = s.perSec
			rps[t.name] = append(rps[t.name], s.perSec)
			cpu[t.name] = append(cpu[t.name], s.cpuPerRequest)
			if t.child != 0 {
				childCPU[t.name] = append(childCPU[t.name], s.childCPUPerRequest)
			}
			if t.name == "plugin" {
				pluginRequests += s.requests
			}
		}
		for _, r := range [][2]string{{"plugin", "gateway"}, {"floor", "gateway"}, {"plugin", "floor"}} {
			ratios[r[0]+"/"+r[1]] = append(ratios[r[0]+"/"+r[1]], round[r[0]]/round[r[1]])
		}
	}
	pluginAsked(b, h, pluginRequests)
	for _, t := range targets {
		b.ReportMetric(medianOf(rps[t.name]), t.name+"-req/s")
		b.ReportMetric(medianOf(cpu[t.name]), t.name+"-cpu-µs/req")
		if t.child != 0 {
			b.ReportMetric(medianOf(childCPU[t.name]), t.name+"-child-cpu-µs/req")
		}
	}
	for name, v := range ratios {
		b.ReportMetric(medianOf(v), name)
	}
}

// throughputTarget is one route BenchmarkGatewayThroughput measures: its
// API root, the pid of the process it crosses to (0 for none), and what
// each client does once it has an answer.
type throughputTarget struct {
	name  string
	root  string
	child int
	after func() error
}

// sliceRun is what one target did in one slice.
type sliceRun struct {
	requests int
	perSec   float64
	// CPU time per request in µs: the benchmark's process and the child
	// together, and the child's alone.
	cpuPerRequest, childCPUPerRequest float64
}

// run sends requests to t from throughputClients clients, each waiting
// for its answer before sending the next, for d, and says how many were
// answered per second and at what CPU time each. A failed request fails
// the benchmark.
func (t *throughputTarget) run(b *testing.B, c *http.Client, d time.Duration) sliceRun {
	var (
		done     atomic.Int64
		errOnce  sync.Once
		firstErr error
		wg       sync.WaitGroup
	)
	cpuBefore, childBefore := t.cpu(b)
	start := time.Now()
	stop := start.Add(d)
	for range throughputClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(stop) {
				if err := callThen(c, t.root, t.after); err != nil {
					errOnce.Do(func() { firstErr = err })
					return
				}
				done.Add(1)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if firstErr != nil {
		b.Fatalf("%s: a request failed: %v", t.name, firstErr)
	}
	n := int(done.Load())
	if n == 0 {
		b.Fatalf("%s: no request was answered in %v", t.name, d)
	}
	cpuAfter, childAfter := t.cpu(b)
	perRequest := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(n) }
	return sliceRun{requests: n, perSec: float64(n) / elapsed.Seconds(),
		cpuPerRequest: perRequest(cpuAfter - cpuBefore), childCPUPerRequest: perRequest(childAfter - childBefore)}
}

// cpu is the CPU time the benchmark's process and t's child have used
// together, and the child alone.
func (t *throughputTarget) cpu(b *testing.B) (all, child time.Duration) {
	if t.child != 0 {
		child, _ = schedOf(t.child)
	}
	return cpuOf(b, nil).self + child, child
}

// echoCrossing starts the echo process and returns a crossing to it (one
// byte there and back over a connection of a pool of conns, so concurrent
// requests cross at once) and its pid. Two crossings per request may be
// under way at once for each client.
func echoCrossing(b *testing.B, conns int) (func() error, int) {
	sock := filepath.Join(b.TempDir(), "echo.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		b.Fatal(err)
	}
	ul := l.(*net.UnixListener)
	// The socket's file stays for the pool to dial once the echo process
	// holds the listener.
	ul.SetUnlinkOnClose(false)
	lf, err := ul.File()
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(buildPlugin(b, "./internal/echo"))
	cmd.ExtraFiles = []*os.File{lf}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	lf.Close()
	l.Close()
	b.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	pool := make(chan net.Conn, conns)
	for range cap(pool) {
		conn, err := net.Dial("unix", sock)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { conn.Close() })
		pool <- conn
	}
	return func() error {
		conn := <-pool
		defer func() { pool <- conn }()
		var buf [1]byte
		if _, err := conn.Write(buf[:]); err != nil {
			return fmt.Errorf("crossing to the echo process: %w", err)
		}
		if _, err := io.ReadFull(conn, buf[:]); err != nil {
			return fmt.Errorf("crossing back from the echo process: %w", err)
		}
		return nil
	}, cmd.Process.Pid
}

// medianOf is the median of v, which it sorts.
func medianOf(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}
