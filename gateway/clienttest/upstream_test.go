package clienttest

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

// The three upstream protocols a fake speaks, named as client.mjs names
// the SDK call that speaks each.
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

// call is one tool call a scripted round makes.
type call struct {
	ID, Name, Args string
}

// round is one scripted upstream answer, rendered in whichever protocol the
// fake speaks, as one JSON body or, when the request asks for a stream, as
// several frames per text and per call.
type round struct {
	Text    string
	Calls   []call
	In, Out int
	// Status, when not 0 or 200, makes the round an error answer with
	// Message in the protocol's error shape.
	Status  int
	Message string
}

// seen is one request the fake received.
type seen struct {
	Path   string
	Header http.Header
	Body   []byte
}

// upstream is a fake provider of one protocol whose script is replaced per
// test, so one hookhost serve process can stay pointed at it.
type upstream struct {
	t     testing.TB
	proto string
	srv   *httptest.Server

	mu     sync.Mutex
	rounds []round
	reqs   []seen
	sent   [][]byte

	// In model mode (fakemodel_test.go) the fake answers from the
	// conversation instead of a script.
	model  bool
	minted int
	stored map[string]storedResponse
	items  map[string]json.RawMessage
}

func newUpstream(t testing.TB, proto string) *upstream {
	u := &upstream{t: t, proto: proto}
	u.srv = httptest.NewServer(http.HandlerFunc(u.serve))
	t.Cleanup(u.srv.Close)
	return u
}

// baseURL is the API root as the provider's config wants it: OpenAI's
// includes /v1, Anthropic's does not.
func (u *upstream) baseURL() string {
	if u.proto == messages {
		return u.srv.URL
	}
	return u.srv.URL + "/v1"
}

// script makes the next requests get rounds in order and forgets what was
// received before.
func (u *upstream) script(rounds ...round) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.rounds, u.reqs, u.sent = rounds, nil, nil
}

// requests returns what the fake received since the last script.
func (u *upstream) requests() []seen {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]seen(nil), u.reqs...)
}

// responses returns the bodies the fake sent since the last script, byte
// for byte.
func (u *upstream) responses() [][]byte {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([][]byte(nil), u.sent...)
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
	var rd *round
	if n < len(u.rounds) {
		rd = &u.rounds[n]
	}
	u.mu.Unlock()

	var status int
	var ctype string
	var out []byte
	if u.model {
		status, ctype, out = u.think(r.URL.Path, body)
	} else {
		status, ctype, out = u.answer(r.URL.Path, body, rd, n)
	}
	u.mu.Lock()
	u.sent = append(u.sent, out)
	u.mu.Unlock()
	w.Header().Set("Content-Type", ctype)
	w.WriteHeader(status)
	if ctype != "text/event-stream" {
		w.Write(out)
		return
	}
	// Frame by frame, flushed, as a provider streams.
	for _, f := range strings.SplitAfter(string(out), "\n\n") {
		if f == "" {
			continue
		}
		io.WriteString(w, f)
		w.(http.Flusher).Flush()
	}
}

