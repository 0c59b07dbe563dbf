// Package ledger is Kora's record of what happened and the reports over
// it: the inference ledger (one row per model call) and the tool-call
// audit, kept in a database behind the Store interface (store.go).
// Embedded SQLite in the state directory is the default; PostgreSQL serves
// several hosts on several machines. Both run the same SQL (sql.go) and
// differ only by a dialect (dialect.go).
//
// Earlier versions of Kora kept the two streams as JSONL files under the
// state directory, inferences.jsonl and tool_calls.jsonl. Open imports
// them once (import.go) and never changes them. The JSONL writer below
// (Ledger, OpenJSONL) remains only until its last users move to Store.
// Its rules, for as long as it is used:
//
//   - An append is one write(2) of a whole line to a file opened O_APPEND,
//     made under an exclusive flock(2) and followed by fsync, so a record
//     the ledger acknowledged survives a crash, and several Kora processes
//     never tear or interleave each other's lines.
//   - A process killed mid-write can still leave a line without its
//     newline. The next append notices and terminates that fragment first,
//     so a torn line never swallows a good record.
//   - Reads (and the import) take a shared lock and never fail because of
//     content: a torn last line or a corrupt line anywhere is skipped,
//     logged at WARN and counted.
package ledger

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/hashicorp/go-hclog"
)

// File names of the two streams inside the state directory.
const (
	InferencesFile = "inferences.jsonl"
	ToolCallsFile  = "tool_calls.jsonl"
)

// Inference is one model call as Kora saw it through post_llm_call.
type Inference struct {
	Time         time.Time `json:"time"`
	SessionID    string    `json:"session_id,omitempty"`
	Iteration    int       `json:"iteration"`
	Model        string    `json:"model"`
	Route        string    `json:"route"`
	InputTokens  int       `json:"input_tokens"`
	OutputTokens int       `json:"output_tokens"`
	// CostUSD comes from the price table in force when the call was
	// recorded, so later price changes do not rewrite history.
	CostUSD float64 `json:"cost_usd"`
	// Unpriced marks a model the price table did not cover; its cost is 0.
	Unpriced   bool    `json:"unpriced,omitempty"`
	Escalated  bool    `json:"escalated,omitempty"`
	Reason     string  `json:"reason,omitempty"`
	StopReason string  `json:"stop_reason,omitempty"`
	DurationMS float64 `json:"duration_ms"`
	Error      string  `json:"error,omitempty"`
}

// ToolCall is one audited tool call as Kora saw it through post_tool_call.
type ToolCall struct {
	Time      time.Time `json:"time"`
	SessionID string    `json:"session_id,omitempty"`
	CallID    string    `json:"call_id,omitempty"`
	Name      string    `json:"name"`
	// Status is the host's status: ok, error, blocked or provided_by:<plugin>.
	Status string `json:"status"`
	// AnsweredBy is who produced the result: "native", a plugin name, or
	// "blocked".
	AnsweredBy string          `json:"answered_by"`
	IsError    bool            `json:"is_error,omitempty"`
	Error      string          `json:"error,omitempty"`
	Arguments  json.RawMessage `json:"arguments,omitempty"`
	DurationMS float64         `json:"duration_ms"`
}

// ReadStats says how much of a stream could not be used.
type ReadStats struct {
	Lines   int // complete records returned
	Skipped int // corrupt or torn lines left out
}

// Ledger is the pair of streams under one state directory. It is safe for
// concurrent use, and several processes may open the same directory.
type Ledger struct {
	dir string
	log hclog.Logger
	// Now stamps records that arrive without a time; tests replace it.
	Now func() time.Time

	inferences *stream
	toolCalls  *stream
}

// OpenJSONL prepares dir (creating it, 0700) for appends and reads. The files
// themselves are created on first append.
func OpenJSONL(dir string, log hclog.Logger) (*Ledger, error) {
	if log == nil {
		log = hclog.NewNullLogger()
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("kora: ledger: state directory %s: %w", dir, err)
	}
	return &Ledger{
		dir:        dir,
		log:        log,
		Now:        time.Now,
		inferences: &stream{path: filepath.Join(dir, InferencesFile), log: log},
		toolCalls:  &stream{path: filepath.Join(dir, ToolCallsFile), log: log},
	}, nil
}

// Dir returns the state directory.
func (l *Ledger) Dir() string { return l.dir }

// AppendInference durably records one model call.
func (l *Ledger) AppendInference(rec Inference) error {
	if rec.Time.IsZero() {
		rec.Time = l.stamp()
	}
	return l.inferences.append(rec)
}

// AppendToolCall durably records one tool call.
func (l *Ledger) AppendToolCall(rec ToolCall) error {
	if rec.Time.IsZero() {
		rec.Time = l.stamp()
	}
	return l.toolCalls.append(rec)
}

// stamp is the time of a record: UTC to the millisecond, finer than any
// question asked of the ledger and shorter to read.
func (l *Ledger) stamp() time.Time {
	return l.Now().UTC().Truncate(time.Millisecond)
}

// Inferences returns every readable inference record in file order.
func (l *Ledger) Inferences() ([]Inference, ReadStats, error) {
	return readAll[Inference](l.inferences)
}

// ToolCalls returns every readable tool-call record in file order.
func (l *Ledger) ToolCalls() ([]ToolCall, ReadStats, error) {
	return readAll[ToolCall](l.toolCalls)
}

func readAll[T any](s *stream) ([]T, ReadStats, error) {
	var out []T
	st, err := s.read(func(line []byte) error {
		var v T
		if err := json.Unmarshal(line, &v); err != nil {
			return err
		}
		out = append(out, v)
		return nil
	})
	return out, st, err
}

// stream is one JSONL file.
type stream struct {
	path string
	log  hclog.Logger
}
