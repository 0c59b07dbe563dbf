package wire

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/hookhost/hookhost/hooks"
)

// Size limits on one message between the host and a plugin, in bytes. The
// host applies a plugin's own limits (Settings); these are the defaults and
// the ceiling.
const (
	// defaultMaxResultSize bounds one answer from a plugin. A result over
	// it is rejected before it is read into memory and counts as the
	// plugin's malformed answer.
	defaultMaxResultSize = 4 << 20
	// defaultMaxRequestSize bounds one call to a plugin. The host refuses
	// to send a larger one; that is its own decision, not the plugin's
	// failure.
	defaultMaxRequestSize = 16 << 20
	// MaxMessageSize is the most either limit may be raised to. The SDK's
	// server accepts requests up to this size, so a plugin never refuses
	// what its host was allowed to send.
	MaxMessageSize = 256 << 20
)

// Settings are the host's rules for the messages it exchanges with one
// plugin. The zero value means the defaults.
type Settings struct {
	// Plugin is the plugin's name in the host's config, used in error
	// messages and in the advice they give.
	Plugin         string
	MaxResultSize  int // 0: 4 MiB
	MaxRequestSize int // 0: 16 MiB
	// Repaired, when set, is told of every request whose text had to be
	// repaired (U+FFFD for each invalid UTF-8 sequence) before it could be
	// sent, with the hook and the number of fields repaired.
	Repaired func(hook string, fields int)
}

func (s Settings) withDefaults() Settings {
	if s.MaxResultSize <= 0 {
		s.MaxResultSize = defaultMaxResultSize
	}
	if s.MaxRequestSize <= 0 {
		s.MaxRequestSize = defaultMaxRequestSize
	}
	s.MaxResultSize = min(s.MaxResultSize, MaxMessageSize)
	s.MaxRequestSize = min(s.MaxRequestSize, MaxMessageSize)
	return s
}

// configName is how the advice in an error message names the plugin's
// config entry.
func (s Settings) configName() string {
	if s.Plugin == "" {
		return "<name>"
	}
	return s.Plugin
}

// rules holds the Settings a client applies and counts the bytes it
// exchanges; both clients embed it.
type rules struct {
	settings atomic.Pointer[applied]
	sent     atomic.Uint64
	received atomic.Uint64
}

// Traffic counts the bytes of the protobuf messages a connection to a
// plugin carried: version 1's requests and responses, version 2's
// HostMessages and PluginMessages on its hook stream, and either version's
// Describe and Configure. gRPC's framing, HTTP/2 and TLS are not counted.
type Traffic struct {
	Sent     uint64 // host to plugin
	Received uint64 // plugin to host
}

// Traffic returns the bytes exchanged so far.
func (r *rules) Traffic() Traffic {
	return Traffic{Sent: r.sent.Load(), Received: r.received.Load()}
}

// Apply sets the rules for the calls made from now on. Call it before
// handing the client to a Bus; it is safe to call at any time.
func (r *rules) Apply(s Settings) {
	r.settings.Store(newApplied(s))
}

// applied is a Client's Settings with what every call needs built once, so
// that the hot path allocates nothing for them.
type applied struct {
	Settings
	recvLimit grpc.CallOption
}

func newApplied(s Settings) *applied {
	s = s.withDefaults()
	return &applied{Settings: s, recvLimit: grpc.MaxCallRecvMsgSize(s.MaxResultSize)}
}

var defaultApplied = newApplied(Settings{})

func (r *rules) current() *applied {
	if s := r.settings.Load(); s != nil {
		return s
	}
	return defaultApplied
}

// tooLarge is the host's refusal of a request of size bytes, over the
// plugin's max_request_size; Kind and Msg are filled, the caller adds who.
func (s *applied) tooLarge(size int) *CallError {
	return &CallError{Kind: hooks.ErrRefused, Msg: fmt.Sprintf(
		"the request is %d bytes, over the %d bytes this plugin's max_request_size allows (raise plugins.entries.%s.max_request_size, up to %d, to send it)",
		size, s.MaxRequestSize, s.configName(), MaxMessageSize)}
}

// repaired repairs m's text (see repairText) and tells s.Repaired when it
// had to, with the hook m is a request of; it reports how many fields.
func (s *applied) repaired(hook string, m proto.Message) int {
	n := repairText(m)
	if n > 0 && s.Repaired != nil {
		s.Repaired(hook, n)
	}
	return n
}

// serverRefusalFloor is the smallest request a plugin's gRPC server is
// expected to refuse: gRPC's default receive limit, which only plugins built
// without this SDK keep. Below it a ResourceExhausted answer is taken to be
// about the answer, which spares the hot path collecting headers.
const serverRefusalFloor = 4 << 20

// boundary is the connection every unary call goes through: the one place
// where every request is made fit to send and every answer is bounded in
// size.
type boundary struct {
	cc grpc.ClientConnInterface
	r  *rules
}

