package bench

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/hookhost/hookhost"
)

// koraPlugin is Kora, built from plugins/kora.
func koraPlugin(b *testing.B) string { return buildPlugin(b, "../../plugins/kora") }

// koraGateway serves the gateway route in front of the upstream at up with
// Kora loaded on koraConfig (its [plugins.entries.kora.config] table as
// JSON; %s is replaced by a fresh state directory), and returns the API
// root clients use and the host.
func koraGateway(b *testing.B, up, koraConfig string) (string, *hookhost.Host) {
	stateDir, err := json.Marshal(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	cfg := benchConfig(up)
	withPlugin(cfg, "kora", koraPlugin(b), fmt.Sprintf(koraConfig, stateDir))
	return serveConfig(b, cfg, true)
}

// Kora's configs the benchmark loads: the one the README's rollout
// recommends (a state directory and a reporting budget, the ledger on
// SQLite there), and the same with the model router turned on.
const (
	koraReadme = `{"state_dir": %s, "budget": {"daily_usd": 5.0}}`
	koraRouter = `{"state_dir": %s, "budget": {"daily_usd": 5.0}, "router": {"enabled": true}}`
)

// BenchmarkGatewayKora is one small request straight to the upstream, and
// through the gateway route with no plugin and with Kora loaded, on the
// README's config and with its router on, at 1 and 16 concurrent clients.
// Besides the latencies, kora-sync-calls/op counts the calls to Kora each
// request waited for (observer deliveries are queued off its path),
// kora-observed/op the inferences Kora was sent to record, and
// kora-dropped/op the observer events the host dropped because Kora's
// queue was full (records the ledger never saw).
func BenchmarkGatewayKora(b *testing.B) {
	up := fakeUpstream(b)
	plain, _ := serveGateway(b, up.url, true, false)
	readme, readmeHost := koraGateway(b, up.url, koraReadme)
	router, routerHost := koraGateway(b, up.url, koraRouter)
	targets := []struct {
		name string
		root string
		host *hookhost.Host
	}{
		{"direct", up.url + "/v1", nil},
		{"gateway", plain, nil},
		{"kora", readme, readmeHost},
		{"kora-router", router, routerHost},
	}
	for _, tg := range targets {
		for _, conc := range []int{1, 16} {
			b.Run(fmt.Sprintf("%s/clients=%d", tg.name, conc), func(b *testing.B) {
				var before koraCalls
				if tg.host != nil {
					before = countKoraCalls(tg.host)
				}
				if s := measure(b, up, tg.root, conc); s.errors > 0 {
					b.Fatalf("%d of %d requests failed; the first: %v", s.errors, b.N, s.firstErr)
				}
				if tg.host == nil {
					return
				}
				after := countKoraCalls(tg.host)
				if after.failures > before.failures {
					b.Fatalf("Kora failed %d hook calls during the run", after.failures-before.failures)
				}
				// Warm-up requests are counted too: a rate, not a total.
				b.ReportMetric(float64(after.sync-before.sync)/float64(b.N), "kora-sync-calls/op")
				b.ReportMetric(float64(after.observed-before.observed)/float64(b.N), "kora-observed/op")
				b.ReportMetric(float64(after.dropped-before.dropped)/float64(b.N), "kora-dropped/op")
			})
		}
	}
}

// koraCalls is what the host's bus counted of its calls to Kora.
type koraCalls struct {
	sync, observed, dropped, failures uint64
}

func countKoraCalls(h *hookhost.Host) koraCalls {
	var c koraCalls
	st := h.Bus().Stats()
	c.dropped = st.Dropped["kora"]
	for _, hs := range st.Hooks {
		if hs.Plugin != "kora" {
			continue
		}
		switch {
		case !hs.Hook.Observer():
			c.sync += hs.Calls
		case hs.Hook == "post_llm_call":
			c.observed += hs.Calls
		}
		for _, n := range hs.Failures {
			c.failures += n
		}
	}
	return c
}
