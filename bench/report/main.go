// Command report reads `go test -bench` output (several -count runs) and
// prints the median of every metric per benchmark; then the plugin
// boundary's costs (hook round trip over protocol 2, on the lane and on the
// gRPC Hooks stream, and 1, bare gRPC unary
// and bidi stream over TLS, a process per hook, in-process; tool calls);
// then the figures the project tracks (MCP tools/call through hookhost
// against straight to the server among them), as ratios of medians measured in the
// same run, against their targets; then the gateway's tables, nginx as
// the baseline and its goals as ratios; then Kora's
// ledger: reports on a generated year of traffic and append throughput.
//
//	go test -run '^$' -bench . -count 6 ./... | tee bench.txt
//	go run ./bench/report bench.txt
package main

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
)

// The benchmarks the tables read (bench/bench_test.go).
const (
	rtV2        = "BenchmarkHookRoundTrip/v2"
	rtV2Stream  = "BenchmarkHookRoundTrip/v2-stream"
	rtV1        = "BenchmarkHookRoundTrip/v1"
	rtUnaryTLS  = "BenchmarkHookRoundTrip/rawgrpc-unary-tls"
	rtBidiTLS   = "BenchmarkHookRoundTrip/rawgrpc-bidi-tls"
	rtPlain     = "BenchmarkHookRoundTrip/rawgrpc"
	rtExec      = "BenchmarkHookRoundTrip/exec"
	rtPingPong  = "BenchmarkHookRoundTrip/pingpong"
	rtInProcess = "BenchmarkHookRoundTrip/inprocess"
	tcNative    = "BenchmarkToolCall/native"
	tcV1        = "BenchmarkToolCall/remote-v1"
	tcV2        = "BenchmarkToolCall/remote-v2"
	tcDemo      = "BenchmarkToolCall/native-demo"
	mcpDirect   = "BenchmarkMCPToolCall/direct"
	mcpGateway  = "BenchmarkMCPToolCall/gateway"
	mcpGatewayP = "BenchmarkMCPToolCall/gateway-remote-v2"
	mcpModel    = "BenchmarkMCPToolCall/model"
	mcpModelP   = "BenchmarkMCPToolCall/model-remote-v2"
	unsub       = "BenchmarkUnsubscribedHook"
	startup1    = "BenchmarkStartup/plugins=1"
	startup8    = "BenchmarkStartup/plugins=8"
	idleRSS     = "BenchmarkIdleRSS"
)

// boundaryRows are the rows of the plugin-boundary table, in order.
var boundaryRows = []struct{ name, label string }{
	{rtV2, "hook round trip, protocol 2 on the lane (one Unix socket per plugin)"},
	{rtV2Stream, "hook round trip, protocol 2 on the gRPC Hooks stream (lane not served)"},
	{rtV1, "hook round trip, protocol 1 (one unary RPC per hook)"},
	{rtUnaryTLS, "bare gRPC unary call over TLS, child process"},
	{rtBidiTLS, "bare gRPC bidi stream message over TLS, child process"},
	{rtPlain, "bare gRPC unary call, plaintext, child process"},
	{rtExec, "process per hook (exec, JSON on stdin/stdout)"},
	{rtPingPong, "one byte to a child process and back over pipes: the floor of any exchange between processes"},
	{rtInProcess, "in-process plugin"},
	{tcNative, "tool call, native, no plugin"},
	{tcV2, "tool call, one remote plugin in all four tool hooks, protocol 2"},
	{tcV1, "tool call, one remote plugin in all four tool hooks, protocol 1"},
	{tcDemo, "tool call, native, with the demo config's plugins (Kora)"},
	{mcpDirect, "MCP tools/call straight to a Go server over stdio"},
	{mcpGateway, "MCP tools/call through hookhost to the same server, no plugin"},
	{mcpGatewayP, "MCP tools/call through hookhost, one remote plugin in four tool hooks, protocol 2"},
	{mcpModel, "MCP tool offered to the model, run by the pipeline, no plugin"},
	{mcpModelP, "MCP tool offered to the model, one remote plugin in four tool hooks, protocol 2"},
	{unsub, "hook nobody subscribes to"},
	{startup1, "startup and shutdown of 1 plugin"},
	{startup8, "startup and shutdown of 8 plugins"},
}

// check is one tracked figure with the target the project holds itself
// to; a check without ok is reported without a verdict.
type check struct {
	label  string
	value  measure
	format string // of the value, e.g. "%.2f×"
	target string
	ok     func(v float64) bool
}

