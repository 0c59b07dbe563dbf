package host

import (
	"context"
	"fmt"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"github.com/hashicorp/go-plugin/runner"

	"github.com/hookhost/hookhost/config"
	"github.com/hookhost/hookhost/internal/childproc"
	"github.com/hookhost/hookhost/internal/wire"
	"github.com/hookhost/hookhost/plugins/handshake"
)

// Attaching to a plugin started by hand is how a plugin is debugged: its
// author runs it under a debugger with HOOKHOST_PLUGIN_DEBUG=1, it serves
// in go-plugin's test mode and prints a reattach line, and the host is
// given that line (config.ReattachEnv, or plugins.entries.<name>.reattach)
// instead of launching the binary. The host then treats the plugin as any
// other (Describe, manifest rules, Configure, the same calls) except that
// the process is the author's: the host never restarts, stops or kills it,
// and leaves it running when it closes.

// reattachFix is what to do when an attached plugin is gone or unreachable.
func reattachFix(name string) string {
	return fmt.Sprintf("start the %s plugin again with HOOKHOST_PLUGIN_DEBUG=1, then restart the host with the line it prints in %s (or plugins.entries.%s.reattach); unset both to have the host launch the plugin itself",
		name, config.ReattachEnv, name)
}

// applyReattach gives each enabled entry the reattach config ReattachEnv
// holds for it, which wins over the entry's own. An entry the variable
// holds but gets wrong, or every entry when the variable is not a JSON
// object at all, gets a StartError: a developer who asked to attach to a
// plugin must not get a freshly launched one instead.
func applyReattach(names []string, entries []config.PluginEntry, opts *Options) map[int]*StartError {
	value := opts.Getenv(config.ReattachEnv)
	if strings.TrimSpace(value) == "" {
		return nil
	}
	errs := map[int]*StartError{}
	ok, bad, err := config.ParseReattachPlugins(value)
	if err != nil {
		for i, name := range names {
			errs[i] = startErr(name, err, fmt.Sprintf("correct %s, or unset it to launch the plugins", config.ReattachEnv),
				"%s is not valid: %v", config.ReattachEnv, err)
		}
		return errs
	}
	for i, name := range names {
		if e, found := bad[name]; found {
			errs[i] = startErr(name, e, reattachFix(name), "%s: the entry for %s is not valid: %v", config.ReattachEnv, name, e)
			continue
		}
		if r, found := ok[name]; found {
			entries[i].Reattach = &r
		}
	}
	for _, name := range slices.Sorted(maps.Keys(ok)) {
		if !slices.Contains(names, name) {
			opts.Logger.Warn("reattach config ignored: no such plugin in plugins.enabled", "plugin", name, "variable", config.ReattachEnv)
		}
	}
	return errs
}

// attachment is the host's side of a plugin it attached to: where the
// plugin serves, and a watch on its process, which go-plugin runs as the
// plugin's runner.
type attachment struct {
	cfg     config.Reattach
	stopped chan struct{} // closed by detach: the watch ends
	once    sync.Once
}

var _ runner.AttachedRunner = (*attachment)(nil)

func (a *attachment) where() string {
	return fmt.Sprintf("%s:%s (pid %d, attached)", a.cfg.Network, a.cfg.Address, a.cfg.Pid)
}

// Wait returns when the plugin's process is gone or the host detached.
// The process is not the host's child, so it is polled.
func (a *attachment) Wait(context.Context) error {
	t := time.NewTicker(exitPoll)
	defer t.Stop()
	for {
		select {
		case <-a.stopped:
			return nil
		case <-t.C:
			if !childproc.Alive(a.cfg.Pid) {
				return nil
			}
		}
	}
}

// Kill does nothing: the process belongs to whoever started it.
func (a *attachment) Kill(context.Context) error { return nil }

// ID is the plugin's pid.
func (a *attachment) ID() string { return strconv.Itoa(a.cfg.Pid) }

// PluginToHost leaves addresses alone: only local addresses are attached.
func (a *attachment) PluginToHost(network, addr string) (string, string, error) {
	return network, addr, nil
}

// HostToPlugin leaves addresses alone, as PluginToHost does.
func (a *attachment) HostToPlugin(network, addr string) (string, string, error) {
	return network, addr, nil
}

