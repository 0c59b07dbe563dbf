package replicatest

import (
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookhost/hookhost/gateway/internal/servetest"
	"github.com/hookhost/hookhost/gateway/statestore/statestoretest"
	"github.com/hookhost/hookhost/internal/fakeapi"
)

const (
	// benchClients is how many clients send at once.
	benchClients = 16
	benchKeyEnv  = "REPLICATEST_BENCH_KEY"
	benchKey     = "hk-bench-0123"
)

// BenchmarkReplicas is the throughput of hookhost serve behind nginx with
// one replica and with three, sharing Redis: benchClients clients send
// small chat completions, each counted against its key's (generous)
// limits in Redis, to a fake upstream that answers at once. It reports
// req/s and the latencies' p50 and p99 as seen by the clients.
//
// The replicas run on the same machine as nginx, Redis, the upstream and
// the clients: on a machine of two cores the three replicas share the
// same CPUs, so three cannot serve more than one there, and serve less
// (more processes to schedule, nginx spreading connections thinner). What
// three replicas buy is capacity on separate machines; here the figures
// bound the cost of nginx and the shared Redis per request. On two shared
// cores, with other work running (load average 4 to 5), two runs gave:
//
//	go test -run '^$' -bench Replicas -benchtime=2000x -count=1 ./gateway/replicatest/
//	replicas=1   1176 req/s  p50 12.7 ms  p99 32.0 ms
//	replicas=3    674 req/s  p50 21.1 ms  p99 79.9 ms
//	replicas=1   1790 req/s  p50  8.3 ms  p99 20.6 ms
//	replicas=3   1544 req/s  p50  9.4 ms  p99 25.6 ms
func BenchmarkReplicas(b *testing.B) {
	if setupErr != nil {
		b.Fatal(setupErr)
	}
	for _, n := range []int{1, 3} {
		b.Run(fmt.Sprintf("replicas=%d", n), func(b *testing.B) { benchReplicas(b, n) })
	}
}

func benchReplicas(b *testing.B, n int) {
	redis := statestoretest.StartRedis(b)
	nginxBin := findNginx(b)
	up := fakeapi.NewUpstream(b, fakeapi.Chat)
	up.Use(func(fakeapi.Request) fakeapi.Turn { return fakeapi.Turn{Text: "pong", In: 3, Out: 1} })
	cfg := fmt.Sprintf(`# Far above what the benchmark sends: every request is counted in Redis
# (its request, then its tokens reserved and settled), none refused.
[server.keys.bench]
env = %q
requests_per_minute = 100000000
tokens_per_minute = 100000000000

[llm]
provider = "openai"
api = "chat"
model = %q
base_url = %q
api_key_env = %q
max_retries = 0

[state]
backend = "redis"
url_env = %q
`, benchKeyEnv, model, up.BaseURL(), upstreamKeyEnv, redisURLEnv)
	env := append(environ(), "HOOKHOST_USE_GATEWAY=1", upstreamKeyEnv+"=sk-upstream-0123", redisURLEnv+"="+redis.URL(), benchKeyEnv+"="+benchKey)
	var replicas []*servetest.Server
	for range n {
		replicas = append(replicas, servetest.StartWithConfig(b, filepath.Join(binDir, "hookhost"), cfg, env))
	}
	lb := startNginx(b, nginxBin, replicas)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: benchClients}}
	b.Cleanup(client.CloseIdleConnections)
	url := lb + "/v1/chat/completions"
	body := `{"model":"` + model + `","messages":[{"role":"user","content":"ping"}],"max_tokens":16}`
	// Every replica's connections and Redis client warmed up first.
	for range 3 * n {
		if r, err := send(client, benchKey, url, body); err != nil || r.status != 200 {
			b.Fatalf("warm-up request: %v %d %s", err, r.status, r.body)
		}
	}

	latencies := make([]time.Duration, b.N)
	var next atomic.Int64
	var failed atomic.Pointer[string]
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for range benchClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= b.N {
					return
				}
				t0 := time.Now()
				r, err := send(client, benchKey, url, body)
				latencies[i] = time.Since(t0)
				if err != nil || r.status != 200 || !strings.Contains(string(r.body), "pong") {
					msg := fmt.Sprintf("request %d: %v %d %s", i, err, r.status, r.body)
					failed.CompareAndSwap(nil, &msg)
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if msg := failed.Load(); msg != nil {
		b.Fatal(*msg)
	}
	slices.Sort(latencies)
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "req/s")
	b.ReportMetric(ms(latencies[len(latencies)/2]), "p50-ms")
	b.ReportMetric(ms(latencies[len(latencies)*99/100]), "p99-ms")
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
