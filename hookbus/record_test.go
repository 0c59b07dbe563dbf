package hookbus_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"

	"github.com/hookhost/hookhost/hookbus"
	"github.com/hookhost/hookhost/hooks"
)

// recorder keeps every CallRecord the Bus hands to OnCall.
type recorder struct {
	mu   sync.Mutex
	recs []hookbus.CallRecord
}

func (r *recorder) add(_ context.Context, c hookbus.CallRecord) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.recs = append(r.recs, c)
}

func (r *recorder) all() []hookbus.CallRecord {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]hookbus.CallRecord(nil), r.recs...)
}

// byPlugin returns the records of plugin's calls of hook.
func (r *recorder) byPlugin(plugin string, hook hooks.Name) []hookbus.CallRecord {
	var out []hookbus.CallRecord
	for _, c := range r.all() {
		if c.Plugin == plugin && c.Hook == hook {
			out = append(out, c)
		}
	}
	return out
}

func TestOnCallRecordsEveryCallWithItsOutcome(t *testing.T) {
	eachWay(t, func(t *testing.T, r rig) {
		rec := &recorder{}
		guard := &hooks.Funcs{Name: "guard", PreToolCallFunc: func(_ context.Context, req hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
			return nil, nil
		}}
		failing := &hooks.Funcs{Name: "failing", PreToolCallFunc: func(context.Context, hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
			return nil, errors.New("database down")
		}}
		// A block and modified arguments at once breaks the hook's rules.
		malformed := &hooks.Funcs{Name: "malformed", PreToolCallFunc: func(context.Context, hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
			return &hooks.PreToolCallDecision{Block: &hooks.Block{Message: "no"}, ModifiedArgs: json.RawMessage(`{"x":1}`)}, nil
		}}
		blocker := &hooks.Funcs{Name: "blocker",
			PreToolCallFunc: func(context.Context, hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
				return &hooks.PreToolCallDecision{Block: &hooks.Block{Message: "not today"}}, nil
			},
			PostToolCallFunc: func(context.Context, hooks.ToolCallOutcome) error { return nil },
		}
		bus := newBusConfig(t, hookbus.Config{OnCall: rec.add}, r.in(guard), r.in(failing), r.in(malformed), r.in(blocker))

		ctx := hookbus.WithRequestID(context.Background(), "req-7")
		if out := bus.PreToolCall(ctx, call); !out.Blocked || out.BlockedBy != "blocker" {
			t.Fatalf("outcome %+v, want blocked by blocker", out)
		}
		bus.PostToolCall(hooks.ToolCallOutcome{SessionID: "s1", CallID: "c1", Name: "now"})
		if err := bus.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}

		check := func(plugin string, hook hooks.Name, wantKind hookbus.FailureKind, wantReq string) hookbus.CallRecord {
			t.Helper()
			got := rec.byPlugin(plugin, hook)
			if len(got) != 1 {
				t.Fatalf("%s %s: %d records, want 1 (all: %+v)", plugin, hook, len(got), rec.all())
			}
			c := got[0]
			if c.Kind != wantKind || c.RequestID != wantReq || c.Start.IsZero() || c.Latency < 0 {
				t.Errorf("%s %s: kind %v request %q start %v latency %v, want kind %v request %q", plugin, hook, c.Kind, c.RequestID, c.Start, c.Latency, wantKind, wantReq)
			}
			return c
		}
		if c := check("guard", hooks.PreToolCall, hookbus.KindNone, "req-7"); c.Answer != nil {
			t.Errorf("guard abstained, but the record's answer is %#v", c.Answer)
		} else if p, ok := c.Payload.(hooks.ToolCallRequest); !ok || p.CallID != "c1" {
			t.Errorf("guard's payload %#v, want the tool call", c.Payload)
		}
		if c := check("failing", hooks.PreToolCall, hookbus.KindError, "req-7"); c.Err == nil || c.Answer != nil {
			t.Errorf("failing: err %v answer %#v, want the error and no answer", c.Err, c.Answer)
		}
		// The malformed answer is recorded as it was sent, though the Bus
		// treated it as none.
		if c := check("malformed", hooks.PreToolCall, hookbus.KindMalformed, "req-7"); c.Answer == nil {
			t.Error("malformed: the answer as sent is missing")
		} else if d, ok := c.Answer.(*hooks.PreToolCallDecision); !ok || d.Block == nil || string(d.ModifiedArgs) != `{"x":1}` {
			t.Errorf("malformed: answer %#v", c.Answer)
		}
		if c := check("blocker", hooks.PreToolCall, hookbus.KindNone, "req-7"); c.Answer == nil || c.Answer.(*hooks.PreToolCallDecision).Block.Message != "not today" {
			t.Errorf("blocker: answer %#v", c.Answer)
		}
		// An observer delivery is detached from the request.
		if c := check("blocker", hooks.PostToolCall, hookbus.KindNone, ""); c.Payload.(hooks.ToolCallOutcome).CallID != "c1" {
			t.Errorf("observer payload %#v", c.Payload)
		}
	})
}

func TestOnCallRecordsStretchStages(t *testing.T) {
	rec := &recorder{}
	p := &hooks.Funcs{Name: "ledger",
		PreToolCallFunc: func(context.Context, hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) { return nil, nil },
		PreToolCallCanProvideResultFunc: func(context.Context, hooks.ToolCallRequest) (*hooks.ToolResult, error) {
			return &hooks.ToolResult{Content: "42"}, nil
		},
	}
	c := &counted{Plugin: stretching{p}}
	bus := newBusConfig(t, hookbus.Config{OnCall: rec.add}, hookbus.Member{Plugin: c})
	ctx := hookbus.WithRequestID(context.Background(), "turn-1")
	run := bus.StartToolCall(call)
	defer run.Close()
	run.PreToolCall(ctx)
	if got := run.ProvideResult(ctx); got == nil || got.Content != "42" {
		t.Fatalf("provided %+v", got)
	}
	if len(c.stretches) != 1 {
		t.Fatalf("stretches %v, want one: the test must go through a stretch", c.stretches)
	}
	got := rec.all()
	if len(got) != 2 || got[0].Hook != hooks.PreToolCall || got[1].Hook != hooks.PreToolCallCanProvideResult {
		t.Fatalf("records %+v, want pre_tool_call then pre_tool_call_can_provide_result", got)
	}
	for _, r := range got {
		if r.RequestID != "turn-1" || r.Plugin != "ledger" || r.Kind != hookbus.KindNone {
			t.Errorf("record %+v", r)
		}
		if p, ok := r.Payload.(hooks.ToolCallRequest); !ok || p.CallID != call.CallID {
			t.Errorf("payload %#v", r.Payload)
		}
	}
	if a, ok := got[1].Answer.(*hooks.ToolResult); !ok || a.Content != "42" {
		t.Errorf("provide answer %#v", got[1].Answer)
	}
}
