package main

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
)

// run is two -count runs of the plugin-boundary benchmarks as go test
// prints them, with the timings chosen so each target's verdict is known.
const run = `goos: linux
BenchmarkHookRoundTrip/inprocess-2         	  300000	      4000 ns/op
BenchmarkHookRoundTrip/inprocess-2         	  300000	      4200 ns/op
BenchmarkHookRoundTrip/v1-2                	    5000	    262000 ns/op
BenchmarkHookRoundTrip/v1-2                	    5000	    262000 ns/op
BenchmarkHookRoundTrip/v2-2                	    5000	    170000 ns/op
BenchmarkHookRoundTrip/v2-2                	    5000	    190000 ns/op
BenchmarkHookRoundTrip/v2-stream-2         	    5000	    350000 ns/op
BenchmarkHookRoundTrip/v2-stream-2         	    5000	    370000 ns/op
BenchmarkHookRoundTrip/rawgrpc-unary-tls-2 	    5000	    224000 ns/op
BenchmarkHookRoundTrip/rawgrpc-unary-tls-2 	    5000	    224000 ns/op
BenchmarkHookRoundTrip/rawgrpc-bidi-tls-2  	    5000	    175000 ns/op
BenchmarkHookRoundTrip/exec-2              	     100	   9000000 ns/op
BenchmarkHookRoundTrip/pingpong-2          	   20000	     60000 ns/op
BenchmarkToolCall/remote-v1-2              	    2000	    771000 ns/op	         3.000 rpcs/op	         3.000 exchanges/op
BenchmarkToolCall/remote-v2-2              	    2000	    450000 ns/op	         3.000 rpcs/op	         1.000 exchanges/op
BenchmarkToolCall/native-demo-2            	   50000	     30000 ns/op	         1.000 rpcs/op
PASS
`

func report(t *testing.T, in string) string {
	t.Helper()
	samples, order := parse(strings.NewReader(in))
	var out bytes.Buffer
	print(&out, samples, order)
	return out.String()
}

// line finds the report line that starts with label and checks the rest
// of it against want (a regular expression).
func line(t *testing.T, out, label, want string) {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if rest, ok := strings.CutPrefix(l, label); ok {
			if !regexp.MustCompile(want).MatchString(rest) {
				t.Errorf("%s: got %q, want it to match %q", label, strings.TrimSpace(rest), want)
			}
			return
		}
	}
	t.Errorf("no line %q in\n%s", label, out)
}

func TestReportBoundaryAndTargets(t *testing.T) {
	out := report(t, run)
	// Medians over the runs: v2 is (170+190)/2 = 180 µs.
	line(t, out, "hook round trip, protocol 2 on the lane", `180\.0 µs\s+170\.0 µs – 190\.0 µs\s+1\.00`)
	line(t, out, "hook round trip, protocol 2 on the gRPC Hooks stream", `360\.0 µs\s+350\.0 µs – 370\.0 µs\s+2\.00`)
	line(t, out, "hook round trip, protocol 1", `262\.0 µs\s+262\.0 µs – 262\.0 µs\s+1\.46`)
	line(t, out, "bare gRPC bidi stream message over TLS", `175\.0 µs`)
	line(t, out, "tool call, one remote plugin in all four tool hooks, protocol 2", `450\.0 µs\s+\S+ µs – \S+ µs\s+2\.50\s+3 hooks asked in 1 exchange\(s\)`)
	line(t, out, "tool call, one remote plugin in all four tool hooks, protocol 1", `771\.0 µs\s+\S+ µs – \S+ µs\s+4\.28\s+3 hooks asked in 3 exchange\(s\)`)
	line(t, out, "tool call, one plugin in four hooks, v2: synchronous exchanges/op", `1\.00\s*$`)
	line(t, out, "v2 round trip / bare unary call over TLS", `0\.80×\s+≤ 0\.85×\s+met`)
	line(t, out, "v1 round trip / bare unary call over TLS", `1\.17×\s*$`)
	line(t, out, "bare bidi stream message / bare unary call (both TLS)", `0\.78×`)
	line(t, out, "v2 round trip / bare bidi stream message over TLS", `1\.03×`)
	line(t, out, "v2 round trip on the Hooks stream / bare bidi stream message over TLS", `2\.06×`)
	line(t, out, "v2 round trip on the lane / on the Hooks stream", `0\.50×`)
	line(t, out, "tool call, one plugin in four hooks, v2, in v2 round trips", `2\.50\s+≤ 2\s+MISSED`)
	line(t, out, "native tool call with the demo config: synchronous rpcs/op", `1\.00\s+0\s+MISSED`)
	line(t, out, "process per hook / v2 round trip", `50×\s+≥ 25×\s+met`)
	line(t, out, "one byte to a child process and back over pipes", `60\.0 µs`)
	line(t, out, "v2 round trip / one byte to a child process and back", `3\.00×\s*$`)
	// A figure whose benchmark failed must not pass for met; one whose
	// benchmark function was not run is left out.
	line(t, out, "native tool call with the demo config: synchronous rpcs/op", `1\.00\s+0\s+MISSED`)
	if strings.Contains(out, "startup of 8 plugins") {
		t.Errorf("a run without BenchmarkStartup reports on it:\n%s", out)
	}
	failed := report(t, strings.Replace(run, "BenchmarkHookRoundTrip/v2-2", "BenchmarkHookRoundTrip/v2-failed", -1))
	line(t, failed, "v2 round trip / bare unary call over TLS", `-\s+≤ 0\.85×\s+NOT MEASURED`)
}

