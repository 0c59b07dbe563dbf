package wire_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/wire"
)

// sizes counts, on the plugin's side, the bytes of the messages its gRPC
// server received and sent.
type sizes struct{ in, out atomic.Uint64 }

func (z *sizes) options() []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.UnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
			z.in.Add(uint64(proto.Size(req.(proto.Message))))
			resp, err := handler(ctx, req)
			if err == nil {
				z.out.Add(uint64(proto.Size(resp.(proto.Message))))
			}
			return resp, err
		}),
		grpc.StreamInterceptor(func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
			return handler(srv, &sizedStream{ServerStream: ss, z: z})
		}),
	}
}

type sizedStream struct {
	grpc.ServerStream
	z *sizes
}

func (s *sizedStream) RecvMsg(m any) error {
	err := s.ServerStream.RecvMsg(m)
	if err == nil {
		s.z.in.Add(uint64(proto.Size(m.(proto.Message))))
	}
	return err
}

func (s *sizedStream) SendMsg(m any) error {
	s.z.out.Add(uint64(proto.Size(m.(proto.Message))))
	return s.ServerStream.SendMsg(m)
}

// The host counts the bytes of every message it exchanges with a plugin,
// each way, exactly as many as the plugin's server sees, on both protocol
// versions.
func TestTrafficCountsEveryMessage(t *testing.T) {
	for _, version := range []int{1, 2} {
		t.Run(map[int]string{1: "v1", 2: "v2"}[version], func(t *testing.T) {
			var z sizes
			var rec recorder
			p := everything(&rec)
			cn := dial(t, version, func(s *grpc.Server) {
				if protocol(version) == 1 {
					wire.RegisterV1(s, p, nil)
				} else {
					wire.RegisterV2(s, p, nil)
				}
			}, z.options()...)
			c := cn.client
			c.Apply(wire.Settings{Plugin: "every"})
			if got := c.Traffic(); got != (wire.Traffic{}) {
				t.Fatalf("before any call: %+v", got)
			}
			if _, err := c.Describe(t.Context()); err != nil {
				t.Fatal(err)
			}
			big := hooks.ToolCallRequest{Name: "now", Arguments: json.RawMessage(`"` + strings.Repeat("a", 100<<10) + `"`)}
			for _, req := range []hooks.ToolCallRequest{evCall, big, evCall} {
				if _, err := c.Handle(t.Context(), hooks.PreToolCall, req); err != nil {
					t.Fatal(err)
				}
			}
			got := c.Traffic()
			want := wire.Traffic{Sent: z.in.Load(), Received: z.out.Load()}
			if got != want || got.Sent < 100<<10 {
				t.Fatalf("the host counted %+v, the plugin's server saw %+v", got, want)
			}
		})
	}
}
