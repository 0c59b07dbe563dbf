package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookhost/hookhost"
	"github.com/hookhost/hookhost/config"
	"github.com/hookhost/hookhost/gateway"
	"github.com/hookhost/hookhost/gateway/internal/nginxtest"
)

const (
	model  = "gpt-bench"
	keyEnv = "HOOKHOST_BENCH_UPSTREAM_KEY"
)

// requestBody is the small request every benchmark sends.
var requestBody = []byte(`{"model":"` + model + `","messages":[{"role":"user","content":"ping"}]}`)

// answer is the fake upstream's instant reply.
var answer = []byte(`{"id":"chatcmpl-bench","object":"chat.completion","created":1700000000,"model":"` + model +
	`","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"pong"}}],` +
	`"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}`)

// upstream is the fake provider: it answers every request at once with
// answer, so what is measured is the path to it, and counts the
// connections opened to it, so a path that does not reuse them shows.
type upstream struct {
	url   string
	conns atomic.Int64
}

func fakeUpstream(b *testing.B) *upstream { return fakeUpstreamWith(b, nil) }

// fakeUpstreamWith is fakeUpstream calling first, when set, as each
// request comes in; its error fails the request.
func fakeUpstreamWith(b *testing.B, first func() error) *upstream {
	up := &upstream{}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if first != nil {
			if err := first(); err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
		}
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Write(answer)
	}))
	srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			up.conns.Add(1)
		}
	}
	srv.Start()
	b.Cleanup(srv.Close)
	up.url = srv.URL
	return up
}

// builds holds, per package, the build of its plugin binary, made once
// per run whichever benchmark asks first.
var builds sync.Map // package path → func() (string, error)

// buildPlugin builds the plugin main in pkg (a path relative to this
// package) once per run and returns the binary's path.
func buildPlugin(b *testing.B, pkg string) string {
	build, _ := builds.LoadOrStore(pkg, sync.OnceValues(func() (string, error) {
		dir, err := os.MkdirTemp("", "hookhost-gateway-bench")
		if err != nil {
			return "", err
		}
		path := filepath.Join(dir, filepath.Base(pkg))
		if out, err := exec.Command("go", "build", "-o", path, pkg).CombinedOutput(); err != nil {
			return "", fmt.Errorf("build %s: %v\n%s", pkg, err, out)
		}
		return path, nil
	}))
	path, err := build.(func() (string, error))()
	if err != nil {
		b.Fatal(err)
	}
	return path
}

// modelPlugin is the benchmark's plugin, subscribed to the five model-side
// hooks that answer.
func modelPlugin(b *testing.B) string { return buildPlugin(b, "./internal/modelplugin") }

// serveGateway opens a host in front of the upstream at up, on the gateway
// route or the bypass one, with the model plugin or none, and serves it on
// a real loopback listener. It returns the API root clients use and the
// host.
func serveGateway(b *testing.B, up string, gatewayRoute, plugin bool) (string, *hookhost.Host) {
	cfg := benchConfig(up)
	if plugin {
		withPlugin(cfg, "modelplugin", modelPlugin(b), `{}`)
	}
	return serveConfig(b, cfg, gatewayRoute)
}

// benchConfig is the host's config for every benchmark target: the OpenAI
// chat upstream at up, no retries, and room for every client of the load
// run in flight at once.
func benchConfig(up string) *config.Config {
	cfg := config.Default()
	cfg.LLM.Provider, cfg.LLM.API, cfg.LLM.Model = "openai", "chat", model
	cfg.LLM.BaseURL, cfg.LLM.APIKeyEnv, cfg.LLM.MaxRetries = up+"/v1", keyEnv, 0
	cfg.Server.MaxConcurrent = 1024
	return cfg
}

// withPlugin enables one remote plugin, the binary at path, with its
// config table given as JSON.
func withPlugin(cfg *config.Config, name, path, pluginConfig string) {
	cfg.Plugins.Enabled = []string{name}
	cfg.Plugins.Entries = map[string]config.PluginEntry{name: {
		Path: path, Timeout: 5 * time.Second, ToolTimeout: 10 * time.Second, Config: json.RawMessage(pluginConfig),
	}}
}