func TestReportGatewayOnlyRunHasNoBoundaryTables(t *testing.T) {
	out := report(t, "BenchmarkGatewayLatency/direct/clients=1-2 \t 100 \t 5000 ns/op \t 40 p50-µs \t 90 p99-µs\n")
	for _, header := range []string{"plugin boundary", "comparison"} {
		if strings.Contains(out, header) {
			t.Errorf("a gateway-only run prints the %q table:\n%s", header, out)
		}
	}
	if !strings.Contains(out, "gateway (medians, same run)") {
		t.Errorf("no gateway table:\n%s", out)
	}
}

func TestReportLanguages(t *testing.T) {
	out := report(t, `
BenchmarkLanguageProvide/go-2          	    5000	    200000 ns/op	         2.000 protocol
BenchmarkLanguageProvide/python-2      	    2000	    500000 ns/op	         2.000 protocol
BenchmarkLanguageProvide/typescript-2  	    1000	    900000 ns/op	         2.000 protocol
BenchmarkLanguageStartup/go-2          	      20	  50000000 ns/op
BenchmarkLanguageStartup/python-2      	      10	 300000000 ns/op
BenchmarkLanguageIdleRSS/go-2          	   20000	     40000 ns/op	     16384 idle-rss-KiB
BenchmarkLanguageIdleRSS/typescript-2  	   20000	     40000 ns/op	     51200 idle-rss-KiB
BenchmarkExampleProvide/go-cache-2     	    5000	    280000 ns/op
BenchmarkExampleProvide/python-guard-2 	    2000	    610000 ns/op
`)
	line(t, out, "go  ", `200\.0 µs\s+1\.00×\s+50\.00 ms\s+16\.0 MiB`)
	line(t, out, "python  ", `500\.0 µs\s+2\.50×\s+300\.00 ms\s+-`)
	line(t, out, "typescript  ", `900\.0 µs\s+4\.50×\s+-\s+50\.0 MiB`)
	line(t, out, "example go-cache", `280\.0 µs`)
	line(t, out, "example python-guard", `610\.0 µs`)
	if strings.Index(out, "\ngo  ") > strings.Index(out, "\npython  ") {
		t.Errorf("Go is not the first language row:\n%s", out)
	}
}

// koraRun is two -count runs of the Kora ledger benchmarks.
const koraRun = `BenchmarkKoraBurn/sqlite-10M/today-2   	    1833	   1247145 ns/op	         1.000 p50-ms	         3.000 p99-ms	        28.00 peak-rss-MiB
BenchmarkKoraBurn/sqlite-10M/today-2   	    1833	   1247145 ns/op	         2.000 p50-ms	         5.000 p99-ms	        30.00 peak-rss-MiB
BenchmarkKoraBurn/sqlite-10M/all-2     	      44	  55915044 ns/op	        40.00 p50-ms	       169.0 p99-ms	        70.00 peak-rss-MiB
BenchmarkKoraBurn/sqlite-10M/all-2     	      44	  55915044 ns/op	        42.00 p50-ms	       171.0 p99-ms	        70.00 peak-rss-MiB
BenchmarkKoraTail/sqlite-10M/audit_tail-2  	    1350	   1655392 ns/op	         1.328 p50-ms	         4.681 p99-ms	        31.30 peak-rss-MiB
BenchmarkKoraAppend/sqlite-full/8-writers-2         	    4292	    506476 ns/op	      1974 appends/s
BenchmarkKoraAppend/sqlite-full/8-writers-2         	    4292	    506476 ns/op	      1976 appends/s
BenchmarkKoraAppend/postgres/1-writers-2         	    1502	   3052107 ns/op	       327.6 appends/s
`

