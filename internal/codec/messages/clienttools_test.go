package messages_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/hookhost/hookhost/hookbus"
	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/codec/messages"
	"github.com/hookhost/hookhost/internal/fakeapi"
	"github.com/hookhost/hookhost/internal/relay"
	"github.com/hookhost/hookhost/llm/anthropic"
)

// Anthropic-defined client tools (bash, text_editor, computer) are run by
// the client, and their calls come back as ordinary tool_use blocks: on
// the gateway route they are client calls, which pre_tool_call sees and
// the client gets.
func TestAnthropicDefinedClientToolIsAClientCall(t *testing.T) {
	up := fakeapi.New(t, fakeapi.JSON(200, `{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"tool_use","id":"toolu_1","name":"bash","input":{"command":"ls"}}],"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":3,"output_tokens":2}}`))
	prov, err := anthropic.New(anthropic.Config{BaseURL: up.URL(), APIKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	seen := make(chan string, 1)
	watcher := &hooks.Funcs{
		Name: "watch",
		PreToolCallFunc: func(_ context.Context, req hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
			select {
			case seen <- req.Name:
			default:
			}
			return nil, nil
		},
	}
	bus, err := hookbus.New([]hookbus.Member{{Plugin: watcher}}, hookbus.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		bus.Close(ctx)
	})
	r := relay.New(relay.Config{Provider: prov, Bus: bus, Store: relay.NewStore(time.Minute, 10)})
	front := messages.New()
	call, err := front.Decode([]byte(`{"model":"m","max_tokens":100,"messages":[{"role":"user","content":"list files"}],"tools":[{"type":"bash_20250124","name":"bash"}]}`))
	if err != nil {
		t.Fatalf("the front refused an Anthropic-defined client tool: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := r.Run(ctx, front, call, nil)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	out, err := front.Encode(call, res)
	if err != nil {
		t.Fatal(err)
	}
	var msg struct {
		StopReason string `json:"stop_reason"`
		Content    []struct {
			Type, Name string
		} `json:"content"`
	}
	if err := json.Unmarshal(out, &msg); err != nil {
		t.Fatal(err)
	}
	if msg.StopReason != "tool_use" || len(msg.Content) != 1 || msg.Content[0].Type != "tool_use" || msg.Content[0].Name != "bash" {
		t.Errorf("the client got %s, want its bash call", out)
	}
	select {
	case name := <-seen:
		if name != "bash" {
			t.Errorf("pre_tool_call saw %q", name)
		}
	default:
		t.Error("pre_tool_call did not see the bash call")
	}
	if sent := string(up.Requests()[0].Body); !strings.Contains(sent, `{"type":"bash_20250124","name":"bash"}`) {
		t.Errorf("the tool did not reach upstream as sent: %s", sent)
	}
}
