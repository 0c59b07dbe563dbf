package gateway

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/hookhost/hookhost/internal/mcpgate"
)

// mcpCollector reads the MCP servers' call counts and states when
// scraped: the calls are counted where they are made (through /mcp,
// `hookhost mcp serve` or the model), whichever of them the host serves.
type mcpCollector struct {
	servers func() []mcpgate.Status
	stats   func() []mcpgate.ToolStats
}

var _ prometheus.Collector = (*mcpCollector)(nil)

var (
	mcpCallsDesc = prometheus.NewDesc("hookhost_mcp_calls_total",
		"Calls to an MCP server's tool, by server, the server's own tool name and outcome (ok, tool_error, timeout, unavailable, cancelled, error).",
		[]string{"server", "tool", "outcome"}, nil)
	mcpDurationDesc = prometheus.NewDesc("hookhost_mcp_call_duration_seconds",
		"Time an MCP server's tool took to answer or fail, by server and tool.",
		[]string{"server", "tool"}, nil)
	mcpStateDesc = prometheus.NewDesc("hookhost_mcp_server_state",
		"1 for an MCP server's current state, 0 for the others.", []string{"server", "state"}, nil)
	mcpRestartsDesc = prometheus.NewDesc("hookhost_mcp_server_restarts_total",
		"Reconnection attempts of an MCP server since the host started.", []string{"server"}, nil)
)

// mcpStates are every state an MCP server can be in.
var mcpStates = []string{mcpgate.StateStarting, mcpgate.StateRunning, mcpgate.StateRestarting, mcpgate.StateCircuitOpen, mcpgate.StateStopped}

func (c *mcpCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- mcpCallsDesc
	ch <- mcpDurationDesc
	ch <- mcpStateDesc
	ch <- mcpRestartsDesc
}

func (c *mcpCollector) Collect(ch chan<- prometheus.Metric) {
	if c.stats != nil {
		for _, t := range c.stats() {
			for outcome, n := range t.Outcomes {
				ch <- prometheus.MustNewConstMetric(mcpCallsDesc, prometheus.CounterValue, float64(n), t.Server, t.Tool, outcome)
			}
			buckets := make(map[float64]uint64, len(mcpgate.LatencyBuckets))
			for i, le := range mcpgate.LatencyBuckets {
				buckets[le] = t.Buckets[i]
			}
			ch <- prometheus.MustNewConstHistogram(mcpDurationDesc, t.Count, t.Sum, buckets, t.Server, t.Tool)
		}
	}
	if c.servers != nil {
		for _, s := range c.servers() {
			ch <- prometheus.MustNewConstMetric(mcpRestartsDesc, prometheus.CounterValue, float64(s.Restarts), s.Name)
			for _, st := range mcpStates {
				v := 0.0
				if st == s.State {
					v = 1
				}
				ch <- prometheus.MustNewConstMetric(mcpStateDesc, prometheus.GaugeValue, v, s.Name, st)
			}
		}
	}
}
