package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"

	"github.com/hashicorp/go-plugin"

	"github.com/hookhost/hookhost/plugins/handshake"
	"github.com/hookhost/hookhost/plugins/sdk"
)

// debugServe serves in go-plugin's test mode until interrupted and prints
// the reattach line, as a plugin in debug mode does.
func debugServe(e *echo) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ch := make(chan *plugin.ReattachConfig, 1)
	closed := make(chan struct{})
	impl := sdk.Adapt(e)
	go plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig:  handshake.Config,
		VersionedPlugins: handshake.VersionedPlugins(impl, e.Configure),
		GRPCServer:       plugin.DefaultGRPCServer,
		Test:             &plugin.ServeTestConfig{Context: ctx, ReattachConfigCh: ch, CloseCh: closed},
	})
	rc := <-ch
	line, _ := json.Marshal(map[string]any{e.name: map[string]any{
		"Protocol": rc.Protocol, "ProtocolVersion": rc.ProtocolVersion, "Pid": rc.Pid, "Test": true,
		"Addr": map[string]string{"Network": rc.Addr.Network(), "String": rc.Addr.String()},
	}})
	fmt.Printf("HOOKHOST_REATTACH_PLUGINS='%s'\n", line)
	<-closed
}
