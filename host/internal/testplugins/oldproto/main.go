// Command oldproto is a test plugin that completes go-plugin's handshake
// with a plugin protocol version the host does not speak.
package main

import (
	"context"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/hookhost/hookhost/plugins/sdk"
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
			MagicCookieKey:   sdk.Handshake.MagicCookieKey,
			MagicCookieValue: sdk.Handshake.MagicCookieValue,
		},
		Plugins:    plugin.PluginSet{sdk.PluginKey: stub{}},
		GRPCServer: plugin.DefaultGRPCServer,
	})
}
