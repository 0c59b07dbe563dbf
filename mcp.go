package hookhost

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/hashicorp/go-hclog"

	"github.com/hookhost/hookhost/config"
	"github.com/hookhost/hookhost/dispatch"
	"github.com/hookhost/hookhost/internal/mcpgate"
)

// mcpServers are the [mcp.servers] the host started: those connected (or
// reconnecting after a crash, under supervision) and those whose first
// start failed, which are stopped and reported like plugins that did not
// start.
type mcpServers struct {
	upstreams []*mcpgate.Upstream
	failed    []mcpgate.Status
	errs      []error
	// offered are the tools of the servers with offer_to_model; nil when
	// none has it.
	offered *mcpgate.ModelTools
}

// MCPStartError is an MCP server that did not start; the host runs
// without it.
type MCPStartError struct {
	Server string
	Err    error
}

func (e *MCPStartError) Error() string {
	return fmt.Sprintf("mcp server %q did not start and is skipped: %v", e.Server, e.Err)
}

func (e *MCPStartError) Unwrap() error { return e.Err }

// startMCP starts the enabled MCP servers concurrently and returns once
// each has connected or failed.
func startMCP(ctx context.Context, cfg config.MCP, log hclog.Logger, version string) *mcpServers {
	servers := cfg.EnabledServers()
	ups := make([]*mcpgate.Upstream, len(servers))
	errs := make([]error, len(servers))
	var wg sync.WaitGroup
	for i, s := range servers {
		u, err := mcpgate.New(s.Spec(), mcpgate.Options{Logger: log, Version: version})
		if err != nil {
			errs[i] = err
			continue
		}
		ups[i] = u
		wg.Go(func() { errs[i] = u.Start(ctx) })
	}
	wg.Wait()
	m := &mcpServers{}
	for i, u := range ups {
		if errs[i] == nil {
			m.upstreams = append(m.upstreams, u)
			continue
		}
		st := mcpgate.Status{Name: servers[i].Name, Transport: "http", State: mcpgate.StateStopped, Reason: errs[i].Error()}
		if servers[i].Command != "" {
			st.Transport = "stdio"
		}
		if u != nil {
			u.Close(context.WithoutCancel(ctx))
		}
		m.failed = append(m.failed, st)
		m.errs = append(m.errs, &MCPStartError{Server: servers[i].Name, Err: errs[i]})
	}
	return m
}

func (m *mcpServers) close(ctx context.Context) error {
	if m == nil {
		return nil
	}
	var errs []error
	for _, u := range m.upstreams {
		errs = append(errs, u.Close(ctx))
	}
	return errors.Join(errs...)
}

// MCPServers returns the state of every enabled MCP server: those
// running (or reconnecting), then those that did not start (stopped,
// with the reason).
func (h *Host) MCPServers() []mcpgate.Status {
	if h.mcp == nil {
		return nil
	}
	var out []mcpgate.Status
	for _, u := range h.mcp.upstreams {
		out = append(out, u.Status())
	}
	return append(out, h.mcp.failed...)
}

// MCPStartErrors returns why each MCP server that failed to start did;
// each is an *MCPStartError.
func (h *Host) MCPStartErrors() []error {
	if h.mcp == nil {
		return nil
	}
	return append([]error(nil), h.mcp.errs...)
}

// MCPGateway builds the MCP server in front of the host's MCP servers,
// its plugin tools and, with mcp.expose_native, its native tools, every
// call running through the plugins' tool hooks. The caller serves it
// (ServeStdio, HTTPHandler) and closes it; the servers stay the host's.
func (h *Host) MCPGateway(logger hclog.Logger) (*mcpgate.Gateway, error) {
	var native []dispatch.Tool
	if h.cfg.MCP.ExposeNative {
		native = h.nativeTools
	}
	var ups []*mcpgate.Upstream
	if h.mcp != nil {
		ups = h.mcp.upstreams
	}
	return mcpgate.NewGateway(ups, mcpgate.GatewayOptions{Bus: h.bus, Native: native, Logger: logger, Version: h.version})
}

// offerMCP makes the tools of the MCP servers with offer_to_model tools
// the model is offered. A name the native tools or a plugin already offer
// stays theirs.
func (h *Host) offerMCP(log hclog.Logger) {
	if h.mcp == nil {
		return
	}
	h.mcp.offered = mcpgate.NewModelTools(h.mcp.upstreams, mcpgate.ModelToolsOptions{
		Logger: log,
		Taken: func(name string) string {
			if _, ok := h.registry.Lookup(name); ok {
				return "the native tools"
			}
			if plugin, ok := h.bus.ToolOwner(name); ok {
				return fmt.Sprintf("plugin %q", plugin)
			}
			return ""
		},
	})
}

// MCPModelTools returns the tools of the MCP servers with offer_to_model,
// as they are offered now and whenever read again; nil when no server
// offers its tools to the model. Sessions offer them beside the native
// tools, and the gateway route beside the plugin tools.
func (h *Host) MCPModelTools() dispatch.ToolSet {
	if h.mcp == nil || h.mcp.offered == nil {
		return nil
	}
	return h.mcp.offered
}

// MCPCallStats returns the calls made to each running MCP server's tools
// (through /mcp, hookhost mcp serve or the model), by server and tool.
func (h *Host) MCPCallStats() []mcpgate.ToolStats {
	if h.mcp == nil {
		return nil
	}
	var out []mcpgate.ToolStats
	for _, u := range h.mcp.upstreams {
		out = append(out, u.CallStats()...)
	}
	return out
}
