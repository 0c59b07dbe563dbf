package streamcheck

import "encoding/json"

// MessagesStream is the message anthropic-sdk-typescript's MessageStream
// accumulates from an Anthropic Messages stream.
type MessagesStream struct {
	ID, Model string
	// Content holds the blocks as the final message has them: text with its
	// text joined, tool_use with its input parsed from the fragments.
	Content      []map[string]any
	Text         string // every text block's text, in order
	Calls        []Call // tool_use blocks, Arguments the joined fragments
	StopReason   string
	InputTokens  int                // message_start's, or message_delta's when it has them
	OutputTokens int                // message_delta's
	Usage        map[string]float64 // message_delta's numeric usage fields
	Error        map[string]any     // the error event's error, when the stream failed
	Pings        int
	Comments     int
}

// Messages checks an Anthropic Messages stream against the rules
// anthropic-sdk-typescript's MessageStream and anthropic-sdk-python rely
// on: every frame named, its event: equal to data.type; exactly one
// message_start, first (only an error may come before it), with content []
// and usage.input_tokens of at least 1, type "message", role "assistant"
// and an id; blocks opened one at a time at index 0..n-1, text blocks with
// text "" and tool_use blocks with id, name and input {}, filled only by
// text_delta and input_json_delta fragments that join to a JSON object;
// exactly one message_delta, after every block stopped, with a stop_reason,
// stop_sequence and usage.output_tokens; then message_stop, last. A stream
// that failed ends with one error event holding error.type and
// error.message.
func Messages(raw []byte) (*MessagesStream, error) {
	r, fs, comments := read("messages", raw)
	s := &MessagesStream{Comments: comments}
	var (
		started, stopped bool
		deltas           int
		open             = -1 // the block being streamed
		kind             string
		fragments        string
		sawFragment      bool
	)
	for n, f := range fs {
		data := object(f.data)
		if data == nil {
			r.add("frame %d data is not a JSON object: %q", n, f.data)
			continue
		}
		typ := str(data, "type")
		if f.event == "" || f.event != typ {
			r.add("frame %d is named %q but its type is %q (the SDK drops unnamed frames)", n, f.event, typ)
		}
		switch {
		case stopped:
			r.add("frame %d (%s) after message_stop", n, typ)
		case s.Error != nil:
			r.add("frame %d (%s) after an error event", n, typ)
		case !started && typ != "message_start" && typ != "error":
			r.add("%s before message_start: %s", typ, f.data)
		case deltas > 0 && typ != "message_stop":
			r.add("frame %d (%s) after message_delta; only message_stop may follow it", n, typ)
		}
		idx, hasIndex := integer(data, "index")
		switch typ {
		case "message_start":
			if started {
				r.add("a second message_start at frame %d (the SDK throws)", n)
			}
			started = true
			m := obj(data, "message")
			if c, ok := m["content"].([]any); !ok || len(c) != 0 {
				r.add("message_start content is %s, want [] (else blocks are duplicated)", show(m["content"]))
			}
			in, _ := integer(obj(m, "usage"), "input_tokens")
			if in < 1 {
				r.add("message_start usage.input_tokens is %d, never 0: %s", in, show(m["usage"]))
			}
			if str(m, "type") != "message" || str(m, "role") != "assistant" || str(m, "id") == "" {
				r.add("message_start message has type %q, role %q, id %q; want message, assistant and an id", str(m, "type"), str(m, "role"), str(m, "id"))
			}
			s.ID, s.Model, s.InputTokens = str(m, "id"), str(m, "model"), in
		case "ping":
			s.Pings++
		case "content_block_start":
			if !hasIndex || idx != len(s.Content) || open != -1 {
				r.add("content_block_start index %v while %d blocks were opened and block %d is open; indices must count up from 0", data["index"], len(s.Content), open)
			}
			b := obj(data, "content_block")
			if b == nil {
				r.add("content_block_start without content_block: %s", f.data)
				b = map[string]any{}
			}
			kind, fragments, sawFragment = str(b, "type"), "", false
			switch kind {
			case "text":
				if t, ok := b["text"].(string); !ok || t != "" {
					r.add("a text block starts with text %s, want \"\"", show(b["text"]))
				}
			case "tool_use":
				if in, ok := b["input"].(map[string]any); !ok || len(in) != 0 || str(b, "id") == "" || str(b, "name") == "" {
					r.add("a tool_use block starts as %s, want id, name and input {} (arguments only as input_json_delta)", show(b))
				}
			default:
				r.add("a content block of type %s", show(b["type"]))
			}
			block := map[string]any{}
			for k, v := range b {
				block[k] = v
			}
			open = len(s.Content)
			s.Content = append(s.Content, block)
		case "content_block_delta":
			d := obj(data, "delta")
			if !hasIndex || idx != open || open == -1 || d == nil {
				r.add("a delta for block %v while block %d is open: %s", data["index"], open, f.data)
				continue
			}
			b := s.Content[open]
			switch {
			case kind == "text" && str(d, "type") == "text_delta":
				t, ok := d["text"].(string)
				if !ok {
					r.add("a text_delta without text: %s", f.data)
				}
				b["text"] = str(b, "text") + t
				s.Text += t
			case kind == "tool_use" && str(d, "type") == "input_json_delta":
				if _, ok := d["partial_json"].(string); !ok {
					r.add("an input_json_delta without partial_json: %s", f.data)
				}
				fragments += str(d, "partial_json")
				sawFragment = true
			default:
				r.add("a %s delta in a %s block", show(d["type"]), kind)
			}
		case "content_block_stop":
			if !hasIndex || idx != open || open == -1 {
				r.add("content_block_stop for block %v while block %d is open", data["index"], open)
				continue
			}
			if kind == "tool_use" {
				b := s.Content[open]
				if sawFragment {
					var in map[string]any
					if err := json.Unmarshal([]byte(fragments), &in); err != nil || in == nil {
						r.add("block %d: the input_json_delta fragments %q are not a JSON object", open, fragments)
					}
					b["input"] = in
				}
				s.Calls = append(s.Calls, Call{ID: str(b, "id"), Name: str(b, "name"), Arguments: fragments})
			}
			open = -1
		case "message_delta":
			deltas++
			if deltas > 1 {
				r.add("a second message_delta at frame %d", n)
			}
			if open != -1 {
				r.add("message_delta while block %d is open", open)
			}
			d := obj(data, "delta")
			s.StopReason = str(d, "stop_reason")
			if s.StopReason == "" {
				r.add("message_delta without a stop_reason: %s", f.data)
			}
			if _, ok := d["stop_sequence"]; !ok {
				r.add("message_delta without stop_sequence: %s", f.data)
			}
			u := obj(data, "usage")
			out, ok := integer(u, "output_tokens")
			if !ok {
				r.add("message_delta without usage.output_tokens: %s", f.data)
			}
			s.OutputTokens = out
			if in, ok := integer(u, "input_tokens"); ok {
				s.InputTokens = in
			}
			s.Usage = map[string]float64{}
			for k, v := range u {
				if x, ok := v.(float64); ok {
					s.Usage[k] = x
				}
			}
		case "message_stop":
			if deltas == 0 {
				r.add("message_stop before message_delta")
			}
			stopped = true
		case "error":
			e := obj(data, "error")
			if str(e, "type") == "" || str(e, "message") == "" {
				r.add("the error event %s needs error.type and error.message", f.data)
			}
			if e == nil {
				e = map[string]any{}
			}
			s.Error = e
		default:
			r.add("frame %d: unknown event %q", n, typ)
		}
	}
	if s.Error == nil {
		if !started {
			r.add("has no message_start")
		}
		if !stopped {
			r.add("does not end with message_stop (finalMessage() rejects)")
		}
	}
	return s, r.err()
}
