package sse

import (
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

func readAll(t *testing.T, src string) ([]Event, error) {
	t.Helper()
	r := NewReader(iotest.OneByteReader(strings.NewReader(src)))
	var evs []Event
	for {
		ev, err := r.Next()
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
}

func TestEvents(t *testing.T) {
	src := ": keepalive\n\n" +
		"event: message_start\ndata: {\"a\":1}\n\n" +
		"data: first\r\ndata:second\r\n\r\n" +
		"event: ping\nid: 7\nretry: 100\ndata: {}\n\n" +
		"event: no-data\n\n" +
		"data: [DONE]\n\n"
	evs, err := readAll(t, src)
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
		evs, err := readAll(t, src)
		if !errors.Is(err, io.ErrUnexpectedEOF) || len(evs) != 1 {
			t.Errorf("%q: %d events, err %v; want 1 and io.ErrUnexpectedEOF", src, len(evs), err)
		}
	}
	// A trailing comment is not part of an event.
	if _, err := readAll(t, "data: x\n\n: bye\n"); err != io.EOF {
		t.Errorf("err = %v after a trailing comment, want io.EOF", err)
	}
}

func TestLongLine(t *testing.T) {
	long := strings.Repeat("x", 200<<10)
	evs, err := readAll(t, "data: "+long+"\n\n")
	if err != io.EOF || len(evs) != 1 || evs[0].Data != long {
		t.Errorf("long line: %d events, err %v", len(evs), err)
	}
}
