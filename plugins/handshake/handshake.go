// Package handshake is the go-plugin handshake shared by the host and every
// plugin: the magic cookie, the protocol versions and the plugin sets that
// let go-plugin pick the highest version both sides speak. The host and the
// SDK both import it; the host does not import the SDK.
package handshake

import "github.com/hashicorp/go-plugin"

// The plugin protocol versions. Each has its own proto package
// (hookhost.plugin.v1, hookhost.plugin.v2) and its own entry in
// VersionedPlugins, so hosts serve old and new plugins side by side.
const (
	// ProtocolV1 is one unary RPC per hook call.
	ProtocolV1 = 1
	// ProtocolV2 is one long-lived stream per plugin carrying every hook
	// call.
	ProtocolV2 = 2
	// ProtocolVersion is the newest version, the one a plugin built with
	// this SDK and a host of this release agree on.
	ProtocolVersion = ProtocolV2
)

// Protocols lists every version this release speaks, oldest first.
var Protocols = []int{ProtocolV1, ProtocolV2}

// PluginKey names the hook service in go-plugin's plugin set.
const PluginKey = "hooks"

// Config is the go-plugin handshake shared by the host and every plugin.
// The cookie is not a secret: it only stops a user from running a plugin
// binary by hand and seeing gibberish. It is the same for every protocol
// version (go-plugin negotiates the version separately), so plugins built
// for version 1 keep starting.
var Config = plugin.HandshakeConfig{
	ProtocolVersion:  ProtocolVersion,
	MagicCookieKey:   "HOOKHOST_PLUGIN",
	MagicCookieValue: "d3c1b0a2-hookhost-plugin-v1",
}

// HostPIDEnv is the variable in which the host passes its own pid to a
// plugin, so that a plugin notices its host is gone (no process has that
// pid) even when the host died while the plugin was still starting, or when
// a wrapper script that does not exec the plugin is its parent.
const HostPIDEnv = "HOOKHOST_HOST_PID"

// CgroupEnv is the variable in which the host passes, on Linux with cgroup
// v2, the path of the cgroup it started the plugin in, alone: writing "1"
// to its cgroup.kill ends the plugin and everything it spawned, even a
// child that left its process group with setsid. A plugin whose host died
// does that on its way out; unset where the host cannot make cgroups.
const CgroupEnv = "HOOKHOST_CGROUP"