// measure computes a figure from the medians, and names the benchmarks it
// reads.
type measure struct {
	of    func(med medians) (float64, bool)
	needs []string
}

var checks = []check{
	{"v2 round trip / bare unary call over TLS", ratio(rtV2, rtUnaryTLS), "%.2f×", "≤ 0.85×", func(v float64) bool { return v <= 0.85 }},
	{"v1 round trip / bare unary call over TLS", ratio(rtV1, rtUnaryTLS), "%.2f×", "", nil},
	{"bare bidi stream message / bare unary call (both TLS)", ratio(rtBidiTLS, rtUnaryTLS), "%.2f×", "", nil},
	{"v2 round trip / bare bidi stream message over TLS", ratio(rtV2, rtBidiTLS), "%.2f×", "", nil},
	{"v2 round trip on the Hooks stream / bare bidi stream message over TLS", ratio(rtV2Stream, rtBidiTLS), "%.2f×", "", nil},
	{"v2 round trip on the lane / on the Hooks stream", ratio(rtV2, rtV2Stream), "%.2f×", "", nil},
	{"v2 round trip / one byte to a child process and back", ratio(rtV2, rtPingPong), "%.2f×", "", nil},
	{"process per hook / v2 round trip", ratio(rtExec, rtV2), "%.0f×", "≥ 25×", func(v float64) bool { return v >= 25 }},
	{"v2 round trip / in-process plugin", ratio(rtV2, rtInProcess), "%.0f×", "", nil},
	{"tool call, one plugin in four hooks, v2, in v2 round trips", ratio(tcV2, rtV2), "%.2f", "≤ 2", func(v float64) bool { return v <= 2 }},
	{"tool call, one plugin in four hooks, v1, in v2 round trips", ratio(tcV1, rtV2), "%.2f", "", nil},
	{"tool call, one plugin in four hooks, v2: synchronous exchanges/op", metric(tcV2, "exchanges/op"), "%.2f", "", nil},
	{"tool call, one plugin in four hooks, v1: synchronous exchanges/op", metric(tcV1, "exchanges/op"), "%.2f", "", nil},
	{"native tool call with the demo config: synchronous rpcs/op", metric(tcDemo, "rpcs/op"), "%.2f", "0", func(v float64) bool { return v == 0 }},
	{"hook nobody subscribes to: rpcs/op", metric(unsub, "rpcs/op"), "%.2f", "0", func(v float64) bool { return v == 0 }},
	{"MCP tools/call through hookhost / straight to the server", ratio(mcpGateway, mcpDirect), "%.2f×", "", nil},
	{"MCP tools/call through hookhost with one remote plugin / without", ratio(mcpGatewayP, mcpGateway), "%.2f×", "", nil},
	{"MCP tool offered to the model / tools/call straight to the server", ratio(mcpModel, mcpDirect), "%.2f×", "", nil},
	{"startup of 8 plugins / startup of 1", ratio(startup8, startup1), "%.2f×", "< 2×", func(v float64) bool { return v < 2 }},
	{"idle plugin process, resident memory", metric(idleRSS, "idle-rss-KiB"), "%.0f KiB", "", nil},
}

// medians holds the median of every metric per benchmark.
type medians map[string]map[string]float64

// ratio is the median time of num over that of den.
func ratio(num, den string) measure {
	return measure{needs: []string{num, den}, of: func(med medians) (float64, bool) {
		n, okN := med[num]["ns/op"]
		d, okD := med[den]["ns/op"]
		if !okN || !okD || d == 0 {
			return 0, false
		}
		return n / d, true
	}}
}

// metric is the median of one metric of one benchmark.
func metric(name, unit string) measure {
	return measure{needs: []string{name}, of: func(med medians) (float64, bool) {
		v, ok := med[name][unit]
		return v, ok
	}}
}

// ran reports whether the run included any benchmark function m reads (a
// benchmark's name up to its first "/"), so that a figure is missing
// because something failed, not because it was not asked for.
func (m measure) ran(med medians) bool {
	for _, n := range m.needs {
		fn, _, _ := strings.Cut(n, "/")
		for name := range med {
			if name == fn || strings.HasPrefix(name, fn+"/") {
				return true
			}
		}
	}
	return false
}

// benchLine matches "BenchmarkName-2   1000   123 ns/op   45 B/op ...".
var benchLine = regexp.MustCompile(`^(Benchmark\S+?)(?:-\d+)?\s+\d+\s+(.*)$`)

