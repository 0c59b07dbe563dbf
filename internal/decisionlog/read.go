package decisionlog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// maxLine bounds one line of a log being read: a record holds one hook
// call's payload, which a model request can make large.
const maxLine = 256 << 20

// LineError is a line of a log that is not an entry.
type LineError struct {
	Line int
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }
func (e *LineError) Unwrap() error { return e.Err }

// Read calls fn with each entry of the log r holds, and its line number,
// in order; dropped-count lines and blank lines are skipped. A line that
// is not an entry ends the walk with a *LineError; so does an error fn
// returns.
func Read(r io.Reader, fn func(line int, e Entry) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	n := 0
	for sc.Scan() {
		n++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var e Entry
		if err := json.Unmarshal(b, &e); err != nil {
			return &LineError{Line: n, Err: fmt.Errorf("not a decision log entry: %v", err)}
		}
		if e.Hook == "" {
			if e.Dropped > 0 {
				continue
			}
			return &LineError{Line: n, Err: fmt.Errorf("not a decision log entry: no hook")}
		}
		if !e.Hook.Known() {
			return &LineError{Line: n, Err: fmt.Errorf("unknown hook %q", e.Hook)}
		}
		if err := fn(n, e); err != nil {
			return &LineError{Line: n, Err: err}
		}
	}
	if err := sc.Err(); err != nil {
		return &LineError{Line: n + 1, Err: err}
	}
	return nil
}
