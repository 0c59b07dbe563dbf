package agenttest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// The three upstream protocols a fake speaks.
const (
	chat      = "chat"
	responses = "responses"
	messages  = "messages"
)

// paths are the endpoints of each protocol as the provider serves them.
var paths = map[string]string{
	chat:      "/v1/chat/completions",
	responses: "/v1/responses",
	messages:  "/v1/messages",
}

// call is one tool call the fake model makes.
type call struct{ ID, Name, Args string }

// reply is one answer of the fake model: a text, or tool calls.
type reply struct {
	Text  string
	Calls []call
}

// seen is one request the fake received.
type seen struct {
	Path   string
	Header http.Header
	Body   []byte
}

// model decides the fake's reply to one request from the conversation in
// it and the tools it offers. An agent CLI makes requests of its own
// (titles, summaries, warm-ups) besides the turns a scenario drives, so a
// reply is chosen by what the request holds, never by how many came before.
type model func(conv []item, tools []string) reply

// upstream is a fake provider of one protocol that answers every request
// with what its model decides, as one JSON body or as a stream when asked.
type upstream struct {
	proto string
	srv   *httptest.Server

	mu    sync.Mutex
	model model
	reqs  []seen
}

func newUpstream(t testing.TB, proto string) *upstream {
	u := &upstream{proto: proto}
	u.srv = httptest.NewServer(http.HandlerFunc(u.serve))
	t.Cleanup(u.srv.Close)
	return u
}

// baseURL is the API root as hookhost's [llm] base_url wants it: OpenAI's
// includes /v1, Anthropic's does not.
func (u *upstream) baseURL() string {
	if u.proto == messages {
		return u.srv.URL
	}
	return u.srv.URL + "/v1"
}

// use makes the next requests answered by m and forgets what was received
// before.
func (u *upstream) use(m model) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.model, u.reqs = m, nil
}

// requests returns what the fake received since the last use.
func (u *upstream) requests() []seen {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]seen(nil), u.reqs...)
}