func main() {
	var in io.Reader = os.Stdin
	if len(os.Args) > 1 {
		f, err := os.Open(os.Args[1])
		if err != nil {
			fmt.Fprintln(os.Stderr, "report:", err)
			os.Exit(1)
		}
		defer f.Close()
		in = f
	}
	samples, order := parse(in)
	if len(order) == 0 {
		fmt.Fprintln(os.Stderr, "report: no benchmark lines in the input")
		os.Exit(1)
	}
	print(os.Stdout, samples, order)
}

// parse collects every sample of every metric per benchmark, keeping the
// order benchmarks first appear in.
func parse(in io.Reader) (map[string]map[string][]float64, []string) {
	samples := map[string]map[string][]float64{}
	var order []string
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		m := benchLine.FindStringSubmatch(strings.TrimSpace(sc.Text()))
		if m == nil {
			continue
		}
		name, fields := m[1], strings.Fields(m[2])
		if samples[name] == nil {
			samples[name] = map[string][]float64{}
			order = append(order, name)
		}
		for i := 0; i+1 < len(fields); i += 2 {
			v, err := strconv.ParseFloat(fields[i], 64)
			if err != nil {
				continue
			}
			samples[name][fields[i+1]] = append(samples[name][fields[i+1]], v)
		}
	}
	return samples, order
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	n := len(s)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func human(v float64, unit string) string {
	if unit == "ns/op" {
		switch {
		case v >= 1e9:
			return fmt.Sprintf("%.2f s", v/1e9)
		case v >= 1e6:
			return fmt.Sprintf("%.2f ms", v/1e6)
		case v >= 1e3:
			return fmt.Sprintf("%.1f µs", v/1e3)
		}
		return fmt.Sprintf("%.1f ns", v)
	}
	// Medians of two runs are means, so round what the floating-point
	// sum left behind (42.480000000000004 reads as 42.48).
	return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64) + " " + unit
}

func print(w io.Writer, samples map[string]map[string][]float64, order []string) {
	med := medians{}
	for name, metrics := range samples {
		med[name] = map[string]float64{}
		for u, xs := range metrics {
			med[name][u] = median(xs)
		}
	}

	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "benchmark\truns\tmedian time/op\tother medians")
	for _, name := range order {
		metrics := samples[name]
		var others []string
		var units []string
		for u := range metrics {
			if u != "ns/op" {
				units = append(units, u)
			}
		}
		sort.Strings(units)
		for _, u := range units {
			others = append(others, human(median(metrics[u]), u))
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\n", strings.TrimPrefix(name, "Benchmark"), len(metrics["ns/op"]), human(median(metrics["ns/op"]), "ns/op"), strings.Join(others, ", "))
	}
	tw.Flush()

	printBoundary(w, med, samples)
	printLanguages(w, med, order)

	printChecks(w, med)
	printGateway(w, samples)
	printKora(w, samples, order)
}

// printChecks prints the tracked figures. One with a target that could not
// be computed although the run included its benchmark functions (one of
// them failed, or a sub-benchmark is missing) says so rather than vanish.
func printChecks(w io.Writer, med medians) {
	var lines []string
	for _, c := range checks {
		v, ok := c.value.of(med)
		switch {
		case !ok && c.ok != nil && c.value.ran(med):
			lines = append(lines, fmt.Sprintf("%s\t-\t%s\tNOT MEASURED\n", c.label, c.target))
		case !ok:
		case c.ok == nil:
			lines = append(lines, fmt.Sprintf("%s\t%s\t\t\n", c.label, fmt.Sprintf(c.format, v)))
		case c.ok(v):
			lines = append(lines, fmt.Sprintf("%s\t%s\t%s\tmet\n", c.label, fmt.Sprintf(c.format, v), c.target))
		default:
			lines = append(lines, fmt.Sprintf("%s\t%s\t%s\tMISSED\n", c.label, fmt.Sprintf(c.format, v), c.target))
		}
	}
	if len(lines) == 0 {
		return
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "comparison (medians, same run)\tvalue\ttarget\t")
	for _, l := range lines {
		fmt.Fprint(tw, l)
	}
	tw.Flush()
}