func TestReportKoraLedger(t *testing.T) {
	out := report(t, koraRun)
	line(t, out, "get_burn today", `sqlite-10M\s+1\.50 ms\s+4\.00 ms\s+29\.0 MiB\s+time met, memory met`)
	line(t, out, "get_burn all", `sqlite-10M\s+41\.0 ms\s+170\.0 ms\s+70\.0 MiB\s+time met at p50, MISSED at p99, memory MISSED`)
	line(t, out, "audit_tail", `sqlite-10M\s+1\.33 ms\s+4\.68 ms\s+31\.3 MiB\s+memory met`)
	line(t, out, "sqlite-full", `8\s+1975\s+506\.5 µs`)
	line(t, out, "postgres", `1\s+328\s+3\.05 ms`)
	if strings.Contains(report(t, run), "Kora ledger") {
		t.Error("a run without the Kora benchmarks prints their table")
	}
}

// gatewayRun is two -count runs of the gateway latency benchmark, with
// figures chosen so each goal's verdict is known.
const gatewayRun = `BenchmarkGatewayLatency/direct/clients=1-2 	 1000 	 60000 ns/op 	 50 p50-µs 	 100 p99-µs 	 9000 req/s 	 0 upstream-conns/op
BenchmarkGatewayLatency/direct/clients=1-2 	 1000 	 60000 ns/op 	 70 p50-µs 	 100 p99-µs 	 9000 req/s 	 0 upstream-conns/op
BenchmarkGatewayLatency/direct/clients=16-2 	 1000 	 60000 ns/op 	 600 p50-µs 	 900 p99-µs 	 12000 req/s 	 0 upstream-conns/op
BenchmarkGatewayLatency/nginx/clients=1-2 	 1000 	 60000 ns/op 	 160 p50-µs 	 400 p99-µs 	 5000 req/s 	 0 upstream-conns/op
BenchmarkGatewayLatency/nginx/clients=16-2 	 1000 	 60000 ns/op 	 1000 p50-µs 	 3000 p99-µs 	 11000 req/s 	 0 upstream-conns/op
BenchmarkGatewayLatency/bypass/clients=1-2 	 1000 	 60000 ns/op 	 200 p50-µs 	 500 p99-µs 	 4000 req/s 	 0 upstream-conns/op
BenchmarkGatewayLatency/bypass/clients=16-2 	 1000 	 60000 ns/op 	 1500 p50-µs 	 4000 p99-µs 	 8000 req/s 	 0 upstream-conns/op
BenchmarkGatewayLatency/gateway/clients=1-2 	 1000 	 60000 ns/op 	 260 p50-µs 	 700 p99-µs 	 3000 req/s 	 0 upstream-conns/op
BenchmarkGatewayLatency/gateway/clients=16-2 	 1000 	 60000 ns/op 	 2000 p50-µs 	 5000 p99-µs 	 6000 req/s 	 0 upstream-conns/op
BenchmarkGatewayLatency/plugin/clients=1-2 	 1000 	 60000 ns/op 	 1040 p50-µs 	 2000 p99-µs 	 900 req/s 	 0 upstream-conns/op
BenchmarkGatewayLatency/plugin/clients=16-2 	 1000 	 60000 ns/op 	 4000 p50-µs 	 9000 p99-µs 	 3000 req/s 	 0 upstream-conns/op
BenchmarkGatewayLatency/floor/clients=1-2 	 1000 	 60000 ns/op 	 520 p50-µs 	 1200 p99-µs 	 1900 req/s 	 0 upstream-conns/op
BenchmarkGatewayKora/direct/clients=1-2 	 1000 	 60000 ns/op 	 40 p50-µs 	 100 p99-µs 	 9000 req/s
BenchmarkGatewayKora/gateway/clients=1-2 	 1000 	 60000 ns/op 	 240 p50-µs 	 600 p99-µs 	 3000 req/s
BenchmarkGatewayKora/kora/clients=1-2 	 1000 	 60000 ns/op 	 280 p50-µs 	 700 p99-µs 	 2800 req/s
BenchmarkGatewayKora/kora-router/clients=1-2 	 1000 	 60000 ns/op 	 840 p50-µs 	 1700 p99-µs 	 1000 req/s
`

