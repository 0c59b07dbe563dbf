// Command oldproto is a test plugin that completes go-plugin's handshake
// with a plugin protocol version the host does not speak.
package main

import (
	"context"

	"github.com/hookhost/hookhost/plugins/handshake"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
)

const protocolVersion = 99

type stub struct{ plugin.NetRPCUnsupportedPlugin }

func (stub) GRPCServer(*plugin.GRPCBroker, *grpc.Server) error { return nil }

func (stub) GRPCClient(context.Context, *plugin.GRPCBroker, *grpc.ClientConn) (any, error) {
	return nil, nil
}

func main() {
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig: plugin.HandshakeConfig{
			ProtocolVersion:  protocolVersion,
			MagicCookieKey:   handshake.Config.MagicCookieKey,
			MagicCookieValue: handshake.Config.MagicCookieValue,
		},
		Plugins:    plugin.PluginSet{handshake.PluginKey: stub{}},
		GRPCServer: plugin.DefaultGRPCServer,
	})
}
