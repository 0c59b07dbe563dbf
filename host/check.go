package host

import (
	"context"
	"fmt"
	"sync"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc/health/grpc_health_v1"

	"github.com/hookhost/hookhost/config"
	"github.com/hookhost/hookhost/hooks"
)

// CheckResult is what Check found out about one enabled plugin.
type CheckResult struct {
	Name     string
	Path     string
	OK       bool
	Version  string
	Hooks    []hooks.Name
	Tools    []string
	Matchers []string    // tool globs its tool hooks apply to; empty means every tool
	Protocol int         // the plugin protocol version spoken (1 or 2)
	Attached bool        // attached to, not launched (see Host)
	Err      *StartError // nil when OK
	// FailClosed is the plugin's fail_closed setting: one that is not OK
	// would block every tool call of a host started with this config.
	FailClosed bool
}

// Check starts every enabled plugin the way Start does (binary, checksum,
// handshake, manifest, Configure, tools unique across plugins), asks each
// for its gRPC health, and stops them all again; a plugin it attached to
// (see Host) is left running. It returns one result per
// enabled plugin, in plugins.enabled order, so an operator can vet a config
// before routing traffic through it.
func Check(ctx context.Context, cfg *config.Config, opts Options) []CheckResult {
	opts = opts.withDefaults()
	names, entries, results := launchAll(ctx, cfg, &opts)
	out := make([]CheckResult, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		out[i] = CheckResult{Name: name, Path: entries[i].Path, FailClosed: entries[i].FailClosed, Attached: entries[i].Reattach != nil}
		r := results[i]
		if r.err != nil {
			out[i].Err = r.err
			continue
		}
		wg.Go(func() {
			defer func() {
				sctx, cancel := context.WithTimeout(context.Background(), DefaultCloseTimeout)
				_ = r.inst.stop(sctx, true)
				cancel()
			}()
			if err := healthCheck(ctx, r.inst, opts); err != nil {
				out[i].Err = startErr(name, err,
					"serve the plugin with sdk.Serve, which answers go-plugin's health service",
					"failed its health check: %v", err)
				return
			}
			m := r.inst.manifest
			out[i].OK = true
			out[i].Version = m.Version
			out[i].Hooks = m.Hooks
			out[i].Matchers = m.Matchers
			out[i].Protocol = r.inst.version
			for _, t := range m.Tools {
				out[i].Tools = append(out[i].Tools, t.Name)
			}
		})
	}
	wg.Wait()
	return out
}

// healthCheck asks go-plugin's health service (the one client.Ping uses)
// whether the plugin is serving, under a deadline Ping does not offer.
func healthCheck(ctx context.Context, in *instance, opts Options) error {
	gc, ok := in.proto.(*plugin.GRPCClient)
	if !ok {
		return fmt.Errorf("not a gRPC plugin client (%T)", in.proto)
	}
	ctx, cancel := context.WithTimeout(ctx, opts.StartTimeout)
	defer cancel()
	resp, err := grpc_health_v1.NewHealthClient(gc.Conn).Check(ctx,
		&grpc_health_v1.HealthCheckRequest{Service: plugin.GRPCServiceName})
	if err != nil {
		return err
	}
	if st := resp.GetStatus(); st != grpc_health_v1.HealthCheckResponse_SERVING {
		return fmt.Errorf("health service reports %s", st)
	}
	return nil
}
