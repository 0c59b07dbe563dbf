package decisionlog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hookhost/hookhost/hookbus"
	"github.com/hookhost/hookhost/hooks"
)

var toolCall = hooks.ToolCallRequest{SessionID: "s1", CallID: "c1", Name: "shell", Arguments: json.RawMessage(`{"cmd":"ls"}`)}

func TestFromCallOutcomes(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	r := NewRedactor()
	tests := []struct {
		name    string
		rec     hookbus.CallRecord
		outcome string
		answer  string
		errText string
	}{
		{"answer", hookbus.CallRecord{Hook: hooks.PreToolCall, Answer: &hooks.PreToolCallDecision{Block: &hooks.Block{Message: "no"}}}, "answer", `{"block":{"message":"no"}}`, ""},
		{"nil", hookbus.CallRecord{Hook: hooks.PreToolCall}, "nil", "", ""},
		{"observer", hookbus.CallRecord{Hook: hooks.PostToolCall}, "delivered", "", ""},
		{"timeout", hookbus.CallRecord{Hook: hooks.PreToolCall, Kind: hookbus.KindTimeout, Err: errors.New("context deadline exceeded")}, "timeout", "", "context deadline exceeded"},
		{"malformed keeps the answer", hookbus.CallRecord{Hook: hooks.TransformLLMOutput, Kind: hookbus.KindMalformed, Answer: &hooks.TextReplacement{Text: "x"}, Err: errors.New("too big")}, "malformed", `{"text":"x"}`, "too big"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := tt.rec
			c.Start, c.Latency, c.RequestID, c.Plugin, c.Payload = start, 1500*time.Microsecond, "req-1", "guard", toolCall
			e := FromCall(c, r)
			if e.Outcome != tt.outcome || string(e.Answer) != tt.answer || e.Error != tt.errText {
				t.Errorf("outcome %q answer %s error %q, want %q %s %q", e.Outcome, e.Answer, e.Error, tt.outcome, tt.answer, tt.errText)
			}
			if e.SessionID != "s1" || e.RequestID != "req-1" || e.Plugin != "guard" || e.LatencyMS != 1.5 || !e.Time.Equal(start) {
				t.Errorf("entry %+v", e)
			}
			if string(e.Input) != `{"session_id":"s1","call_id":"c1","name":"shell","arguments":{"cmd":"ls"}}` {
				t.Errorf("input %s", e.Input)
			}
			var back Entry
			if err := json.Unmarshal(e.Line(), &back); err != nil || back.Outcome != tt.outcome {
				t.Errorf("the line does not read back: %v %+v", err, back)
			}
		})
	}
}

func TestRedactorBlanksSecrets(t *testing.T) {
	r := NewRedactor("sk-live-known-key-123", "")
	in := map[string]any{
		"headers":   map[string]string{"Authorization": "Bearer abcdefghijkl", "X-Team": "infra"},
		"arguments": json.RawMessage(`{"password":"hunter22","api_key":"k-1234","path":"/tmp"}`),
		"quoted":    `call {"token":"t0ps3cret"} then`,
		"text":      "use sk-live-known-key-123 or sk-abcdefghijklmnopqrstuv, AKIAABCDEFGHIJKLMNOP, header bearer zzzzzzzzzzzz",
	}
	out := string(r.JSON(in))
	for _, secret := range []string{"abcdefghijkl", "hunter22", "k-1234", "t0ps3cret", "sk-live-known-key-123", "sk-abcdefghijklmnopqrstuv", "AKIAABCDEFGHIJKLMNOP", "zzzzzzzzzzzz"} {
		if strings.Contains(out, secret) {
			t.Errorf("%q is still in %s", secret, out)
		}
	}
	for _, kept := range []string{`"X-Team":"infra"`, `"path":"/tmp"`, "[redacted]"} {
		if !strings.Contains(out, kept) {
			t.Errorf("%q should be kept in %s", kept, out)
		}
	}
	if !json.Valid([]byte(out)) {
		t.Errorf("redacted JSON is not valid: %s", out)
	}
}

