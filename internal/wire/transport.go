package wire

import "google.golang.org/grpc"

// Flow-control windows of the gRPC connection to a plugin, both ways.
//
// Fixed windows turn off gRPC's bandwidth-delay estimation, which on a
// request/answer exchange sends a PING with nearly every message and reads
// its ack: two more frames, syscalls and goroutine wake-ups per hook call
// on each side, for a link (a local socket) whose delay is next to nothing.
// The windows are large enough that a request or answer of several
// megabytes (a long conversation) flows without waiting for window
// updates; a plugin that stops reading still blocks no more than its own
// calls (V2Client queues behind a send that cannot complete).
const (
	streamWindow = 4 << 20
	connWindow   = 8 << 20
)

// DialOptions are the host's settings for its gRPC connection to a plugin
// process, added to go-plugin's own.
func DialOptions() []grpc.DialOption {
	return []grpc.DialOption{
		grpc.WithInitialWindowSize(streamWindow),
		grpc.WithInitialConnWindowSize(connWindow),
	}
}

// ServerOptions are a plugin's settings for its gRPC server: it accepts
// requests up to MaxMessageSize, the most any host may be configured to
// send, and uses the same fixed windows as the host (see DialOptions).
func ServerOptions() []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.MaxRecvMsgSize(MaxMessageSize),
		grpc.InitialWindowSize(streamWindow),
		grpc.InitialConnWindowSize(connWindow),
	}
}
