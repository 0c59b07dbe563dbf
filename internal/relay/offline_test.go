package relay

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/dialect"
	"github.com/hookhost/hookhost/llm"
	"github.com/hookhost/hookhost/llm/offline"
)

// The embedded offline model calls the plugin's tool; hookhost runs it and
// the model answers from its result, all in one client request.
func TestOfflineUpstreamAnswersFromAPluginTool(t *testing.T) {
	burn := &hooks.Funcs{
		Name:  "kora",
		Tools: []hooks.ToolSpec{{Name: "kora__get_burn", Description: "Get the cost burn per model", InputSchema: json.RawMessage(`{"type":"object"}`)}},
		PreToolCallCanProvideResultFunc: func(context.Context, hooks.ToolCallRequest) (*hooks.ToolResult, error) {
			return &hooks.ToolResult{Content: `{"usd":12.5}`}, nil
		},
	}
	rec := &recorder{}
	bus := newBus(t, burn, rec.observer())
	r := New(Config{Provider: offline.New(), Bus: bus, Store: NewStore(time.Minute, 10), Observe: rec})
	for _, stream := range []bool{false, true} {
		call := userCall("what is my burn")
		call.Request.Model = offline.LargeModel
		call.Stream = stream
		sink := &recSink{}
		var s dialect.Sink
		if stream {
			s = sink
		}
		res := runOK(t, r, testFront{llm.ProtocolChat}, call, s)
		all := strings.Join(res.Text, "")
		if !strings.Contains(all, "kora__get_burn") || !strings.Contains(all, "12.5") {
			t.Errorf("stream=%v: answer %q does not come from the plugin's result", stream, all)
		}
		if res.Stop != hooks.StopEndTurn || len(res.ToolCalls) != 0 || res.Usage.InputTokens == 0 {
			t.Errorf("stream=%v: result %+v", stream, res)
		}
		if stream {
			ev := sink.list()
			if len(ev) == 0 || !strings.HasPrefix(ev[len(ev)-1], "finish:end_turn:") || sink.count("finish") != 1 {
				t.Errorf("stream = %q", ev)
			}
		}
	}
	flush(t, bus)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, o := range rec.outcomes {
		if o.Name != "kora__get_burn" || o.Status != hooks.ProvidedBy("kora") {
			t.Errorf("post_tool_call = %+v", o)
		}
	}
	if len(rec.outcomes) != 2 {
		t.Errorf("plugin tool ran %d times, want 2 (one per request)", len(rec.outcomes))
	}
}
