package handshake

import "github.com/hashicorp/go-plugin"

// ProtocolVersion is the plugin protocol this SDK speaks. A new major version
// gets its own proto package (hookhost.plugin.v2) and its own entry in
// VersionedPlugins, so hosts can serve old and new plugins side by side.
const ProtocolVersion = 1

// PluginKey names the hook service in go-plugin's plugin set.
const PluginKey = "hooks"

// Config is the go-plugin handshake shared by the host and every plugin.
// The cookie is not a secret: it only stops a user from running a plugin
// binary by hand and seeing gibberish.
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
