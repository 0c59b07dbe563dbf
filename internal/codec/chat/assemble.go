package chat

import (
	"fmt"
	"sort"
	"strings"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/codec"
)

// Reading a completion upstream: the stop reason it gives, and a stream's
// chunks assembled into the whole completion.

// StopOf maps a completion's finish_reason onto the neutral stop reason;
// calls and refused say whether the answer called tools or refused.
func StopOf(reason *string, calls, refused bool) hooks.StopReason {
	r := ""
	if reason != nil {
		r = *reason
	}
	switch {
	case refused || r == "content_filter":
		return hooks.StopRefusal
	case r == "tool_calls" || r == "function_call" || (calls && r == "stop"):
		// Some compatible servers finish a tool call with "stop"; what
		// matters to the loop is that tools were called.
		return hooks.StopToolUse
	case r == "length":
		return hooks.StopMaxTokens
	case r == "stop":
		return hooks.StopEndTurn
	}
	return hooks.StopOther
}

// Assembler assembles a stream's chunks into the completion a
// non-streaming call would have returned.
type Assembler struct {
	resp    Response
	content strings.Builder
	refusal strings.Builder
	hasText bool
	hasRef  bool
	finish  *string
	calls   map[int]*ToolCall
	args    map[int]*strings.Builder
}

// NewAssembler returns an Assembler for one stream.
func NewAssembler() *Assembler {
	return &Assembler{calls: map[int]*ToolCall{}, args: map[int]*strings.Builder{}}
}

// Finished reports whether a chunk gave the finish reason.
func (st *Assembler) Finished() bool { return st.finish != nil }

// Shown is the text handed to onText so far: the answer's text, or its
// refusal.
func (st *Assembler) Shown() string { return st.content.String() + st.refusal.String() }

// Add folds one chunk into the answer. news reports whether the chunk
// carried anything the answer did not have (text, a tool call's part,
// reasoning, the finish reason or the usage, each the first time): only
// such a chunk restarts the idle timeout, so that a server sending empty
// chunks is as idle as one sending nothing.
func (st *Assembler) Add(c Chunk, onText func(string)) (news bool, err error) {
	if st.resp.ID == "" {
		st.resp.ID = c.ID
	}
	if c.Model != "" {
		st.resp.Model = c.Model
	}
	if c.Usage != nil {
		news = news || st.resp.Usage == nil
		st.resp.Usage = c.Usage
	}
	for i, ch := range c.Choices {
		// hookhost asks for one choice; any other is ignored, as
		// Complete ignores it.
		if ch.Index != 0 {
			continue
		}
		d := ch.Delta
		// The answer keeps either text or a refusal, so a stream that
		// shows both would keep less than it showed.
		if (st.hasRef && d.Content != nil && *d.Content != "") || (st.hasText && d.Refusal != nil && *d.Refusal != "") ||
			(d.Content != nil && *d.Content != "" && d.Refusal != nil && *d.Refusal != "") {
			return false, fmt.Errorf("stream chunk %d mixes answer text and a refusal", i)
		}
		if (d.ReasoningContent != nil && *d.ReasoningContent != "") || (d.Reasoning != nil && *d.Reasoning != "") {
			news = true
		}
		if d.Content != nil && *d.Content != "" {
			news = true
			st.content.WriteString(*d.Content)
			st.hasText = true
			onText(*d.Content)
		}
		if d.Refusal != nil && *d.Refusal != "" {
			news = true
			st.refusal.WriteString(*d.Refusal)
			st.hasRef = true
			onText(*d.Refusal)
		}
		for j, tc := range d.ToolCalls {
			idx := j
			if tc.Index != nil {
				idx = *tc.Index
			}
			if idx < 0 || idx > 1024 {
				return false, fmt.Errorf("stream chunk %d: tool call index %d out of range", i, idx)
			}
			call := st.calls[idx]
			if call == nil {
				call = &ToolCall{Type: "function"}
				st.calls[idx] = call
				st.args[idx] = &strings.Builder{}
			}
			if tc.ID != "" && call.ID == "" {
				call.ID = tc.ID
			}
			if tc.Type != "" {
				call.Type = tc.Type
			}
			switch name := tc.Function.Name; {
			case name == "" || name == call.Function.Name:
			case len(call.Function.Name)+len(name) > codec.MaxToolName:
				// Refused before it is joined: a hostile stream of
				// one-byte fragments would otherwise cost quadratic time.
				return false, fmt.Errorf("stream chunk %d: tool call %d's name grows past %d characters, the most a tool name may have", i, idx, codec.MaxToolName)
			case call.Function.Name == "":
				call.Function.Name = name
			default:
				call.Function.Name += name
			}
			if tc.ID != "" || tc.Function.Name != "" || len(tc.Function.Arguments) > 0 {
				news = true
			}
			st.args[idx].WriteString(string(tc.Function.Arguments))
		}
		if ch.FinishReason != nil && *ch.FinishReason != "" {
			news = news || st.finish == nil
			st.finish = ch.FinishReason
		}
	}
	return news, nil
}

// Result is the completion assembled so far.
func (st *Assembler) Result() Response {
	r := st.resp
	ch := Choice{FinishReason: st.finish}
	ch.Message.Role = "assistant"
	if st.hasText {
		text := st.content.String()
		ch.Message.Content = &text
	}
	if st.hasRef {
		refusal := st.refusal.String()
		ch.Message.Refusal = &refusal
	}
	idx := make([]int, 0, len(st.calls))
	for i := range st.calls {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	for _, i := range idx {
		c := *st.calls[i]
		c.Function.Arguments = codec.Args(st.args[i].String())
		ch.Message.ToolCalls = append(ch.Message.ToolCalls, c)
	}
	r.Choices = []Choice{ch}
	return r
}
