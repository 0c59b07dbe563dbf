// Command report reads `go test -bench` output (several -count runs) and
// prints the median of every metric per benchmark, then the comparisons the
// project tracks, as ratios of medians measured in the same run.
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
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
)

// comparison is one tracked ratio: num's median over den's, with the target
// the project holds itself to.
type comparison struct {
	label    string
	num, den string
	metric   string
	target   string
	ok       func(ratio float64) bool
}

var comparisons = []comparison{
	{"remote hook round trip / raw gRPC call (unix socket)", "BenchmarkHookRoundTrip/remote", "BenchmarkHookRoundTrip/rawgrpc", "ns/op", "≤ 1.2×", func(r float64) bool { return r <= 1.2 }},
	{"remote hook round trip / raw gRPC call over TLS (unix socket)", "BenchmarkHookRoundTrip/remote", "BenchmarkHookRoundTrip/rawgrpc-tls", "ns/op", "", nil},
	{"process per hook / remote hook round trip", "BenchmarkHookRoundTrip/exec", "BenchmarkHookRoundTrip/remote", "ns/op", "≥ 25×", func(r float64) bool { return r >= 25 }},
	{"remote hook round trip / in-process plugin", "BenchmarkHookRoundTrip/remote", "BenchmarkHookRoundTrip/inprocess", "ns/op", "", nil},
	{"tool call with remote provider / native tool call", "BenchmarkToolCall/remote", "BenchmarkToolCall/native", "ns/op", "", nil},
	{"startup of 8 plugins / startup of 1", "BenchmarkStartup/plugins=8", "BenchmarkStartup/plugins=1", "ns/op", "< 2×", func(r float64) bool { return r < 2 }},
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

	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "comparison (medians, same run)\tratio\ttarget\t")
	for _, c := range comparisons {
		num, okNum := samples[c.num][c.metric]
		den, okDen := samples[c.den][c.metric]
		if !okNum || !okDen || median(den) == 0 {
			continue
		}
		r := median(num) / median(den)
		verdict := ""
		if c.ok != nil {
			verdict = "met"
			if !c.ok(r) {
				verdict = "MISSED"
			}
		}
		fmt.Fprintf(tw, "%s\t%.2f×\t%s\t%s\n", c.label, r, c.target, verdict)
	}
	tw.Flush()
	printGateway(w, samples)
}

// The gateway benchmarks' names and metrics (gateway/bench).
const (
	gatewayLatency = "BenchmarkGatewayLatency/"
	gatewayLoad    = "BenchmarkGatewayLoad"
	gatewayDirect  = "direct"
	minLoad        = 10000
)

// gatewayRoutes are the rows of the gateway table, in order.
var gatewayRoutes = []struct{ name, label string }{
	{gatewayDirect, "direct to the upstream"},
	{"bypass", "bypass route"},
	{"gateway", "gateway route, no plugin"},
	{"plugin", "gateway route, one remote plugin"},
}

// printGateway prints what the gateway adds to a request, per route and
// number of concurrent clients: its p50 and p99 minus those of calling the
// upstream directly at the same concurrency, and how many connections to
// the upstream each request opened (0 when they are reused); then the load
// run's outcome.
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
		fmt.Fprintln(tw, "gateway (medians, same run)\tclients\tp50\tp99\tadded p50\tadded p99\treq/s\tnew upstream conns/req\t")
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
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%.0f\t%.2f\t\n", r.label, c, micros(median(m["p50-µs"])), micros(median(m["p99-µs"])), added50, added99, median(m["req/s"]), median(m["upstream-conns/op"]))
			}
		}
		tw.Flush()
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

// micros formats a duration given in microseconds.
func micros(us float64) string {
	if us >= 1000 || us <= -1000 {
		return fmt.Sprintf("%.2f ms", us/1000)
	}
	return fmt.Sprintf("%.0f µs", us)
}
