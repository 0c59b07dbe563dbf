package ledger

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// importBatch is how many JSONL lines one import transaction covers.
const importBatch = 1000

// afterImportBatch, when set (by tests), runs after each committed import
// batch, so a test process can kill itself half-way through an import.
var afterImportBatch func(stream string, batch int)

// errImportRace means another importer advanced the same file first.
var errImportRace = errors.New("another importer advanced this file")

func (s *sqlStore) ImportJSONL(ctx context.Context, dir string) (ImportStats, error) {
	const op = "import jsonl"
	var st ImportStats
	if s.closed.Load() {
		return st, &Error{Kind: KindUnavailable, Backend: s.d.name(), Op: op, Err: errClosed}
	}
	n, skipped, err := importStream(ctx, s, "inferences", filepath.Join(dir, InferencesFile),
		func(line []byte, b *importRows) error {
			var r Inference
			if err := json.Unmarshal(line, &r); err != nil {
				return err
			}
			b.inferences = append(b.inferences, r)
			b.days.addInference(r)
			return nil
		})
	st.Inferences, st.Skipped = n, skipped
	if err != nil {
		return st, s.fail(op, err)
	}
	n, skipped, err = importStream(ctx, s, "tool_calls", filepath.Join(dir, ToolCallsFile),
		func(line []byte, b *importRows) error {
			var r ToolCall
			if err := json.Unmarshal(line, &r); err != nil {
				return err
			}
			b.toolCalls = append(b.toolCalls, r)
			b.days.addToolCall(r)
			return nil
		})
	st.ToolCalls, st.Skipped = n, st.Skipped+skipped
	return st, s.fail(op, err)
}

// importRows is one batch of decoded lines.
type importRows struct {
	inferences []Inference
	toolCalls  []ToolCall
	days       dayTotals
	lines      int // records decoded
	skipped    int
}

// importStream imports the lines of one JSONL file after the offset its
// jsonl_imports row records, a batch per transaction. The file is only
// read, under the shared flock that kept earlier versions' appends whole.
func importStream(ctx context.Context, s *sqlStore, stream, path string,
	decode func(line []byte, b *importRows) error) (imported, skipped int, err error) {
	f, err := os.OpenFile(path, os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, 0, nil
	}
	if err != nil {
		return 0, 0, fmt.Errorf("open %s: %w", path, err)
	}
	defer f.Close()
	if err := lockFile(f, false); err != nil {
		return 0, 0, fmt.Errorf("lock %s: %w", path, err)
	}
	defer unlockFile(f)
	fi, err := f.Stat()
	if err != nil {
		return 0, 0, fmt.Errorf("stat %s: %w", path, err)
	}
	size := fi.Size()
	first, err := bufio.NewReader(f).ReadBytes('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return 0, 0, fmt.Errorf("read %s: %w", path, err)
	}
	first = bytes.TrimSpace(first)
	if len(first) == 0 && size == int64(len(first)) {
		return 0, 0, nil
	}
	sum := sha256.Sum256(first)
	source := stream + ":" + hex.EncodeToString(sum[:])

	for batch := 1; ; batch++ {
		offset, err := s.importOffset(ctx, source)
		if err != nil {
			return imported, skipped, err
		}
		if offset > size {
			s.o.Log.Warn("ledger: JSONL file is shorter than the part already imported; leaving it (was it replaced?)",
				"file", path, "size", size, "imported_bytes", offset)
			return imported, skipped, nil
		}
		if offset == size {
			return imported, skipped, nil
		}
		rows, next, err := readBatch(f, path, offset, decode, s.o.Log)
		if err != nil {
			return imported, skipped, err
		}
		err = s.commitImport(ctx, source, path, offset, next, rows)
		if errors.Is(err, errImportRace) {
			continue
		}
		if err != nil {
			return imported, skipped, err
		}
		imported += rows.lines
		skipped += rows.skipped
		if afterImportBatch != nil {
			afterImportBatch(stream, batch)
		}
	}
}

func (s *sqlStore) importOffset(ctx context.Context, source string) (int64, error) {
	ctx, cancel := s.bound(ctx)
	defer cancel()
	var offset, records, skipped int64
	err := s.db.QueryRowContext(ctx, s.q.importGet, source).Scan(&offset, &records, &skipped)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return offset, err
}

// commitImport writes one batch and moves the file's offset from old to
// next in one transaction. The offset moves only if it still is old, so
// of two importers reading the same lines only one commits them.
func (s *sqlStore) commitImport(ctx context.Context, source, path string, old, next int64, rows *importRows) error {
	ctx, cancel := s.bound(ctx)
	defer cancel()
	return s.inTx(ctx, func(tx *sql.Tx) error {
		if err := s.d.exclude(ctx, tx); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, s.q.importCreate, source, path); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, s.q.importAdvance, path, next, rows.lines, rows.skipped, source, old)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n != 1 {
			return errImportRace
		}
		for _, r := range rows.inferences {
			if err := s.insertInference(ctx, tx, r); err != nil {
				return err
			}
		}
		for _, r := range rows.toolCalls {
			if err := s.insertToolCall(ctx, tx, r); err != nil {
				return err
			}
		}
		return s.upsertDays(ctx, tx, &rows.days)
	})
}

// readBatch decodes up to importBatch lines from offset, returning the
// offset after the last line it consumed. As the JSONL reader of earlier
// versions did, a corrupt line or a torn last line is skipped, counted and
// logged at WARN; a last line that lost only its newline but parses is a
// whole record.
func readBatch(f *os.File, path string, offset int64, decode func([]byte, *importRows) error, log Logger) (*importRows, int64, error) {
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return nil, 0, fmt.Errorf("seek %s: %w", path, err)
	}
	r := bufio.NewReaderSize(f, 64<<10)
	rows := &importRows{}
	for n := 0; n < importBatch; {
		raw, size, err := readLine(r)
		if errors.Is(err, errLineTooLong) {
			n++
			rows.skipped++
			log.Warn("ledger: import skipping a line longer than any record", "file", path, "offset", offset, "bytes", size)
			offset += size
			continue
		}
		if len(raw) > 0 {
			complete := raw[len(raw)-1] == '\n'
			line := bytes.TrimSpace(raw)
			if len(line) > 0 {
				n++
				if derr := decode(line, rows); derr != nil {
					rows.skipped++
					what := "corrupt line"
					if !complete {
						what = "torn last line (a writer died mid-append)"
					}
					log.Warn("ledger: import skipping "+what, "file", path, "offset", offset, "error", derr)
				} else {
					rows.lines++
				}
			}
			offset += int64(len(raw))
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, 0, fmt.Errorf("read %s: %w", path, err)
		}
	}
	return rows, offset, nil
}

// maxImportLine bounds the memory one JSONL line may take; no record Kora
// wrote comes near it, so a longer line is damage.
var maxImportLine = 16 << 20

var errLineTooLong = errors.New("line too long")

// readLine is ReadBytes('\n') that stops keeping a line once it passes
// maxImportLine: it then consumes the rest of the line and returns
// errLineTooLong. size is the line's length in the file either way.
func readLine(r *bufio.Reader) (line []byte, size int64, err error) {
	long := false
	for {
		frag, err := r.ReadSlice('\n')
		size += int64(len(frag))
		if !long && len(line)+len(frag) > maxImportLine {
			long, line = true, nil
		}
		if !long {
			line = append(line, frag...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if long && (err == nil || errors.Is(err, io.EOF)) {
			return nil, size, errLineTooLong
		}
		return line, size, err
	}
}
