//go:build unix

package wire

import (
	"bytes"
	"errors"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	pluginv2 "github.com/hookhost/hookhost/plugins/proto/v2"
)

// A write many times the socket's buffer waits for room as often as it
// must and delivers every byte, in order, to a reader that reads slowly;
// a read of a socket with nothing in it waits for what comes.
func TestRawLaneIOWaitsForRoomAndForBytes(t *testing.T) {
	a, b := LanePair(t)
	want := make([]byte, 8<<20)
	for i := range want {
		want[i] = byte(i * 7)
	}
	wrote := make(chan error, 1)
	go func() {
		n, err := laneWriter(a).Write(want)
		if err == nil && n != len(want) {
			err = io.ErrShortWrite
		}
		wrote <- err
	}()
	rd := laneReader(b)
	got := make([]byte, 0, len(want))
	buf := make([]byte, 100_000)
	for len(got) < len(want) {
		n, err := rd.Read(buf)
		if err != nil {
			t.Fatalf("read after %d bytes: %v", len(got), err)
		}
		got = append(got, buf[:n]...)
		if len(got) < 1<<20 {
			time.Sleep(time.Millisecond) // let the writer find the socket full
		}
	}
	if err := <-wrote; err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("the bytes read are not those written")
	}
}

// A write to a lane whose other end is gone fails, and so does a read of
// one closed under it: neither waits.
func TestRawLaneIOFailsOnAClosedLane(t *testing.T) {
	a, b := LanePair(t)
	b.Close()
	var err error
	for range 100 { // the first writes may still be buffered
		if _, err = laneWriter(a).Write(make([]byte, 1<<16)); err != nil {
			break
		}
	}
	if !errors.Is(err, syscall.EPIPE) && !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("write to a lane whose reader is gone: %v, want EPIPE or ECONNRESET", err)
	}
	c, d := LanePair(t)
	_ = d
	done := make(chan error, 1)
	go func() { _, err := laneReader(c).Read(make([]byte, 10)); done <- err }()
	time.Sleep(10 * time.Millisecond)
	c.Close()
	select {
	case err := <-done:
		if !errors.Is(err, net.ErrClosed) {
			t.Fatalf("read of a lane closed under it: %v, want net.ErrClosed", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a read of a lane closed under it did not return")
	}
}

// A held frame whose write fails breaks the lane: no one is left to be
// told, so the lane is closed and whoever reads it learns so, instead of
// waiting for answers to calls that were never sent.
func TestFrameWriterClosesTheLaneWhenAHeldWriteFails(t *testing.T) {
	a, b := LanePair(t)
	b.Close()
	fw := newFrameWriter(a)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if err := fw.hold(&pluginv2.PluginMessage{Id: 1, Answer: make([]byte, 1<<16)}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Millisecond)
		if _, err := a.Read(make([]byte, 1)); errors.Is(err, net.ErrClosed) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the lane stayed open after held frames could not be written")
		}
	}
}