func TestReportGatewayGoals(t *testing.T) {
	out := report(t, gatewayRun)
	// Added figures are medians minus direct's: direct's p50 is 60 µs.
	line(t, out, "nginx  ", `^\s+100 µs\s+300 µs\s+11000\s*$`)
	line(t, out, "bypass  ", `^\s+140 µs\s+400 µs\s+8000\s*$`)
	line(t, out, "gateway  ", `^\s+200 µs\s+600 µs\s+6000\s*$`)
	line(t, out, "bypass added p50 / nginx added p50 (1 client)", `1\.40×\s+≤ 1\.5×\s+met`)
	line(t, out, "gateway added p50 / nginx added p50 (1 client)", `2\.00×\s*$`)
	line(t, out, "plugin p50 / gateway p50 (1 client)", `4\.00×\s+≤ 3×\s+MISSED`)
	line(t, out, "plugin p99 − gateway p99, what the plugin adds (1 client)", `1300 µs\s+< 1000 µs\s+MISSED`)
	line(t, out, "plugin req/s / gateway req/s (16 clients, separate runs)", `0\.50\s+≥ 0\.60\s+MISSED`)
	line(t, out, "floor p50 / gateway p50 (1 client)", `2\.00×\s*$`)
	line(t, out, "floor p99 − gateway p99, what two bare crossings add (1 client)", `500 µs\s*$`)
	line(t, out, "gateway route, no plugin, two bare crossings per request (floor)", `^\s+1\s+520 µs\s+1\.20 ms\s+460 µs\s+1\.10 ms\s+1900\s`)
	line(t, out, "floor  ", `^\s+460 µs\s+1\.10 ms\s+-\s*$`)
	// Kora's goals read its own benchmark: added 240 µs against 200 µs.
	line(t, out, "Kora (README config) added p50 / gateway added p50 (1 client)", `1\.20×\s+≤ 1\.5×\s+met`)
	line(t, out, "Kora (router on) added p50 / gateway added p50 (1 client)", `4\.00×\s*$`)

	// A slower Kora misses its goal.
	out = report(t, strings.Replace(gatewayRun, " 280 p50-µs", " 600 p50-µs", 1))
	line(t, out, "Kora (README config) added p50 / gateway added p50 (1 client)", `2\.80×\s+≤ 1\.5×\s+MISSED`)

	// Without the nginx target, the goal read against it is not met by
	// default: it says it was not measured.
	var noNginx []string
	for _, l := range strings.Split(gatewayRun, "\n") {
		if !strings.Contains(l, "/nginx/") {
			noNginx = append(noNginx, l)
		}
	}
	out = report(t, strings.Join(noNginx, "\n"))
	line(t, out, "bypass added p50 / nginx added p50 (1 client)", `-\s+≤ 1\.5×\s+NOT MEASURED`)
	line(t, out, "nginx  ", `^\s+-\s+-\s+-\s*$`)
}

