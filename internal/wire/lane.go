package wire

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"strconv"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/hookhost/hookhost/internal/gopool"
	pluginv2 "github.com/hookhost/hookhost/plugins/proto/v2"
)

// The lane is a second carrier for protocol 2's hook stream: a connected
// Unix socket the host creates for each plugin process it starts and hands
// it as an inherited descriptor, named by the LaneFDEnv variable. It
// carries the same HostMessages and PluginMessages as the Hooks stream,
// each after a 4-byte big-endian length, with the same meaning; a plugin
// that serves it says so in its manifest (Manifest.lane) and the host then
// sends its calls there. Describe, Configure, health and shutdown stay on
// gRPC, and so does the hook stream of a plugin that does not serve the
// lane, or whose lane broke.
//
// Why a second carrier: on a small machine a gRPC message between two
// processes costs several goroutine hand-offs on each side (the transport's
// reader and writer, the stream's receive buffer), and each one that finds
// an idle processor wakes a thread of its own. A lane message is one write
// by the goroutine that has it and one read by the goroutine that waits for
// it: a hook round trip took half the time on a 2-core machine. The
// socket is private to the two processes, as the handshake's pipes are, so
// it needs no TLS; the kernel's socket buffer is its flow control.

// LaneFDEnv names the variable that tells a plugin which of its descriptors
// is its lane.
const LaneFDEnv = "HOOKHOST_LANE_FD"

// laneHeader is a lane frame's length prefix.
const laneHeader = 4

// laneBuffer is what a lane reader reads at once; a frame longer than it
// is read into a buffer of its own size.
const laneBuffer = 64 << 10

// frameReader reads a lane's frames. A read cut short (by a read deadline)
// keeps what it got, and the next call goes on from there, so that the
// goroutines taking turns at reading a lane never split a frame.
type frameReader struct {
	rd   io.Reader
	buf  []byte
	r, w int
	big  []byte // a frame longer than buf, being read
	got  int    // of big
}

func newFrameReader(rd io.Reader) *frameReader {
	return &frameReader{rd: rd, buf: make([]byte, laneBuffer)}
}

// errFrameTooLarge is a frame whose length prefix is over the reader's
// limit; the lane cannot go on, since what follows is that frame.
type errFrameTooLarge struct{ size, limit int }

func (e errFrameTooLarge) Error() string {
	return fmt.Sprintf("received message larger than max (%d vs. %d)", e.size, e.limit)
}

// next returns the next frame's bytes, valid until the following call. A
// frame over limit is refused from its length prefix, before anything is
// allocated for it.
func (f *frameReader) next(limit int) ([]byte, error) {
	if f.big == nil {
		for f.w-f.r < laneHeader {
			if err := f.fill(); err != nil {
				return nil, err
			}
		}
		size := int(binary.BigEndian.Uint32(f.buf[f.r:]))
		if size > limit {
			return nil, errFrameTooLarge{size, limit}
		}
		if laneHeader+size <= len(f.buf) {
			for f.w-f.r < laneHeader+size {
				if err := f.fill(); err != nil {
					return nil, err
				}
			}
			frame := f.buf[f.r+laneHeader : f.r+laneHeader+size]
			f.r += laneHeader + size
			return frame, nil
		}
		f.big = make([]byte, size)
		f.got = copy(f.big, f.buf[f.r+laneHeader:f.w])
		f.r = f.w
	}
	for f.got < len(f.big) {
		n, err := f.rd.Read(f.big[f.got:])
		f.got += n
		if err != nil && f.got < len(f.big) {
			return nil, err
		}
	}
	frame := f.big
	f.big, f.got = nil, 0
	return frame, nil
}

// fill reads more into buf, moving what is unread to its start first when
// the room after it is short.
func (f *frameReader) fill() error {
	if f.r == f.w {
		f.r, f.w = 0, 0
	} else if len(f.buf)-f.w < laneHeader+1 || f.r > len(f.buf)/2 {
		f.w = copy(f.buf, f.buf[f.r:f.w])
		f.r = 0
	}
	n, err := f.rd.Read(f.buf[f.w:])
	f.w += n
	if n > 0 {
		// An error that came with bytes comes again on the next read.
		return nil
	}
	if err == nil {
		err = io.ErrNoProgress
	}
	return err
}

