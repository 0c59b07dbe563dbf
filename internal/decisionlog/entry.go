// Package decisionlog writes and reads hookhost's decision log: one JSON
// line per plugin hook call, with what the plugin was sent, what it
// answered, how long it took and how the call ended, secrets redacted.
//
// A Log takes records on the hot path (Record never blocks: it queues
// the line, or drops and counts it when the writer is behind) and writes
// them on a goroutine of its own, rotating the file by size. Read walks a
// log back, for `hookhost replay`.
package decisionlog

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hookhost/hookhost/hookbus"
	"github.com/hookhost/hookhost/hooks"
)

// Outcomes a call may have besides a failure kind's name (error, panic,
// timeout, malformed, unavailable, cancelled, refused).
const (
	OutcomeAnswer    = "answer"    // the plugin answered something
	OutcomeNil       = "nil"       // the plugin answered nothing: no opinion
	OutcomeDelivered = "delivered" // an observer hook took the event
)

// Entry is one line of the log. A line with Dropped set and no Hook says
// how many records were dropped since the last line, the writer being
// behind.
type Entry struct {
	Time      time.Time       `json:"time"`
	RequestID string          `json:"request_id,omitempty"`
	SessionID string          `json:"session_id,omitempty"`
	Plugin    string          `json:"plugin,omitempty"`
	Hook      hooks.Name      `json:"hook,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	Answer    json.RawMessage `json:"answer,omitempty"`
	LatencyMS float64         `json:"latency_ms"`
	Outcome   string          `json:"outcome,omitempty"`
	Error     string          `json:"error,omitempty"`
	Dropped   uint64          `json:"dropped,omitempty"`
}

// FromCall makes the entry of one call, secrets redacted by r.
func FromCall(c hookbus.CallRecord, r *Redactor) Entry {
	e := Entry{
		Time:      c.Start.UTC(),
		RequestID: c.RequestID,
		Plugin:    c.Plugin,
		Hook:      c.Hook,
		LatencyMS: float64(c.Latency.Microseconds()) / 1000,
		Input:     r.JSON(c.Payload),
	}
	if c.Answer != nil {
		e.Answer = r.JSON(c.Answer)
	}
	e.SessionID = sessionOf(c.Payload)
	switch {
	case c.Kind != hookbus.KindNone:
		e.Outcome = c.Kind.String()
		if c.Err != nil {
			e.Error = r.String(c.Err.Error())
		}
	case c.Hook.Observer():
		e.Outcome = OutcomeDelivered
	case c.Answer == nil:
		e.Outcome = OutcomeNil
	default:
		e.Outcome = OutcomeAnswer
	}
	return e
}

// Line is e as one line of the log, without the newline.
func (e Entry) Line() []byte {
	b, err := json.Marshal(e)
	if err != nil {
		// Input and Answer are valid JSON by construction; nothing else
		// can fail.
		panic(fmt.Sprintf("decisionlog: marshalling an entry: %v", err))
	}
	return b
}

// Summary is e in one readable line, for -v: who was asked, what came of
// it, and the start of what it was sent.
func (e Entry) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s → %s", e.Plugin, e.Hook, e.Outcome)
	if len(e.Answer) > 0 {
		fmt.Fprintf(&b, " %s", abbrev(string(e.Answer), 200))
	}
	if e.Error != "" {
		fmt.Fprintf(&b, " (%s)", abbrev(e.Error, 200))
	}
	fmt.Fprintf(&b, " in %.2fms", e.LatencyMS)
	if e.RequestID != "" {
		fmt.Fprintf(&b, " [request %s]", e.RequestID)
	}
	fmt.Fprintf(&b, " input %s", abbrev(string(e.Input), 160))
	return b.String()
}

func abbrev(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// sessionOf is the session id every hook payload carries, read off the
// payload itself rather than by decoding its JSON again.
func sessionOf(payload any) string {
	v := reflect.Indirect(reflect.ValueOf(payload))
	if v.Kind() != reflect.Struct {
		return ""
	}
	if f := v.FieldByName("SessionID"); f.Kind() == reflect.String {
		return f.String()
	}
	return ""
}
