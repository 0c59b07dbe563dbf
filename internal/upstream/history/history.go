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
	var pending pendingCalls // calls of the last assistant message still unanswered
	flush := func() {
		for _, c := range pending.unanswered() {
			out = append(out, hooks.Message{
				Role: hooks.RoleTool, ToolCallID: c.ID, ToolName: c.Name,
				Content: CancelledResult, IsError: true,
			})
		}
		pending.reset(nil)
	}
	for _, m := range msgs {
		if m.Role == hooks.RoleTool {
			if pending.answer(m.ToolCallID) {
				out = append(out, m)
			}
			continue
		}
		flush()
		out = append(out, m)
		if m.Role == hooks.RoleAssistant {
			pending.reset(m.ToolCalls)
		}
	}
	flush()
	return out
}

func needsRepair(msgs []hooks.Message) bool {
	var pending pendingCalls
	for _, m := range msgs {
		if m.Role == hooks.RoleTool {
			if !pending.answer(m.ToolCallID) {
				return true
			}
			continue
		}
		if pending.left > 0 {
			return true
		}
		if m.Role == hooks.RoleAssistant {
			pending.reset(m.ToolCalls)
		}
	}
	return pending.left > 0
}

// pendingCalls tracks which calls of one assistant message are still
// unanswered. A history can carry tens of thousands of calls (a client
// sends whatever fits in a request), so each answer costs O(1), not a
// scan of the calls left.
type pendingCalls struct {
	calls    []hooks.ToolCall
	answered []bool
	open     map[string][]int // call id → indices of its unanswered calls, in order
	left     int
}

func (p *pendingCalls) reset(calls []hooks.ToolCall) {
	p.calls, p.left = calls, len(calls)
	p.answered = make([]bool, len(calls))
	clear(p.open)
	if len(calls) > 0 && p.open == nil {
		p.open = make(map[string][]int, len(calls))
	}
	for i, c := range calls {
		p.open[c.ID] = append(p.open[c.ID], i)
	}
}

// answer marks the first unanswered call with id as answered and reports
// whether there was one.
func (p *pendingCalls) answer(id string) bool {
	idx := p.open[id]
	if len(idx) == 0 {
		return false
	}
	p.answered[idx[0]] = true
	p.open[id] = idx[1:]
	p.left--
	return true
}

func (p *pendingCalls) unanswered() []hooks.ToolCall {
	var out []hooks.ToolCall
	for i, c := range p.calls {
		if !p.answered[i] {
			out = append(out, c)
		}
	}
	return out
}
