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
// Everything here is tested against real processes; the rest of hookhost is
// tested with in-process plugins through the same interface.
package host
