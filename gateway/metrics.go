package gateway

import (
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hookhost/hookhost/hookbus"
	"github.com/hookhost/hookhost/host"
	"github.com/hookhost/hookhost/internal/relay"
	"github.com/hookhost/hookhost/llm"
)

// metrics are the gateway's Prometheus families, in a registry of their
// own so that a program embedding the gateway keeps its default one.
type metrics struct {
	reg      *prometheus.Registry
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	inFlight prometheus.Gauge
	rejected *prometheus.CounterVec
	rounds   *prometheus.CounterVec
	tools    *prometheus.CounterVec
	evicted  prometheus.Counter
	dropped  *prometheus.CounterVec

	// served and roundsOf keep the children of requests, duration and
	// rounds already asked for: WithLabelValues hashes its labels and
	// takes the vector's lock on every call, on every request's path.
	served   sync.Map // servedKey → servedChildren
	roundsOf sync.Map // llm.Protocol → prometheus.Counter
}

// servedKey names the children one answered request counts in.
type servedKey struct {
	endpoint, route string
	status          int
}

type servedChildren struct {
	requests prometheus.Counter
	duration prometheus.Observer
}

// observeServed counts one answered request and its duration.
func (m *metrics) observeServed(endpoint, route string, status int, d time.Duration) {
	k := servedKey{endpoint, route, status}
	c, ok := m.served.Load(k)
	if !ok {
		c, _ = m.served.LoadOrStore(k, servedChildren{
			requests: m.requests.WithLabelValues(endpoint, route, strconv.Itoa(status)),
			duration: m.duration.WithLabelValues(endpoint, route),
		})
	}
	sc := c.(servedChildren)
	sc.requests.Inc()
	sc.duration.Observe(d.Seconds())
}

var (
	_ relay.Observer      = (*metrics)(nil)
	_ relay.StoreObserver = (*metrics)(nil)
	_ relay.DropObserver  = (*metrics)(nil)
)

func newMetrics(bus *hookbus.Bus, plugins func() []host.Status, budget *bodyBudget) *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "hookhost_gateway_requests_total",
			Help: "Requests answered, by endpoint, route and HTTP status (499: the client left before any answer).",
		}, []string{"endpoint", "route", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "hookhost_gateway_request_duration_seconds",
			Help: "Time from a request's arrival to its last byte, by endpoint and route.",
			// From a proxied call that adds under a millisecond to a
			// streamed answer of several rounds.
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300},
		}, []string{"endpoint", "route"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "hookhost_gateway_in_flight",
			Help: "Requests to the /v1 endpoints being served now.",
		}),
		rejected: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "hookhost_gateway_rejected_total",
			Help: "Requests refused before reaching the model, by reason (auth, too_large, concurrency, content_type, bad_request, unknown_model, not_found, method, read, body_budget, malformed).",
		}, []string{"reason"}),
		rounds: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "hookhost_gateway_upstream_rounds_total",
			Help: "Upstream model calls made by the hook loop, by the upstream's protocol.",
		}, []string{"protocol"}),
		tools: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "hookhost_gateway_tool_calls_total",
			Help: "Tool calls the gateway handled: plugin or mcp (a plugin's or an offered MCP server's tool, run by hookhost), blocked or provided (a client tool answered by hookhost), client (handed back).",
		}, []string{"how"}),
		evicted: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "hookhost_gateway_store_evicted_total",
			Help: "Hidden rounds dropped from the store before the client continued (expired, or over server.state_entries); a continuation after that reaches the model without them.",
		}),
		dropped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "hookhost_gateway_fields_dropped_total",
			Help: "Hint fields (metadata, cache hints, strict, store, …) left out of requests because the upstream speaks another protocol, by endpoint and field as the README's field tables name it.",
		}, []string{"endpoint", "field"}),
	}
	m.reg.MustRegister(m.requests, m.duration, m.inFlight, m.rejected, m.rounds, m.tools, m.evicted, m.dropped,
		&pluginCollector{bus: bus, plugins: plugins},
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "hookhost_gateway_body_bytes_in_flight",
			Help: "Request-body bytes held now, against server.max_body_bytes_in_flight.",
		}, func() float64 { return float64(budget.inUse()) }))
	return m
}

// Round counts one upstream call.
func (m *metrics) Round(protocol llm.Protocol) {
	c, ok := m.roundsOf.Load(protocol)
	if !ok {
		c, _ = m.roundsOf.LoadOrStore(protocol, m.rounds.WithLabelValues(string(protocol)))
	}
	c.(prometheus.Counter).Inc()
}

// ToolCall counts one tool call the gateway handled.
func (m *metrics) ToolCall(how string) { m.tools.WithLabelValues(how).Inc() }

// StoreEvicted counts hidden rounds the store dropped.
func (m *metrics) StoreEvicted(n int) { m.evicted.Add(float64(n)) }

// FieldDropped counts one hint field left out of a request.
func (m *metrics) FieldDropped(endpoint, field string) {
	m.dropped.WithLabelValues(endpoint, field).Inc()
}

// pluginCollector reads the Bus's counters and the plugins' states when
// scraped, so the hot path keeps its own counters and nothing else.
type pluginCollector struct {
	bus     *hookbus.Bus
	plugins func() []host.Status
}

var _ prometheus.Collector = (*pluginCollector)(nil)

var (
	hookCallsDesc = prometheus.NewDesc("hookhost_hook_calls_total",
		"Hook calls made to a plugin, by plugin and hook.", []string{"plugin", "hook"}, nil)
	hookFailuresDesc = prometheus.NewDesc("hookhost_hook_failures_total",
		"Hook calls that counted as no answer under the failure rule, by plugin, hook and kind (error, panic, timeout, malformed, unavailable, cancelled, refused).",
		[]string{"plugin", "hook", "kind"}, nil)
	restartsDesc = prometheus.NewDesc("hookhost_plugin_restarts_total",
		"Restart attempts of a plugin since the host started.", []string{"plugin"}, nil)
	stateDesc = prometheus.NewDesc("hookhost_plugin_state",
		"1 for a plugin's current state, 0 for the others.", []string{"plugin", "state"}, nil)
)

// pluginStates are every state a plugin can be in.
var pluginStates = []string{host.StateRunning, host.StateRestarting, host.StateCircuitOpen, host.StateStopped, host.StateDown}

func (c *pluginCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- hookCallsDesc
	ch <- hookFailuresDesc
	ch <- restartsDesc
	ch <- stateDesc
}

func (c *pluginCollector) Collect(ch chan<- prometheus.Metric) {
	for _, h := range c.bus.Stats().Hooks {
		ch <- prometheus.MustNewConstMetric(hookCallsDesc, prometheus.CounterValue, float64(h.Calls), h.Plugin, string(h.Hook))
		for kind, n := range h.Failures {
			ch <- prometheus.MustNewConstMetric(hookFailuresDesc, prometheus.CounterValue, float64(n), h.Plugin, string(h.Hook), kind)
		}
	}
	for _, p := range c.plugins() {
		ch <- prometheus.MustNewConstMetric(restartsDesc, prometheus.CounterValue, float64(p.Restarts), p.Name)
		for _, st := range pluginStates {
			v := 0.0
			if st == p.State {
				v = 1
			}
			ch <- prometheus.MustNewConstMetric(stateDesc, prometheus.GaugeValue, v, p.Name, st)
		}
	}
}