// serveConfig opens a host on cfg, on the gateway route or the bypass one,
// and serves it on a real loopback listener. It returns the API root
// clients use and the host.
func serveConfig(b *testing.B, cfg *config.Config, gatewayRoute bool) (string, *hookhost.Host) {
	route := "0"
	if gatewayRoute {
		route = "1"
	}
	getenv := func(name string) string {
		switch name {
		case keyEnv:
			return "sk-bench"
		case config.GatewayEnv:
			return route
		}
		return ""
	}
	h, err := hookhost.Open(context.Background(), cfg, hookhost.Options{Getenv: getenv})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { h.Close(context.Background()) })
	if errs := h.StartErrors(); len(errs) > 0 {
		b.Fatal(errs[0])
	}
	srv, err := gateway.New(h, gateway.Options{})
	if err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	b.Cleanup(ts.Close)
	return ts.URL + "/v1", h
}

// pluginAsked fails the benchmark unless the host's plugins were asked
// every per-round hook that answers at least n times and never failed, so
// the plugin route measures hook round trips and not their fallback. A
// hook answered within a model-side stage counts as asked. Observers are
// queued off the request's path and may be dropped when the queue is
// full, so they are not counted.
func pluginAsked(b *testing.B, h *hookhost.Host, n int) {
	st := h.Bus().Stats()
	asked := 0
	for _, hs := range st.Hooks {
		if hs.Hook.Observer() {
			continue
		}
		asked++
		if hs.Calls < uint64(n) || len(hs.Failures) > 0 {
			b.Fatalf("plugin %s was asked %s %d times with failures %v; want at least %d calls and no failure", hs.Plugin, hs.Hook, hs.Calls, hs.Failures, n)
		}
	}
	if asked == 0 {
		b.Fatal("no plugin answers a per-round hook on the plugin route")
	}
}

// pluginBytes counts the bytes of the messages the host exchanged with its
// plugins, both ways; 0 without a host.
func pluginBytes(h *hookhost.Host) uint64 {
	var n uint64
	if h != nil {
		for _, st := range h.Plugins() {
			n += st.Traffic.Sent + st.Traffic.Received
		}
	}
	return n
}

// client keeps a connection per concurrent caller alive across requests.
func client(conc int) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns, tr.MaxIdleConnsPerHost = conc*2, conc*2
	return &http.Client{Transport: tr, Timeout: time.Minute}
}

// call makes one chat completion request and checks its answer.
func call(c *http.Client, root string) error {
	resp, err := c.Post(root+"/chat/completions", "application/json", bytes.NewReader(requestBody))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d: %s", resp.StatusCode, body)
	}
	if !bytes.Contains(body, []byte(`"pong"`)) {
		return fmt.Errorf("the answer lacks the upstream's text: %s", body)
	}
	return nil
}

// stats is what one measured run saw.
type stats struct {
	p50, p99 time.Duration
	perSec   float64
	errors   int64
	firstErr error
}

// measure sends b.N requests to root from conc concurrent clients, each
// waiting for its answer before sending the next, and reports p50 and p99
// per request, requests/s, and the connections opened to the upstream per
// request, beside ns/op.
func measure(b *testing.B, up *upstream, root string, conc int) stats {
	return measureWith(b, up, root, conc, nil)
}

