package clienttest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// frame is one server-sent event as a client parses it.
type frame struct {
	Event   string
	Data    string
	Comment bool // a ":" line only: a keepalive
}

// frames splits a raw event stream the way the SDKs do: events end with a
// blank line; ":" lines are comments.
func frames(t testing.TB, raw []byte) []frame {
	t.Helper()
	text := strings.ReplaceAll(string(raw), "\r\n", "\n")
	if text != "" && !strings.HasSuffix(text, "\n\n") {
		t.Errorf("the stream does not end with a blank line after its last event: %q", tail(text))
	}
	var out []frame
	for _, block := range strings.Split(text, "\n\n") {
		if strings.TrimSpace(block) == "" {
			continue
		}
		var f frame
		var data []string
		onlyComments := true
		for _, line := range strings.Split(block, "\n") {
			switch {
			case strings.HasPrefix(line, ":"):
				continue
			case strings.HasPrefix(line, "event:"):
				f.Event = strings.TrimSpace(strings.TrimPrefix(line, "event:"))
			case strings.HasPrefix(line, "data:"):
				data = append(data, strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
			default:
				t.Errorf("a stream line is neither a comment, an event name nor data: %q", line)
			}
			onlyComments = false
		}
		f.Data, f.Comment = strings.Join(data, "\n"), onlyComments
		out = append(out, f)
	}
	return out
}

func tail(s string) string {
	if len(s) > 200 {
		return "…" + s[len(s)-200:]
	}
	return s
}

// visible is what a client ends up with, from a stream or a body: the
// answer's text, the calls it must run, why it stopped and the usage.
type visible struct {
	ID      string
	Text    string
	Calls   []call
	Stop    string
	In, Out int
}

// checkChatStream checks a Chat Completions stream against the rules the
// SDKs rely on and returns what it carried.
func checkChatStream(t testing.TB, raw []byte, includeUsage bool) visible {
	t.Helper()
	var v visible
	fs := frames(t, raw)
	for len(fs) > 0 && fs[len(fs)-1].Comment {
		fs = fs[:len(fs)-1]
	}
	if len(fs) == 0 || fs[len(fs)-1].Data != "[DONE]" {
		t.Fatalf("chat stream: does not end with data: [DONE]:\n%s", raw)
	}
	var created float64
	var model string
	usageChunks := 0
	sawRole := false
	finishes := 0
	args := map[int]*call{}
	var order []int
	chunks := 0
	lastChunk := -1 // the last frame before [DONE] that is not a comment
	for i, f := range fs[:len(fs)-1] {
		if !f.Comment {
			lastChunk = i
		}
	}
	for i, f := range fs[:len(fs)-1] {
		if f.Comment {
			continue
		}
		if f.Event != "" {
			t.Errorf("chat stream: frame %d has an event: line (%q), which openai-node cannot accumulate", i, f.Event)
		}
		var c struct {
			ID      *string         `json:"id"`
			Created float64         `json:"created"`
			Model   string          `json:"model"`
			Usage   json.RawMessage `json:"usage"`
			Error   json.RawMessage `json:"error"`
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
		if err := json.Unmarshal([]byte(f.Data), &c); err != nil {
			t.Errorf("chat stream: frame %d is not JSON: %v: %q", i, err, f.Data)
			continue
		}
		if len(c.Error) > 0 && string(c.Error) != "null" {
			t.Errorf("chat stream: in-stream error: %s", c.Error)
			continue
		}
		if c.ID == nil || *c.ID == "" {
			t.Errorf("chat stream: chunk %d has no id", i)
			continue
		}
		if chunks == 0 {
			v.ID, created, model = *c.ID, c.Created, c.Model
		} else if *c.ID != v.ID || c.Created != created || c.Model != model {
			t.Errorf("chat stream: chunk %d has id/created/model %q/%v/%q, the first had %q/%v/%q (a changed id starts a new completion in openai-node)", i, *c.ID, c.Created, c.Model, v.ID, created, model)
		}
		chunks++
		if c.Choices == nil {
			t.Errorf("chat stream: chunk %d has no choices field", i)
			continue
		}
		hasUsage := len(c.Usage) > 0 && string(c.Usage) != "null"
		if len(*c.Choices) == 0 {
			if !hasUsage {
				t.Errorf("chat stream: chunk %d has choices:[] but no usage", i)
				continue
			}
			usageChunks++
			if i != lastChunk {
				t.Errorf("chat stream: the usage chunk is not the last before [DONE] (frame %d of %d)", i, len(fs))
			}
			var u struct {
				P int `json:"prompt_tokens"`
				C int `json:"completion_tokens"`
				T int `json:"total_tokens"`
			}
			if err := json.Unmarshal(c.Usage, &u); err != nil {
				t.Errorf("chat stream: usage %s: %v", c.Usage, err)
			}
			v.In, v.Out = u.P, u.C
			if u.T != u.P+u.C {
				t.Errorf("chat stream: usage total_tokens %d != %d + %d", u.T, u.P, u.C)
			}
			continue
		}
		if hasUsage {
			t.Errorf("chat stream: chunk %d carries choices and usage %s; only the final choices:[] chunk may", i, c.Usage)
		}
		for _, ch := range *c.Choices {
			if ch.Index != 0 {
				t.Errorf("chat stream: choice index %d, want 0", ch.Index)
			}
			if !sawRole {
				if ch.Delta.Role == nil || *ch.Delta.Role != "assistant" {
					t.Errorf("chat stream: the first chunk of the choice has no delta.role \"assistant\": %s", f.Data)
				}
				sawRole = true
			}
			if finishes > 0 {
				t.Errorf("chat stream: a choice chunk after finish_reason: %s", f.Data)
			}
			if ch.Delta.Content != nil {
				v.Text += *ch.Delta.Content
			}
			for _, tc := range ch.Delta.ToolCalls {
				if tc.Index == nil {
					t.Errorf("chat stream: a tool-call delta without index (openai-node drops the call): %s", f.Data)
					continue
				}
				c, seen := args[*tc.Index]
				if !seen {
					if tc.ID == nil || *tc.ID == "" || tc.Type == nil || *tc.Type != "function" || tc.Function.Name == nil || *tc.Function.Name == "" {
						t.Errorf("chat stream: the first delta of tool call %d lacks id, type \"function\" or name: %s", *tc.Index, f.Data)
						continue
					}
					if *tc.Index != len(order) {
						t.Errorf("chat stream: tool call index %d opened after %d calls; indices must be 0-based and dense", *tc.Index, len(order))
					}
					c = &call{ID: *tc.ID, Name: *tc.Function.Name}
					args[*tc.Index] = c
					order = append(order, *tc.Index)
				} else if tc.ID != nil || tc.Function.Name != nil {
					t.Errorf("chat stream: a later delta of tool call %d repeats id or name: %s", *tc.Index, f.Data)
				}
				if tc.Function.Arguments != nil {
					c.Args += *tc.Function.Arguments
				}
			}
			if ch.FinishReason != nil {
				finishes++
				v.Stop = *ch.FinishReason
			}
		}
	}
	if finishes != 1 {
		t.Errorf("chat stream: %d chunks carry a finish_reason, want exactly 1", finishes)
	}
	if includeUsage && usageChunks != 1 {
		t.Errorf("chat stream: %d usage chunks with include_usage, want exactly 1", usageChunks)
	}
	if !includeUsage && usageChunks != 0 {
		t.Errorf("chat stream: %d usage chunks without include_usage, want none", usageChunks)
	}
	for _, i := range order {
		v.Calls = append(v.Calls, *args[i])
	}
	return v
}

// checkResponsesStream checks a Responses stream against the rules the
// SDKs rely on and returns what it carried.
func checkResponsesStream(t testing.TB, raw []byte) visible {
	t.Helper()
	var v visible
	fs := frames(t, raw)
	lastSeq := -1
	var types []string
	opened := map[int]string{} // output_index → item type
	parts := map[[2]int]bool{}
	texts := map[int]string{}
	var textOrder []int
	for i, f := range fs {
		if f.Comment {
			continue
		}
		var e struct {
			Type     string          `json:"type"`
			Seq      *int            `json:"sequence_number"`
			Output   *int            `json:"output_index"`
			Content  *int            `json:"content_index"`
			Delta    string          `json:"delta"`
			Item     json.RawMessage `json:"item"`
			Response json.RawMessage `json:"response"`
		}
		if err := json.Unmarshal([]byte(f.Data), &e); err != nil {
			t.Errorf("responses stream: frame %d is not JSON: %v: %q", i, err, f.Data)
			continue
		}
		if f.Event != e.Type {
			t.Errorf("responses stream: frame %d is named %q but its type is %q", i, f.Event, e.Type)
		}
		if e.Seq == nil || *e.Seq <= lastSeq {
			t.Errorf("responses stream: frame %d (%s) sequence_number %v does not increase from %d", i, e.Type, e.Seq, lastSeq)
		} else {
			lastSeq = *e.Seq
		}
		types = append(types, e.Type)
		idx := -1
		if e.Output != nil {
			idx = *e.Output
		}
		switch e.Type {
		case "response.created", "response.in_progress", "response.completed", "response.incomplete", "response.failed":
			var r struct {
				ID    string `json:"id"`
				Usage *struct {
					In  int `json:"input_tokens"`
					Out int `json:"output_tokens"`
					Tot int `json:"total_tokens"`
				} `json:"usage"`
				Status string `json:"status"`
			}
			if err := json.Unmarshal(e.Response, &r); err != nil || r.ID == "" {
				t.Errorf("responses stream: %s without a response id: %s", e.Type, f.Data)
				continue
			}
			if v.ID == "" {
				v.ID = r.ID
			} else if r.ID != v.ID {
				t.Errorf("responses stream: %s has response id %q, the stream began with %q", e.Type, r.ID, v.ID)
			}
			if e.Type != "response.created" && e.Type != "response.in_progress" {
				v.Stop = r.Status
				if r.Usage == nil {
					t.Errorf("responses stream: %s without usage", e.Type)
				} else {
					v.In, v.Out = r.Usage.In, r.Usage.Out
					if r.Usage.Tot != r.Usage.In+r.Usage.Out {
						t.Errorf("responses stream: usage total_tokens %d != %d + %d", r.Usage.Tot, r.Usage.In, r.Usage.Out)
					}
				}
			}
		case "response.output_item.added":
			var it struct{ Type string }
			json.Unmarshal(e.Item, &it)
			if _, dup := opened[idx]; dup {
				t.Errorf("responses stream: output item %d added twice", idx)
			}
			if idx != len(opened) {
				t.Errorf("responses stream: output item %d added after %d items; output_index must count up from 0", idx, len(opened))
			}
			opened[idx] = it.Type
		case "response.content_part.added":
			if _, ok := opened[idx]; !ok {
				t.Errorf("responses stream: content part added to output item %d, which was never added", idx)
			}
			if e.Content != nil {
				parts[[2]int{idx, *e.Content}] = true
			}
		case "response.output_text.delta":
			if e.Content == nil || !parts[[2]int{idx, *e.Content}] {
				t.Errorf("responses stream: a text delta for output %d before its content part was added: %s", idx, f.Data)
			}
			if _, ok := texts[idx]; !ok {
				textOrder = append(textOrder, idx)
			}
			texts[idx] += e.Delta
		case "response.output_item.done":
			if _, ok := opened[idx]; !ok {
				t.Errorf("responses stream: output item %d done before it was added", idx)
			}
			var it struct {
				Type      string `json:"type"`
				CallID    string `json:"call_id"`
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			}
			json.Unmarshal(e.Item, &it)
			if it.Type == "function_call" {
				v.Calls = append(v.Calls, call{ID: it.CallID, Name: it.Name, Args: it.Arguments})
			}
		default:
			if strings.HasPrefix(e.Type, "response.") && e.Output != nil {
				if _, ok := opened[idx]; !ok {
					t.Errorf("responses stream: %s refers to output item %d before it was added", e.Type, idx)
				}
			}
		}
	}
	if len(types) < 3 || types[0] != "response.created" || types[1] != "response.in_progress" {
		t.Errorf("responses stream: begins %v, want response.created then response.in_progress", first(types, 2))
	}
	if n := count(types, "response.created"); n != 1 {
		t.Errorf("responses stream: %d response.created events, want 1", n)
	}
	if len(types) > 0 {
		switch last := types[len(types)-1]; last {
		case "response.completed", "response.incomplete", "response.failed":
		default:
			t.Errorf("responses stream: ends with %s, want response.completed, .incomplete or .failed", last)
		}
	}
	for _, idx := range textOrder {
		v.Text += texts[idx]
	}
	return v
}

// checkMessagesStream checks an Anthropic Messages stream against the
// rules the SDKs rely on and returns what it carried.
func checkMessagesStream(t testing.TB, raw []byte) visible {
	t.Helper()
	var v visible
	fs := frames(t, raw)
	starts := 0
	open := -1   // the block being streamed, -1 when none
	blocks := 0  // blocks opened so far
	kind := ""   // type of the open block
	var cur call // the open tool_use block
	var types []string
	for i, f := range fs {
		if f.Comment {
			continue
		}
		var e struct {
			Type    string `json:"type"`
			Index   *int   `json:"index"`
			Message *struct {
				ID      string          `json:"id"`
				Content json.RawMessage `json:"content"`
				Usage   struct {
					In  int `json:"input_tokens"`
					Out int `json:"output_tokens"`
				} `json:"usage"`
			} `json:"message"`
			ContentBlock *struct {
				Type  string          `json:"type"`
				ID    string          `json:"id"`
				Name  string          `json:"name"`
				Text  *string         `json:"text"`
				Input json.RawMessage `json:"input"`
			} `json:"content_block"`
			Delta *struct {
				Type        string  `json:"type"`
				Text        string  `json:"text"`
				PartialJSON string  `json:"partial_json"`
				StopReason  *string `json:"stop_reason"`
			} `json:"delta"`
			Usage *struct {
				In  *int `json:"input_tokens"`
				Out *int `json:"output_tokens"`
			} `json:"usage"`
			Error json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal([]byte(f.Data), &e); err != nil {
			t.Errorf("messages stream: frame %d is not JSON: %v: %q", i, err, f.Data)
			continue
		}
		if f.Event == "" || f.Event != e.Type {
			t.Errorf("messages stream: frame %d is named %q but its type is %q (the SDK drops unnamed frames)", i, f.Event, e.Type)
		}
		types = append(types, e.Type)
		if starts == 0 && e.Type != "message_start" {
			t.Errorf("messages stream: %s before message_start: %s", e.Type, f.Data)
		}
		switch e.Type {
		case "message_start":
			starts++
			if e.Message == nil {
				t.Errorf("messages stream: message_start without a message")
				continue
			}
			v.ID = e.Message.ID
			if string(bytes.TrimSpace(e.Message.Content)) != "[]" {
				t.Errorf("messages stream: message_start content is %s, want [] (else blocks are duplicated)", e.Message.Content)
			}
			if e.Message.Usage.In <= 0 {
				t.Errorf("messages stream: message_start usage.input_tokens is %d, never 0", e.Message.Usage.In)
			}
			v.In = e.Message.Usage.In
		case "content_block_start":
			if e.Index == nil || *e.Index != blocks || open != -1 {
				t.Errorf("messages stream: content_block_start index %v while %d blocks were opened and block %d is open; indices must count up from 0", e.Index, blocks, open)
			}
			if e.ContentBlock == nil {
				t.Errorf("messages stream: content_block_start without content_block")
				continue
			}
			open, kind = blocks, e.ContentBlock.Type
			blocks++
			switch kind {
			case "text":
				if e.ContentBlock.Text == nil || *e.ContentBlock.Text != "" {
					t.Errorf("messages stream: a text block starts with text %v, want \"\"", e.ContentBlock.Text)
				}
			case "tool_use":
				if string(bytes.TrimSpace(e.ContentBlock.Input)) != "{}" {
					t.Errorf("messages stream: a tool_use block starts with input %s, want {} (arguments only as input_json_delta)", e.ContentBlock.Input)
				}
				cur = call{ID: e.ContentBlock.ID, Name: e.ContentBlock.Name}
			}
		case "content_block_delta":
			if e.Index == nil || *e.Index != open || e.Delta == nil {
				t.Errorf("messages stream: a delta for block %v while block %d is open: %s", e.Index, open, f.Data)
				continue
			}
			switch {
			case kind == "text" && e.Delta.Type == "text_delta":
				v.Text += e.Delta.Text
			case kind == "tool_use" && e.Delta.Type == "input_json_delta":
				cur.Args += e.Delta.PartialJSON
			default:
				t.Errorf("messages stream: a %s delta in a %s block", e.Delta.Type, kind)
			}
		case "content_block_stop":
			if e.Index == nil || *e.Index != open {
				t.Errorf("messages stream: content_block_stop for block %v while block %d is open", e.Index, open)
			}
			if kind == "tool_use" {
				v.Calls = append(v.Calls, cur)
			}
			open = -1
		case "message_delta":
			if open != -1 {
				t.Errorf("messages stream: message_delta while block %d is open", open)
			}
			if e.Delta == nil || e.Delta.StopReason == nil {
				t.Errorf("messages stream: message_delta without stop_reason: %s", f.Data)
			} else {
				v.Stop = *e.Delta.StopReason
			}
			if e.Usage == nil || e.Usage.Out == nil {
				t.Errorf("messages stream: message_delta without usage.output_tokens: %s", f.Data)
			} else {
				v.Out = *e.Usage.Out
				if e.Usage.In != nil {
					v.In = *e.Usage.In
				}
			}
		case "error":
			t.Errorf("messages stream: in-stream error: %s", e.Error)
		}
	}
	if starts != 1 {
		t.Errorf("messages stream: %d message_start events, want exactly 1", starts)
	}
	if n := count(types, "message_delta"); n != 1 {
		t.Errorf("messages stream: %d message_delta events, want 1", n)
	}
	if len(types) == 0 || types[len(types)-1] != "message_stop" {
		t.Errorf("messages stream: does not end with message_stop (finalMessage() rejects)")
	}
	return v
}

func count(xs []string, x string) int {
	n := 0
	for _, y := range xs {
		if y == x {
			n++
		}
	}
	return n
}

func first(xs []string, n int) []string {
	if len(xs) < n {
		return xs
	}
	return xs[:n]
}

// visibleOf reads the same facts from a whole response object: a
// non-streamed body, or what an SDK helper accumulated.
func visibleOf(t testing.TB, sdk string, body []byte) visible {
	t.Helper()
	var v visible
	switch sdk {
	case chat:
		var r struct {
			ID      string `json:"id"`
			Choices []struct {
				FinishReason string `json:"finish_reason"`
				Message      struct {
					Content   *string `json:"content"`
					ToolCalls []struct {
						ID       string `json:"id"`
						Function struct{ Name, Arguments string }
					} `json:"tool_calls"`
				} `json:"message"`
			} `json:"choices"`
			Usage *struct {
				P int `json:"prompt_tokens"`
				C int `json:"completion_tokens"`
			} `json:"usage"`
		}
		mustDecode(t, body, &r)
		v.ID = r.ID
		if len(r.Choices) != 1 {
			t.Fatalf("chat completion with %d choices, want 1: %s", len(r.Choices), body)
		}
		c := r.Choices[0]
		if c.Message.Content != nil {
			v.Text = *c.Message.Content
		}
		for _, tc := range c.Message.ToolCalls {
			v.Calls = append(v.Calls, call{ID: tc.ID, Name: tc.Function.Name, Args: tc.Function.Arguments})
		}
		v.Stop = c.FinishReason
		if r.Usage != nil {
			v.In, v.Out = r.Usage.P, r.Usage.C
		}
	case responses:
		var r struct {
			ID     string `json:"id"`
			Status string `json:"status"`
			Output []struct {
				Type    string `json:"type"`
				Content []struct {
					Type string `json:"type"`
					Text string `json:"text"`
				} `json:"content"`
				CallID    string `json:"call_id"`
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"output"`
			Usage *struct {
				In  int `json:"input_tokens"`
				Out int `json:"output_tokens"`
			} `json:"usage"`
		}
		mustDecode(t, body, &r)
		v.ID, v.Stop = r.ID, r.Status
		for _, it := range r.Output {
			switch it.Type {
			case "message":
				for _, p := range it.Content {
					if p.Type == "output_text" {
						v.Text += p.Text
					}
				}
			case "function_call":
				v.Calls = append(v.Calls, call{ID: it.CallID, Name: it.Name, Args: it.Arguments})
			}
		}
		if r.Usage != nil {
			v.In, v.Out = r.Usage.In, r.Usage.Out
		}
	case messages:
		var r struct {
			ID      string `json:"id"`
			Content []struct {
				Type  string          `json:"type"`
				Text  string          `json:"text"`
				ID    string          `json:"id"`
				Name  string          `json:"name"`
				Input json.RawMessage `json:"input"`
			} `json:"content"`
			StopReason string `json:"stop_reason"`
			Usage      struct {
				In  int `json:"input_tokens"`
				Out int `json:"output_tokens"`
			} `json:"usage"`
		}
		mustDecode(t, body, &r)
		v.ID, v.Stop = r.ID, r.StopReason
		for _, b := range r.Content {
			switch b.Type {
			case "text":
				v.Text += b.Text
			case "tool_use":
				v.Calls = append(v.Calls, call{ID: b.ID, Name: b.Name, Args: string(b.Input)})
			}
		}
		v.In, v.Out = r.Usage.In, r.Usage.Out
	default:
		t.Fatalf("visibleOf: unknown protocol %q", sdk)
	}
	return v
}

func mustDecode(t testing.TB, body []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(body, v); err != nil {
		t.Fatalf("not the JSON expected: %v\n%s", err, body)
	}
}

// checkStream checks a raw stream of protocol sdk and returns what it
// carried.
func checkStream(t testing.TB, sdk string, raw []byte, includeUsage bool) visible {
	t.Helper()
	switch sdk {
	case chat:
		return checkChatStream(t, raw, includeUsage)
	case responses:
		return checkResponsesStream(t, raw)
	case messages:
		return checkMessagesStream(t, raw)
	}
	panic(fmt.Sprintf("checkStream: unknown protocol %q", sdk))
}

// sameJSON reports whether two JSON texts hold the same value.
func sameJSON(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return a == b
	}
	return reflect.DeepEqual(x, y)
}
