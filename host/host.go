package host

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/hookhost/hookhost/config"
	"github.com/hookhost/hookhost/hookbus"
	"github.com/hookhost/hookhost/hooks"
)

// Defaults for Options fields left zero.
const (
	DefaultStartTimeout    = 10 * time.Second
	DefaultBackoffInitial  = 100 * time.Millisecond
	DefaultBackoffMax      = 5 * time.Second
	DefaultBackoffFactor   = 2.0
	DefaultCircuitFailures = 5
	DefaultCircuitWindow   = time.Minute
	DefaultCircuitCooldown = 30 * time.Second
	DefaultCloseTimeout    = 5 * time.Second
)

// Plugin states, as reported in Status.State.
const (
	StateRunning     = "running"      // serving calls
	StateRestarting  = "restarting"   // crashed; calls fail at once while a new process starts
	StateCircuitOpen = "circuit_open" // crashed too often; calls fail at once until the cool-down ends
	StateStopped     = "stopped"      // closed by the host
	// StateDown is a fail_closed plugin that failed to start, or an
	// attached plugin whose process is gone: it is never retried, and a
	// fail_closed one blocks every tool call, until the host is restarted
	// with the cause fixed (Status.Reason says what it is).
	StateDown = "down"
)

// Options tune how plugins are started and supervised. Zero fields take the
// defaults above.
type Options struct {
	// Logger receives the host's and the plugins' logs (plugin stderr is
	// relayed through it, named "plugin.<name>"). nil discards them.
	Logger hclog.Logger
	// StartTimeout bounds the handshake, Describe and Configure of one start.
	StartTimeout time.Duration
	// Backoff spaces restarts of a plugin that keeps crashing.
	Backoff BackoffPolicy
	// CircuitFailures restarts within CircuitWindow open the plugin's
	// circuit: it stays down for CircuitCooldown, then gets one trial start.
	CircuitFailures int
	CircuitWindow   time.Duration
	CircuitCooldown time.Duration
	// Getenv reads the environment, where config.ReattachEnv may name
	// plugins to attach to instead of launching; nil means os.Getenv.
	Getenv func(string) string
	// NoProbes makes Check only start, describe, health-check and stop
	// each plugin: none of the probes that look for warnings, and none of
	// the reruns, which start a plugin more times and call its Shutdown.
	NoProbes bool
}

// BackoffPolicy is the delay before a restart: Initial, multiplied by Factor
// for every restart already made within the circuit window, capped at Max,
// with jitter so that plugins that crashed together do not restart in step.
type BackoffPolicy struct {
	Initial time.Duration
	Max     time.Duration
	Factor  float64
}

// delay is the wait before the restart that follows n recent ones: a
// uniformly random duration between half and all of the exponential step.
func (p BackoffPolicy) delay(n int) time.Duration {
	d := float64(p.Initial) * math.Pow(p.Factor, float64(n))
	if d > float64(p.Max) || math.IsInf(d, 0) || math.IsNaN(d) {
		d = float64(p.Max)
	}
	return time.Duration(d/2 + rand.Float64()*d/2)
}

func (o Options) withDefaults() Options {
	if o.Logger == nil {
		o.Logger = hclog.NewNullLogger()
	}
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = DefaultStartTimeout
	}
	if o.Backoff.Initial <= 0 {
		o.Backoff.Initial = DefaultBackoffInitial
	}
	if o.Backoff.Max <= 0 {
		o.Backoff.Max = DefaultBackoffMax
	}
	if o.Backoff.Max < o.Backoff.Initial {
		o.Backoff.Max = o.Backoff.Initial
	}
	if o.Backoff.Factor < 1 {
		o.Backoff.Factor = DefaultBackoffFactor
	}
	if o.CircuitFailures <= 0 {
		o.CircuitFailures = DefaultCircuitFailures
	}
	if o.CircuitWindow <= 0 {
		o.CircuitWindow = DefaultCircuitWindow
	}
	if o.CircuitCooldown <= 0 {
		o.CircuitCooldown = DefaultCircuitCooldown
	}
	return o
}