func (b boundary) Invoke(ctx context.Context, method string, args, reply any, opts ...grpc.CallOption) error {
	s := b.r.current()
	m, _ := args.(proto.Message)
	err := b.send(ctx, s, method, m, args, reply, opts)
	if m != nil && status.Code(err) == codes.Internal {
		// gRPC refuses to marshal a string field that is not valid UTF-8,
		// before anything is sent. Repairing then, and sending once more,
		// keeps the walk over every field off the path of valid requests.
		if s.repaired(hookOfMethod(method), m) > 0 {
			err = b.send(ctx, s, method, m, args, reply, opts)
		}
	}
	return err
}

func (b boundary) send(ctx context.Context, s *applied, method string, m proto.Message, args, reply any, opts []grpc.CallOption) error {
	size := 0
	if m != nil {
		if size = proto.Size(m); size > s.MaxRequestSize {
			return s.tooLarge(size)
		}
	}
	// Per call, so that gRPC rejects an oversized answer from its length
	// prefix, before allocating room for it.
	opts = append(opts[:len(opts):len(opts)], s.recvLimit)
	var header metadata.MD
	if size > serverRefusalFloor {
		opts = append(opts, grpc.Header(&header))
	}
	err := b.cc.Invoke(ctx, method, args, reply, opts...)
	b.r.sent.Add(uint64(size))
	if r, ok := reply.(proto.Message); ok && err == nil {
		b.r.received.Add(uint64(proto.Size(r)))
	}
	if st, ok := status.FromError(err); ok && st.Code() == codes.ResourceExhausted && size > serverRefusalFloor && header == nil {
		// gRPC words an oversized message the same way on both sides, and
		// the limits may be equal, so the message cannot tell who refused.
		// Headers can: a server sends them before its answer, so without
		// them the plugin never answered and refused the request itself.
		return &CallError{Status: st, Msg: fmt.Sprintf(
			"refused a request of %d bytes: %s (its gRPC server accepts less than this host may send; raise the plugin server's maximum receive message size, which the current SDKs do, or lower plugins.entries.%s.max_request_size)",
			size, st.Message(), s.configName())}
	}
	return err
}

// NewStream completes grpc.ClientConnInterface; the boundary carries only
// unary calls (version 2's stream sets its own receive limit).
func (b boundary) NewStream(ctx context.Context, desc *grpc.StreamDesc, method string, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	return b.cc.NewStream(ctx, desc, method, append(opts, b.r.current().recvLimit)...)
}

// hookOfMethod names the hook an RPC method carries the way the rest of
// the host does ("/hookhost.plugin.v1.Plugin/PreToolCall" →
// "pre_tool_call"); other methods keep their RPC name.
func hookOfMethod(method string) string {
	for i := range table {
		if table[i].fullMethod == method {
			return string(table[i].name)
		}
	}
	return method[strings.LastIndexByte(method, '/')+1:]
}

// repairText makes every string field of m, however deeply nested, valid
// UTF-8 by replacing each invalid sequence with U+FFFD, and returns how many
// fields it changed. proto3 strings must be valid UTF-8: gRPC refuses to
// send a message that breaks this, so without the repair one stray byte in
// a conversation would fail every call to every plugin. Tool arguments and
// input schemas travel as bytes and are left alone; a tool result's content
// is a string and is repaired like any other text.
//
// Both sides apply it to what they send: the host to each request, the
// SDK's server to each answer.
func repairText(m proto.Message) int {
	if m == nil {
		return 0
	}
	return repair(m.ProtoReflect())
}

func repair(m protoreflect.Message) int {
	if !m.IsValid() {
		return 0
	}
	n := 0
	type fix struct {
		fd protoreflect.FieldDescriptor
		s  string
	}
	var fixes []fix // set after Range: a message must not change under it
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList():
			l := v.List()
			for i := range l.Len() {
				switch {
				case fd.Kind() == protoreflect.StringKind:
					if s := l.Get(i).String(); !utf8.ValidString(s) {
						l.Set(i, protoreflect.ValueOfString(strings.ToValidUTF8(s, "\uFFFD")))
						n++
					}
				case fd.Message() != nil:
					n += repair(l.Get(i).Message())
				}
			}
		case fd.IsMap():
			// The protocol has no maps; a future one must be repaired here.
		case fd.Kind() == protoreflect.StringKind:
			if s := v.String(); !utf8.ValidString(s) {
				fixes = append(fixes, fix{fd, strings.ToValidUTF8(s, "\uFFFD")})
			}
		case fd.Message() != nil:
			n += repair(v.Message())
		}
		return true
	})
	for _, f := range fixes {
		m.Set(f.fd, protoreflect.ValueOfString(f.s))
	}
	return n + len(fixes)
}
