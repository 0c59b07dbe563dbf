package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/hookhost/hookhost"
	"github.com/hookhost/hookhost/host"
	"github.com/hookhost/hookhost/internal/telemetry"
)

// open assembles the host for chat and serve, reports the plugins that
// did not start and prints the start line: the route and where it was
// decided, the model, the plugins. ctx cancelled during the start (Ctrl-C)
// ends the command.
func open(ctx context.Context, inv *invocation, log hclog.Logger, stderr io.Writer) (*hookhost.Host, error) {
	h, err := hookhost.Open(ctx, inv.cfg, hookhost.Options{Logger: log, Version: version, Decisions: inv.decisions})
	if err != nil {
		var ce *hookhost.ConfigError
		if errors.As(err, &ce) {
			return nil, &exitError{code: 2, err: err}
		}
		return nil, err
	}
	if ctx.Err() != nil {
		closeHost(h)
		return nil, errors.New("interrupted while starting plugins")
	}
	for _, e := range h.StartErrors() {
		fmt.Fprintf(stderr, "hookhost: %v\n", e)
	}
	for _, e := range h.MCPStartErrors() {
		fmt.Fprintf(stderr, "hookhost: %v\n", e)
	}
	for _, st := range h.Plugins() {
		if st.State == host.StateDown {
			fmt.Fprintf(stderr, "hookhost: plugin %s is configured fail_closed and is not running: every tool call is blocked until it starts (restart hookhost once it is fixed)\n", st.Name)
		}
	}
	route, source := h.Route()
	if source != "default" {
		source = "from " + source
	}
	cfg := h.Config()
	fmt.Fprintf(stderr, "hookhost: route %s (%s), model %s/%s, plugins: %s\n",
		route, source, cfg.LLM.Provider, cfg.LLM.Model, pluginSummary(h))
	return h, nil
}

// pluginSummary names the plugins in priority order, one attached to
// rather than launched and a fail_closed one that is down marked as such,
// and counts the others that failed.
func pluginSummary(h *hookhost.Host) string {
	var names []string
	skipped := len(h.StartErrors())
	for _, st := range h.Plugins() {
		name := st.Name
		if st.Attached {
			name += " (attached)"
		}
		if st.State == host.StateDown {
			name += " " + downFailClosed
			skipped-- // listed here, not among the plugins skipped
		}
		names = append(names, name)
	}
	if len(names) == 0 && skipped == 0 {
		return "none"
	}
	s := strings.Join(names, ", ")
	if s == "" {
		s = "none running"
	}
	if skipped > 0 {
		s += fmt.Sprintf(" (%d failed to start)", skipped)
	}
	return s
}

// closeHost stops the plugins, delivering queued observer events first,
// within a bound so that a wedged plugin cannot hold the command open.
func closeHost(h *hookhost.Host) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	h.Close(ctx)
}

// decisionLog shows every plugin hook call on stderr at DEBUG, for -v:
// who was asked what, what it answered and how long it took, as the
// decision log ([trace] file) records it. It writes through log's writer
// and lock, so that its lines never tear the others.
func decisionLog(log hclog.Logger) hclog.Logger {
	l := log.Named("decision")
	l.SetLevel(hclog.Debug)
	return l
}

// startTelemetry exports traces over OTLP/HTTP when the OTEL_* variables
// ask for it (see package telemetry); the returned stop flushes what is
// pending, within a bound, and is a no-op when nothing was started.
func startTelemetry(inv *invocation) (stop func(), err error) {
	shutdown, err := telemetry.Setup(context.Background(), os.Getenv, version, inv.cfg.Trace.IncludeContent)
	if err != nil {
		return nil, &exitError{code: 2, err: err}
	}
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		shutdown(ctx)
	}, nil
}