// printBoundary prints what crossing the plugin boundary costs, each way
// measured: the median time, the spread of the runs (on a busy machine it
// says how far to trust the ratios), the median in protocol 2 round trips, and where
// the benchmark counts them the synchronous plugin calls per op: hooks
// asked (rpcs/op, what Bus.Stats counts) and the exchanges that carried
// them (a stretch carries several hooks in one).
func printBoundary(w io.Writer, med medians, samples map[string]map[string][]float64) {
	rt := med[rtV2]["ns/op"]
	var rows []string
	for _, r := range boundaryRows {
		m, ok := med[r.name]
		if !ok {
			continue
		}
		times := samples[r.name]["ns/op"]
		row := r.label + "\t" + human(m["ns/op"], "ns/op") + "\t" + human(slices.Min(times), "ns/op") + " – " + human(slices.Max(times), "ns/op") + "\t"
		if rt > 0 {
			row += fmt.Sprintf("%.2f", m["ns/op"]/rt)
		}
		row += "\t"
		if rpcs, ok := m["rpcs/op"]; ok {
			row += fmt.Sprintf("%s hooks asked", strconv.FormatFloat(rpcs, 'f', -1, 64))
			if ex, ok := m["exchanges/op"]; ok {
				row += fmt.Sprintf(" in %s exchange(s)", strconv.FormatFloat(ex, 'f', -1, 64))
			}
		}
		rows = append(rows, row)
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "plugin boundary (medians, same run)\ttime/op\tfastest – slowest run\tin v2 round trips\tsynchronous plugin calls per op\t")
	for _, r := range rows {
		fmt.Fprintln(tw, r+"\t")
	}
	tw.Flush()
}

// The per-language benchmarks (bench/languages_test.go): the conform
// plugin of each language answering the same provided tool.
const (
	langProvide = "BenchmarkLanguageProvide/"
	langStartup = "BenchmarkLanguageStartup/"
	langRSS     = "BenchmarkLanguageIdleRSS/"
	langBase    = "go"
	exProvide   = "BenchmarkExampleProvide/"
)

// printLanguages prints, per language with an SDK, what a plugin written in
// it costs: a provided tool's round trip (also as a multiple of Go's), the
// time to start, and its idle resident memory; then the round trip of each
// example plugin that provides a tool.
func printLanguages(w io.Writer, med medians, order []string) {
	var langs []string
	for name := range med {
		if l, ok := strings.CutPrefix(name, langProvide); ok {
			langs = append(langs, l)
		}
	}
	if len(langs) == 0 {
		return
	}
	// Go first, then the others by name.
	slices.SortFunc(langs, func(a, b string) int {
		switch {
		case a == langBase:
			return -1
		case b == langBase:
			return 1
		}
		return strings.Compare(a, b)
	})
	base := med[langProvide+langBase]["ns/op"]
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "plugins by language (medians, same run)	provided tool round trip	× Go's	start	idle RSS	")
	for _, l := range langs {
		rt := med[langProvide+l]["ns/op"]
		times := ""
		if base > 0 {
			times = fmt.Sprintf("%.2f×", rt/base)
		}
		start, rss := "-", "-"
		if v, ok := med[langStartup+l]["ns/op"]; ok {
			start = human(v, "ns/op")
		}
		if v, ok := med[langRSS+l]["idle-rss-KiB"]; ok {
			rss = fmt.Sprintf("%.1f MiB", v/1024)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t\n", l, human(rt, "ns/op"), times, start, rss)
	}
	// The example plugins that provide a tool, in the order they ran.
	for _, name := range order {
		if ex, ok := strings.CutPrefix(name, exProvide); ok {
			fmt.Fprintf(tw, "example %s\t%s\t\t\t\t\n", ex, human(med[name]["ns/op"], "ns/op"))
		}
	}
	tw.Flush()
}

// The gateway benchmarks' names and metrics (gateway/bench).
const (
	gatewayLatency = "BenchmarkGatewayLatency/"
	gatewayLoad    = "BenchmarkGatewayLoad"
	gatewayDirect  = "direct"
	gatewayNginx   = "nginx"
	gatewayBypass  = "bypass"
	gatewayPlain   = "gateway"
	gatewayPlugin  = "plugin"
	gatewayFloor   = "floor"
	minLoad        = 10000
	// The latency goals are read with one client, the throughput goal
	// with sixteen.
	latencyClients    = "1"
	throughputClients = "16"
)

// gatewayRoutes are the rows of the gateway table, in order.
var gatewayRoutes = []struct{ name, label string }{
	{gatewayDirect, "direct to the upstream"},
	{gatewayNginx, "nginx, plain reverse proxy"},
	{gatewayBypass, "bypass route"},
	{gatewayPlain, "gateway route, no plugin"},
	{gatewayPlugin, "gateway route, one remote plugin"},
	{gatewayFloor, "gateway route, no plugin, two bare crossings per request (floor)"},
}

