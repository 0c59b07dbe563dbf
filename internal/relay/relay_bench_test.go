package relay

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/hookhost/hookhost/hookbus"
	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/llm"
)

// instant answers every call at once: a plugin tool call on every other
// call when asked to, text otherwise.
type instant struct{ toolEvery bool }

func (p *instant) Name() string { return "instant" }
func (p *instant) Complete(_ context.Context, req llm.Request) (llm.Response, error) {
	last := req.Messages[len(req.Messages)-1]
	if p.toolEvery && last.Role == hooks.RoleUser {
		return llm.Response{Message: hooks.Message{Role: hooks.RoleAssistant, ToolCalls: []hooks.ToolCall{
			{ID: "k1", Name: "kora__burn", Arguments: json.RawMessage(`{}`)}}}, StopReason: hooks.StopToolUse}, nil
	}
	return llm.Response{Message: hooks.Message{Role: hooks.RoleAssistant, Content: "ok"}, StopReason: hooks.StopEndTurn,
		Usage: hooks.Usage{InputTokens: 1, OutputTokens: 1}}, nil
}

// BenchmarkRun measures what the loop adds around an upstream that answers
// at once: no plugin, and one in-process plugin tool round.
func BenchmarkRun(b *testing.B) {
	for _, tc := range []struct {
		name string
		tool bool
	}{{"no-plugin", false}, {"plugin-tool-round", true}} {
		b.Run(tc.name, func(b *testing.B) {
			bus, err := hookbus.New([]hookbus.Member{{Plugin: kora(`{"usd":1}`)}}, hookbus.Config{})
			if err != nil {
				b.Fatal(err)
			}
			defer bus.Close(context.Background())
			r := New(Config{Provider: &instant{toolEvery: tc.tool}, Bus: bus, Store: NewStore(time.Minute, 1000)})
			front := testFront{llm.ProtocolChat}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := r.Run(context.Background(), front, userCall("q", readFile), nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
