package messages

import (
	"fmt"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/llm/toolfmt"
)

// History writes the neutral history (already repaired) as a request's
// messages, its tool names as names sends them. System messages in it
// have no place in the conversation: their text is appended to system,
// which is returned.
func History(hist []hooks.Message, system []string, names *toolfmt.NameMap) ([]Message, []string, error) {
	out := []Message{}
	// add appends blocks under role, merging with the previous message of
	// the same role: tool results and a following user text must share
	// one user message.
	add := func(role string, blocks ...Block) {
		if len(blocks) == 0 {
			return
		}
		if n := len(out); n > 0 && out[n-1].Role == role {
			prev := out[n-1]
			bs, ok := prev.Content.([]Block)
			if !ok {
				bs = []Block{{Type: "text", Text: ptr(prev.Content.(string))}}
			}
			out[n-1].Content = append(bs, blocks...)
			return
		}
		out = append(out, Message{Role: role, Content: blocks})
	}
	for _, m := range hist {
		switch m.Role {
		case hooks.RoleSystem:
			// Anthropic has no system role inside the conversation.
			system = append(system, m.Content)
		case hooks.RoleUser:
			if n := len(out); n > 0 && out[n-1].Role == "user" {
				add("user", Block{Type: "text", Text: ptr(m.Content)})
				continue
			}
			out = append(out, Message{Role: "user", Content: m.Content})
		case hooks.RoleAssistant:
			var bs []Block
			if m.Content != "" {
				bs = append(bs, Block{Type: "text", Text: ptr(m.Content)})
			}
			for _, c := range m.ToolCalls {
				bs = append(bs, Block{Type: "tool_use", ID: c.ID, Name: names.Wire(c.Name), Input: RequestInput.Of(c.Arguments)})
			}
			// An empty assistant turn would be rejected; it said nothing
			// the model needs to see.
			add("assistant", bs...)
		case hooks.RoleTool:
			b := Block{Type: "tool_result", ToolUseID: m.ToolCallID, IsError: m.IsError}
			if m.Content != "" {
				b.Content = ptr(m.Content)
			}
			add("user", b)
		default:
			return nil, nil, fmt.Errorf("message with unknown role %q", m.Role)
		}
	}
	return out, system, nil
}

func ptr(s string) *string { return &s }
