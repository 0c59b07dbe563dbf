package wire

import (
	"context"
	"errors"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/hookhost/hookhost/hooks"
	pluginv1 "github.com/hookhost/hookhost/plugins/proto/v1"
	pluginv2 "github.com/hookhost/hookhost/plugins/proto/v2"
)

// FuzzV2PluginMessage feeds any PluginMessage a plugin could send to the
// host's side of a stream with one call in flight (id 1, a stretch of
// pre_tool_call then pre_tool_call_can_provide_result): it must route it
// or count it as late, and make of it either the hook's answer type or an
// error the Bus can classify, never a panic.
func FuzzV2PluginMessage(f *testing.F) {
	msg := func(m *pluginv2.PluginMessage) []byte {
		b, err := proto.Marshal(m)
		if err != nil {
			f.Fatal(err)
		}
		return b
	}
	answer := func(m proto.Message) []byte { b, _ := proto.Marshal(m); return b }
	f.Add(msg(&pluginv2.PluginMessage{Id: 1, Answer: answer(&pluginv1.PreToolCallResponse{Block: &pluginv1.Block{Message: "no"}}), Last: true}))
	f.Add(msg(&pluginv2.PluginMessage{Id: 1, Stage: 1, Answer: answer(&pluginv1.ToolResultResponse{Result: &pluginv1.ToolResult{Content: "r"}})}))
	f.Add(msg(&pluginv2.PluginMessage{Id: 1, Failure: &pluginv2.Failure{Kind: pluginv2.Failure_PANIC, Message: "boom"}, Last: true}))
	f.Add(msg(&pluginv2.PluginMessage{Id: 1, Answer: []byte{0xff}, Failure: &pluginv2.Failure{Kind: 42}}))
	f.Add(msg(&pluginv2.PluginMessage{Id: 7, Stage: 9}))
	f.Add([]byte{0x08, 0x01, 0x1a, 0x03, 0x0a, 0x01, 0xc3})
	f.Fuzz(func(t *testing.T, data []byte) {
		var m pluginv2.PluginMessage
		if proto.Unmarshal(data, &m) != nil {
			return // gRPC ends the stream over it; see TestV2GarbageFromPlugin
		}
		c := NewV2Client(nil)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		st := &stream{c: c, s: c.current(), ctx: ctx, cancel: cancel, dead: make(chan struct{}), calls: map[uint64]*pending{}}
		p := &pending{id: 1, stages: 2, answers: make(chan *pluginv2.PluginMessage, 2), quit: make(chan struct{})}
		st.calls[1] = p
		st.deliver(&m)
		if m.GetId() != 1 {
			if c.LateAnswers() != 1 || len(p.answers) != 0 {
				t.Fatalf("a message for id %d reached call 1 or was not counted", m.GetId())
			}
			return
		}
		got := <-p.answers
		if _, still := st.calls[1]; still == (m.GetLast()) {
			t.Fatalf("last=%v but the call is still registered=%v", m.GetLast(), still)
		}
		for i, h := range []hooks.Name{hooks.PreToolCall, hooks.PreToolCallCanProvideResult} {
			row, _ := rowOf(h)
			v, err := c.settle(row, i, got)
			if err == nil {
				if m.GetStage() != uint32(i) || m.GetFailure() != nil {
					t.Fatalf("stage %d accepted %v", i, &m)
				}
				switch v.(type) {
				case nil, *hooks.PreToolCallDecision, *hooks.ToolResult:
				default:
					t.Fatalf("answer of type %T", v)
				}
				continue
			}
			var ce *CallError
			if !errors.As(err, &ce) {
				t.Fatalf("error %v is no CallError", err)
			}
			switch ce.Kind {
			case nil:
				if m.GetFailure().GetKind() != pluginv2.Failure_ERROR {
					t.Fatalf("unclassified error %v for %v", err, &m)
				}
			case ErrMalformed, hooks.ErrPanicked, context.DeadlineExceeded, context.Canceled:
			default:
				t.Fatalf("error kind %v", ce.Kind)
			}
			if m.GetStage() != uint32(i) && !errors.Is(err, ErrMalformed) {
				t.Fatalf("an answer to stage %d taken for stage %d: %v", m.GetStage(), i, err)
			}
		}
	})
}