// frameWriter writes a lane's frames, whole frames per write.
type frameWriter struct {
	mu   sync.Mutex
	conn net.Conn
	out  io.Writer // conn, written through laneWriter
	buf  []byte    // frames held, not yet written
	// flushing is set while a flush of held frames is scheduled.
	flushing bool
}

func newFrameWriter(conn net.Conn) *frameWriter {
	return &frameWriter{conn: conn, out: laneWriter(conn)}
}

// write sends m, after the frames held, in one write.
func (w *frameWriter) write(m proto.Message) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.appendLocked(m); err != nil {
		return err
	}
	return w.flushLocked()
}

// hold adds m to the frames written by the next write, or by a flush
// that runs once the goroutines ready to run now have run: a stage's
// answers that follow each other at once go out in one write, and one
// that waits for a slow handler does not wait with it.
func (w *frameWriter) hold(m proto.Message) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.appendLocked(m); err != nil {
		return err
	}
	if !w.flushing {
		w.flushing = true
		gopool.Go(func() {
			// The goroutines ready to run now run first: what they send
			// joins this write.
			runtime.Gosched()
			w.mu.Lock()
			defer w.mu.Unlock()
			w.flushing = false
			if err := w.flushLocked(); err != nil {
				// No sender is there to be told: closing the lane tells
				// its reader, and the calls fail with it.
				_ = w.conn.Close()
			}
		})
	}
	return nil
}

func (w *frameWriter) appendLocked(m proto.Message) error {
	b := binary.BigEndian.AppendUint32(w.buf, uint32(proto.Size(m)))
	// Size has just measured m and each message in it: marshalling need
	// not measure them again.
	b, err := proto.MarshalOptions{UseCachedSize: true}.MarshalAppend(b, m)
	if err != nil {
		return err
	}
	w.buf = b
	return nil
}

// flushLocked writes the frames held. The buffer is kept for the next
// frames unless it grew unusually large.
func (w *frameWriter) flushLocked() error {
	if len(w.buf) == 0 {
		return nil
	}
	_, err := w.out.Write(w.buf)
	w.buf = w.buf[:0]
	if cap(w.buf) > laneBuffer {
		w.buf = nil
	}
	return err
}

// laneClient is the host's end of a lane, in the shape of the Hooks
// stream's client side for the sender. Its reading is done by the callers
// themselves, in turn (see stream.readFor), not through Recv.
type laneClient struct {
	conn   net.Conn
	out    *frameWriter
	frames *frameReader // read only by the goroutine whose turn it is
	// room is what the socket surely buffers: writes that, with what the
	// plugin has not been seen to read, fit in it never wait.
	room int
}

// laneRoom is the room assumed of a socket whose buffer size is unknown.
const laneRoom = 32 << 10

func newLaneClient(conn net.Conn) *laneClient {
	return &laneClient{conn: conn, out: newFrameWriter(conn), room: sendRoom(conn), frames: newFrameReader(laneReader(conn))}
}

// Send writes m to the plugin. The stream's sendMu already serializes the
// senders; a write blocks only while the socket's buffer is full.
func (l *laneClient) Send(m *pluginv2.HostMessage) error { return l.out.write(m) }

// recv reads the next message and its size, refusing one over limit
// bytes. Errors are those of gRPC's stream for the same causes, so that
// stream.classify reads both alike; a deadline that passed is returned as
// it is.
func (l *laneClient) recv(limit int) (*pluginv2.PluginMessage, int, error) {
	b, err := l.frames.next(limit)
	if err != nil {
		var tooLarge errFrameTooLarge
		switch {
		case errors.As(err, &tooLarge):
			return nil, 0, status.Error(codes.ResourceExhausted, err.Error())
		case errors.Is(err, os.ErrDeadlineExceeded):
			return nil, 0, err
		case errors.Is(err, io.EOF):
			return nil, 0, io.EOF
		}
		return nil, 0, status.Errorf(codes.Unavailable, "the plugin's lane: %v", err)
	}
	m := new(pluginv2.PluginMessage)
	if err := proto.Unmarshal(b, m); err != nil {
		return nil, 0, status.Errorf(codes.Internal, "the plugin's lane: cannot decode a message: %v", err)
	}
	return m, len(b), nil
}

