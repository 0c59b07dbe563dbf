package handshake

import (
	"context"
	"errors"
	"fmt"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/wire"
)

// GRPCPlugin is the go-plugin glue shared by the host and every plugin, for
// one protocol version: the plugin side serves Impl, the host side gets a
// wire.Conn (a *wire.Client for version 1, a *wire.V2Client for version
// 2). The host leaves Impl and Configure nil.
type GRPCPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	// Version is the protocol version spoken: ProtocolV1 or ProtocolV2.
	Version   int
	Impl      hooks.Plugin
	Configure wire.ConfigureFunc
}

var _ plugin.GRPCPlugin = (*GRPCPlugin)(nil)

// GRPCServer registers the hook service of p.Version for Impl on s.
func (p *GRPCPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	if p.Impl == nil {
		return errors.New("plugin: GRPCPlugin.Impl is nil, nothing to serve")
	}
	switch p.Version {
	case ProtocolV1:
		wire.RegisterV1(s, p.Impl, p.Configure)
	case ProtocolV2:
		wire.RegisterV2(s, p.Impl, p.Configure)
	default:
		return fmt.Errorf("plugin: no protocol version %d", p.Version)
	}
	return nil
}

// GRPCClient returns the wire.Conn of p.Version over the plugin's
// connection. Call its Describe before use.
func (p *GRPCPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, cc *grpc.ClientConn) (any, error) {
	switch p.Version {
	case ProtocolV1:
		return wire.Conn(wire.NewClient(cc)), nil
	case ProtocolV2:
		return wire.Conn(wire.NewV2Client(cc)), nil
	}
	return nil, fmt.Errorf("host: no protocol version %d", p.Version)
}

// VersionedPlugins is the plugin set for plugin.ClientConfig.VersionedPlugins
// and plugin.ServeConfig.VersionedPlugins: every protocol version serves the
// hook service under PluginKey, and go-plugin picks the highest version both
// sides speak. A host passes (nil, nil).
func VersionedPlugins(impl hooks.Plugin, configure wire.ConfigureFunc) map[int]plugin.PluginSet {
	return versioned(impl, configure, Protocols)
}

// VersionedPluginsFor is the host's plugin set offering only the given
// protocol versions, to pin the version a plugin speaks. No version, or 0
// among them, offers every version; versions this release does not speak
// are left out.
func VersionedPluginsFor(versions ...int) map[int]plugin.PluginSet {
	for _, v := range versions {
		if v == 0 {
			versions = nil
			break
		}
	}
	if len(versions) == 0 {
		versions = Protocols
	}
	return versioned(nil, nil, versions)
}

func versioned(impl hooks.Plugin, configure wire.ConfigureFunc, versions []int) map[int]plugin.PluginSet {
	sets := map[int]plugin.PluginSet{}
	for _, v := range versions {
		if v == ProtocolV1 || v == ProtocolV2 {
			sets[v] = plugin.PluginSet{PluginKey: &GRPCPlugin{Version: v, Impl: impl, Configure: configure}}
		}
	}
	return sets
}
