// Package sse reads server-sent event streams, the framing both OpenAI and
// Anthropic use for streamed responses. It implements the parts of the
// WHATWG event-stream format those servers rely on: "event:" names,
// multi-line "data:", comment lines used as keepalives, and blank-line
// dispatch. What an event means is left to the provider adapters.
package sse

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// MaxLine bounds one line of the stream. Tool arguments arrive in small
// fragments, so only a broken or hostile server comes near it.
const MaxLine = 16 << 20

// Event is one dispatched event. Name is "" when the frame had no "event:"
// line; Data is the "data:" lines joined by "\n".
type Event struct {
	Name string
	Data string
}

// Reader reads events from a stream.
type Reader struct {
	r *bufio.Reader
}

// NewReader reads events from r.
func NewReader(r io.Reader) *Reader {
	return &Reader{r: bufio.NewReaderSize(r, 64<<10)}
}

// Next returns the next event with data. At the end of the stream it
// returns io.EOF if the stream ended between events, and
// io.ErrUnexpectedEOF if it stopped in the middle of one, whose partial
// content is discarded as the format requires. Other errors are the
// underlying reader's.
func (r *Reader) Next() (Event, error) {
	var (
		ev      Event
		data    bytes.Buffer
		hasData bool
		partial bool // some line of the current frame has been read
	)
	for {
		line, err := r.line()
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
			ev, partial = Event{}, false
			continue
		}
		if line[0] == ':' {
			continue
		}
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

// line returns one line without its terminator. A last line without a
// terminator is returned with io.EOF.
func (r *Reader) line() ([]byte, error) {
	var buf []byte
	for {
		chunk, err := r.r.ReadSlice('\n')
		buf = append(buf, chunk...)
		if len(buf) > MaxLine {
			return nil, fmt.Errorf("sse: line longer than %d bytes", MaxLine)
		}
		if err == nil {
			buf = bytes.TrimSuffix(buf[:len(buf)-1], []byte("\r"))
			return buf, nil
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimSuffix(buf, []byte("\r")), err
	}
}
