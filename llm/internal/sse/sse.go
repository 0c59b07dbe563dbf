// Package sse reads server-sent event streams, the framing both OpenAI and
// Anthropic use for streamed responses. It implements the parts of the
// WHATWG event-stream format those servers rely on: "event:" names,
// multi-line "data:", comment lines used as keepalives, and blank-line
// dispatch. What an event means is left to the provider adapters.
//
// One event is capped (DefaultMaxEvent unless the Reader is made with
// NewReaderLimit): an event that grows past the cap, or a single line
// longer than it, is an error, found before more than the cap is held in
// memory. Comment lines are read and dropped one at a time, so a server
// that sends nothing but comments costs no memory; ending such a stream is
// the caller's business (see package httpretry).
package sse

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// DefaultMaxEvent is the cap on one event, counting every byte of its
// lines but not their terminators. Tool arguments and text arrive in
// small fragments, so only a broken or hostile server comes near it.
const DefaultMaxEvent = 8 << 20

// Event is one dispatched event. Name is "" when the frame had no "event:"
// line; Data is the "data:" lines joined by "\n".
type Event struct {
	Name string
	Data string
}

// TooLargeError reports an event over the cap.
type TooLargeError struct {
	Max int // the cap, in bytes
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("an event is larger than the %s cap on one server-sent event", Size(int64(e.Max)))
}

// Size formats a byte count the way limits are written in the docs.
func Size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// Reader reads events from a stream.
type Reader struct {
	r   *bufio.Reader
	max int
}

// NewReader reads events from r, capped at DefaultMaxEvent each.
func NewReader(r io.Reader) *Reader {
	return NewReaderLimit(r, DefaultMaxEvent)
}

// NewReaderLimit reads events from r, capped at max bytes each; max <= 0
// means DefaultMaxEvent.
func NewReaderLimit(r io.Reader, max int) *Reader {
	if max <= 0 {
		max = DefaultMaxEvent
	}
	return &Reader{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

// Next returns the next event with data. At the end of the stream it
// returns io.EOF if the stream ended between events, and
// io.ErrUnexpectedEOF if it stopped in the middle of one, whose partial
// content is discarded as the format requires. An event over the cap is a
// *TooLargeError. Other errors are the underlying reader's.
func (r *Reader) Next() (Event, error) {
	var (
		ev      Event
		data    bytes.Buffer
		hasData bool
		partial bool // some line of the current frame has been read
		size    int  // bytes of the current frame's lines so far
	)
	for {
		line, n, err := r.line(r.max - size)
		if err != nil {
			if err == io.EOF && (partial || len(line) > 0) {
				return Event{}, io.ErrUnexpectedEOF
			}
			return Event{}, err
		}
		if len(line) == 0 {
			if hasData {
				ev.Data = data.String()
				return ev, nil
			}
			// A frame without data (or a run of comments) dispatches
			// nothing.
			ev, partial, size = Event{}, false, 0
			continue
		}
		if line[0] == ':' {
			continue
		}
		size += n
		partial = true
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "event":
			ev.Name = string(value)
		case "data":
			if hasData {
				data.WriteByte('\n')
			}
			data.Write(value)
			hasData = true
		}
		// id and retry only matter to reconnecting browsers.
	}
}

// line returns one line without its terminator, and its length. A line is
// refused as soon as it is longer than limit, so no more than that is
// ever held. A last line without a terminator is returned with io.EOF.
func (r *Reader) line(limit int) ([]byte, int, error) {
	var buf []byte
	for {
		chunk, err := r.r.ReadSlice('\n')
		n := len(buf) + len(chunk)
		if err == nil {
			n-- // the terminator is not part of the line
		}
		if n > limit {
			return nil, 0, &TooLargeError{Max: r.max}
		}
		buf = append(buf, chunk...)
		if err == nil {
			line := bytes.TrimSuffix(buf[:len(buf)-1], []byte("\r"))
			return line, len(line), nil
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		line := bytes.TrimSuffix(buf, []byte("\r"))
		return line, len(line), err
	}
}