// printGateway prints what the gateway adds to a request, per route and
// number of concurrent clients: its p50 and p99 minus those of calling the
// upstream directly at the same concurrency, how many connections to the
// upstream each request opened (0 when they are reused), and the CPU time
// per request of the benchmark's process (the host, the fake upstream and
// the clients) and of the plugin's, which a noisy machine disturbs less
// than latency; then the
// targets' summary and the gateway's goals (printGatewayGoals); then the
// load run's outcome.
func printGateway(w io.Writer, samples map[string]map[string][]float64) {
	var clients []string
	seen := map[string]bool{}
	for name := range samples {
		rest, ok := strings.CutPrefix(name, gatewayLatency)
		if !ok {
			continue
		}
		if _, c, ok := strings.Cut(rest, "/clients="); ok && !seen[c] {
			seen[c] = true
			clients = append(clients, c)
		}
	}
	sort.Slice(clients, func(i, j int) bool {
		a, _ := strconv.Atoi(clients[i])
		b, _ := strconv.Atoi(clients[j])
		return a < b
	})
	if len(clients) > 0 {
		fmt.Fprintln(w)
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "gateway (medians, same run)\tclients\tp50\tp99\tadded p50\tadded p99\treq/s\tnew upstream conns/req\tCPU/req: benchmark process\tplugin\tswitches/req: benchmark process\tplugin\tplugin waited for a CPU/req\t")
		for _, c := range clients {
			direct := samples[gatewayLatency+gatewayDirect+"/clients="+c]
			for _, r := range gatewayRoutes {
				m, ok := samples[gatewayLatency+r.name+"/clients="+c]
				if !ok {
					continue
				}
				added50, added99 := "", ""
				if r.name != gatewayDirect && direct != nil {
					added50 = micros(median(m["p50-µs"]) - median(direct["p50-µs"]))
					added99 = micros(median(m["p99-µs"]) - median(direct["p99-µs"]))
				}
				cpu, pluginCPU, pluginWait := optional(m, "self-cpu-µs/op", micros), optional(m, "plugin-cpu-µs/op", micros), optional(m, "plugin-wait-µs/op", micros)
				switches, pluginSwitches := optional(m, "self-switches/op", count), optional(m, "plugin-switches/op", count)
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%.0f\t%.2f\t%s\t%s\t%s\t%s\t%s\t\n", r.label, c, micros(median(m["p50-µs"])), micros(median(m["p99-µs"])), added50, added99, median(m["req/s"]), median(m["upstream-conns/op"]), cpu, pluginCPU, switches, pluginSwitches, pluginWait)
			}
		}
		tw.Flush()
	}
	if _, paired := samples[gatewayThroughput]; len(clients) > 0 || paired {
		printGatewayGoals(w, samples)
	}
	if m, ok := samples[gatewayLoad]; ok {
		reqs, errs := median(m["requests"]), median(m["errors"])
		verdict := "met"
		if reqs < minLoad || errs != 0 {
			verdict = "MISSED"
		}
		fmt.Fprintf(w, "\ngateway load run: %.0f requests, %.0f errors, %.0f req/s, p99 %s (target: ≥ %d requests, 0 errors) %s\n",
			reqs, errs, median(m["req/s"]), micros(median(m["p99-µs"])), minLoad, verdict)
	}
}

// gatewayGoal is one of the figures the gateway is held to, computed from
// the medians of the latency benchmark's targets.
type gatewayGoal struct {
	label, format, target string
	of                    func(at func(route, clients, unit string) (float64, bool)) (float64, bool)
	ok                    func(v float64) bool
}

