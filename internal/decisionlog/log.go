package decisionlog

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
)

// Defaults for Options left zero.
const (
	DefaultMaxSize = 64 << 20
	DefaultQueue   = 4096
	// MaxQueuedBytes bounds the bytes of the lines waiting to be written,
	// whatever their number: one conversation's payloads can be large.
	MaxQueuedBytes = 64 << 20
)

// Options say where a Log writes and how it is bounded.
type Options struct {
	File    string // the log's path
	MaxSize int64  // rotate when the file would grow past this; 0: DefaultMaxSize
	Keep    int    // rotated files kept, File.1 (newest) to File.Keep
	Queue   int    // lines waiting to be written at most; 0: DefaultQueue
	Logger  hclog.Logger
}

// Log is an open decision log. Record may be called from any number of
// goroutines; Close once, when no more records come.
type Log struct {
	opts Options
	log  hclog.Logger

	mu     sync.RWMutex // orders Record against Close
	closed bool
	queue  chan []byte
	queued atomic.Int64 // bytes in queue

	dropped  atomic.Uint64 // since the last dropped line was written
	total    atomic.Uint64 // since Open
	warnOnce sync.Once

	f    *os.File
	w    *bufio.Writer
	size int64
	done chan struct{}
	err  error // the first write error, reported by Close
}

// Open opens (appending to) or creates the log file and starts its
// writer.
func Open(opts Options) (*Log, error) {
	l, err := newLog(opts)
	if err != nil {
		return nil, err
	}
	go l.run()
	return l, nil
}

// newLog is Open without starting the writer.
func newLog(opts Options) (*Log, error) {
	if opts.MaxSize <= 0 {
		opts.MaxSize = DefaultMaxSize
	}
	if opts.Queue <= 0 {
		opts.Queue = DefaultQueue
	}
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	l := &Log{opts: opts, log: opts.Logger, queue: make(chan []byte, opts.Queue), done: make(chan struct{})}
	if err := l.open(); err != nil {
		return nil, err
	}
	return l, nil
}

func (l *Log) open() error {
	if err := os.MkdirAll(filepath.Dir(l.opts.File), 0o755); err != nil {
		return fmt.Errorf("decision log: %w (check trace.file)", err)
	}
	f, err := os.OpenFile(l.opts.File, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("decision log: %w (check trace.file)", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("decision log: %w", err)
	}
	l.f, l.w, l.size = f, bufio.NewWriterSize(f, 64<<10), st.Size()
	return nil
}

// Record queues e's line. It never blocks: when the queue is full, or
// holds MaxQueuedBytes already, the line is dropped and counted; the next
// line written says how many were.
func (l *Log) Record(e Entry) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.closed || len(l.queue) == cap(l.queue) {
		l.drop()
		return
	}
	line := append(e.Line(), '\n')
	if l.queued.Add(int64(len(line))) > MaxQueuedBytes {
		l.queued.Add(-int64(len(line)))
		l.drop()
		return
	}
	select {
	case l.queue <- line:
	default:
		l.queued.Add(-int64(len(line)))
		l.drop()
	}
}

func (l *Log) drop() {
	l.dropped.Add(1)
	l.total.Add(1)
	l.warnOnce.Do(func() {
		l.log.Warn("decision log is behind; dropping records rather than holding requests (the log says how many)", "file", l.opts.File)
	})
}

// Dropped returns how many records were dropped since Open.
func (l *Log) Dropped() uint64 { return l.total.Load() }

func (l *Log) run() {
	defer close(l.done)
	for line := range l.queue {
		l.queued.Add(-int64(len(line)))
		if n := l.dropped.Swap(0); n > 0 {
			l.write(append(Entry{Time: time.Now().UTC(), Dropped: n}.Line(), '\n'))
		}
		l.write(line)
		if len(l.queue) == 0 {
			l.flush()
		}
	}
	if n := l.dropped.Swap(0); n > 0 {
		l.write(append(Entry{Time: time.Now().UTC(), Dropped: n}.Line(), '\n'))
	}
	l.flush()
}

func (l *Log) write(line []byte) {
	if l.w == nil {
		return // a rotation failed: nothing more can be written
	}
	if l.size > 0 && l.size+int64(len(line)) > l.opts.MaxSize {
		l.rotate()
		if l.w == nil {
			return
		}
	}
	n, err := l.w.Write(line)
	l.size += int64(n)
	l.fail(err)
}

func (l *Log) flush() {
	if l.w != nil {
		l.fail(l.w.Flush())
	}
}

func (l *Log) fail(err error) {
	if err != nil && l.err == nil {
		l.err = fmt.Errorf("decision log %s: %w", l.opts.File, err)
		l.log.Error("writing the decision log failed", "file", l.opts.File, "error", err)
	}
}

// rotate moves File to File.1, File.1 to File.2 and so on, keeping
// opts.Keep rotated files, and starts File anew.
func (l *Log) rotate() {
	l.fail(l.w.Flush())
	l.fail(l.f.Close())
	l.f, l.w = nil, nil
	name := l.opts.File
	if l.opts.Keep == 0 {
		l.fail(os.Remove(name))
	} else {
		os.Remove(fmt.Sprintf("%s.%d", name, l.opts.Keep))
		for i := l.opts.Keep - 1; i >= 1; i-- {
			if err := os.Rename(fmt.Sprintf("%s.%d", name, i), fmt.Sprintf("%s.%d", name, i+1)); err != nil && !os.IsNotExist(err) {
				l.fail(err)
			}
		}
		l.fail(os.Rename(name, name+".1"))
	}
	if err := l.open(); err != nil {
		l.fail(err)
	}
}

// Close writes what is queued, closes the file and returns the first
// write error, if any. Records after Close are dropped.
func (l *Log) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		<-l.done
		return l.err
	}
	l.closed = true
	close(l.queue)
	l.mu.Unlock()
	<-l.done
	if l.f != nil {
		l.fail(l.f.Close())
	}
	if n := l.total.Load(); n > 0 {
		l.log.Warn("decision log dropped records while the writer was behind", "file", l.opts.File, "dropped", n)
	}
	return l.err
}
