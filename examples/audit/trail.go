package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/plugins/sdk"
)

var errNotConfigured = errors.New("audit: not configured yet")

// config is the plugin's [plugins.entries.audit.config] table.
type config struct {
	// Keep is how many calls the trail holds in memory; the oldest go
	// first.
	Keep int `json:"keep"`
	// File, when set, receives every call as one JSON line, appended.
	File string `json:"file"`
}

const (
	defaultKeep = 200
	maxKeep     = 100000
)

func parseConfig(raw json.RawMessage) (config, error) {
	c := config{Keep: defaultKeep}
	if err := sdk.DecodeConfig(raw, &c); err != nil {
		return config{}, err
	}
	if c.Keep < 1 || c.Keep > maxKeep {
		return config{}, fmt.Errorf("keep: %d is outside 1..%d", c.Keep, maxKeep)
	}
	return c, nil
}

// entry is one tool call in the trail.
type entry struct {
	Time       time.Time        `json:"time"`
	Session    string           `json:"session"`
	Call       string           `json:"call"`
	Tool       string           `json:"tool"`
	Status     hooks.CallStatus `json:"status"`
	IsError    bool             `json:"is_error,omitempty"`
	DurationMS float64          `json:"duration_ms"`
}

func entryOf(ev hooks.ToolCallOutcome) entry {
	return entry{
		Time: time.Now().UTC(), Session: ev.SessionID, Call: ev.CallID, Tool: ev.Name,
		Status: ev.Status, IsError: ev.Result.IsError, DurationMS: float64(ev.Duration.Microseconds()) / 1000,
	}
}

// trail is a bounded ring of the latest entries, and the file they are
// appended to, if any.
type trail struct {
	mu   sync.Mutex
	ring []entry // up to keep entries; once full, next is the oldest
	next int
	keep int
	file *os.File
}

func openTrail(c config) (*trail, error) {
	t := &trail{keep: c.Keep}
	if c.File != "" {
		f, err := os.OpenFile(c.File, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			return nil, fmt.Errorf("file: %w", err)
		}
		t.file = f
	}
	return t, nil
}

func (t *trail) add(e entry) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.ring) < t.keep {
		t.ring = append(t.ring, e)
	} else {
		t.ring[t.next] = e
	}
	t.next = (t.next + 1) % t.keep
	if t.file == nil {
		return nil
	}
	line, err := json.Marshal(e)
	if err != nil {
		return err
	}
	_, err = t.file.Write(append(line, '\n'))
	return err
}

// recent returns up to limit entries, newest first, of tool (any tool when
// empty).
func (t *trail) recent(limit int, tool string) []entry {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := []entry{}
	for n := 1; n <= len(t.ring) && len(out) < limit; n++ {
		e := t.ring[(t.next-n+len(t.ring))%len(t.ring)]
		if tool == "" || e.Tool == tool {
			out = append(out, e)
		}
	}
	return out
}

func (t *trail) close() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.file != nil {
		_ = t.file.Close()
		t.file = nil
	}
}
