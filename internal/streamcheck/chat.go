package streamcheck

import (
	"encoding/json"
)

// ChatStream is what a client accumulates from a Chat Completions stream.
type ChatStream struct {
	ID, Model string
	Created   int64
	Text      string
	Calls     []Call
	Finish    string         // the choice's finish_reason
	Usage     map[string]int // the usage chunk's, nil without one
	Error     map[string]any // the in-stream error payload, when the stream failed
	Comments  int            // ":" keepalive lines
	Chunks    int            // JSON chunks, the error payload and [DONE] aside
}

// InputTokens and OutputTokens are the usage chunk's prompt and completion
// tokens.
func (s *ChatStream) InputTokens() int  { return s.Usage["prompt_tokens"] }
func (s *ChatStream) OutputTokens() int { return s.Usage["completion_tokens"] }

type chatChunk struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	Model   string `json:"model"`
	Choices *[]struct {
		Index int `json:"index"`
		Delta struct {
			Role      *string `json:"role"`
			Content   *string `json:"content"`
			ToolCalls []struct {
				Index    *int    `json:"index"`
				ID       *string `json:"id"`
				Type     *string `json:"type"`
				Function struct {
					Name      *string `json:"name"`
					Arguments *string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
}

// Chat checks a Chat Completions stream against the rules openai-node's
// ChatCompletionStream and openai-python's ChatCompletionStreamState rely
// on: no event: lines; every payload JSON but the final data: [DONE] and
// nothing after it; one id, created and model on every chunk, object
// "chat.completion.chunk"; one choice, index 0, whose first chunk has
// delta.role "assistant"; tool-call deltas with an integer index, dense
// from 0, the first delta of an index with id, type "function" and name and
// later ones with none of them; exactly one non-empty finish_reason and no
// choice chunk after it; with includeUsage exactly one choices:[] chunk,
// the last before [DONE], carrying usage with total = prompt + completion,
// and "usage": null on every other chunk; without it no usage at all. A
// stream that failed ends with one {"error":{"message","type","code"}}
// payload and no [DONE].
func Chat(raw []byte, includeUsage bool) (*ChatStream, error) {
	r, fs, comments := read("chat", raw)
	s := &ChatStream{Comments: comments}
	done := false
	finishes, usageChunks := 0, 0
	sawChoice := false
	pos := map[int]int{} // tool call index → position in s.Calls
	for n, f := range fs {
		if f.event != "" {
			r.add("frame %d has an event: line (%q), which openai-node cannot accumulate", n, f.event)
		}
		if done {
			r.add("frame %d comes after data: [DONE]: %q", n, f.data)
			continue
		}
		if f.data == "[DONE]" {
			done = true
			continue
		}
		if s.Error != nil {
			r.add("frame %d comes after the error payload: %q", n, f.data)
			continue
		}
		var top map[string]json.RawMessage
		var c chatChunk
		if err := json.Unmarshal([]byte(f.data), &top); err != nil {
			r.add("frame %d is not a JSON object: %v: %q", n, err, f.data)
			continue
		}
		if e, ok := top["error"]; ok && string(e) != "null" {
			m := object(string(e))
			_, hasCode := m["code"]
			if str(m, "message") == "" || str(m, "type") == "" || !hasCode {
				r.add("the error payload %s lacks message, type or code", f.data)
			}
			if m == nil {
				m = map[string]any{}
			}
			s.Error = m
			continue
		}
		if err := json.Unmarshal([]byte(f.data), &c); err != nil {
			r.add("frame %d is not a chunk: %v: %q", n, err, f.data)
			continue
		}
		if c.ID == "" {
			r.add("chunk %d has no id", n)
		}
		if s.Chunks == 0 {
			s.ID, s.Created, s.Model = c.ID, c.Created, c.Model
		} else if c.ID != s.ID || c.Created != s.Created || c.Model != s.Model {
			r.add("chunk %d has id/created/model %q/%d/%q, the first had %q/%d/%q (a changed id starts a new completion in openai-node)", n, c.ID, c.Created, c.Model, s.ID, s.Created, s.Model)
		}
		s.Chunks++
		if c.Object != "chat.completion.chunk" {
			r.add("chunk %d has object %q, want chat.completion.chunk", n, c.Object)
		}
		if usageChunks > 0 {
			r.add("chunk %d comes after the usage chunk, which must be the last before [DONE]", n)
		}
		if c.Choices == nil {
			r.add("chunk %d has no choices field", n)
			continue
		}
		u, hasUsage := top["usage"]
		if len(*c.Choices) == 0 {
			usageChunks++
			if !hasUsage || string(u) == "null" {
				r.add("chunk %d has choices:[] but no usage", n)
				continue
			}
			if err := json.Unmarshal(u, &s.Usage); err != nil {
				r.add("usage %s: %v", u, err)
				continue
			}
			if s.Usage["total_tokens"] != s.Usage["prompt_tokens"]+s.Usage["completion_tokens"] {
				r.add("usage total_tokens %d != %d + %d", s.Usage["total_tokens"], s.Usage["prompt_tokens"], s.Usage["completion_tokens"])
			}
			continue
		}
		switch {
		case includeUsage && string(u) != "null":
			r.add("chunk %d has usage %q, want null on every chunk but the usage chunk (openai-python overwrites usage on every chunk)", n, u)
		case !includeUsage && hasUsage:
			r.add("chunk %d carries usage though the client did not ask for it: %s", n, f.data)
		}
		if len(*c.Choices) != 1 || (*c.Choices)[0].Index != 0 {
			r.add("chunk %d has choices %s, want one with index 0", n, top["choices"])
			continue
		}
		ch := (*c.Choices)[0]
		if finishes > 0 {
			r.add("chunk %d is a choice chunk after finish_reason %q: %s", n, s.Finish, f.data)
		}
		if !sawChoice {
			if ch.Delta.Role == nil || *ch.Delta.Role != "assistant" {
				r.add("the first chunk of the choice has no delta.role \"assistant\": %s", f.data)
			}
			sawChoice = true
		}
		if ch.Delta.Content != nil {
			s.Text += *ch.Delta.Content
		}
		for _, tc := range ch.Delta.ToolCalls {
			if tc.Index == nil {
				r.add("a tool-call delta without index (openai-node drops the call): %s", f.data)
				continue
			}
			i := *tc.Index
			at, seen := pos[i]
			if !seen {
				if i != len(s.Calls) {
					r.add("tool call index %d opened after %d calls; indices must be 0-based and dense", i, len(s.Calls))
				}
				if tc.ID == nil || *tc.ID == "" || tc.Type == nil || *tc.Type != "function" || tc.Function.Name == nil || *tc.Function.Name == "" {
					r.add("the first delta of tool call %d lacks id, type \"function\" or name: %s", i, f.data)
				}
				at = len(s.Calls)
				pos[i] = at
				s.Calls = append(s.Calls, Call{})
				if tc.ID != nil {
					s.Calls[at].ID = *tc.ID
				}
				if tc.Function.Name != nil {
					s.Calls[at].Name = *tc.Function.Name
				}
			} else if tc.ID != nil || tc.Type != nil || tc.Function.Name != nil {
				r.add("a later delta of tool call %d repeats id, type or name: %s", i, f.data)
			}
			if tc.Function.Arguments != nil {
				s.Calls[at].Arguments += *tc.Function.Arguments
			}
		}
		if ch.FinishReason != nil {
			finishes++
			if *ch.FinishReason == "" {
				r.add("chunk %d has an empty finish_reason", n)
			}
			s.Finish = *ch.FinishReason
		}
	}
	if s.Error != nil {
		if done {
			r.add("a failed stream ends with [DONE], so clients take the partial answer for a whole one")
		}
		return s, r.err()
	}
	if !done {
		r.add("does not end with data: [DONE]")
	}
	if finishes != 1 {
		r.add("%d chunks carry a finish_reason, want exactly 1", finishes)
	}
	if includeUsage && usageChunks != 1 {
		r.add("%d usage chunks with include_usage, want exactly 1", usageChunks)
	}
	if !includeUsage && usageChunks != 0 {
		r.add("%d usage chunks without include_usage, want none", usageChunks)
	}
	return s, r.err()
}
