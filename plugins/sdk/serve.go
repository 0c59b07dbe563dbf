package sdk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/plugins/handshake"
)

// Serve runs p as a plugin process and never returns: it exits 0 when the
// host shuts the plugin down, and non-zero when the plugin cannot start.
//
// Started without the host's handshake cookie and outside debug mode, it
// says what the binary is and how to debug it, and exits 1. Otherwise, in
// order, it:
//
//  1. starts watching the parent process before anything else, so the
//     plugin does not outlive a host that died without shutting it down,
//     even one that died while the plugin was starting (on Linux the
//     plugin was already made non-dumpable when the SDK was initialised,
//     so that the secrets its env list hands it are not readable in
//     /proc/<pid>/environ by other processes of its user);
//  2. adapts p (see Adapt) with stdout pointed at stderr, so that a print
//     in Info cannot land before the handshake line;
//  3. validates the derived manifest the way the host will (tool
//     namespaces aside, which the host's config may waive) and exits 1
//     with the reason on stderr if it is invalid;
//  4. serves the hook service with go-plugin over gRPC, protocol versions
//     2 and 1 (handshake.VersionedPlugins); go-plugin picks the highest
//     one the host offers too;
//  5. once the host has stopped it, calls p's Close when p is an
//     io.Closer, then exits 0 (in debug mode too, after SIGINT or SIGTERM).
//
// With HOOKHOST_PLUGIN_DEBUG=1 in its environment, Serve skips step 1 and
// serves in debug mode instead, for a plugin started by hand (see the
// package documentation): go-plugin's test mode, without the cookie, the
// handshake line or mTLS, after printing to stdout the one line that
// attaches a host to it,
//
//	HOOKHOST_REATTACH_PLUGINS='{"<name>":{"Protocol":"grpc","ProtocolVersion":2,"Pid":...,"Test":true,"Addr":{"Network":"unix","String":"..."}}}'
//
// and a word of explanation to stderr; its log is text rather than JSON,
// stray writes to os.Stdout go to stderr, and SIGINT or SIGTERM stop it
// with exit status 0. It serves the highest protocol version unless
// go-plugin's PLUGIN_PROTOCOL_VERSIONS says otherwise
// (PLUGIN_PROTOCOL_VERSIONS=1 pins version 1).
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
// os.Stderr. go-plugin also ignores SIGINT in the plugin (outside debug
// mode), so a Ctrl-C meant for the host does not kill its plugins behind
// its back.
func Serve(p Plugin) {
	if os.Getenv("GOMAXPROCS") == "" {
		// A plugin shares the machine with its host, and mostly waits for
		// it. With more than one processor, each hand-off between the
		// goroutine that reads a hook call and the one that answers it
		// wakes a thread on another core, which costs more than the call;
		// with one it does not. A plugin that needs more cores lists
		// GOMAXPROCS in its entry's env.
		runtime.GOMAXPROCS(1)
	}
	debug := debugMode()
	if !debug && os.Getenv(handshake.Config.MagicCookieKey) != handshake.Config.MagicCookieValue {
		fmt.Fprintf(os.Stderr, "This binary is a hookhost plugin: hookhost starts it when its name is in plugins.enabled.\n"+
			"To start it by hand (under a debugger, say), set %s=1: it then prints a line to give hookhost.\n", debugEnv)
		os.Exit(1)
	}
	// Captured before go-plugin swaps os.Stderr for its pipe: the host
	// reads this descriptor and re-levels the JSON lines into its own log.
	// In debug mode a person reads it, so it is text.
	stderr := os.Stderr
	newLogger := func(name string) hclog.Logger {
		return hclog.New(&hclog.LoggerOptions{Name: name, Output: stderr, JSONFormat: !debug, Level: hclog.Debug})
	}
	if !debug {
		sdkLog := newLogger("hookhost-sdk")
		watchParent(sdkLog)
		if protectErr != nil {
			sdkLog.Warn("cannot make the plugin's memory and environment unreadable to other processes of its user", "error", protectErr.Error())
		}
	}

	var impl *hooks.Funcs
	withStdoutOnStderr(func() { impl = adapt(p, newLogger) })
	m := impl.Manifest()
	log := newLogger(m.Name)
	// Panics recovered by the hook service are logged through the default
	// logger; make it this one so they reach the host.
	hclog.SetDefault(log)

	if err := hooks.ValidateManifest(m, true); err != nil {
		log.Error("plugin cannot start: invalid manifest", "error", err.Error())
		os.Exit(1)
	}

	serving := false
	cfg := &plugin.ServeConfig{
		HandshakeConfig:  handshake.Config,
		VersionedPlugins: handshake.VersionedPlugins(impl, configureOf(p)),
		GRPCServer: func(opts []grpc.ServerOption) *grpc.Server {
			serving = true
			return plugin.DefaultGRPCServer(append(opts, serverOptions()...))
		},
		Logger: log,
	}
	if debug {
		code := serveDebug(cfg, m.Name, log)
		closePlugin(p, log)
		os.Exit(code)
	}
	plugin.Serve(cfg)
	// plugin.Serve returns both when the host shuts the plugin down and
	// when it fails to set up its listener; only the first is a clean exit.
	if !serving {
		log.Error("plugin cannot start: go-plugin failed before serving (see the error above)")
		os.Exit(1)
	}
	closePlugin(p, log)
	os.Exit(0)
}