// measureWith is measure with after, when set, called by each client once
// it has its answer, within the request's time: the floor's second
// crossing.
func measureWith(b *testing.B, up *upstream, root string, conc int, after func() error) stats {
	c := client(conc)
	defer c.CloseIdleConnections()
	var (
		next     atomic.Int64
		errs     atomic.Int64
		errOnce  sync.Once
		firstErr error
		wg       sync.WaitGroup
	)
	// Open every client's connection and warm the host's first-call paths
	// before the clock starts.
	warm := make([]error, conc)
	for i := range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			warm[i] = callThen(c, root, after)
		}()
	}
	wg.Wait()
	for _, err := range warm {
		if err != nil {
			b.Fatalf("warm-up request: %v", err)
		}
	}
	lat := make([][]time.Duration, conc)
	conns := up.conns.Load()
	b.ResetTimer()
	start := time.Now()
	for i := range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(b.N) {
				t0 := time.Now()
				err := callThen(c, root, after)
				lat[i] = append(lat[i], time.Since(t0))
				if err != nil {
					errs.Add(1)
					errOnce.Do(func() { firstErr = err })
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	all := slices.Concat(lat...)
	slices.Sort(all)
	s := stats{p50: quantile(all, 0.50), p99: quantile(all, 0.99), perSec: float64(len(all)) / elapsed.Seconds(), errors: errs.Load(), firstErr: firstErr}
	b.ReportMetric(float64(s.p50.Nanoseconds())/1e3, "p50-µs")
	b.ReportMetric(float64(s.p99.Nanoseconds())/1e3, "p99-µs")
	b.ReportMetric(s.perSec, "req/s")
	b.ReportMetric(float64(up.conns.Load()-conns)/float64(b.N), "upstream-conns/op")
	return s
}

// callThen is call followed, when it succeeded and after is set, by after.
func callThen(c *http.Client, root string, after func() error) error {
	err := call(c, root)
	if err == nil && after != nil {
		err = after()
	}
	return err
}

func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.5) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// BenchmarkGatewayLatency is one small request, six ways: straight to the
// upstream, through nginx as a plain reverse proxy (the baseline a proxy's
// cost is held to), and through the gateway's bypass route, its gateway
// route with no plugin, its gateway route with one remote plugin
// subscribed to the per-round model hooks, and the floor of
// BenchmarkGatewayThroughput (no plugin, two bare crossings to another
// process per request); each at 1, 16 and 64 concurrent clients.
// bench/report subtracts the first from the others. Beside the latencies
// it reports the CPU time per request of the benchmark's process
// and of the plugin's (see reportCPU): throughput on a small machine is
// what that CPU time allows, and a noisy machine disturbs it less than it
// disturbs latency.
func BenchmarkGatewayLatency(b *testing.B) {
	up := fakeUpstream(b)
	type target struct {
		name string
		root string
		host *hookhost.Host // nil when no plugin runs
		up   *upstream      // nil for up
		// after is what each client does once it has its answer.
		after func() error
	}
	bypass, _ := serveGateway(b, up.url, false, false)
	plain, _ := serveGateway(b, up.url, true, false)
	withPlugin, h := serveGateway(b, up.url, true, true)
	cross, _ := echoCrossing(b, 2*64)
	floorUp := fakeUpstreamWith(b, cross)
	floor, _ := serveGateway(b, floorUp.url, true, false)
	targets := []target{{name: "direct", root: up.url + "/v1"}, {name: "nginx", root: nginxProxy(b, up.url) + "/v1"},
		{name: "bypass", root: bypass}, {name: "gateway", root: plain}, {name: "plugin", root: withPlugin, host: h},
		{name: "floor", root: floor, up: floorUp, after: cross}}
	for _, tg := range targets {
		tgUp := up
		if tg.up != nil {
			tgUp = tg.up
		}
		for _, conc := range []int{1, 16, 64} {
			b.Run(fmt.Sprintf("%s/clients=%d", tg.name, conc), func(b *testing.B) {
				bytesBefore, cpuBefore := pluginBytes(tg.host), cpuOf(b, tg.host)
				if s := measureWith(b, tgUp, tg.root, conc, tg.after); s.errors > 0 {
					b.Fatalf("%d of %d requests failed; the first: %v", s.errors, b.N, s.firstErr)
				}
				reportCPU(b, tg.host, cpuBefore)
				if tg.host != nil {
					pluginAsked(b, tg.host, b.N)
					// measure warms up with one request per client.
					b.ReportMetric(float64(pluginBytes(tg.host)-bytesBefore)/float64(b.N+conc), "plugin-bytes/op")
				}
			})
		}
	}
}

// nginxProxy runs nginx as a plain reverse proxy to the upstream at up,
// keeping idle connections to it as the gateway does, and returns its
// URL. nginx is installed from Debian when missing; when it cannot be, the
// benchmark fails saying what to install, since the gateway's figures are
// read against it.
func nginxProxy(b *testing.B, up string) string {
	bin, err := nginxtest.FindOrInstall()
	if err != nil {
		b.Fatalf("nginx, the baseline of the gateway's latency, is not installed and could not be installed (install it with: %s): %v", nginxtest.InstallCommand, err)
	}
	return nginxtest.Start(b, bin, nginxtest.Proxy{
		Servers: []string{strings.TrimPrefix(up, "http://")},
		// As many idle connections as the most clients measured, so
		// none is opened per request.
		Keepalive: 128,
		// One per core, as the gateway's Go runtime uses every core.
		Workers: runtime.NumCPU(),
	})
}

// BenchmarkGatewayLoad sends b.N requests (make bench asks for at least
// 10,000) from 64 clients through the gateway route with the remote plugin,
// and fails on any error.
func BenchmarkGatewayLoad(b *testing.B) {
	up := fakeUpstream(b)
	root, h := serveGateway(b, up.url, true, true)
	s := measure(b, up, root, 64)
	pluginAsked(b, h, b.N)
	b.ReportMetric(float64(s.errors), "errors")
	b.ReportMetric(float64(b.N), "requests")
	if s.errors > 0 {
		b.Fatalf("%d of %d requests failed; the first: %v", s.errors, b.N, s.firstErr)
	}
}
