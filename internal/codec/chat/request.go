package chat

import (
	"fmt"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/codec"
	"github.com/hookhost/hookhost/llm/toolfmt"
)

// Writing a request upstream: the neutral history in this protocol's
// messages.

// MessageOf encodes one neutral message of the history, its tool names
// as names sends them.
func MessageOf(m hooks.Message, names *toolfmt.NameMap) (Message, error) {
	switch m.Role {
	case hooks.RoleSystem, hooks.RoleUser:
		return Message{Role: string(m.Role), Content: ptr(m.Content)}, nil
	case hooks.RoleAssistant:
		cm := Message{Role: "assistant"}
		if m.Content != "" || len(m.ToolCalls) == 0 {
			cm.Content = ptr(m.Content)
		}
		for _, c := range m.ToolCalls {
			cm.ToolCalls = append(cm.ToolCalls, ToolCall{
				ID: c.ID, Type: "function",
				Function: Function{Name: names.Wire(c.Name), Arguments: codec.WireArgs(c.Arguments)},
			})
		}
		return cm, nil
	case hooks.RoleTool:
		return Message{Role: "tool", ToolCallID: m.ToolCallID, Content: ptr(m.Content)}, nil
	}
	return Message{}, fmt.Errorf("message with unknown role %q", m.Role)
}

func ptr(s string) *string { return &s }