// Status describes one supervised plugin.
type Status struct {
	Name     string
	Version  string
	Path     string
	PID      int    // 0 when no process is running
	State    string // StateRunning, StateRestarting, StateCircuitOpen, StateStopped or StateDown
	Restarts int    // restart attempts since Start, successful or not
	Manifest hooks.Manifest
	Reason   string // for StateDown: why the plugin is down and how to fix it
	// Protocol is the plugin protocol version spoken with the latest
	// process (1 or 2); 0 when none ever started.
	Protocol int
	// Lane is set while the current process's hook calls go on its lane,
	// the socket the host hands each plugin process it starts, instead of
	// protocol 2's gRPC hook stream; it is false before the first call, for
	// protocol 1, for an attached plugin, and once a lane broke.
	Lane bool
	// LateAnswers counts answers the plugin's processes sent after the
	// host had stopped waiting for them, which were dropped, since Start.
	LateAnswers uint64
	// Traffic counts the bytes of the messages exchanged with the
	// plugin's processes since Start (see wire.Traffic).
	Traffic Traffic
	// Attached is set for a plugin the host attached to instead of
	// launching it (config.ReattachEnv or plugins.entries.<name>.reattach).
	Attached bool
}

// Traffic counts the bytes of the protobuf messages exchanged with a
// plugin: protocol 1's requests and responses, protocol 2's messages on its
// hook stream, and Describe and Configure. gRPC framing, HTTP/2 and TLS are
// not counted.
type Traffic struct {
	Sent     uint64 // host to plugin
	Received uint64 // plugin to host
}

// Host runs the enabled plugins of one config.
//
// Before it runs any plugin, Start (like Check) makes the host process's
// memory and environment unreadable to other processes of its user where
// the OS allows it (Linux: it clears the process's dumpable flag), so that
// plugins cannot read the host's secrets from /proc.
//
// Lifecycle: Start launches every enabled plugin concurrently. Launching one
// plugin checks that its binary exists and is executable, verifies its
// sha256 pin if the config sets one, and executes it in a process group of
// its own with only the environment variables its entry lists. go-plugin's
// handshake (magic cookie, gRPC, automatic mTLS, and the plugin protocol
// version: the host offers 1 and 2 and the highest the plugin also speaks
// is used, unless plugins.entries.<name>.protocol pins one) must complete
// within Options.StartTimeout; then the plugin is asked to Describe
// itself, its manifest must carry the name it is enabled under and pass
// hooks.ValidateManifest, and it is handed its config table through
// Configure; Status.Protocol says which version each plugin speaks. Plugins
// are then checked in priority order for tools already declared by a
// plugin before them. A plugin that fails any step is stopped and reported
// as a *StartError (which plugin, why, how to fix); the others run
// regardless.
//
// Each running plugin is wrapped in a *supervised, the hooks.Plugin that
// Members hands to the Bus. A supervisor goroutine per plugin watches its
// process; a call that finds the plugin unreachable reports it too. A dead
// plugin is restarted with a new process and a new go-plugin client, after
// an exponential, jittered backoff, going through the same launch steps
// again. While it is down, calls fail at once with hooks.ErrUnavailable,
// which the Bus treats as no result. After Options.CircuitFailures restarts
// within Options.CircuitWindow the circuit opens: no restart for
// Options.CircuitCooldown, then a single trial start that closes the circuit
// if it succeeds and reopens it if not. The manifest the Bus subscribed with
// is the one from the first start; a restarted plugin whose manifest changed
// keeps serving, with a warning.
//
// Calls reach a process through its internal/wire.Conn, whichever the
// version. On version 2 every call shares one stream: a call carries its
// deadline, the plugin is sent a cancel when the host stops waiting, and an
// answer that arrives after that is dropped and counted
// (Status.LateAnswers); a supervised plugin also forwards stretches of the tool
// pipeline (hookstretch.Stretcher), which a version 1 process declines with
// hookstretch.ErrNoStretch.
//
// Reattach: a plugin named in config.ReattachEnv (read through
// Options.Getenv), or whose entry has a reattach config, is not launched:
// the host attaches to the process already serving at the address given
// (a Unix socket, or a loopback TCP address), as a plugin started with
// HOOKHOST_PLUGIN_DEBUG=1 under a debugger prints it, without TLS and
// without checking a sha256 pin (a warning says so). It is then Described,
// validated and Configured like any plugin and called the same way. Its
// process is not the host's: it is never restarted (if it goes away the
// plugin is StateDown until the host is restarted, and the log says how to
// fix it), stopped or killed, and Close leaves it running.
//
// Close stops supervision and stops every plugin concurrently: go-plugin
// asks it to shut down and kills it if it does not, then its process group
// is killed so that nothing it spawned survives. Close is bounded by its
// context and may be called more than once. Should the host die without
// calling Close, even by SIGKILL, the plugins notice (the SDK watches its
// parent) and exit on their own.
//
// A plugin configured fail_closed that fails to start must still block
// what it would have guarded, and without a manifest that is every tool:
// Members then holds a stand-in under its name that subscribes to
// pre_tool_call for every tool and fails each call with an error wrapping
// hooks.ErrUnavailable and the start error, so that the Bus's fail_closed
// rule blocks the call, as it does while a running guard is restarting or
// its circuit is open. Its Status has State StateDown.
type Host struct {
	log     hclog.Logger
	plugins []*supervised // the started plugins, in plugins.enabled order
	slots   []slot        // every member of the Bus, in plugins.enabled order

	closeOnce sync.Once
	closeErr  error
}

