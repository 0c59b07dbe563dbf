// Command mute is a test plugin that speaks only plugin protocol version 2
// and stops reading its hook stream: it answers Describe and Configure like
// any plugin, accepts the Hooks stream, and then never reads from it nor
// answers on it, so that whatever the host sends piles up in the stream's
// flow-control window. It is served with the raw generated server, not the
// SDK, which would read. Its name is the base name it was started as.
//
// Started under a name beginning with "late" it reads its stream instead,
// and answers each call only once the host has cancelled it: every answer
// comes after the host stopped waiting.
package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/plugins/handshake"
	pluginv1 "github.com/hookhost/hookhost/plugins/proto/v1"
	pluginv2 "github.com/hookhost/hookhost/plugins/proto/v2"
)

type server struct {
	pluginv2.UnimplementedPluginServer
	name string
}

func (s *server) Describe(context.Context, *pluginv1.DescribeRequest) (*pluginv1.Manifest, error) {
	return &pluginv1.Manifest{
		Name:    s.name,
		Version: "1.0.0",
		Hooks:   []string{string(hooks.PreToolCallCanProvideResult)},
	}, nil
}

func (s *server) Configure(context.Context, *pluginv1.ConfigureRequest) (*pluginv1.ConfigureResponse, error) {
	return &pluginv1.ConfigureResponse{}, nil
}

// Hooks holds the stream open without ever reading it, or answers late.
func (s *server) Hooks(stream grpc.BidiStreamingServer[pluginv2.HostMessage, pluginv2.PluginMessage]) error {
	if !strings.HasPrefix(s.name, "late") {
		<-stream.Context().Done()
		return nil
	}
	answer, err := proto.Marshal(&pluginv1.ToolResultResponse{Result: &pluginv1.ToolResult{Content: "too late"}})
	if err != nil {
		return err
	}
	for {
		msg, err := stream.Recv()
		if err != nil {
			return err
		}
		if c := msg.GetCancel(); c != nil {
			if err := stream.Send(&pluginv2.PluginMessage{Id: c.GetId(), Answer: answer, Last: true}); err != nil {
				return err
			}
		}
	}
}

type grpcPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	name string
}

func (p grpcPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	pluginv2.RegisterPluginServer(s, &server{name: p.name})
	return nil
}

func (grpcPlugin) GRPCClient(context.Context, *plugin.GRPCBroker, *grpc.ClientConn) (any, error) {
	return nil, errors.New("mute serves plugins only")
}

func main() {
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig: handshake.Config,
		VersionedPlugins: map[int]plugin.PluginSet{
			2: {handshake.PluginKey: grpcPlugin{name: filepath.Base(os.Args[0])}},
		},
		GRPCServer: plugin.DefaultGRPCServer,
	})
}
