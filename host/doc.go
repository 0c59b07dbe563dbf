// Package host runs hookhost's remote plugins: it turns the [plugins] part of
// the config into running plugin processes, keeps them running, and adapts
// each one to hooks.Plugin so the Bus cannot tell a remote plugin from an
// in-process one.
//
// A plugin is a separate executable speaking go-plugin's gRPC protocol (see
// plugins/sdk). Process boundaries are what buy crash isolation, so this
// package is written around the ways a process can misbehave: a binary that
// is missing, not executable, tampered with, prints garbage instead of the
// handshake, speaks another protocol version, declares tools it may not own,
// rejects its config, crashes, hangs, or leaves children behind. Each start
// failure becomes a StartError that names the plugin, the cause and the fix;
// each runtime failure makes the plugin unavailable (hooks.ErrUnavailable,
// which the Bus treats as "no result") while it is restarted.
//
// Two plugin protocol versions are spoken, negotiated by go-plugin at the
// handshake: version 1, one unary RPC per hook call, and version 2, one
// long-lived bidirectional stream per process that carries every hook call
// and answer, multiplexed, each call with its deadline, a cancel sent when
// the host stops waiting, and answers that come too late dropped and
// counted. The host offers both and the highest the plugin also speaks
// wins; plugins.entries.<name>.protocol pins one. Either way the plugin is
// one supervised plugin over one internal/wire.Conn, which hides the version.
//
// A plugin can also be started by hand, under a debugger, and attached to
// instead of launched (HOOKHOST_REATTACH_PLUGINS or
// plugins.entries.<name>.reattach, from the line the plugin prints when
// started with HOOKHOST_PLUGIN_DEBUG=1). An attached plugin is held to the
// same rules and called the same way, but its process is its author's: the
// host never restarts, stops or kills it.
//
// Everything here is tested against real processes, over both protocol
// versions; the rest of hookhost is tested with in-process plugins through
// the same interface.
package host
