package host

import (
	"context"
	"fmt"
	"sync"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc/health/grpc_health_v1"

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
	Matchers []string // tool globs its tool hooks apply to; empty means every tool
	// HookMatchers are the tool hooks with globs of their own, which
	// override Matchers for that hook.
	HookMatchers map[hooks.Name][]string
	// Config is the plugin's declaration of its config keys; nil when it
	// declares none (and checks its config itself).
	Config   *hooks.ConfigKeys
	Protocol int         // the plugin protocol version spoken (1 or 2)
	Attached bool        // attached to, not launched (see Host)
	Err      *StartError // nil when OK
	// FailClosed is the plugin's fail_closed setting: one that is not OK
	// would block every tool call of a host started with this config.
	FailClosed bool
	// Warnings are what Check found that does not stop the plugin from
	// working but costs or risks something; a plugin with warnings is
	// still OK.
	Warnings []Warning
}

// Check starts every enabled plugin the way Start does (binary, checksum,
// handshake, manifest, Configure, tools unique across plugins), asks each
// for its gRPC health, and stops them all again; a plugin it attached to
// (see Host) is left running. It returns one result per
// enabled plugin, in plugins.enabled order, so an operator can vet a config
// before routing traffic through it.
//
// For a plugin it started, Check also looks for what a start does not
// notice and reports it in Warnings: a plugin that serves no controller,
// whose Shutdown does not answer, or that does not exit once it answered
// (found by asking it to shut down), one whose TLS server lets in clients
// without a certificate, one that runs without the magic cookie (found by
// running it again without it), stderr lines the host logs at DEBUG for
// want of a level it knows, a sha256 pin on a script, a #! line that
// finds its interpreter only through env's default path, and a relative
// socket path, and a plugin that receives variables from its env list
// while other processes of its user can read them (it is dumpable). It
// also starts the plugin twice more to read the
// handshake line it prints each time: a certificate made fresh at every
// start can be wrong only sometimes (padded base64), and a plugin that
// prints a bad line in any of them fails the check. Options.NoProbes
// leaves all of this out.
func Check(ctx context.Context, plugins []PluginSpec, opts Options) []CheckResult {
	opts = opts.withDefaults()
	names, entries, results := launchAll(ctx, plugins, &opts)
	out := make([]CheckResult, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		entry := entries[i]
		out[i] = CheckResult{Name: name, Path: entry.Path, FailClosed: entry.FailClosed, Attached: entry.Reattach != nil}
		r := results[i]
		if r.err != nil {
			out[i].Err = r.err
			continue
		}
		wg.Go(func() {
			stopped := false
			stop := func() {
				if stopped {
					return
				}
				stopped = true
				sctx, cancel := context.WithTimeout(context.Background(), DefaultCloseTimeout)
				// A plugin killed here is one Check reports on.
				r.inst.deliberateKill()
				_ = r.inst.stop(sctx, true)
				cancel()
			}
			defer stop()
			if err := healthCheck(ctx, r.inst, opts); err != nil {
				lang := language{}
				if r.inst.attached == nil {
					lang = detectLanguage(entry.Path)
				}
				out[i].Err = problemErr(startErr(name, err, lang.howTo(secHealth),
					"failed its health check (grpc.health.v1, service %q): %v", plugin.GRPCServiceName, err), ProblemService)
				return
			}
			m := r.inst.manifest
			out[i].OK = true
			out[i].Version = m.Version
			out[i].Hooks = m.Hooks
			out[i].Matchers = m.Matchers
			out[i].HookMatchers = m.HookMatchers
			out[i].Config = m.Config
			out[i].Protocol = r.inst.version
			for _, t := range m.Tools {
				out[i].Tools = append(out[i].Tools, t.Name)
			}
			if r.inst.attached != nil || opts.NoProbes {
				// An attached plugin is its author's: not to be asked to
				// shut down, nor run a second time.
				return
			}
			lang := detectLanguage(entry.Path)
			var ws []Warning
			add := func(fs ...*finding) {
				for _, f := range fs {
					if f != nil {
						ws = append(ws, f.warning(lang))
					}
				}
			}
			// Before the probes: a TLS library may log the probe's
			// connection without a client certificate on stderr.
			plain := plainStderrWarning(r.inst)
			add(staticWarnings(name, entry, lang)...)
			add(relativeSocketFinding(r.inst.line))
			add(dumpableWarning(name, entry, r.inst))
			add(clientAuthWarning(ctx, r.inst, &opts))
			add(controllerWarning(ctx, r.inst, &opts))
			// The reruns start more processes of the plugin, which must
			// not meet the first over a lock or a port.
			stop()
			add(plain)
			var cookie, again *finding
			var probes sync.WaitGroup
			probes.Go(func() { cookie = cookieWarning(ctx, entry, &opts) })
			probes.Go(func() { again = rerunFinding(ctx, entry, &opts, lang) })
			probes.Wait()
			add(cookie)
			out[i].Warnings = ws
			if again != nil {
				// The plugin will fail some starts: that is a failure.
				out[i].OK = false
				out[i].Err = again.startErr(name, nil, lang)
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
