package mcpgate

import (
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// How a call to an upstream's tool ended, as CallStats counts it.
const (
	OutcomeOK          = "ok"          // the tool answered
	OutcomeToolError   = "tool_error"  // the tool answered with isError
	OutcomeTimeout     = "timeout"     // no answer within mcp.servers.NAME.timeout
	OutcomeUnavailable = "unavailable" // the server was not connected: failed at once
	OutcomeCancelled   = "cancelled"   // the caller gave up first
	OutcomeError       = "error"       // the server failed otherwise: lost, garbage, too large
)

// LatencyBuckets are the upper bounds, in seconds, of the latency
// histogram CallStats keeps: from an in-memory answer to a build that
// runs into the default timeout.
var LatencyBuckets = []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120}

// ToolStats are one tool's calls since the server was set up: counts by
// outcome and a latency histogram over every call, whatever its outcome.
type ToolStats struct {
	Server string
	// Tool is the server's own name for it.
	Tool     string
	Outcomes map[string]uint64
	// Buckets[i] counts the calls that took at most LatencyBuckets[i]
	// seconds (cumulative, as Prometheus has them).
	Buckets []uint64
	Count   uint64
	// Sum is the calls' total duration in seconds.
	Sum float64
}

// callStats counts an upstream's calls; the hot path takes one lock.
type callStats struct {
	mu    sync.Mutex
	tools map[string]*toolCounts
}

type toolCounts struct {
	outcomes map[string]uint64
	buckets  []uint64 // not cumulative
	count    uint64
	sum      float64
}

func (s *callStats) record(tool, outcome string, d time.Duration) {
	secs := d.Seconds()
	i := sort.SearchFloat64s(LatencyBuckets, secs)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tools == nil {
		s.tools = map[string]*toolCounts{}
	}
	t := s.tools[tool]
	if t == nil {
		t = &toolCounts{outcomes: map[string]uint64{}, buckets: make([]uint64, len(LatencyBuckets))}
		s.tools[tool] = t
	}
	t.outcomes[outcome]++
	if i < len(t.buckets) {
		t.buckets[i]++
	}
	t.count++
	t.sum += secs
}

// CallStats returns the calls made to the server's tools so far, by
// tool name.
func (u *Upstream) CallStats() []ToolStats {
	s := &u.stats
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]ToolStats, 0, len(s.tools))
	for name, t := range s.tools {
		ts := ToolStats{Server: u.spec.Name, Tool: name, Outcomes: make(map[string]uint64, len(t.outcomes)),
			Buckets: make([]uint64, len(t.buckets)), Count: t.count, Sum: t.sum}
		for k, v := range t.outcomes {
			ts.Outcomes[k] = v
		}
		var cum uint64
		for i, n := range t.buckets {
			cum += n
			ts.Buckets[i] = cum
		}
		out = append(out, ts)
	}
	slices.SortFunc(out, func(a, b ToolStats) int { return strings.Compare(a.Tool, b.Tool) })
	return out
}
