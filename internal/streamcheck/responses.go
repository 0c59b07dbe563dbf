package streamcheck

import (
	"strings"
)

// Event is one Responses stream event.
type Event struct {
	Type string
	Data map[string]any
	Raw  string
}

// ResponsesStream is what openai-node's ResponseStream accumulates from a
// Responses stream.
type ResponsesStream struct {
	ID, Model    string
	Events       []Event
	Final        map[string]any // the response of the last event
	Status       string         // Final's status
	Text         string         // every text delta, in order
	Calls        []Call         // the function_call items done, in order
	InputTokens  int
	OutputTokens int
	Comments     int
}

type responsesItem struct {
	id, typ  string
	done     bool
	parts    int
	text     string
	args     string
	finished any
}

// Responses checks a Responses stream against the rules openai-node's
// ResponseStream and openai-python rely on: every event named, its event:
// equal to data.type, sequence_number 0, 1, 2, …; response.created then
// response.in_progress first, both in_progress with no output; one
// response id and model throughout, object "response"; every item opened by
// output_item.added at the next output_index, with an id, status
// in_progress (a function_call with a new call_id, a name and arguments
// "") before a part, delta or done refers to it, and nothing but its
// output_item.done after its done; a message's content part opened before
// its deltas; done events repeating what the deltas built; an error event
// followed by response.failed; and one final response.completed,
// .incomplete or .failed, last, whose status matches, whose output holds
// exactly the items the stream finished (all of them unless it failed) and,
// unless it failed, whose usage has total = input + output.
func Responses(raw []byte) (*ResponsesStream, error) {
	r, fs, comments := read("responses", raw)
	s := &ResponsesStream{Comments: comments}
	for n, f := range fs {
		d := object(f.data)
		if d == nil {
			r.add("frame %d data is not a JSON object: %q", n, f.data)
			continue
		}
		if f.event == "" || str(d, "type") != f.event {
			r.add("frame %d is named %q but its type is %q", n, f.event, str(d, "type"))
		}
		s.Events = append(s.Events, Event{Type: str(d, "type"), Data: d, Raw: f.data})
	}
	if len(s.Events) < 2 || s.Events[0].Type != "response.created" || s.Events[1].Type != "response.in_progress" {
		var first []string
		for i := 0; i < len(s.Events) && i < 2; i++ {
			first = append(first, s.Events[i].Type)
		}
		r.add("begins %v, want response.created then response.in_progress", first)
	}
	var items []*responsesItem
	callIDs := map[string]bool{}
	terminals := 0
	item := func(e Event) *responsesItem {
		i, ok := integer(e.Data, "output_index")
		if !ok || i < 0 || i >= len(items) {
			r.add("%s refers to output item %v before it was added: %s", e.Type, e.Data["output_index"], e.Raw)
			return nil
		}
		it := items[i]
		if id, ok := e.Data["item_id"]; ok && id != it.id {
			r.add("%s has item_id %v, the item at its index is %s", e.Type, id, it.id)
		}
		if it.done && e.Type != "response.output_item.done" {
			r.add("%s after the item was done: %s", e.Type, e.Raw)
		}
		return it
	}
	for n, e := range s.Events {
		if seq, ok := integer(e.Data, "sequence_number"); !ok || seq != n {
			r.add("event %d (%s) has sequence_number %v, want %d", n, e.Type, e.Data["sequence_number"], n)
		}
		resp := obj(e.Data, "response")
		if resp != nil {
			if s.ID == "" {
				s.ID, s.Model = str(resp, "id"), str(resp, "model")
			}
			if str(resp, "id") != s.ID || s.ID == "" || str(resp, "model") != s.Model {
				r.add("%s has response id %q and model %q, the stream began with %q and %q", e.Type, str(resp, "id"), str(resp, "model"), s.ID, s.Model)
			}
			if str(resp, "object") != "response" {
				r.add("%s response has object %v", e.Type, show(resp["object"]))
			}
		}
		if _, ok := e.Data["delta"].(string); strings.HasSuffix(e.Type, ".delta") && !ok {
			r.add("%s without a string delta: %s", e.Type, e.Raw)
		}
		terminal := false
		switch e.Type {
		case "response.created", "response.in_progress":
			out, ok := resp["output"].([]any)
			if n > 1 || str(resp, "status") != "in_progress" || !ok || len(out) != 0 {
				r.add("%s at event %d with status %v and output %s", e.Type, n, show(resp["status"]), show(resp["output"]))
			}
		case "response.output_item.added":
			if i, ok := integer(e.Data, "output_index"); !ok || i != len(items) {
				r.add("output item %v added after %d items; output_index must count up from 0", e.Data["output_index"], len(items))
			}
			it := obj(e.Data, "item")
			if str(it, "id") == "" || str(it, "status") != "in_progress" {
				r.add("output item added with id %q, status %v: %s", str(it, "id"), show(it["status"]), e.Raw)
			}
			if str(it, "type") == "function_call" {
				cid := str(it, "call_id")
				if a, ok := it["arguments"].(string); cid == "" || callIDs[cid] || !ok || a != "" || str(it, "name") == "" {
					r.add("function_call added with call_id %q (seen before: %v), arguments %s, name %s", cid, callIDs[cid], show(it["arguments"]), show(it["name"]))
				}
				callIDs[cid] = true
			}
			items = append(items, &responsesItem{id: str(it, "id"), typ: str(it, "type")})
		case "response.content_part.added":
			if it := item(e); it != nil {
				if ci, ok := integer(e.Data, "content_index"); it.typ != "message" || !ok || ci != it.parts {
					r.add("content part %v added to a %s with %d parts", e.Data["content_index"], it.typ, it.parts)
				}
				it.parts++
			}
		case "response.output_text.delta":
			if it := item(e); it != nil {
				if ci, ok := integer(e.Data, "content_index"); it.typ != "message" || !ok || ci >= it.parts {
					r.add("a text delta for output %s before its content part was added: %s", it.id, e.Raw)
				}
				it.text += str(e.Data, "delta")
			}
			s.Text += str(e.Data, "delta")
		case "response.output_text.done":
			if it := item(e); it != nil && e.Data["text"] != it.text {
				r.add("output_text.done has text %s, the deltas built %q", show(e.Data["text"]), it.text)
			}
		case "response.content_part.done":
			if it := item(e); it != nil && obj(e.Data, "part")["text"] != it.text {
				r.add("content_part.done has part %s, the deltas built %q", show(e.Data["part"]), it.text)
			}
		case "response.function_call_arguments.delta":
			if it := item(e); it != nil {
				if it.typ != "function_call" {
					r.add("an arguments delta on a %s item", it.typ)
				}
				it.args += str(e.Data, "delta")
			}
		case "response.function_call_arguments.done":
			if it := item(e); it != nil && e.Data["arguments"] != it.args {
				r.add("function_call_arguments.done has %s, the deltas built %q", show(e.Data["arguments"]), it.args)
			}
		case "response.output_item.done":
			it := item(e)
			if it == nil {
				continue
			}
			if it.done {
				r.add("output item %s done twice", it.id)
			}
			fin := obj(e.Data, "item")
			if str(fin, "id") != it.id || str(fin, "type") != it.typ {
				r.add("output item done as %s %s, added as %s %s", show(fin["type"]), show(fin["id"]), it.typ, it.id)
			}
			if it.typ == "function_call" {
				if fin["arguments"] != it.args {
					r.add("function_call done with arguments %s, the deltas built %q", show(fin["arguments"]), it.args)
				}
				s.Calls = append(s.Calls, Call{ID: str(fin, "call_id"), Name: str(fin, "name"), Arguments: str(fin, "arguments")})
			}
			it.done, it.finished = true, fin
		case "error":
			if n+1 >= len(s.Events) || s.Events[n+1].Type != "response.failed" {
				r.add("an error event not followed by response.failed")
			}
		case "response.completed", "response.incomplete", "response.failed":
			terminal = true
			terminals++
			if want := strings.TrimPrefix(e.Type, "response."); str(resp, "status") != want {
				r.add("%s with status %s", e.Type, show(resp["status"]))
			}
			out, _ := resp["output"].([]any)
			if len(out) != len(items) {
				r.add("%s holds %d output items, the stream opened %d", e.Type, len(out), len(items))
			}
			for i, it := range items {
				if e.Type != "response.failed" && !it.done {
					r.add("%s while output item %s is still open", e.Type, it.id)
				}
				if it.done && i < len(out) && !sameJSON(out[i], it.finished) {
					r.add("%s output item %d is %s, it was done as %s", e.Type, i, show(out[i]), show(it.finished))
				}
			}
			s.Final, s.Status = resp, str(resp, "status")
			u := obj(resp, "usage")
			in, okIn := integer(u, "input_tokens")
			outTok, okOut := integer(u, "output_tokens")
			total, okTotal := integer(u, "total_tokens")
			s.InputTokens, s.OutputTokens = in, outTok
			switch {
			case u == nil && e.Type == "response.failed":
			case !okIn || !okOut || !okTotal:
				r.add("%s has usage %s, want input_tokens, output_tokens and total_tokens", e.Type, show(resp["usage"]))
			case total != in+outTok:
				r.add("usage total_tokens %d != %d + %d", total, in, outTok)
			}
		default:
			r.add("unexpected event %s: %s", e.Type, e.Raw)
		}
		if terminal != (n == len(s.Events)-1) {
			r.add("event %d of %d is %s; the stream must end with exactly one response.completed, .incomplete or .failed", n, len(s.Events), e.Type)
		}
	}
	if terminals == 0 && len(s.Events) > 0 {
		r.add("ends with %s, want response.completed, .incomplete or .failed", s.Events[len(s.Events)-1].Type)
	}
	return s, r.err()
}
