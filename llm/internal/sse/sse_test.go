package sse

import (
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

// drain reads every event of r, and the error that ended it.
func drain(r *Reader) ([]Event, error) {
	var evs []Event
	for {
		ev, err := r.Next()
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
}

// readAll reads src one byte at a time, where a reader that forgets state
// between reads would show it.
func readAll(src string) ([]Event, error) {
	return drain(NewReader(iotest.OneByteReader(strings.NewReader(src))))
}

func TestEvents(t *testing.T) {
	src := ": keepalive\n\n" +
		"event: message_start\ndata: {\"a\":1}\n\n" +
		"data: first\r\ndata:second\r\n\r\n" +
		"event: ping\nid: 7\nretry: 100\ndata: {}\n\n" +
		"event: no-data\n\n" +
		"data: [DONE]\n\n"
	evs, err := readAll(src)
	if err != io.EOF {
		t.Fatalf("err = %v, want io.EOF", err)
	}
	want := []Event{
		{Name: "message_start", Data: `{"a":1}`},
		{Data: "first\nsecond"},
		{Name: "ping", Data: "{}"},
		{Data: "[DONE]"},
	}
	if !reflect.DeepEqual(evs, want) {
		t.Errorf("events = %q\nwant %q", evs, want)
	}
}

func TestTruncated(t *testing.T) {
	for _, src := range []string{
		"data: {\"a\":1}\n\ndata: {\"b\"",
		"data: {\"a\":1}\n\nevent: x\ndata: {}\n",
	} {
		evs, err := readAll(src)
		if !errors.Is(err, io.ErrUnexpectedEOF) || len(evs) != 1 {
			t.Errorf("%q: %d events, err %v; want 1 and io.ErrUnexpectedEOF", src, len(evs), err)
		}
	}
	// A trailing comment is not part of an event.
	if _, err := readAll("data: x\n\n: bye\n"); err != io.EOF {
		t.Errorf("err = %v after a trailing comment, want io.EOF", err)
	}
}

func TestLongLine(t *testing.T) {
	long := strings.Repeat("x", 200<<10)
	evs, err := readAll("data: " + long + "\n\n")
	if err != io.EOF || len(evs) != 1 || evs[0].Data != long {
		t.Errorf("long line: %d events, err %v", len(evs), err)
	}
}

// endless is a stream that repeats line forever, counting what was read
// from it, up to stop bytes so that a reader without a cap fails the test
// instead of exhausting memory.
type endless struct {
	line []byte
	read int
	stop int
}

func (e *endless) Read(p []byte) (int, error) {
	if e.read >= e.stop {
		return 0, io.EOF
	}
	if len(p) > e.stop-e.read {
		p = p[:e.stop-e.read]
	}
	n := 0
	for n < len(p) {
		n += copy(p[n:], e.line[(e.read+n)%len(e.line):])
	}
	e.read += n
	return n, nil
}

func TestEventCap(t *testing.T) {
	for name, line := range map[string]string{
		"data lines without the blank line that ends an event": "data: 0123456789abcdef\n",
		"one line without end":                                 "data: xxxxxxxxxxxxxxxxx",
	} {
		t.Run(name, func(t *testing.T) {
			src := &endless{line: []byte(line), stop: 64 << 20}
			_, err := NewReader(src).Next()
			if err == nil || !strings.Contains(err.Error(), "8 MiB cap on one server-sent event") {
				t.Fatalf("err = %v, want the event cap named", err)
			}
			// The cap is found while reading, not after: line ends do
			// not count, but the stream was not read to its end.
			if src.read > 2*DefaultMaxEvent {
				t.Errorf("read %d bytes before refusing an event over %d", src.read, DefaultMaxEvent)
			}
		})
	}
	// A comment-only stream costs nothing to hold: it reads to its end.
	src := &endless{line: []byte(": keepalive\n\n"), stop: 13 << 21}
	if _, err := NewReader(src).Next(); err != io.EOF {
		t.Errorf("comments only: err = %v, want io.EOF", err)
	}
	// An event just under the cap is fine.
	big := strings.Repeat("x", DefaultMaxEvent-len("data: "))
	evs, err := drain(NewReader(strings.NewReader("data: " + big + "\n\n")))
	if err != io.EOF || len(evs) != 1 || len(evs[0].Data) != len(big) {
		t.Errorf("event at the cap: %d events, err %v", len(evs), err)
	}
}