func readAll(t *testing.T, path string) []Entry {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []Entry
	if err := Read(f, func(_ int, e Entry) error { out = append(out, e); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

func entry(i int) Entry {
	return Entry{Time: time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC), RequestID: fmt.Sprintf("r%02d", i), Plugin: "guard", Hook: hooks.PreToolCall,
		Input: json.RawMessage(`{"session_id":"s","call_id":"c","name":"x","arguments":{}}`), Outcome: OutcomeNil}
}

func TestLogWritesRotatesAndKeeps(t *testing.T) {
	path := filepath.Join(t.TempDir(), "logs", "decisions.jsonl")
	lineLen := int64(len(entry(0).Line()) + 1)
	l, err := Open(Options{File: path, MaxSize: 4 * lineLen, Keep: 2})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 14 {
		l.Record(entry(i))
		if i%3 == 0 {
			// Let the writer catch up now and then, so nothing is dropped.
			for len(l.queue) > 0 {
				time.Sleep(time.Millisecond)
			}
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if l.Dropped() != 0 {
		t.Fatalf("dropped %d with a roomy queue", l.Dropped())
	}
	// 14 lines at 4 a file: 12 rotated out (3 files), 2 in the current
	// one; keep = 2 leaves the newest two rotated files.
	cur, one, two := readAll(t, path), readAll(t, path+".1"), readAll(t, path+".2")
	if len(cur) != 2 || len(one) != 4 || len(two) != 4 {
		t.Fatalf("lines: current %d, .1 %d, .2 %d; want 2, 4, 4", len(cur), len(one), len(two))
	}
	if cur[1].RequestID != "r13" || one[0].RequestID != "r08" || two[0].RequestID != "r04" {
		t.Errorf("order: current ends %s, .1 starts %s, .2 starts %s", cur[1].RequestID, one[0].RequestID, two[0].RequestID)
	}
	if _, err := os.Stat(path + ".3"); !os.IsNotExist(err) {
		t.Errorf("a third rotated file is kept: %v", err)
	}
	for _, p := range []string{path, path + ".1"} {
		if st, _ := os.Stat(p); st.Size() > 4*lineLen {
			t.Errorf("%s is %d bytes, over max_size %d", p, st.Size(), 4*lineLen)
		}
	}
}

func TestLogDropsAndCountsWhenBehind(t *testing.T) {
	path := filepath.Join(t.TempDir(), "d.jsonl")
	// The writer is not started yet: it is as far behind as can be, and
	// Record must still return at once.
	l, err := newLog(Options{File: path, Queue: 2})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		l.Record(entry(i))
	}
	if got := l.Dropped(); got != 3 {
		t.Fatalf("dropped %d, want the 3 records that found the queue of 2 full", got)
	}
	go l.run()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	got := readAll(t, path)
	if len(got) != 2 || got[0].RequestID != "r00" || got[1].RequestID != "r01" {
		t.Errorf("entries written %+v, want the two queued", got)
	}
	data, _ := os.ReadFile(path)
	if !bytes.Contains(data, []byte(`"dropped":3`)) {
		t.Errorf("the log does not say how many records were dropped:\n%s", data)
	}
	l.Record(entry(9))
	if l.Dropped() != 4 {
		t.Errorf("a record after Close is not counted as dropped: %d", l.Dropped())
	}
}

func TestReadNamesTheBadLine(t *testing.T) {
	good := string(entry(1).Line())
	for name, tc := range map[string]struct {
		text string
		line int
		msg  string
	}{
		"not json":     {good + "\n{oops\n", 2, "not a decision log entry"},
		"no hook":      {good + "\n\n" + `{"time":"2026-01-01T00:00:00Z"}` + "\n", 3, "no hook"},
		"unknown hook": {strings.Replace(good, "pre_tool_call", "pre_tool_kall", 1) + "\n", 1, `unknown hook "pre_tool_kall"`},
	} {
		t.Run(name, func(t *testing.T) {
			err := Read(strings.NewReader(tc.text), func(int, Entry) error { return nil })
			var le *LineError
			if !errors.As(err, &le) || le.Line != tc.line || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("err = %v, want line %d saying %q", err, tc.line, tc.msg)
			}
		})
	}
	// A dropped-count line is skipped.
	n := 0
	if err := Read(strings.NewReader(`{"time":"2026-01-01T00:00:00Z","latency_ms":0,"dropped":3}`+"\n"+good+"\n"), func(int, Entry) error { n++; return nil }); err != nil || n != 1 {
		t.Fatalf("read %d entries, err %v", n, err)
	}
}

// A tool hook's entry records where the call went, in its input, for
// every tool hook's payload type.
func TestFromCallKeepsTheToolCallsOrigin(t *testing.T) {
	r := NewRedactor()
	for _, c := range []hookbus.CallRecord{
		{Plugin: "guard", Hook: hooks.PreToolCall, Payload: hooks.ToolCallRequest{SessionID: "s", Name: "fs__read", Arguments: json.RawMessage(`{}`), Origin: hooks.OriginMCP("fs")}},
		{Plugin: "watch", Hook: hooks.PostToolCall, Payload: hooks.ToolCallOutcome{SessionID: "s", Name: "fs__read", Arguments: json.RawMessage(`{}`), Origin: hooks.OriginMCP("fs")}},
	} {
		e := FromCall(c, r)
		var in struct{ Origin string }
		if err := json.Unmarshal(e.Input, &in); err != nil || in.Origin != "mcp:fs" {
			t.Errorf("%s: input %s, want origin mcp:fs (%v)", c.Hook, e.Input, err)
		}
	}
}