func (u *upstream) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil {
		http.Error(w, "fake upstream: reading the request: "+err.Error(), http.StatusBadRequest)
		return
	}
	u.mu.Lock()
	n := len(u.reqs)
	u.reqs = append(u.reqs, seen{Path: r.URL.Path, Header: r.Header.Clone(), Body: body})
	m := u.model
	u.mu.Unlock()

	fail := func(status int, msg string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		w.Write(u.errorBody(msg))
	}
	if r.URL.Path != paths[u.proto] {
		fail(http.StatusNotFound, fmt.Sprintf("fake %s upstream: no endpoint %s (want %s)", u.proto, r.URL.Path, paths[u.proto]))
		return
	}
	var req struct {
		Stream bool   `json:"stream"`
		Model  string `json:"model"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		fail(http.StatusBadRequest, "fake upstream: the request body is not JSON: "+err.Error())
		return
	}
	conv, err := conversationOf(u.proto, body)
	if err != nil {
		fail(http.StatusBadRequest, "fake upstream: "+err.Error())
		return
	}
	tools, err := toolsOf(u.proto, body)
	if err != nil {
		fail(http.StatusBadRequest, "fake upstream: "+err.Error())
		return
	}
	if m == nil {
		fail(http.StatusTeapot, "fake upstream: no model set")
		return
	}
	rp := m(conv, tools)
	id := n + 1
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		w.Write(u.render(rp, req.Model, id))
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	// Frame by frame, flushed, as a provider streams.
	for _, f := range strings.SplitAfter(string(u.stream(rp, req.Model, id)), "\n\n") {
		if f == "" {
			continue
		}
		io.WriteString(w, f)
		w.(http.Flusher).Flush()
	}
}

func (u *upstream) errorBody(msg string) []byte {
	if u.proto == messages {
		return mustJSON(obj{"type": "error", "error": obj{"type": "api_error", "message": msg}})
	}
	return mustJSON(obj{"error": obj{"message": msg, "type": "server_error", "param": nil, "code": nil}})
}

type obj = map[string]any

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// halves splits s in two, so every text and argument string arrives in
// more than one delta.
func halves(s string) []string {
	if len(s) < 2 {
		return []string{s}
	}
	return []string{s[:len(s)/2], s[len(s)/2:]}
}

// Usage the fake reports for every reply.
const tokensIn, tokensOut = 11, 7

func (rp reply) stop(proto string) string {
	switch {
	case len(rp.Calls) > 0 && proto == chat:
		return "tool_calls"
	case len(rp.Calls) > 0:
		return "tool_use"
	case proto == chat:
		return "stop"
	}
	return "end_turn"
}

// render is the reply as one JSON body.
func (u *upstream) render(rp reply, model string, id int) []byte {
	switch u.proto {
	case chat:
		msg := obj{"role": "assistant", "content": nil}
		if rp.Text != "" {
			msg["content"] = rp.Text
		}
		if len(rp.Calls) > 0 {
			var tcs []obj
			for _, c := range rp.Calls {
				tcs = append(tcs, obj{"id": c.ID, "type": "function", "function": obj{"name": c.Name, "arguments": c.Args}})
			}
			msg["tool_calls"] = tcs
		}
		return mustJSON(obj{
			"id": fmt.Sprintf("chatcmpl-fake%d", id), "object": "chat.completion", "created": 1700000000 + id, "model": model,
			"choices": []obj{{"index": 0, "finish_reason": rp.stop(chat), "message": msg, "logprobs": nil}},
			"usage":   obj{"prompt_tokens": tokensIn, "completion_tokens": tokensOut, "total_tokens": tokensIn + tokensOut},
		})
	case responses:
		return mustJSON(u.response(model, id, "completed", u.outputItems(rp, id)))
	default:
		content := []obj{}
		if rp.Text != "" {
			content = append(content, obj{"type": "text", "text": rp.Text})
		}
		for _, c := range rp.Calls {
			content = append(content, obj{"type": "tool_use", "id": c.ID, "name": c.Name, "input": json.RawMessage(c.Args)})
		}
		return mustJSON(obj{
			"id": fmt.Sprintf("msg_fake%d", id), "type": "message", "role": "assistant", "model": model,
			"content": content, "stop_reason": rp.stop(messages), "stop_sequence": nil,
			"usage": obj{"input_tokens": tokensIn, "output_tokens": tokensOut},
		})
	}
}

func (u *upstream) response(model string, id int, status string, output []obj) obj {
	r := obj{
		"id": fmt.Sprintf("resp_fake%d", id), "object": "response", "created_at": 1700000000 + id, "status": status,
		"model": model, "output": output, "parallel_tool_calls": true, "tool_choice": "auto", "tools": []obj{},
		"error": nil, "incomplete_details": nil, "instructions": nil, "metadata": obj{}, "temperature": 1.0, "top_p": 1.0,
		"usage": nil,
	}
	if status == "completed" {
		r["usage"] = obj{"input_tokens": tokensIn, "output_tokens": tokensOut, "total_tokens": tokensIn + tokensOut,
			"input_tokens_details": obj{"cached_tokens": 0}, "output_tokens_details": obj{"reasoning_tokens": 0}}
	}
	return r
}

func (u *upstream) outputItems(rp reply, id int) []obj {
	out := []obj{}
	if rp.Text != "" {
		out = append(out, obj{"type": "message", "id": fmt.Sprintf("msg_fake%d", id), "status": "completed", "role": "assistant",
			"content": []obj{{"type": "output_text", "text": rp.Text, "annotations": []obj{}}}})
	}
	for i, c := range rp.Calls {
		out = append(out, obj{"type": "function_call", "id": fmt.Sprintf("fc_fake%d_%d", id, i), "call_id": c.ID,
			"name": c.Name, "arguments": c.Args, "status": "completed"})
	}
	return out
}

// stream is the reply as server-sent events, as the provider sends them.
func (u *upstream) stream(rp reply, model string, id int) []byte {
	var b strings.Builder
	switch u.proto {
	case chat:
		chunk := func(delta obj, finish any) {
			b.WriteString("data: ")
			b.Write(mustJSON(obj{"id": fmt.Sprintf("chatcmpl-fake%d", id), "object": "chat.completion.chunk", "created": 1700000000 + id,
				"model": model, "choices": []obj{{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": nil}}, "usage": nil}))
			b.WriteString("\n\n")
		}
		chunk(obj{"role": "assistant", "content": ""}, nil)
		for _, part := range halves(rp.Text) {
			if part != "" {
				chunk(obj{"content": part}, nil)
			}
		}
		for i, c := range rp.Calls {
			chunk(obj{"tool_calls": []obj{{"index": i, "id": c.ID, "type": "function", "function": obj{"name": c.Name, "arguments": ""}}}}, nil)
			for _, part := range halves(c.Args) {
				chunk(obj{"tool_calls": []obj{{"index": i, "function": obj{"arguments": part}}}}, nil)
			}
		}
		chunk(obj{}, rp.stop(chat))
		// Usage goes last whether or not it was asked for: some
		// OpenAI-compatible servers always send it, and a client must cope.
		b.WriteString("data: ")
		b.Write(mustJSON(obj{"id": fmt.Sprintf("chatcmpl-fake%d", id), "object": "chat.completion.chunk", "created": 1700000000 + id,
			"model": model, "choices": []obj{},
			"usage": obj{"prompt_tokens": tokensIn, "completion_tokens": tokensOut, "total_tokens": tokensIn + tokensOut}}))
		b.WriteString("\n\ndata: [DONE]\n\n")
	case responses:
		seq := 0
		event := func(typ string, data obj) {
			data["type"] = typ
			data["sequence_number"] = seq
			seq++
			fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", typ, mustJSON(data))
		}
		event("response.created", obj{"response": u.response(model, id, "in_progress", []obj{})})
		event("response.in_progress", obj{"response": u.response(model, id, "in_progress", []obj{})})
		items := u.outputItems(rp, id)
		for i, it := range items {
			if it["type"] == "message" {
				itemID := it["id"]
				event("response.output_item.added", obj{"output_index": i, "item": obj{"type": "message", "id": itemID, "status": "in_progress", "role": "assistant", "content": []obj{}}})
				event("response.content_part.added", obj{"output_index": i, "item_id": itemID, "content_index": 0, "part": obj{"type": "output_text", "text": "", "annotations": []obj{}}})
				for _, part := range halves(rp.Text) {
					event("response.output_text.delta", obj{"output_index": i, "item_id": itemID, "content_index": 0, "delta": part, "logprobs": []obj{}})
				}
				event("response.output_text.done", obj{"output_index": i, "item_id": itemID, "content_index": 0, "text": rp.Text, "logprobs": []obj{}})
				event("response.content_part.done", obj{"output_index": i, "item_id": itemID, "content_index": 0, "part": obj{"type": "output_text", "text": rp.Text, "annotations": []obj{}}})
				event("response.output_item.done", obj{"output_index": i, "item": it})
				continue
			}
			added := obj{}
			for k, v := range it {
				added[k] = v
			}
			added["arguments"], added["status"] = "", "in_progress"
			event("response.output_item.added", obj{"output_index": i, "item": added})
			for _, part := range halves(it["arguments"].(string)) {
				event("response.function_call_arguments.delta", obj{"output_index": i, "item_id": it["id"], "delta": part})
			}
			event("response.function_call_arguments.done", obj{"output_index": i, "item_id": it["id"], "arguments": it["arguments"]})
			event("response.output_item.done", obj{"output_index": i, "item": it})
		}
		event("response.completed", obj{"response": u.response(model, id, "completed", items)})
	default:
		event := func(typ string, data obj) {
			data["type"] = typ
			fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", typ, mustJSON(data))
		}
		event("message_start", obj{"message": obj{"id": fmt.Sprintf("msg_fake%d", id), "type": "message", "role": "assistant", "model": model,
			"content": []obj{}, "stop_reason": nil, "stop_sequence": nil, "usage": obj{"input_tokens": tokensIn, "output_tokens": 1}}})
		event("ping", obj{})
		idx := 0
		if rp.Text != "" {
			event("content_block_start", obj{"index": idx, "content_block": obj{"type": "text", "text": ""}})
			for _, part := range halves(rp.Text) {
				event("content_block_delta", obj{"index": idx, "delta": obj{"type": "text_delta", "text": part}})
			}
			event("content_block_stop", obj{"index": idx})
			idx++
		}
		for _, c := range rp.Calls {
			event("content_block_start", obj{"index": idx, "content_block": obj{"type": "tool_use", "id": c.ID, "name": c.Name, "input": obj{}}})
			for _, part := range halves(c.Args) {
				event("content_block_delta", obj{"index": idx, "delta": obj{"type": "input_json_delta", "partial_json": part}})
			}
			event("content_block_stop", obj{"index": idx})
			idx++
		}
		event("message_delta", obj{"delta": obj{"stop_reason": rp.stop(messages), "stop_sequence": nil}, "usage": obj{"output_tokens": tokensOut}})
		event("message_stop", obj{})
	}
	return []byte(b.String())
}
