// Package bench measures what `hookhost serve` adds to a model call: the
// latency of a small non-streamed Chat Completions request sent straight
// to a fake upstream, through nginx as a plain reverse proxy (the
// baseline; installed from Debian when missing), and through the gateway's
// bypass route, its gateway route with no plugin, its gateway route with
// one remote plugin subscribed to every per-round model hook, and that
// route's floor (no plugin, two bare crossings to another process per
// request), at 1, 16 and 64 concurrent clients, with the CPU time per request of the
// benchmark's process and of the plugin's, the times each was given a
// processor, and how long the plugin waited for one; and a load run that must
// finish with no error. BenchmarkGatewayKora measures the gateway route with Kora loaded
// (its README config, and the same with the router on), and
// BenchmarkGatewayObserver one remote plugin that observes post_llm_call,
// with the observer events delivered and dropped per request. It also
// measures what keeping hidden rounds in Redis ([state] backend = "redis")
// adds to a mixed plugin and client tool call and to its continuation on
// another replica, against one replica's memory. BenchmarkGatewayThroughput
// reads the throughput goal with its targets alternating in short slices,
// beside a floor of two bare crossings to another process per request.
// `make bench` runs it and
// bench/report prints the tables and the goals.
package bench