// answer renders request n's reply: the scripted round, or an error saying
// why there is none.
func (u *upstream) answer(path string, body []byte, rd *round, n int) (status int, ctype string, out []byte) {
	if path != paths[u.proto] {
		return http.StatusNotFound, "application/json", u.errorBody(fmt.Sprintf("fake %s upstream: no endpoint %s (want %s)", u.proto, path, paths[u.proto]))
	}
	var req struct {
		Stream        bool `json:"stream"`
		StreamOptions struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
		Model string `json:"model"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return http.StatusBadRequest, "application/json", u.errorBody("fake upstream: the request body is not JSON: " + err.Error())
	}
	if rd == nil {
		return http.StatusTeapot, "application/json", u.errorBody(fmt.Sprintf("fake upstream: no round scripted for request %d", n+1))
	}
	if rd.Status != 0 && rd.Status != http.StatusOK {
		return rd.Status, "application/json", u.errorBody(rd.Message)
	}
	id := n + 1
	if !req.Stream {
		return http.StatusOK, "application/json", u.render(*rd, req.Model, id)
	}
	return http.StatusOK, "text/event-stream", u.stream(*rd, req.Model, id, req.StreamOptions.IncludeUsage)
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

func (rd round) stop(proto string) string {
	switch {
	case len(rd.Calls) > 0 && proto == chat:
		return "tool_calls"
	case len(rd.Calls) > 0:
		return "tool_use"
	case proto == chat:
		return "stop"
	}
	return "end_turn"
}

// render is the round as one JSON body.
func (u *upstream) render(rd round, model string, id int) []byte {
	switch u.proto {
	case chat:
		msg := obj{"role": "assistant", "content": nil}
		if rd.Text != "" {
			msg["content"] = rd.Text
		}
		if len(rd.Calls) > 0 {
			var tcs []obj
			for _, c := range rd.Calls {
				tcs = append(tcs, obj{"id": c.ID, "type": "function", "function": obj{"name": c.Name, "arguments": c.Args}})
			}
			msg["tool_calls"] = tcs
		}
		return mustJSON(obj{
			"id": fmt.Sprintf("chatcmpl-fake%d", id), "object": "chat.completion", "created": 1700000000 + id, "model": model,
			"choices":            []obj{{"index": 0, "finish_reason": rd.stop(chat), "message": msg, "logprobs": nil}},
			"usage":              obj{"prompt_tokens": rd.In, "completion_tokens": rd.Out, "total_tokens": rd.In + rd.Out},
			"system_fingerprint": "fp_fake",
		})
	case responses:
		return mustJSON(u.response(rd, model, id, "completed", u.outputItems(rd, id)))
	default:
		var content []obj
		if rd.Text != "" {
			content = append(content, obj{"type": "text", "text": rd.Text})
		}
		for _, c := range rd.Calls {
			content = append(content, obj{"type": "tool_use", "id": c.ID, "name": c.Name, "input": json.RawMessage(c.Args)})
		}
		if content == nil {
			content = []obj{}
		}
		return mustJSON(obj{
			"id": fmt.Sprintf("msg_fake%d", id), "type": "message", "role": "assistant", "model": model,
			"content": content, "stop_reason": rd.stop(messages), "stop_sequence": nil,
			"usage": obj{"input_tokens": rd.In, "output_tokens": rd.Out},
		})
	}
}

func (u *upstream) response(rd round, model string, id int, status string, output []obj) obj {
	r := obj{
		"id": fmt.Sprintf("resp_fake%d", id), "object": "response", "created_at": 1700000000 + id, "status": status,
		"model": model, "output": output, "parallel_tool_calls": true, "tool_choice": "auto", "tools": []obj{},
		"error": nil, "incomplete_details": nil, "instructions": nil, "metadata": obj{}, "temperature": 1.0, "top_p": 1.0,
		"usage": nil,
	}
	if status == "completed" {
		r["usage"] = obj{"input_tokens": rd.In, "output_tokens": rd.Out, "total_tokens": rd.In + rd.Out,
			"input_tokens_details": obj{"cached_tokens": 0}, "output_tokens_details": obj{"reasoning_tokens": 0}}
	}
	return r
}

func (u *upstream) outputItems(rd round, id int) []obj {
	out := []obj{}
	if rd.Text != "" {
		out = append(out, obj{"type": "message", "id": fmt.Sprintf("msg_fake%d", id), "status": "completed", "role": "assistant",
			"content": []obj{{"type": "output_text", "text": rd.Text, "annotations": []obj{}}}})
	}
	for i, c := range rd.Calls {
		out = append(out, obj{"type": "function_call", "id": fmt.Sprintf("fc_fake%d_%d", id, i), "call_id": c.ID,
			"name": c.Name, "arguments": c.Args, "status": "completed"})
	}
	return out
}

// stream is the round as server-sent events, as the provider sends them.
func (u *upstream) stream(rd round, model string, id int, includeUsage bool) []byte {
	var b strings.Builder
	switch u.proto {
	case chat:
		chunk := func(delta obj, finish any) {
			c := obj{"id": fmt.Sprintf("chatcmpl-fake%d", id), "object": "chat.completion.chunk", "created": 1700000000 + id,
				"model": model, "system_fingerprint": "fp_fake",
				"choices": []obj{{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": nil}}}
			// OpenAI sends the usage field only to a client that asked for it.
			if includeUsage {
				c["usage"] = nil
			}
			b.WriteString("data: ")
			b.Write(mustJSON(c))
			b.WriteString("\n\n")
		}
		chunk(obj{"role": "assistant", "content": ""}, nil)
		for _, part := range halves(rd.Text) {
			if part != "" {
				chunk(obj{"content": part}, nil)
			}
		}
		for i, c := range rd.Calls {
			chunk(obj{"tool_calls": []obj{{"index": i, "id": c.ID, "type": "function", "function": obj{"name": c.Name, "arguments": ""}}}}, nil)
			for _, part := range halves(c.Args) {
				chunk(obj{"tool_calls": []obj{{"index": i, "function": obj{"arguments": part}}}}, nil)
			}
		}
		chunk(obj{}, rd.stop(chat))
		if includeUsage {
			b.WriteString("data: ")
			b.Write(mustJSON(obj{"id": fmt.Sprintf("chatcmpl-fake%d", id), "object": "chat.completion.chunk", "created": 1700000000 + id,
				"model": model, "system_fingerprint": "fp_fake", "choices": []obj{},
				"usage": obj{"prompt_tokens": rd.In, "completion_tokens": rd.Out, "total_tokens": rd.In + rd.Out}}))
			b.WriteString("\n\n")
		}
		b.WriteString("data: [DONE]\n\n")
	case responses:
		seq := 0
		event := func(typ string, data obj) {
			data["type"] = typ
			data["sequence_number"] = seq
			seq++
			fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", typ, mustJSON(data))
		}
		event("response.created", obj{"response": u.response(rd, model, id, "in_progress", []obj{})})
		event("response.in_progress", obj{"response": u.response(rd, model, id, "in_progress", []obj{})})
		items := u.outputItems(rd, id)
		for i, item := range items {
			if item["type"] == "message" {
				itemID := item["id"]
				event("response.output_item.added", obj{"output_index": i, "item": obj{"type": "message", "id": itemID, "status": "in_progress", "role": "assistant", "content": []obj{}}})
				event("response.content_part.added", obj{"output_index": i, "item_id": itemID, "content_index": 0, "part": obj{"type": "output_text", "text": "", "annotations": []obj{}}})
				for _, part := range halves(rd.Text) {
					event("response.output_text.delta", obj{"output_index": i, "item_id": itemID, "content_index": 0, "delta": part, "logprobs": []obj{}})
				}
				event("response.output_text.done", obj{"output_index": i, "item_id": itemID, "content_index": 0, "text": rd.Text, "logprobs": []obj{}})
				event("response.content_part.done", obj{"output_index": i, "item_id": itemID, "content_index": 0, "part": obj{"type": "output_text", "text": rd.Text, "annotations": []obj{}}})
				event("response.output_item.done", obj{"output_index": i, "item": item})
				continue
			}
			added := obj{}
			for k, v := range item {
				added[k] = v
			}
			added["arguments"], added["status"] = "", "in_progress"
			event("response.output_item.added", obj{"output_index": i, "item": added})
			for _, part := range halves(item["arguments"].(string)) {
				event("response.function_call_arguments.delta", obj{"output_index": i, "item_id": item["id"], "delta": part})
			}
			event("response.function_call_arguments.done", obj{"output_index": i, "item_id": item["id"], "arguments": item["arguments"]})
			event("response.output_item.done", obj{"output_index": i, "item": item})
		}
		event("response.completed", obj{"response": u.response(rd, model, id, "completed", items)})
	default:
		event := func(typ string, data obj) {
			data["type"] = typ
			fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", typ, mustJSON(data))
		}
		event("message_start", obj{"message": obj{"id": fmt.Sprintf("msg_fake%d", id), "type": "message", "role": "assistant", "model": model,
			"content": []obj{}, "stop_reason": nil, "stop_sequence": nil, "usage": obj{"input_tokens": rd.In, "output_tokens": 1}}})
		event("ping", obj{})
		idx := 0
		if rd.Text != "" {
			event("content_block_start", obj{"index": idx, "content_block": obj{"type": "text", "text": ""}})
			for _, part := range halves(rd.Text) {
				event("content_block_delta", obj{"index": idx, "delta": obj{"type": "text_delta", "text": part}})
			}
			event("content_block_stop", obj{"index": idx})
			idx++
		}
		for _, c := range rd.Calls {
			event("content_block_start", obj{"index": idx, "content_block": obj{"type": "tool_use", "id": c.ID, "name": c.Name, "input": obj{}}})
			for _, part := range halves(c.Args) {
				event("content_block_delta", obj{"index": idx, "delta": obj{"type": "input_json_delta", "partial_json": part}})
			}
			event("content_block_stop", obj{"index": idx})
			idx++
		}
		event("message_delta", obj{"delta": obj{"stop_reason": rd.stop(messages), "stop_sequence": nil}, "usage": obj{"output_tokens": rd.Out}})
		event("message_stop", obj{})
	}
	return []byte(b.String())
}
