package main

import (
	"bufio"
	"errors"
	"io"
)

// maxLineBytes is the longest REPL line accepted, newline excluded. Longer
// text belongs in a file that the model reads with read_file.
const maxLineBytes = 1 << 20

// readLine is one line of input: its text, or, when the line was over the
// limit, its length in tooLong and no text.
type readLine struct {
	text    string
	tooLong int64
}

// lineReader reads lines of at most max bytes. An over-long line is
// consumed and dropped as it arrives, so memory stays bounded by max and the
// reader's buffer however long the line is.
type lineReader struct {
	r   *bufio.Reader
	max int
	buf []byte
}

func newLineReader(r io.Reader, max int) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

// next returns the next line without its line ending ("\n" or "\r\n"). A
// final line without a newline is returned too; after it, next returns
// io.EOF.
func (lr *lineReader) next() (readLine, error) {
	lr.buf = lr.buf[:0]
	var n int64
	var prev byte // last byte of the previous chunk, for a "\r" cut off from its "\n"
	for {
		chunk, err := lr.r.ReadSlice('\n')
		if n += int64(len(chunk)); n <= int64(lr.max)+2 { // room for "\r\n"
			lr.buf = append(lr.buf, chunk...)
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			if len(chunk) > 0 {
				prev = chunk[len(chunk)-1]
			}
			continue
		case err == io.EOF && n == 0:
			return readLine{}, io.EOF
		case err != nil && err != io.EOF:
			return readLine{}, err
		}
		// A whole line, ended by a newline or by the end of input.
		length := n - lineEnding(chunk, prev)
		if length > int64(lr.max) {
			return readLine{tooLong: length}, nil
		}
		text := string(lr.buf[:length])
		if cap(lr.buf) > 64<<10 {
			lr.buf = nil // do not keep a megabyte alive for the short lines that follow
		}
		return readLine{text: text}, nil
	}
}

// lineEnding is the length of the "\n", "\r\n" or trailing "\r" that ends
// a line whose last chunk is last; prev is the byte before that chunk.
func lineEnding(last []byte, prev byte) int64 {
	var e int64
	if len(last) > 0 && last[len(last)-1] == '\n' {
		e, last = 1, last[:len(last)-1]
	}
	before := prev
	if len(last) > 0 {
		before = last[len(last)-1]
	}
	if before == '\r' {
		e++
	}
	return e
}