var gatewayGoals = []gatewayGoal{
	{"bypass added p50 / nginx added p50 (1 client)", "%.2f×", "≤ 1.5×",
		func(at func(string, string, string) (float64, bool)) (float64, bool) {
			return quotient(added(at, gatewayBypass, latencyClients, "p50-µs"))(added(at, gatewayNginx, latencyClients, "p50-µs"))
		}, func(v float64) bool { return v <= 1.5 }},
	{"gateway added p50 / nginx added p50 (1 client)", "%.2f×", "",
		func(at func(string, string, string) (float64, bool)) (float64, bool) {
			return quotient(added(at, gatewayPlain, latencyClients, "p50-µs"))(added(at, gatewayNginx, latencyClients, "p50-µs"))
		}, nil},
	{"plugin p50 / gateway p50 (1 client)", "%.2f×", "≤ 3×",
		func(at func(string, string, string) (float64, bool)) (float64, bool) {
			return quotient(at(gatewayPlugin, latencyClients, "p50-µs"))(at(gatewayPlain, latencyClients, "p50-µs"))
		}, func(v float64) bool { return v <= 3 }},
	{"plugin p99 − gateway p99, what the plugin adds (1 client)", "%.0f µs", "< 1000 µs",
		func(at func(string, string, string) (float64, bool)) (float64, bool) {
			p, okP := at(gatewayPlugin, latencyClients, "p99-µs")
			g, okG := at(gatewayPlain, latencyClients, "p99-µs")
			return p - g, okP && okG
		}, func(v float64) bool { return v < 1000 }},
	{"floor p50 / gateway p50 (1 client): two bare crossings per request", "%.2f×", "",
		func(at func(string, string, string) (float64, bool)) (float64, bool) {
			return quotient(at(gatewayFloor, latencyClients, "p50-µs"))(at(gatewayPlain, latencyClients, "p50-µs"))
		}, nil},
	{"floor p99 − gateway p99, what two bare crossings add (1 client)", "%.0f µs", "",
		func(at func(string, string, string) (float64, bool)) (float64, bool) {
			f, okF := at(gatewayFloor, latencyClients, "p99-µs")
			g, okG := at(gatewayPlain, latencyClients, "p99-µs")
			return f - g, okF && okG
		}, nil},
	{separateThroughput, "%.2f", "≥ 0.60",
		func(at func(string, string, string) (float64, bool)) (float64, bool) {
			return quotient(at(gatewayPlugin, throughputClients, "req/s"))(at(gatewayPlain, throughputClients, "req/s"))
		}, func(v float64) bool { return v >= 0.6 }},
}

// separateThroughput is the throughput goal read from the latency
// benchmark's targets, each run on its own, minutes apart. When
// BenchmarkGatewayThroughput ran, its alternating slices decide the goal
// and this figure is shown beside it.
const separateThroughput = "plugin req/s / gateway req/s (16 clients, separate runs)"

// gatewayThroughput alternates the gateway route with no plugin, with the
// plugin, and a floor of two bare crossings to another process per
// request, in short slices; it reports each round's ratios, as medians.
const gatewayThroughput = "BenchmarkGatewayThroughput"

// throughputTargets are the rows of its table, in order.
var throughputTargets = []struct{ name, label string }{
	{"gateway", "no plugin"},
	{"floor", "floor: no plugin, two bare crossings to another process per request"},
	{"plugin", "one remote plugin"},
}

// throughputGoals are read from BenchmarkGatewayThroughput's ratios.
var throughputGoals = []gatewayGoal{
	{"plugin req/s / gateway req/s (16 clients, alternating slices)", "%.2f", "≥ 0.60", ratioOf("plugin/gateway"), func(v float64) bool { return v >= 0.6 }},
	{"floor req/s / gateway req/s (16 clients): two bare crossings per request", "%.2f", "", ratioOf("floor/gateway"), nil},
	{"plugin req/s / floor req/s (16 clients): the share of the floor reached", "%.2f", "", ratioOf("plugin/floor"), nil},
}

// ratioOf reads one of BenchmarkGatewayThroughput's ratios, passed as
// the route of its at.
func ratioOf(name string) func(at func(string, string, string) (float64, bool)) (float64, bool) {
	return func(at func(string, string, string) (float64, bool)) (float64, bool) { return at(name, "", "") }
}

// gatewayKora is the benchmark that runs Kora behind the gateway route,
// with its own direct and no-plugin targets; koraGoals are read from it.
const gatewayKora = "BenchmarkGatewayKora/"

var koraGoals = []gatewayGoal{
	{"Kora (README config) added p50 / gateway added p50 (1 client)", "%.2f×", "≤ 1.5×",
		func(at func(string, string, string) (float64, bool)) (float64, bool) {
			return quotient(added(at, "kora", latencyClients, "p50-µs"))(added(at, gatewayPlain, latencyClients, "p50-µs"))
		}, func(v float64) bool { return v <= 1.5 }},
	{"Kora (router on) added p50 / gateway added p50 (1 client)", "%.2f×", "",
		func(at func(string, string, string) (float64, bool)) (float64, bool) {
			return quotient(added(at, "kora-router", latencyClients, "p50-µs"))(added(at, gatewayPlain, latencyClients, "p50-µs"))
		}, nil},
}