// PluginSpec is one plugin for Start or Check to run: its name and its
// config entry. A list of them is in priority order, highest first, as
// plugins.enabled lists them.
type PluginSpec struct {
	Name  string
	Entry config.PluginEntry
}

// Specs returns the plugins cfg enables, in plugins.enabled order, each
// with its entry (the defaults for a plugin with none). A nil cfg enables
// none.
func Specs(cfg *config.Config) []PluginSpec {
	if cfg == nil {
		return nil
	}
	specs := make([]PluginSpec, len(cfg.Plugins.Enabled))
	for i, name := range cfg.Plugins.Enabled {
		specs[i] = PluginSpec{Name: name, Entry: cfg.Entry(name)}
	}
	return specs
}

// Start launches every plugin of plugins concurrently and supervises the
// ones that start. The plugins that fail are reported, in the order of
// plugins, and left out; the Host is usable either way and must be closed.
// ctx bounds the start only, not the plugins' lifetime.
func Start(ctx context.Context, plugins []PluginSpec, opts Options) (*Host, []*StartError) {
	opts = opts.withDefaults()
	h := &Host{log: opts.Logger}
	names, entries, results := launchAll(ctx, plugins, &opts)
	var errs []*StartError
	taken := map[string]bool{}
	for i, r := range results {
		if r.err != nil {
			errs = append(errs, r.err)
			if entries[i].FailClosed && !taken[names[i]] {
				taken[names[i]] = true
				h.slots = append(h.slots, slot{down: &downGuard{name: names[i], entry: entries[i], err: r.err}})
				h.log.Info("fail_closed plugin did not start: blocking every tool call until it does",
					"plugin", names[i], "reason", r.err.Reason, "fix", r.err.Fix)
			}
			continue
		}
		taken[names[i]] = true
		s := newSupervised(names[i], entries[i], opts, r.inst)
		h.plugins = append(h.plugins, s)
		h.slots = append(h.slots, slot{sup: s})
		h.log.Info("plugin started", "plugin", names[i], "version", r.inst.manifest.Version, "pid", r.inst.pid)
	}
	return h, errs
}

// slot is one member of the Bus: a started plugin or a fail_closed plugin
// that is down.
type slot struct {
	sup  *supervised
	down *downGuard
}

// downGuard stands in for a fail_closed plugin that did not start.
type downGuard struct {
	name  string
	entry config.PluginEntry
	err   *StartError
}

// plugin fails every pre_tool_call, for every tool, so that the Bus's
// fail_closed rule blocks each one and logs why.
func (d *downGuard) plugin() hooks.Plugin {
	return &hooks.Funcs{
		Name: d.name,
		PreToolCallFunc: func(context.Context, hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
			return nil, fmt.Errorf("plugin %s is not running (%s); fix: %s: %w", d.name, d.err.Reason, d.err.Fix, hooks.ErrUnavailable)
		},
	}
}

func (d *downGuard) status() Status {
	return Status{Name: d.name, Path: d.entry.Path, State: StateDown, Reason: d.err.Error(),
		Manifest: hooks.Manifest{Name: d.name, Hooks: []hooks.Name{hooks.PreToolCall}}}
}

