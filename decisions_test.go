package hookhost_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/hookhost/hookhost"
	"github.com/hookhost/hookhost/internal/decisionlog"
	"github.com/hookhost/hookhost/internal/syncbuf"
)

// [trace] file records every hook call of a real plugin process, keyed by
// the turn's request id, with the secrets the host holds blanked out; the
// Decisions logger shows the same calls.
func TestDecisionLogRecordsARealPluginsCalls(t *testing.T) {
	const inbound = "inbound-key-4242"
	path := filepath.Join(t.TempDir(), "decisions.jsonl")
	cfg := guardConfig(t, fmt.Sprintf("[server]\napi_key_env = \"INBOUND\"\n[trace]\nfile = %q\n", path))
	var shown syncbuf.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	h, err := hookhost.Open(ctx, cfg, hookhost.Options{
		Getenv:    env("INBOUND", inbound),
		Decisions: hclog.New(&hclog.LoggerOptions{Output: &shown, Level: hclog.Debug}),
	})
	if err != nil {
		t.Fatal(err)
	}
	s, err := h.NewSession(hookhost.SessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	turn, err := s.Send(context.Background(), "read the file "+inbound+".env")
	if err != nil {
		t.Fatal(err)
	}
	if len(turn.ToolCalls) == 0 || turn.ToolCalls[0].AnsweredBy != "guard" {
		t.Fatalf("the guard did not block the read: %+v", turn.ToolCalls)
	}
	if err := h.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte(inbound)) {
		t.Errorf("the inbound key is in the decision log:\n%s", data)
	}
	var block *decisionlog.Entry
	if err := decisionlog.Read(bytes.NewReader(data), func(_ int, e decisionlog.Entry) error {
		if e.Plugin == "guard" && e.Hook == "pre_tool_call" {
			block = &e
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if block == nil {
		t.Fatalf("no pre_tool_call of the guard in the log:\n%s", data)
	}
	if block.Outcome != decisionlog.OutcomeAnswer || !strings.Contains(string(block.Answer), "secrets stay out") ||
		block.RequestID != turn.RequestID || block.SessionID != s.ID() || block.LatencyMS <= 0 {
		t.Errorf("entry %+v, want the guard's block under request %s", block, turn.RequestID)
	}
	if !strings.Contains(string(block.Input), "[redacted]") || !strings.Contains(string(block.Input), `"name":"read_file"`) {
		t.Errorf("input %s, want the call with the key blanked", block.Input)
	}
	out := shown.String()
	if !strings.Contains(out, "guard pre_tool_call → answer") || !strings.Contains(out, turn.RequestID) || strings.Contains(out, inbound) {
		t.Errorf("the decisions shown:\n%s", out)
	}
}
