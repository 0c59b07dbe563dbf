package responses

import (
	"fmt"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/codec"
	"github.com/hookhost/hookhost/llm/toolfmt"
)

// Writing a request upstream: the neutral history as input items.

// InputOf encodes one neutral message as the input items it becomes, its
// tool names as names sends them.
func InputOf(m hooks.Message, names *toolfmt.NameMap) ([]Input, error) {
	var items []Input
	switch m.Role {
	case hooks.RoleSystem, hooks.RoleUser:
		items = append(items, Input{Type: "message", Role: string(m.Role), Content: ptr(m.Content)})
	case hooks.RoleAssistant:
		if m.Content != "" || len(m.ToolCalls) == 0 {
			items = append(items, Input{Type: "message", Role: "assistant", Content: ptr(m.Content)})
		}
		for _, c := range m.ToolCalls {
			a := codec.WireArgs(c.Arguments)
			items = append(items, Input{Type: "function_call", CallID: c.ID, Name: names.Wire(c.Name), Arguments: &a})
		}
	case hooks.RoleTool:
		items = append(items, Input{Type: "function_call_output", CallID: m.ToolCallID, Output: ptr(m.Content)})
	default:
		return nil, fmt.Errorf("message with unknown role %q", m.Role)
	}
	return items, nil
}

func ptr(s string) *string { return &s }
