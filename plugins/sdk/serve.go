package sdk

import (
	"os"

	"github.com/hookhost/hookhost/plugins/handshake"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/hookhost/hookhost/hooks"
)

// Serve runs p as a plugin process and never returns: it exits 0 when the
// host shuts the plugin down, and non-zero when the plugin cannot start.
//
// In order, it:
//
//  1. starts watching the parent process before anything else, so the
//     plugin does not outlive a host that died without shutting it down,
//     even one that died while the plugin was starting;
//  2. adapts p (see Adapt) with stdout pointed at stderr, so that a print
//     in Info cannot land before the handshake line;
//  3. validates the derived manifest the way the host will (tool
//     namespaces aside, which the host's config may waive) and exits 1
//     with the reason on stderr if it is invalid;
//  4. serves the hook service with go-plugin over gRPC.
//
// About stdout and stderr under go-plugin (v1.8): the first line the plugin
// writes to stdout must be the handshake line, so anything a plugin prints
// before calling Serve (in init or main) makes the host fail to start it
// with "Unrecognized remote plugin message". Once serving, go-plugin
// replaces os.Stdout and os.Stderr with pipes that it streams to the host,
// which discards them unless it configured SyncStdout/SyncStderr; anything
// still written to the original file descriptors is read by the host too,
// however long its lines (hookhost logs stdout lines at DEBUG and parses
// stderr lines as log lines; a line over 32 KiB is cut in the log, never
// left unread). Base.Logger writes to the
// original stderr, so logs reach the host whatever the plugin does with
// os.Stderr. go-plugin also ignores SIGINT in the plugin, so a Ctrl-C meant
// for the host does not kill its plugins behind its back.
func Serve(p Plugin) {
	// Captured before go-plugin swaps os.Stderr for its pipe: the host
	// reads this descriptor and re-levels the JSON lines into its own log.
	stderr := os.Stderr
	newLogger := func(name string) hclog.Logger {
		return hclog.New(&hclog.LoggerOptions{Name: name, Output: stderr, JSONFormat: true, Level: hclog.Debug})
	}
	watchParent(newLogger("hookhost-sdk"))

	var impl *hooks.Funcs
	withStdoutOnStderr(func() { impl = adapt(p, newLogger) })
	m := impl.Manifest()
	log := newLogger(m.Name)
	// Panics recovered by the hook service are logged through the default
	// logger; make it this one so they reach the host.
	hclog.SetDefault(log)

	if err := hooks.ValidateManifest(m, hooks.Options{AllowToolOverride: true}); err != nil {
		log.Error("plugin cannot start: invalid manifest", "error", err.Error())
		os.Exit(1)
	}

	serving := false
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig:  handshake.Config,
		VersionedPlugins: handshake.VersionedPlugins(impl, configureOf(p)),
		GRPCServer: func(opts []grpc.ServerOption) *grpc.Server {
			serving = true
			return plugin.DefaultGRPCServer(append(opts, serverOptions()...))
		},
		Logger: log,
	})
	// plugin.Serve returns both when the host shuts the plugin down and
	// when it fails to set up its listener; only the first is a clean exit.
	if !serving {
		log.Error("plugin cannot start: go-plugin failed before serving (see the error above)")
		os.Exit(1)
	}
	os.Exit(0)
}

func withStdoutOnStderr(f func()) {
	stdout := os.Stdout
	os.Stdout = os.Stderr
	defer func() { os.Stdout = stdout }()
	f()
}
