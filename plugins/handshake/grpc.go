package handshake

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/wire"
	pluginv1 "github.com/hookhost/hookhost/plugins/proto/v1"
)

// GRPCPlugin is the go-plugin glue shared by the host and every plugin: the
// plugin side registers Impl as the hook service, the host side gets a
// *wire.Client. The host leaves Impl and Configure nil.
type GRPCPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	Impl      hooks.Plugin
	Configure func(context.Context, json.RawMessage) error
}

var _ plugin.GRPCPlugin = (*GRPCPlugin)(nil)

// GRPCServer registers the hook service for Impl on s.
func (p *GRPCPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	if p.Impl == nil {
		return errors.New("plugin: GRPCPlugin.Impl is nil, nothing to serve")
	}
	pluginv1.RegisterPluginServer(s, wire.NewServer(p.Impl, p.Configure))
	return nil
}

// GRPCClient returns a *wire.Client over the plugin's connection. Call its
// Describe before use.
func (p *GRPCPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, cc *grpc.ClientConn) (any, error) {
	return wire.NewClient(cc), nil
}

// VersionedPlugins is the plugin set for plugin.ClientConfig.VersionedPlugins
// and plugin.ServeConfig.VersionedPlugins: protocol version 1 serves the hook
// service under PluginKey. A host passes (nil, nil). A second protocol
// version will be a second entry here, so hosts can run old and new plugins
// side by side.
func VersionedPlugins(impl hooks.Plugin, configure func(context.Context, json.RawMessage) error) map[int]plugin.PluginSet {
	return map[int]plugin.PluginSet{
		ProtocolVersion: {PluginKey: &GRPCPlugin{Impl: impl, Configure: configure}},
	}
}
