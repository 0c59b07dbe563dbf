// Package ledger is Kora's record of what happened and the reports over
// it: the inference ledger (one row per model call) and the tool-call
// audit, kept in a database behind the Store interface (store.go).
// Embedded SQLite in the state directory is the default; PostgreSQL serves
// several hosts on several machines. Both run the same SQL (sql.go) and
// differ only by a dialect (dialect.go).
//
// Earlier versions of Kora kept the two streams as JSONL files under the
// state directory, inferences.jsonl and tool_calls.jsonl, one JSON object
// (Inference, ToolCall) per line. Open imports them once (import.go) and
// never changes them; the import takes a shared flock(2), as those
// versions' readers did, and skips a torn or corrupt line with a warning
// rather than failing. `kora export` writes the same lines back out.
package ledger

import (
	"encoding/json"
	"time"
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