// poller is a lane reader that can poll before it waits.
type poller interface{ setPolling(on bool) }

// polling says whether the next reads poll before they wait, where the
// reader can (see spinReader); only the goroutine whose turn it is to read
// calls it.
func (l *laneClient) polling(on bool) {
	if p, ok := l.frames.rd.(poller); ok {
		p.setPolling(on)
	}
}

// interrupt wakes the goroutine reading the lane, if any: it looks again at
// why it reads, and reads on when it still should.
func (l *laneClient) interrupt() { _ = l.conn.SetReadDeadline(aLongTimeAgo) }

var aLongTimeAgo = time.Unix(1, 0)

// laneServerStream is a plugin's end of a lane in the shape of a Hooks
// stream, so that one hookStream serves either.
type laneServerStream struct {
	ctx    context.Context
	out    *frameWriter
	frames *frameReader
}

func newLaneServerStream(ctx context.Context, conn net.Conn) *laneServerStream {
	return &laneServerStream{ctx: ctx, out: newFrameWriter(conn), frames: newFrameReader(laneReader(conn))}
}

func (s *laneServerStream) Recv() (*pluginv2.HostMessage, error) {
	b, err := s.frames.next(MaxMessageSize)
	if err != nil {
		return nil, err
	}
	m := new(pluginv2.HostMessage)
	if err := proto.Unmarshal(b, m); err != nil {
		return nil, fmt.Errorf("plugin: cannot decode a message from the host's lane: %w", err)
	}
	return m, nil
}

// Send writes m; an answer that is not its call's last is held for the
// next one (see frameWriter.hold).
func (s *laneServerStream) Send(m *pluginv2.PluginMessage) error {
	if m.GetLast() {
		return s.out.write(m)
	}
	return s.out.hold(m)
}

// SendHeld holds m for a write shared with what other goroutines send
// (see frameWriter.hold).
func (s *laneServerStream) SendHeld(m *pluginv2.PluginMessage) error { return s.out.hold(m) }
func (s *laneServerStream) Context() context.Context                 { return s.ctx }
func (s *laneServerStream) SetHeader(metadata.MD) error              { return nil }
func (s *laneServerStream) SendHeader(metadata.MD) error             { return nil }
func (s *laneServerStream) SetTrailer(metadata.MD)                   {}

func (s *laneServerStream) SendMsg(m any) error {
	pm, ok := m.(*pluginv2.PluginMessage)
	if !ok {
		return fmt.Errorf("plugin: the lane carries PluginMessages, not %T", m)
	}
	return s.Send(pm)
}

func (s *laneServerStream) RecvMsg(m any) error {
	hm, ok := m.(*pluginv2.HostMessage)
	if !ok {
		return fmt.Errorf("plugin: the lane carries HostMessages, not %T", m)
	}
	got, err := s.Recv()
	if err != nil {
		return err
	}
	proto.Merge(hm, got)
	return nil
}

// takeLane returns the lane the host handed this process, or nil when it
// handed none or the descriptor is not a socket. The variable is removed so
// that a process the plugin starts does not take the lane for its own.
func takeLane() (net.Conn, error) {
	v, ok := os.LookupEnv(LaneFDEnv)
	if !ok {
		return nil, nil
	}
	_ = os.Unsetenv(LaneFDEnv)
	fd, err := strconv.Atoi(v)
	if err != nil || fd < 3 {
		return nil, fmt.Errorf("plugin: %s=%q is not a descriptor the host could have handed over", LaneFDEnv, v)
	}
	f := os.NewFile(uintptr(fd), "hookhost-lane")
	if f == nil {
		return nil, fmt.Errorf("plugin: %s=%d is not an open descriptor", LaneFDEnv, fd)
	}
	// FileConn duplicates the descriptor, close-on-exec; the inherited
	// one is closed so that no child of the plugin keeps the lane open.
	conn, err := net.FileConn(f)
	_ = f.Close()
	if err != nil {
		return nil, fmt.Errorf("plugin: the lane descriptor %d: %w", fd, err)
	}
	return conn, nil
}
