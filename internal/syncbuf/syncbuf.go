// Package syncbuf is a buffer that several goroutines may write to while
// another reads it: the destination tests give loggers and child
// processes' output, to inspect after (or while) they write.
package syncbuf

import (
	"bytes"
	"sync"
)

// Buffer collects bytes written concurrently. The zero value is empty and
// ready to use.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