type launchResult struct {
	inst *instance
	err  *StartError
}

// launchAll starts every enabled plugin at once and returns the outcome of
// each in plugins.enabled order, after refusing plugins whose tools a
// higher-priority plugin already declared.
func launchAll(ctx context.Context, plugins []PluginSpec, opts *Options) ([]string, []config.PluginEntry, []launchResult) {
	// Before any plugin runs: see protectProcess.
	protectProcess(opts)
	if len(plugins) == 0 {
		return nil, nil, nil
	}
	names := make([]string, len(plugins))
	entries := make([]config.PluginEntry, len(plugins))
	for i, p := range plugins {
		names[i], entries[i] = p.Name, p.Entry
	}
	results := make([]launchResult, len(names))
	seen := map[string]bool{}
	var wg sync.WaitGroup
	refused := applyReattach(names, entries, opts)
	for i, name := range names {
		if serr := refused[i]; serr != nil {
			results[i].err = serr
			continue
		}
		if seen[name] {
			results[i].err = startErr(name, nil, "list it once in plugins.enabled; the order sets priority",
				"config: plugins.enabled lists %q more than once", name)
			continue
		}
		seen[name] = true
		wg.Go(func() {
			inst, err := launch(ctx, name, entries[i], opts)
			results[i] = launchResult{inst: inst, err: err}
		})
	}
	wg.Wait()

	owner := map[string]string{}
	for i, r := range results {
		if r.inst == nil {
			continue
		}
		var clash *StartError
		for _, t := range r.inst.manifest.Tools {
			if other, taken := owner[t.Name]; taken {
				clash = startErr(names[i], nil,
					fmt.Sprintf("rename the tool in one of the two plugins, or remove %q or %q from plugins.enabled", other, names[i]),
					"tool %q is already declared by plugin %q, which comes first in plugins.enabled", t.Name, other)
				break
			}
		}
		if clash != nil {
			r.inst.abort()
			results[i] = launchResult{err: clash}
			continue
		}
		for _, t := range r.inst.manifest.Tools {
			owner[t.Name] = names[i]
		}
	}
	return names, entries, results
}

// Members returns the started plugins in plugins.enabled order, ready for
// hookbus.New, each with the options of its config entry. Every Plugin is a
// *supervised, except the stand-in for a fail_closed plugin that did not
// start (see Host).
func (h *Host) Members() []hookbus.Member {
	members := make([]hookbus.Member, len(h.slots))
	for i, sl := range h.slots {
		if sl.down != nil {
			members[i] = hookbus.Member{Plugin: sl.down.plugin(), Options: hookbus.Options{
				Timeout: sl.down.entry.Timeout, ToolTimeout: sl.down.entry.ToolTimeout, FailClosed: true,
			}}
			continue
		}
		s := sl.sup
		members[i] = hookbus.Member{Plugin: s, Options: hookbus.Options{
			Timeout:           s.entry.Timeout,
			ToolTimeout:       s.entry.ToolTimeout,
			FailClosed:        s.entry.FailClosed,
			AllowToolOverride: s.entry.AllowToolOverride,
			MaxResultSize:     s.entry.MaxResultSize,
		}}
	}
	return members
}

// Plugins reports the state of every started plugin and every fail_closed
// plugin that is down, in plugins.enabled order.
func (h *Host) Plugins() []Status {
	out := make([]Status, len(h.slots))
	for i, sl := range h.slots {
		if sl.down != nil {
			out[i] = sl.down.status()
			continue
		}
		out[i] = sl.sup.Status()
	}
	return out
}

// Close stops every plugin and its process group, concurrently. A ctx
// without a deadline gets DefaultCloseTimeout. Later calls return the first
// call's result.
func (h *Host) Close(ctx context.Context) error {
	h.closeOnce.Do(func() {
		if _, ok := ctx.Deadline(); !ok {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, DefaultCloseTimeout)
			defer cancel()
		}
		errs := make([]error, len(h.plugins))
		var wg sync.WaitGroup
		for i, s := range h.plugins {
			wg.Go(func() { errs[i] = s.close(ctx) })
		}
		wg.Wait()
		h.closeErr = errors.Join(errs...)
	})
	return h.closeErr
}
