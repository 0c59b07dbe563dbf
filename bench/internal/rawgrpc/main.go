// Command rawgrpc is the baseline for the hook round-trip benchmark: a child
// process serving the plugin service over a unix socket with plain gRPC, no
// go-plugin, no TLS, no host machinery. It answers provide-result with a
// fixed result and prints "ready" on stdout once it listens.
package main

import (
	"context"
	"fmt"
	"net"
	"os"

	"google.golang.org/grpc"

	pluginv1 "github.com/hookhost/hookhost/plugins/sdk/proto/v1"
)

type server struct {
	pluginv1.UnimplementedPluginServer
}

func (server) PreToolCallCanProvideResult(context.Context, *pluginv1.ToolCallRequest) (*pluginv1.ToolResultResponse, error) {
	return &pluginv1.ToolResultResponse{Result: &pluginv1.ToolResult{Content: `{"ok":true}`}}, nil
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: rawgrpc <socket path>")
		os.Exit(2)
	}
	l, err := net.Listen("unix", os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	s := grpc.NewServer()
	pluginv1.RegisterPluginServer(s, server{})
	fmt.Println("ready")
	if err := s.Serve(l); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