// closePlugin calls p's Close, when p is an io.Closer, once the host has
// stopped it: a plugin holding work in memory (a queue of records for a
// database, say) gets to finish it before the process exits.
func closePlugin(p Plugin, log hclog.Logger) {
	if c, ok := p.(io.Closer); ok {
		if err := c.Close(); err != nil {
			log.Error("plugin stopping: Close failed", "error", err.Error())
		}
	}
}

// debugEnv, set to 1 (or true), makes Serve serve in debug mode.
const debugEnv = "HOOKHOST_PLUGIN_DEBUG"

// reattachEnv is the variable the host reads reattach configs from.
const reattachEnv = "HOOKHOST_REATTACH_PLUGINS"

// protocolVersionsEnv is go-plugin's list of the versions a client speaks.
const protocolVersionsEnv = "PLUGIN_PROTOCOL_VERSIONS"

// debugMode reports whether to serve in debug mode. A plugin the host
// launched (the magic cookie is set) never does, even when its entry passes
// the variable through: it would print a reattach line instead of the
// handshake and fail to start.
func debugMode() bool {
	on, _ := strconv.ParseBool(os.Getenv(debugEnv))
	if on && os.Getenv(handshake.Config.MagicCookieKey) == handshake.Config.MagicCookieValue {
		fmt.Fprintf(os.Stderr, "%s is set, but the host launched this plugin: serving normally\n", debugEnv)
		return false
	}
	return on
}

// serveDebug serves cfg in go-plugin's test mode, for a plugin started by
// hand (under a debugger, say) that the host attaches to: no cookie, no
// parent to watch, no mTLS (test mode has no client certificate to answer),
// and no handshake line; instead one line on stdout that the host takes as
// it is, and an explanation on stderr. It serves until SIGINT or SIGTERM
// and returns the exit status.
func serveDebug(cfg *plugin.ServeConfig, name string, log hclog.Logger) int {
	// Without a list from a client, go-plugin serves its lowest version;
	// a plugin started by hand serves the highest unless told otherwise.
	if os.Getenv(protocolVersionsEnv) == "" {
		var vs []string
		for v := range cfg.VersionedPlugins {
			vs = append(vs, strconv.Itoa(v))
		}
		_ = os.Setenv(protocolVersionsEnv, strings.Join(vs, ","))
	}
	// Exactly one line is ours on stdout; stray prints go to stderr.
	stdout := os.Stdout
	os.Stdout = os.Stderr

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg.Logger = hclog.New(&hclog.LoggerOptions{
		Name: name, Output: os.Stderr, Level: hclog.Debug,
		// go-plugin stops a test-mode server by closing its listener, and
		// logs the accept that then fails as an error: not one to a person
		// who pressed Ctrl-C.
		Exclude: func(_ hclog.Level, msg string, _ ...any) bool { return msg == "grpc server" && ctx.Err() != nil },
	})
	reattach := make(chan *plugin.ReattachConfig, 1)
	closed := make(chan struct{})
	cfg.Test = &plugin.ServeTestConfig{Context: ctx, ReattachConfigCh: reattach, CloseCh: closed}
	go plugin.Serve(cfg)

	select {
	case rc := <-reattach:
		line, err := reattachLine(name, rc)
		if err != nil {
			log.Error("plugin cannot start in debug mode", "error", err)
			stop()
			<-closed
			return 1
		}
		fmt.Fprintln(stdout, line)
		fmt.Fprintf(os.Stderr, "plugin %s is serving in debug mode (protocol version %d, pid %d); "+
			"start hookhost with the line above in its environment; Ctrl-C stops it\n", name, rc.ProtocolVersion, rc.Pid)
	case <-closed:
		log.Error("plugin cannot start in debug mode: go-plugin failed before serving (see the error above)")
		return 1
	}
	<-closed
	log.Info("debug mode: stopped")
	return 0
}

// reattachConfig is go-plugin's ReattachConfig in the JSON form hosts read
// (Terraform's TF_REATTACH_PROVIDERS has the same shape): the address as
// its network and string, which a net.Addr does not marshal to.
type reattachConfig struct {
	Protocol        plugin.Protocol
	ProtocolVersion int
	Pid             int
	Test            bool
	Addr            struct{ Network, String string }
}

// reattachLine is the shell assignment of reattachEnv that attaches a host
// to the plugin name served as rc.
func reattachLine(name string, rc *plugin.ReattachConfig) (string, error) {
	if rc.Addr == nil {
		return "", errors.New("go-plugin reported no address")
	}
	c := reattachConfig{Protocol: rc.Protocol, ProtocolVersion: rc.ProtocolVersion, Pid: rc.Pid, Test: rc.Test}
	c.Addr.Network, c.Addr.String = rc.Addr.Network(), rc.Addr.String()
	js, err := json.Marshal(map[string]reattachConfig{name: c})
	if err != nil {
		return "", err
	}
	// Single-quoted for a POSIX shell; a quote inside is closed, escaped
	// and reopened.
	return reattachEnv + "='" + strings.ReplaceAll(string(js), "'", `'\''`) + "'", nil
}

func withStdoutOnStderr(f func()) {
	stdout := os.Stdout
	os.Stdout = os.Stderr
	defer func() { os.Stdout = stdout }()
	f()
}
