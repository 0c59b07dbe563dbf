// Package history prepares a neutral conversation for a provider's wire
// format, which is stricter than the neutral form: OpenAI and Anthropic
// both answer HTTP 400, for the rest of the session, when an assistant tool
// call has no result or a result answers no call. A turn cancelled between
// two tool calls leaves exactly that behind, so the adapters repair the
// history before sending it instead of letting one Ctrl-C break every
// later turn.
package history

import "github.com/hookhost/hookhost/hooks"

// CancelledResult is the content given to a tool call that never got a
// result, so the model learns why.
const CancelledResult = `{"error":"no result: the call did not run (the turn was cancelled)"}`

// Repair returns msgs with every assistant tool call answered and every
// tool message attached to a call. A missing result is added as an error
// right after the results the call's message did get; a tool message whose
// call id matches no pending call is dropped. msgs itself is not changed;
// when nothing needs repair it is returned as is.
func Repair(msgs []hooks.Message) []hooks.Message {
	if !needsRepair(msgs) {
		return msgs
	}
	out := make([]hooks.Message, 0, len(msgs)+2)
	var pending []hooks.ToolCall // calls of the last assistant message still unanswered
	flush := func() {
		for _, c := range pending {
			out = append(out, hooks.Message{
				Role: hooks.RoleTool, ToolCallID: c.ID, ToolName: c.Name,
				Content: CancelledResult, IsError: true,
			})
		}
		pending = nil
	}
	for _, m := range msgs {
		if m.Role == hooks.RoleTool {
			i := indexOf(pending, m.ToolCallID)
			if i < 0 {
				continue
			}
			pending = append(pending[:i:i], pending[i+1:]...)
			out = append(out, m)
			continue
		}
		flush()
		out = append(out, m)
		if m.Role == hooks.RoleAssistant {
			pending = append([]hooks.ToolCall(nil), m.ToolCalls...)
		}
	}
	flush()
	return out
}

func needsRepair(msgs []hooks.Message) bool {
	var pending []hooks.ToolCall
	for _, m := range msgs {
		if m.Role == hooks.RoleTool {
			i := indexOf(pending, m.ToolCallID)
			if i < 0 {
				return true
			}
			pending = append(pending[:i:i], pending[i+1:]...)
			continue
		}
		if len(pending) > 0 {
			return true
		}
		if m.Role == hooks.RoleAssistant {
			pending = m.ToolCalls
		}
	}
	return len(pending) > 0
}

func indexOf(calls []hooks.ToolCall, id string) int {
	for i, c := range calls {
		if c.ID == id {
			return i
		}
	}
	return -1
}
