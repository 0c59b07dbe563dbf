package wire

import (
	"bytes"
	"errors"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	pluginv2 "github.com/hookhost/hookhost/plugins/proto/v2"
)

// writes records each Write as its own slice.
type writes struct {
	net.Conn
	mu  sync.Mutex
	got [][]byte
}

func (w *writes) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.got = append(w.got, bytes.Clone(b))
	return len(b), nil
}

func (w *writes) all() [][]byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.got
}

func framesIn(t *testing.T, b []byte) []uint64 {
	t.Helper()
	r := newFrameReader(bytes.NewReader(b))
	var ids []uint64
	for {
		f, err := r.next(MaxMessageSize)
		if err != nil {
			break
		}
		var m pluginv2.PluginMessage
		if err := proto.Unmarshal(f, &m); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, m.GetId())
	}
	return ids
}

// Answers held go out, in order, by the time the next one written has
// gone out; one held alone goes out by itself soon after. (That the held
// ones usually share the write is a matter of speed, which the benchmarks
// measure.)
func TestFrameWriterHoldsUntilTheNextWrite(t *testing.T) {
	w := &writes{}
	fw := newFrameWriter(w)
	for id := uint64(1); id <= 2; id++ {
		if err := fw.hold(&pluginv2.PluginMessage{Id: id}); err != nil {
			t.Fatal(err)
		}
	}
	if err := fw.write(&pluginv2.PluginMessage{Id: 3, Last: true}); err != nil {
		t.Fatal(err)
	}
	var ids []uint64
	for _, b := range w.all() {
		ids = append(ids, framesIn(t, b)...)
	}
	if len(ids) != 3 || ids[0] != 1 || ids[1] != 2 || ids[2] != 3 {
		t.Fatalf("frames %v, want 1 2 3", ids)
	}

	n := len(w.all())
	if err := fw.hold(&pluginv2.PluginMessage{Id: 4}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(w.all()) == n {
		if time.Now().After(deadline) {
			t.Fatal("a frame held alone was never written")
		}
		time.Sleep(time.Millisecond)
	}
	if ids := framesIn(t, w.all()[n]); len(ids) != 1 || ids[0] != 4 {
		t.Fatalf("frames %v, want 4", ids)
	}
}

// chunks reads its chunks one per Read, a deadline error between them.
type chunks struct {
	parts [][]byte
	cut   bool
}

func (c *chunks) Read(b []byte) (int, error) {
	if c.cut {
		c.cut = false
		return 0, os.ErrDeadlineExceeded
	}
	if len(c.parts) == 0 {
		return 0, errors.New("no more")
	}
	n := copy(b, c.parts[0])
	c.parts[0] = c.parts[0][n:]
	if len(c.parts[0]) == 0 {
		c.parts = c.parts[1:]
		c.cut = true
	}
	return n, nil
}

// A read cut short by a deadline, anywhere in a frame, loses nothing: the
// next read goes on where it stopped. Frames longer than the reader's
// buffer are read whole too.
func TestFrameReaderResumesAfterADeadline(t *testing.T) {
	var fw frameWriter
	big := bytes.Repeat([]byte("x"), laneBuffer+100)
	for _, m := range []*pluginv2.PluginMessage{{Id: 1}, {Id: 2, Answer: big}, {Id: 3, Answer: []byte("small")}} {
		if err := fw.appendLocked(m); err != nil {
			t.Fatal(err)
		}
	}
	stream := fw.buf
	// Cut it everywhere: in a length prefix, in a message, between frames.
	var parts [][]byte
	last := 0
	for _, at := range []int{2, 5, 9, 4000, laneBuffer + 7} {
		parts = append(parts, stream[last:at])
		last = at
	}
	parts = append(parts, stream[last:])
	r := newFrameReader(&chunks{parts: parts})
	var ids []uint64
	for len(ids) < 3 {
		f, err := r.next(MaxMessageSize)
		if errors.Is(err, os.ErrDeadlineExceeded) {
			continue
		}
		if err != nil {
			t.Fatalf("after frames %v: %v", ids, err)
		}
		var m pluginv2.PluginMessage
		if err := proto.Unmarshal(f, &m); err != nil {
			t.Fatal(err)
		}
		if m.GetId() == 2 && !bytes.Equal(m.GetAnswer(), big) {
			t.Fatal("the long frame came back changed")
		}
		ids = append(ids, m.GetId())
	}
	if ids[0] != 1 || ids[1] != 2 || ids[2] != 3 {
		t.Fatalf("frames %v, want 1 2 3", ids)
	}
}

// A frame whose length is over the limit is refused from its prefix.
func TestFrameReaderRefusesAFrameOverTheLimit(t *testing.T) {
	r := newFrameReader(bytes.NewReader([]byte{0x7f, 0xff, 0xff, 0xff, 1, 2, 3}))
	_, err := r.next(1 << 20)
	var tooLarge errFrameTooLarge
	if !errors.As(err, &tooLarge) || tooLarge.size != 0x7fffffff || tooLarge.limit != 1<<20 {
		t.Fatalf("got %v, want the frame refused for its size", err)
	}
}