// With BenchmarkGatewayThroughput in the run, its alternating slices
// decide the throughput goal, the separate runs' figure is shown without
// a verdict, and its targets get a table of their own.
func TestReportGatewayThroughputSlices(t *testing.T) {
	run := gatewayRun + `BenchmarkGatewayThroughput-2 	 1 	 9400000000 ns/op 	 20 floor-child-cpu-µs/req 	 60 plugin-child-cpu-µs/req 	 360 floor-cpu-µs/req 	 4700 floor-req/s 	 0.62 floor/gateway 	 230 gateway-cpu-µs/req 	 8000 gateway-req/s 	 400 plugin-cpu-µs/req 	 4400 plugin-req/s 	 0.90 plugin/floor 	 0.55 plugin/gateway
BenchmarkGatewayThroughput-2 	 1 	 9400000000 ns/op 	 380 floor-cpu-µs/req 	 4500 floor-req/s 	 0.60 floor/gateway 	 250 gateway-cpu-µs/req 	 7600 gateway-req/s 	 420 plugin-cpu-µs/req 	 4600 plugin-req/s 	 0.96 plugin/floor 	 0.65 plugin/gateway
BenchmarkGatewayThroughput-2 	 1 	 9400000000 ns/op 	 370 floor-cpu-µs/req 	 4600 floor-req/s 	 0.64 floor/gateway 	 240 gateway-cpu-µs/req 	 7800 gateway-req/s 	 410 plugin-cpu-µs/req 	 4500 plugin-req/s 	 0.92 plugin/floor 	 0.61 plugin/gateway
`
	out := report(t, run)
	line(t, out, "plugin req/s / gateway req/s (16 clients, alternating slices)", `0\.61\s+≥ 0\.60\s+met`)
	line(t, out, "plugin req/s / gateway req/s (16 clients, separate runs)", `0\.50\s*$`)
	line(t, out, "floor req/s / gateway req/s (16 clients)", `0\.62\s*$`)
	line(t, out, "plugin req/s / floor req/s (16 clients)", `0\.92\s*$`)
	line(t, out, "no plugin  ", `7800\s+240 µs\s*$`)
	line(t, out, "floor: no plugin, two bare crossings to another process per request  ", `4600\s+370 µs\s+20 µs\s*$`)
	line(t, out, "one remote plugin  ", `4500\s+410 µs\s+60 µs\s*$`)

	// Run alone, the throughput benchmark still decides its goal, and the
	// latency goals say they were not measured.
	alone := report(t, run[len(gatewayRun):])
	line(t, alone, "plugin req/s / gateway req/s (16 clients, alternating slices)", `0\.61\s+≥ 0\.60\s+met`)
	line(t, alone, "plugin p50 / gateway p50 (1 client)", `-\s+≤ 3×\s+NOT MEASURED`)

	// A slower plugin misses the goal on the slices' figures, whatever
	// the separate runs say.
	out = report(t, strings.NewReplacer("0.61 plugin/gateway", "0.51 plugin/gateway", "0.65 plugin/gateway", "0.52 plugin/gateway").Replace(run))
	line(t, out, "plugin req/s / gateway req/s (16 clients, alternating slices)", `0\.52\s+≥ 0\.60\s+MISSED`)
}

// The gateway table gives each target's CPU time per request, the
// benchmark process's and the plugin's, as medians.
func TestReportGatewayCPUPerRequest(t *testing.T) {
	out := report(t, `
BenchmarkGatewayLatency/plugin/clients=16-2 	 100 	 5000 ns/op 	 40 p50-µs 	 90 p99-µs 	 70 plugin-cpu-µs/op 	 3000 req/s 	 400 self-cpu-µs/op
BenchmarkGatewayLatency/plugin/clients=16-2 	 100 	 5000 ns/op 	 40 p50-µs 	 90 p99-µs 	 80 plugin-cpu-µs/op 	 3000 req/s 	 420 self-cpu-µs/op
BenchmarkGatewayLatency/plugin/clients=16-2 	 100 	 5000 ns/op 	 40 p50-µs 	 90 p99-µs 	 90 plugin-cpu-µs/op 	 3000 req/s 	 410 self-cpu-µs/op
`)
	line(t, out, "gateway route, one remote plugin", `16\s.*410 µs\s+80 µs`)
}

// The gateway table gives, per request, the times each process was given
// a processor and how long the plugin waited for one, as medians; a
// target that does not report them leaves the cells empty.
func TestReportGatewaySwitchesPerRequest(t *testing.T) {
	out := report(t, `
BenchmarkGatewayLatency/gateway/clients=1-2 	 100 	 5000 ns/op 	 40 p50-µs 	 90 p99-µs 	 3000 req/s 	 200 self-cpu-µs/op
BenchmarkGatewayLatency/plugin/clients=1-2 	 100 	 5000 ns/op 	 40 p50-µs 	 90 p99-µs 	 1.5 plugin-switches/op 	 30 plugin-wait-µs/op 	 3000 req/s 	 400 self-cpu-µs/op 	 2.25 self-switches/op
BenchmarkGatewayLatency/plugin/clients=1-2 	 100 	 5000 ns/op 	 40 p50-µs 	 90 p99-µs 	 2.5 plugin-switches/op 	 50 plugin-wait-µs/op 	 3000 req/s 	 400 self-cpu-µs/op 	 2.75 self-switches/op
BenchmarkGatewayLatency/plugin/clients=1-2 	 100 	 5000 ns/op 	 40 p50-µs 	 90 p99-µs 	 2.0 plugin-switches/op 	 40 plugin-wait-µs/op 	 3000 req/s 	 400 self-cpu-µs/op 	 2.50 self-switches/op
`)
	line(t, out, "gateway route, one remote plugin", `400 µs\s+2\.50\s+2\.00\s+40 µs\s*$`)
	line(t, out, "gateway route, no plugin", `200 µs\s*$`)
}