// added is what a route adds to calling the upstream directly: the
// median of unit minus direct's at the same number of clients.
func added(at func(route, clients, unit string) (float64, bool), route, clients, unit string) (float64, bool) {
	v, okV := at(route, clients, unit)
	d, okD := at(gatewayDirect, clients, unit)
	return v - d, okV && okD
}

// quotient divides the first figure by the second, when both are known
// and the second is above zero.
func quotient(n float64, okN bool) func(d float64, okD bool) (float64, bool) {
	return func(d float64, okD bool) (float64, bool) {
		if !okN || !okD || d <= 0 {
			return 0, false
		}
		return n / d, true
	}
}

// printGatewayGoals prints, per route, what it adds to a request with one
// client and its throughput with sixteen, then the gateway's goals as
// ratios of those medians. A goal whose figures are missing (a target
// failed, or was not run) says so.
func printGatewayGoals(w io.Writer, samples map[string]map[string][]float64) {
	atIn := func(bench string) func(route, clients, unit string) (float64, bool) {
		return func(route, clients, unit string) (float64, bool) {
			m, ok := samples[bench+route+"/clients="+clients]
			if !ok || len(m[unit]) == 0 {
				return 0, false
			}
			return median(m[unit]), true
		}
	}
	at := atIn(gatewayLatency)
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "gateway target (medians, same run)\tadded p50, %s client\tadded p99, %s client\treq/s, %s clients\t\n", latencyClients, latencyClients, throughputClients)
	for _, r := range gatewayRoutes {
		cells := make([]string, 0, 3)
		for _, unit := range []string{"p50-µs", "p99-µs"} {
			v, ok := added(at, r.name, latencyClients, unit)
			switch {
			case r.name == gatewayDirect:
				cells = append(cells, "")
			case ok:
				cells = append(cells, micros(v))
			default:
				cells = append(cells, "-")
			}
		}
		if v, ok := at(r.name, throughputClients, "req/s"); ok {
			cells = append(cells, fmt.Sprintf("%.0f", v))
		} else {
			cells = append(cells, "-")
		}
		fmt.Fprintf(tw, "%s\t%s\t\n", r.name, strings.Join(cells, "\t"))
	}
	tw.Flush()
	printThroughput(w, samples[gatewayThroughput])
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "gateway goals (medians, same run)\tvalue\ttarget\t")
	type goalIn struct {
		gatewayGoal
		at func(route, clients, unit string) (float64, bool)
	}
	var goals []goalIn
	paired, hasPaired := samples[gatewayThroughput]
	for _, g := range gatewayGoals {
		if g.label == separateThroughput && hasPaired {
			g.target, g.ok = "", nil
		}
		goals = append(goals, goalIn{g, at})
	}
	if hasPaired {
		atPaired := func(name, _, _ string) (float64, bool) {
			if len(paired[name]) == 0 {
				return 0, false
			}
			return median(paired[name]), true
		}
		for _, g := range throughputGoals {
			goals = append(goals, goalIn{g, atPaired})
		}
	}
	for _, g := range koraGoals {
		goals = append(goals, goalIn{g, atIn(gatewayKora)})
	}
	for _, g := range goals {
		v, ok := g.of(g.at)
		switch {
		case !ok:
			fmt.Fprintf(tw, "%s\t-\t%s\tNOT MEASURED\n", g.label, g.target)
		case g.ok == nil:
			fmt.Fprintf(tw, "%s\t%s\t\t\n", g.label, fmt.Sprintf(g.format, v))
		case g.ok(v):
			fmt.Fprintf(tw, "%s\t%s\t%s\tmet\n", g.label, fmt.Sprintf(g.format, v), g.target)
		default:
			fmt.Fprintf(tw, "%s\t%s\t%s\tMISSED\n", g.label, fmt.Sprintf(g.format, v), g.target)
		}
	}
	tw.Flush()
}

