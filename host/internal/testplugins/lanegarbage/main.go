// Command lanegarbage is a test plugin that says it serves the host's lane
// and then breaks it. It serves protocol 2's gRPC service as any Go plugin
// does, so the hook calls that come on the Hooks stream are answered; but
// it takes the lane itself, before that service can, and says it serves
// it by setting the lane field of its Describe answer. When the first hook
// call comes on the lane it does what its config's "lane" says:
//
//	oversize     answers with a length prefix over any max_result_size
//	undecodable  answers with a frame that is no PluginMessage
//	cut          sends half a frame and closes the lane
//	deaf         nothing: it never reads the lane, and keeps it open
//
// Its plugin name is its base name; it answers every call of
// pre_tool_call_can_provide_result with "answered by <name> on the hooks
// stream".
package main

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/wire"
	"github.com/hookhost/hookhost/plugins/handshake"
	pluginv1 "github.com/hookhost/hookhost/plugins/proto/v1"
	"github.com/hookhost/hookhost/plugins/sdk"
)

type garbage struct {
	sdk.Base
	name string
	// mode is the config's "lane", set by Configure before any hook call.
	mode atomic.Pointer[string]
}

func (g *garbage) Info() sdk.Info { return sdk.Info{Name: g.name, Version: "1.0.0"} }

func (g *garbage) Configure(_ context.Context, raw json.RawMessage) error {
	var c struct {
		Lane string `json:"lane"`
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		return err
	}
	switch c.Lane {
	case "oversize", "undecodable", "cut", "deaf":
	default:
		return fmt.Errorf("lane = %q, want oversize, undecodable, cut or deaf", c.Lane)
	}
	g.mode.Store(&c.Lane)
	return nil
}

func (g *garbage) PreToolCallCanProvideResult(context.Context, hooks.ToolCallRequest) (*hooks.ToolResult, error) {
	return &hooks.ToolResult{Content: "answered by " + g.name + " on the hooks stream"}, nil
}

// breakLane serves the lane as the config says: see the package comment.
func (g *garbage) breakLane(lane net.Conn, log hclog.Logger) {
	mode := func() string {
		if m := g.mode.Load(); m != nil {
			return *m
		}
		return ""
	}
	var header [4]byte
	if _, err := io.ReadFull(lane, header[:]); err != nil {
		log.Debug("the lane ended before a call", "error", err.Error())
		return
	}
	// Describe and Configure come before any hook call, so the mode is
	// known by now.
	if mode() == "deaf" {
		// Not another byte read; the lane stays open.
		select {}
	}
	if _, err := io.CopyN(io.Discard, lane, int64(binary.BigEndian.Uint32(header[:]))); err != nil {
		log.Debug("the lane ended inside a call", "error", err.Error())
		return
	}
	var frame []byte
	switch mode() {
	case "oversize":
		frame = binary.BigEndian.AppendUint32(nil, 1<<31-1)
	case "undecodable":
		// A field tag whose varint never ends.
		frame = binary.BigEndian.AppendUint32(nil, 2)
		frame = append(frame, 0xff, 0xff)
	case "cut":
		frame = binary.BigEndian.AppendUint32(nil, 100)
		frame = append(frame, make([]byte, 10)...)
	}
	if _, err := lane.Write(frame); err != nil {
		log.Error("cannot write to the lane", "error", err.Error())
	}
	if mode() == "cut" {
		_ = lane.Close()
		return
	}
	// Whatever else comes is not read as frames; the lane ends when the
	// host closes it.
	_, _ = io.Copy(io.Discard, lane)
}

// takeLane takes the descriptor the host handed as the lane, and removes
// its variable so that wire.RegisterV2 does not take it too.
func takeLane() (net.Conn, error) {
	v, ok := os.LookupEnv(wire.LaneFDEnv)
	if !ok {
		return nil, errors.New("the host handed no lane")
	}
	_ = os.Unsetenv(wire.LaneFDEnv)
	fd, err := strconv.Atoi(v)
	if err != nil {
		return nil, fmt.Errorf("%s=%q: %w", wire.LaneFDEnv, v, err)
	}
	f := os.NewFile(uintptr(fd), "lane")
	defer f.Close()
	return net.FileConn(f)
}

// sayLane sets the lane field of Describe's answer: the service
// wire.RegisterV2 serves, which has no lane, then promises one.
func sayLane(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	resp, err := handler(ctx, req)
	if m, ok := resp.(*pluginv1.Manifest); ok && strings.HasSuffix(info.FullMethod, "/Describe") {
		m.Lane = true
	}
	return resp, err
}

// service serves protocol 2 through wire.RegisterV2, without a lane.
type service struct {
	plugin.NetRPCUnsupportedPlugin
	g *garbage
}

func (s *service) GRPCServer(_ *plugin.GRPCBroker, srv *grpc.Server) error {
	wire.RegisterV2(srv, sdk.Adapt(s.g), s.g.Configure)
	return nil
}

func (s *service) GRPCClient(context.Context, *plugin.GRPCBroker, *grpc.ClientConn) (any, error) {
	return nil, errors.New("lanegarbage is a plugin, not a host")
}

func main() {
	g := &garbage{name: filepath.Base(os.Args[0])}
	log := hclog.New(&hclog.LoggerOptions{Name: g.name, Output: os.Stderr, JSONFormat: true, Level: hclog.Debug})
	lane, err := takeLane()
	if err != nil {
		log.Error("plugin cannot start", "error", err.Error())
		os.Exit(1)
	}
	go g.breakLane(lane, log)
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig:  handshake.Config,
		VersionedPlugins: map[int]plugin.PluginSet{handshake.ProtocolV2: {handshake.PluginKey: &service{g: g}}},
		GRPCServer: func(opts []grpc.ServerOption) *grpc.Server {
			return plugin.DefaultGRPCServer(append(opts, grpc.ChainUnaryInterceptor(sayLane)))
		},
		Logger: log,
	})
}
