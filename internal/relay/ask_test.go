package relay

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/dialect"
	"github.com/hookhost/hookhost/internal/syncbuf"
	"github.com/hookhost/hookhost/llm"
)

const askReason = "a person must approve this"

// askEverything answers ask on every tool call.
func askEverything() *hooks.Funcs {
	return &hooks.Funcs{Name: "asker", PreToolCallFunc: func(context.Context, hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
		return &hooks.PreToolCallDecision{Ask: &hooks.ApprovalRequest{Reason: askReason}}, nil
	}}
}

// A client's own tool call on ask goes back to the client unchanged, its
// own permission flow to decide; no plugin answers it in the client's
// place, and the reason is logged at INFO.
func TestAskedClientToolGoesToTheClient(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(map[bool]string{false: "whole", true: "stream"}[stream], func(t *testing.T) {
			provider := &hooks.Funcs{Name: "cache", PreToolCallCanProvideResultFunc: func(context.Context, hooks.ToolCallRequest) (*hooks.ToolResult, error) {
				return &hooks.ToolResult{Content: `"cached"`}, nil
			}}
			rec := &recorder{}
			bus := newBus(t, askEverything(), provider)
			up := &scripted{steps: []step{calls("", 1, 1, tc("c1", "read_file", `{"path":"notes.txt"}`))}}
			var logs syncbuf.Buffer
			r := New(Config{Provider: up, Bus: bus, Observe: rec, Logger: hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Info})})
			call := userCall("read my notes", readFile)
			call.Stream = stream
			sink := &recSink{}
			var s dialect.Sink
			if stream {
				s = sink
			}
			res := runOK(t, r, testFront{llm.ProtocolChat}, call, s)
			if len(res.ToolCalls) != 1 || res.ToolCalls[0].Name != "read_file" || string(res.ToolCalls[0].Arguments) != `{"path":"notes.txt"}` {
				t.Fatalf("the client got %+v, want its read_file call unchanged", res.ToolCalls)
			}
			if stream {
				want := []string{`call:` + res.ToolCalls[0].ID + `:read_file({"path":"notes.txt"})`, "finish:tool_use:1/1"}
				if ev := sink.list(); !reflect.DeepEqual(ev, want) {
					t.Errorf("stream = %q, want %q", ev, want)
				}
			}
			if n := len(up.calls()); n != 1 {
				t.Errorf("upstream called %d times, want 1: the call is the client's", n)
			}
			if !reflect.DeepEqual(rec.tools, []string{"client"}) {
				t.Errorf("observer tools = %v, want [client]", rec.tools)
			}
			if l := logs.String(); !strings.Contains(l, "[INFO]") || !strings.Contains(l, askReason) || !strings.Contains(l, "read_file") {
				t.Errorf("no INFO line naming the tool and the reason; log:\n%s", l)
			}
		})
	}
}

// A plugin's tool call on ask has no one to ask on the gateway: blocked
// with the reason by default, run with on_ask = "allow" (AllowAsked).
func TestAskedPluginToolFollowsOnAsk(t *testing.T) {
	for _, allow := range []bool{false, true} {
		for _, stream := range []bool{false, true} {
			name := map[bool]string{false: "block", true: "allow"}[allow] + "/" + map[bool]string{false: "whole", true: "stream"}[stream]
			t.Run(name, func(t *testing.T) {
				rec := &recorder{}
				bus := newBus(t, askEverything(), kora(`{"usd":3}`), rec.observer())
				up := &scripted{steps: []step{
					calls("", 1, 1, tc("k1", "kora__burn", `{}`)),
					text("done", 1, 1),
				}}
				r := New(Config{Provider: up, Bus: bus, Observe: rec, Store: NewStore(time.Minute, 10), AllowAsked: allow})
				call := userCall("what is my burn", readFile)
				call.Stream = stream
				var s dialect.Sink
				if stream {
					s = &recSink{}
				}
				res := runOK(t, r, testFront{llm.ProtocolChat}, call, s)
				if len(res.ToolCalls) != 0 {
					t.Fatalf("the client saw the plugin's call: %+v", res.ToolCalls)
				}
				got := up.calls()
				if len(got) != 2 {
					t.Fatalf("upstream called %d times, want 2", len(got))
				}
				result := got[1].req.Messages[2]
				wantStatus := hooks.ProvidedBy("kora")
				if allow {
					if result.IsError || result.Content != `{"usd":3}` {
						t.Errorf("allowed call's result = %+v, want kora's", result)
					}
				} else {
					wantStatus = hooks.StatusBlocked
					var body struct{ Error string }
					if !result.IsError || json.Unmarshal([]byte(result.Content), &body) != nil || body.Error != "blocked: approval required: "+askReason {
						t.Errorf("blocked call's result = %+v, want the reason", result)
					}
				}
				flush(t, bus)
				rec.mu.Lock()
				defer rec.mu.Unlock()
				if len(rec.outcomes) != 1 || rec.outcomes[0].Status != wantStatus {
					t.Errorf("post_tool_call = %+v, want one %s", rec.outcomes, wantStatus)
				}
			})
		}
	}
}