// printThroughput prints BenchmarkGatewayThroughput's targets: req/s and
// the CPU time per request of the benchmark's process with the process
// the target crosses to, as medians. Nothing when it did not run.
func printThroughput(w io.Writer, m map[string][]float64) {
	if m == nil {
		return
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "gateway throughput, %s clients, targets in alternating slices (medians)\treq/s\tCPU/req: benchmark process and the plugin or echo process\tof which the plugin or echo process\t\n", throughputClients)
	for _, t := range throughputTargets {
		rps, cpu := optional(m, t.name+"-req/s", func(v float64) string { return fmt.Sprintf("%.0f", v) }), optional(m, t.name+"-cpu-µs/req", micros)
		if rps == "" {
			rps = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t\n", t.label, rps, cpu, optional(m, t.name+"-child-cpu-µs/req", micros))
	}
	tw.Flush()
}

// micros formats a duration given in microseconds.
func micros(us float64) string {
	if us >= 1000 || us <= -1000 {
		return fmt.Sprintf("%.2f ms", us/1000)
	}
	return fmt.Sprintf("%.0f µs", us)
}

// optional is the median of a metric some targets report, formatted; ""
// where the target does not report it.
func optional(m map[string][]float64, unit string, format func(float64) string) string {
	if v, ok := m[unit]; ok {
		return format(median(v))
	}
	return ""
}

// count formats a count per request.
func count(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }

// The Kora ledger benchmarks (plugins/kora/internal/korabench): reports
// named <bench>/<ledger>/<report>, appends <bench>/<backend>/<k>-writers.
const (
	koraBurn   = "BenchmarkKoraBurn/"
	koraTail   = "BenchmarkKoraTail/"
	koraAppend = "BenchmarkKoraAppend/"
	// Kora's targets for a report on a ledger of any size.
	koraLatencyTargetMS = 50
	koraRSSTargetMiB    = 64
)

// printKora prints Kora's ledger table: each report's p50 and p99 and the
// plugin's peak resident memory while answering, against the targets
// (kora__get_burn under 50 ms, the plugin under 64 MiB), then appends per
// second per backend and number of writer processes.
func printKora(w io.Writer, samples map[string]map[string][]float64, order []string) {
	var reports, appends []string
	for _, name := range order {
		m := samples[name]
		switch {
		case strings.HasPrefix(name, koraBurn) || strings.HasPrefix(name, koraTail):
			parts := strings.SplitN(strings.TrimPrefix(name, "Benchmark"), "/", 3)
			if len(parts) != 3 {
				continue
			}
			what := parts[2]
			if parts[0] == "KoraBurn" {
				what = "get_burn " + what
			}
			p50, p99, rss := median(m["p50-ms"]), median(m["p99-ms"]), median(m["peak-rss-MiB"])
			var verdict []string
			if parts[0] == "KoraBurn" {
				switch {
				case p99 < koraLatencyTargetMS:
					verdict = append(verdict, "time met")
				case p50 < koraLatencyTargetMS:
					verdict = append(verdict, "time met at p50, MISSED at p99")
				default:
					verdict = append(verdict, "time MISSED")
				}
			}
			if rss < koraRSSTargetMiB {
				verdict = append(verdict, "memory met")
			} else {
				verdict = append(verdict, "memory MISSED")
			}
			reports = append(reports, fmt.Sprintf("%s\t%s\t%s\t%s\t%.1f MiB\t%s\t", what, parts[1], ms(p50), ms(p99), rss, strings.Join(verdict, ", ")))
		case strings.HasPrefix(name, koraAppend):
			backend, writers, ok := strings.Cut(strings.TrimPrefix(name, koraAppend), "/")
			if !ok {
				continue
			}
			appends = append(appends, fmt.Sprintf("%s\t%s\t%.0f\t%s\t", backend, strings.TrimSuffix(writers, "-writers"), median(m["appends/s"]), human(median(m["ns/op"]), "ns/op")))
		}
	}
	if len(reports) > 0 {
		fmt.Fprintln(w)
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintf(tw, "Kora ledger reports (medians, same run)\tledger\tp50\tp99\tpeak RSS\ttargets: burn < %d ms, RSS < %d MiB\t\n", koraLatencyTargetMS, koraRSSTargetMiB)
		for _, r := range reports {
			fmt.Fprintln(tw, r)
		}
		tw.Flush()
	}
	if len(appends) > 0 {
		fmt.Fprintln(w)
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "Kora ledger appends (medians, same run)\twriter processes\tappends/s, all writers\ttime per append\t")
		for _, a := range appends {
			fmt.Fprintln(tw, a)
		}
		tw.Flush()
	}
}

// ms formats a duration given in milliseconds.
func ms(v float64) string {
	if v >= 1000 {
		return fmt.Sprintf("%.2f s", v/1000)
	}
	if v >= 10 {
		return fmt.Sprintf("%.1f ms", v)
	}
	return fmt.Sprintf("%.2f ms", v)
}
