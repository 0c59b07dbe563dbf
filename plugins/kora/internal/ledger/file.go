package ledger

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// append writes rec as one line. The file is opened for every record rather
// than kept open: each open is its own open file description, so flock
// excludes the goroutines of this process as well as other processes, and a
// file an operator moved aside is recreated instead of written through a
// stale descriptor. The fsync dominates the cost either way.
func (s *stream) append(rec any) error {
	line, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("kora: ledger: encode record for %s: %w", filepath.Base(s.path), err)
	}
	line = append(line, '\n')

	f, err := os.OpenFile(s.path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("kora: ledger: open %s: %w", s.path, err)
	}
	defer f.Close()
	if err := lockFile(f, true); err != nil {
		return fmt.Errorf("kora: ledger: lock %s: %w", s.path, err)
	}
	defer unlockFile(f) // closing the file would release it too

	torn, err := endsTorn(f)
	if err != nil {
		return fmt.Errorf("kora: ledger: inspect %s: %w", s.path, err)
	}
	if torn {
		// Terminate the fragment a crashed writer left, so it stays one
		// corrupt line instead of corrupting this record too.
		line = append([]byte{'\n'}, line...)
	}
	if _, err := f.Write(line); err != nil {
		return fmt.Errorf("kora: ledger: append to %s: %w", s.path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("kora: ledger: fsync %s: %w", s.path, err)
	}
	return nil
}

// endsTorn reports whether the file's last byte is not a newline.
func endsTorn(f *os.File) (bool, error) {
	fi, err := f.Stat()
	if err != nil {
		return false, err
	}
	if fi.Size() == 0 {
		return false, nil
	}
	var last [1]byte
	if _, err := f.ReadAt(last[:], fi.Size()-1); err != nil {
		return false, err
	}
	return last[0] != '\n', nil
}

// read calls decode for each line in file order and skips (with a warning)
// the lines it rejects and a torn last line. A missing file is an empty
// stream. Only failing to open or read the file is an error.
func (s *stream) read(decode func(line []byte) error) (ReadStats, error) {
	var st ReadStats
	f, err := os.Open(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, fmt.Errorf("kora: ledger: open %s: %w", s.path, err)
	}
	defer f.Close()
	// A shared lock waits out an append in progress, so a line without its
	// newline seen here is really torn, not merely unfinished.
	if err := lockFile(f, false); err != nil {
		return st, fmt.Errorf("kora: ledger: lock %s: %w", s.path, err)
	}
	defer unlockFile(f) // closing the file would release it too

	r := bufio.NewReaderSize(f, 64<<10)
	var offset int64
	for n := 1; ; n++ {
		raw, err := r.ReadBytes('\n')
		if len(raw) > 0 {
			complete := raw[len(raw)-1] == '\n'
			line := bytes.TrimSpace(raw)
			if len(line) > 0 {
				if derr := decode(line); derr != nil {
					st.Skipped++
					s.warn(offset, n, complete, derr)
				} else {
					// A last line that lost only its newline is still a
					// whole record: a cut JSON object never parses.
					st.Lines++
				}
			}
			offset += int64(len(raw))
		}
		if errors.Is(err, io.EOF) {
			return st, nil
		}
		if err != nil {
			return st, fmt.Errorf("kora: ledger: read %s: %w", s.path, err)
		}
	}
}

// warned remembers bad lines already reported, by file and offset, because
// every tool call rereads the ledger and one bad line should not flood the
// log.
var warned sync.Map

func (s *stream) warn(offset int64, n int, complete bool, err error) {
	what := "corrupt line"
	if !complete {
		what = "torn last line (a writer died mid-append)"
	}
	args := []any{"file", s.path, "line", n, "error", err}
	if _, seen := warned.LoadOrStore(fmt.Sprintf("%s@%d", s.path, offset), struct{}{}); seen {
		s.log.Debug("ledger: skipping "+what, args...)
		return
	}
	s.log.Warn("ledger: skipping "+what, args...)
}