// detach lets go of an attached plugin: it closes the host's connection
// and ends the watch. go-plugin's own Close is not used, because it asks
// the plugin's server to shut down.
func (a *attachment) detach(in *instance) error {
	a.once.Do(func() { close(a.stopped) })
	if gc, ok := in.proto.(*plugin.GRPCClient); ok {
		return gc.Conn.Close()
	}
	return nil
}

// attach connects to a plugin already serving where entry.Reattach says.
// No binary is checked or hashed: the host did not start it.
func attach(name string, entry config.PluginEntry, opts *Options) (*instance, *StartError) {
	r := *entry.Reattach
	a := &attachment{cfg: r, stopped: make(chan struct{})}
	log := opts.Logger.Named("plugin." + name)
	if entry.Protocol != 0 && entry.Protocol != r.ProtocolVersion {
		return nil, startErr(name, nil,
			fmt.Sprintf("set plugins.entries.%s.protocol = %d (or 0), or start the plugin serving version %d", name, r.ProtocolVersion, entry.Protocol),
			"the plugin to attach to serves protocol %d, but plugins.entries.%s.protocol pins version %d", r.ProtocolVersion, name, entry.Protocol)
	}
	set, ok := handshake.VersionedPlugins(nil, nil)[r.ProtocolVersion]
	if !ok {
		return nil, startErr(name, nil, reattachFix(name),
			"the plugin to attach to serves protocol %d, but this host speaks %s", r.ProtocolVersion, versionsText(spoken()))
	}
	var addr net.Addr
	switch r.Network {
	case "unix":
		addr = &net.UnixAddr{Net: "unix", Name: r.Address}
	default:
		tcp, err := net.ResolveTCPAddr("tcp", r.Address)
		if err != nil {
			return nil, startErr(name, err, reattachFix(name), "cannot attach to %s: %v", a.where(), err)
		}
		addr = tcp
	}
	log.Info("attaching to a plugin started outside the host; the host will not restart, stop or kill it",
		"pid", r.Pid, "network", r.Network, "addr", r.Address, "protocol", r.ProtocolVersion)
	if entry.SHA256 != "" {
		log.Warn("sha256 check skipped: the host did not start the attached plugin's binary", "sha256", entry.SHA256)
	}
	if !childproc.Alive(r.Pid) {
		return nil, startErr(name, nil, reattachFix(name), "cannot attach to %s: no process %d is running", a.where(), r.Pid)
	}
	// go-plugin's gRPC dial does not wait for the connection; trying it
	// here turns "nothing listens there" into a start error that says so.
	conn, err := net.DialTimeout(addr.Network(), addr.String(), opts.StartTimeout)
	if err != nil {
		return nil, startErr(name, err, reattachFix(name), "cannot attach to %s: %v", a.where(), err)
	}
	conn.Close()

	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  handshake.Config,
		Plugins:          set,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		GRPCDialOptions:  wire.DialOptions(),
		// A debug-mode plugin serves without TLS, so AutoMTLS stays off.
		// Test is set whatever the reattach line says: go-plugin then
		// keeps no runner it could kill the plugin with, and takes the
		// protocol version from the config instead of a handshake.
		Reattach: &plugin.ReattachConfig{
			Protocol:        plugin.ProtocolGRPC,
			ProtocolVersion: r.ProtocolVersion,
			Addr:            addr,
			Pid:             r.Pid,
			Test:            true,
			ReattachFunc:    func() (runner.AttachedRunner, error) { return a, nil },
		},
		Logger:       log,
		SyncStdout:   log.Named("stdout").StandardWriter(&hclog.StandardLoggerOptions{InferLevels: true}),
		SyncStderr:   log.Named("stderr").StandardWriter(&hclog.StandardLoggerOptions{InferLevels: true}),
		StartTimeout: opts.StartTimeout,
		Managed:      false,
	})
	in := &instance{client: client, pid: r.Pid, version: r.ProtocolVersion, attached: a}
	proto, err := client.Client()
	if err != nil {
		a.once.Do(func() { close(a.stopped) })
		return nil, startErr(name, err, reattachFix(name), "cannot attach to %s: %v", a.where(), err)
	}
	in.proto = proto
	return in, nil
}
