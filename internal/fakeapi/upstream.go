package fakeapi

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

// The three wire protocols an Upstream speaks.
const (
	Chat      = "chat"      // OpenAI Chat Completions
	Responses = "responses" // OpenAI Responses
	Messages  = "messages"  // Anthropic Messages
)

// Path is the endpoint of protocol proto as the provider serves it.
func Path(proto string) string {
	switch proto {
	case Chat:
		return "/v1/chat/completions"
	case Responses:
		return "/v1/responses"
	case Messages:
		return "/v1/messages"
	}
	return ""
}

// Call is one tool call a fake model makes.
type Call struct{ ID, Name, Args string }

// Turn is one answer of a fake model, rendered in whichever protocol the
// Upstream speaks: as one JSON body, or, when the request asks for a
// stream, as server-sent events with every text and argument string split
// over more than one delta.
type Turn struct {
	Text    string
	Calls   []Call
	In, Out int // the usage reported
	// Status, when not 0 or 200, makes the turn an error answer: Message
	// in the protocol's error shape, of type ErrorType (when empty, the
	// type a provider gives its own failures).
	Status    int
	Message   string
	ErrorType string
	// ID numbers the ids the answer carries (chatcmpl-fakeID,
	// resp_fakeID, msg_fakeID, fc_fakeID_N); 0 stands for the request's
	// number since the last Use, counted from 1.
	ID int
}

// Request is one request as an Upstream hands it to its Answer.
type Request struct {
	Seen
	// N is how many requests came before this one since the last Use.
	N            int
	Model        string
	Stream       bool
	IncludeUsage bool // stream_options.include_usage
}

// Answer decides an Upstream's answer to one request.
type Answer func(Request) Turn

// Upstream is a fake provider of one protocol whose answers come from an
// Answer that a test replaces as it goes, so one process under test can
// stay pointed at it. It keeps every request and every body it sent.
type Upstream struct {
	proto string
	srv   *httptest.Server

	mu          sync.Mutex
	answer      Answer
	alwaysUsage bool
	reqs        []Seen
	sent        [][]byte
}

// NewUpstream starts an Upstream of protocol proto that is closed when the
// test ends. Until Use gives it an Answer, it answers HTTP 418.
func NewUpstream(t testing.TB, proto string) *Upstream {
	u := &Upstream{proto: proto}
	u.srv = httptest.NewServer(http.HandlerFunc(u.serve))
	t.Cleanup(u.srv.Close)
	return u
}

// URL is the server's root URL.
func (u *Upstream) URL() string { return u.srv.URL }

// BaseURL is the API root as a provider's config wants it: OpenAI's
// includes /v1, Anthropic's does not.
func (u *Upstream) BaseURL() string {
	if u.proto == Messages {
		return u.srv.URL
	}
	return u.srv.URL + "/v1"
}

// Use has a answer the next requests and forgets what was received and
// sent before.
func (u *Upstream) Use(a Answer) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.answer, u.reqs, u.sent = a, nil, nil
}

// AlwaysStreamUsage makes a Chat Completions stream carry usage whether or
// not the request asked for it, as some OpenAI-compatible servers do and
// a client must cope with; OpenAI sends it only when asked.
func (u *Upstream) AlwaysStreamUsage() {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.alwaysUsage = true
}

// Requests returns what the Upstream received since the last Use.
func (u *Upstream) Requests() []Seen {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]Seen(nil), u.reqs...)
}

// Sent returns the bodies the Upstream sent since the last Use, byte for
// byte, in the order it sent them.
func (u *Upstream) Sent() [][]byte {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([][]byte(nil), u.sent...)
}

func (u *Upstream) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil {
		http.Error(w, "fake upstream: reading the request: "+err.Error(), http.StatusBadRequest)
		return
	}
	seen := Seen{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body, Done: r.Context().Done()}
	u.mu.Lock()
	n := len(u.reqs)
	u.reqs = append(u.reqs, seen)
	answer, alwaysUsage := u.answer, u.alwaysUsage
	u.mu.Unlock()

	status, ctype, out := u.reply(Request{Seen: seen, N: n}, answer, alwaysUsage)
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

// reply renders the answer to req, or an error saying why there is none.
func (u *Upstream) reply(req Request, answer Answer, alwaysUsage bool) (status int, ctype string, out []byte) {
	fail := func(status int, typ, msg string) (int, string, []byte) {
		return status, "application/json", errorBody(u.proto, typ, msg)
	}
	if req.Path != Path(u.proto) {
		return fail(http.StatusNotFound, "", fmt.Sprintf("fake %s upstream: no endpoint %s (want %s)", u.proto, req.Path, Path(u.proto)))
	}
	var fields struct {
		Stream        bool `json:"stream"`
		StreamOptions struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
		Model string `json:"model"`
	}
	if err := json.Unmarshal(req.Body, &fields); err != nil {
		return fail(http.StatusBadRequest, "", "fake upstream: the request body is not JSON: "+err.Error())
	}
	req.Model, req.Stream, req.IncludeUsage = fields.Model, fields.Stream, fields.StreamOptions.IncludeUsage
	if answer == nil {
		return fail(http.StatusTeapot, "", "fake upstream: no answer set")
	}
	turn := answer(req)
	if turn.Status != 0 && turn.Status != http.StatusOK {
		return fail(turn.Status, turn.ErrorType, turn.Message)
	}
	id := turn.ID
	if id == 0 {
		id = req.N + 1
	}
	if !req.Stream {
		return http.StatusOK, "application/json", Render(u.proto, turn, req.Model, id)
	}
	return http.StatusOK, "text/event-stream", Stream(u.proto, turn, req.Model, id, req.IncludeUsage || alwaysUsage)
}

// errorBody is msg in the error shape of protocol proto, of type typ or,
// when that is empty, the type the provider gives its own failures.
func errorBody(proto, typ, msg string) []byte {
	if proto == Messages {
		if typ == "" {
			typ = "api_error"
		}
		return Marshal(obj{"type": "error", "error": obj{"type": typ, "message": msg}})
	}
	if typ == "" {
		typ = "server_error"
	}
	return Marshal(obj{"error": obj{"message": msg, "type": typ, "param": nil, "code": nil}})
}

type obj = map[string]any

// Marshal is v as JSON; a value with no JSON form is the test's own
// mistake, so it panics.
func Marshal(v any) []byte {
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

func (t Turn) stop(proto string) string {
	switch {
	case len(t.Calls) > 0 && proto == Chat:
		return "tool_calls"
	case len(t.Calls) > 0:
		return "tool_use"
	case proto == Chat:
		return "stop"
	}
	return "end_turn"
}

// Render is turn as one JSON body of protocol proto, answering a request
// for model; id numbers the ids it carries.
func Render(proto string, turn Turn, model string, id int) []byte {
	switch proto {
	case Chat:
		msg := obj{"role": "assistant", "content": nil}
		if turn.Text != "" {
			msg["content"] = turn.Text
		}
		if len(turn.Calls) > 0 {
			var tcs []obj
			for _, c := range turn.Calls {
				tcs = append(tcs, obj{"id": c.ID, "type": "function", "function": obj{"name": c.Name, "arguments": c.Args}})
			}
			msg["tool_calls"] = tcs
		}
		return Marshal(obj{
			"id": fmt.Sprintf("chatcmpl-fake%d", id), "object": "chat.completion", "created": 1700000000 + id, "model": model,
			"choices":            []obj{{"index": 0, "finish_reason": turn.stop(Chat), "message": msg, "logprobs": nil}},
			"usage":              obj{"prompt_tokens": turn.In, "completion_tokens": turn.Out, "total_tokens": turn.In + turn.Out},
			"system_fingerprint": "fp_fake",
		})
	case Responses:
		return Marshal(response(turn, model, id, "completed", responseItems(turn, id)))
	default:
		content := []obj{}
		if turn.Text != "" {
			content = append(content, obj{"type": "text", "text": turn.Text})
		}
		for _, c := range turn.Calls {
			content = append(content, obj{"type": "tool_use", "id": c.ID, "name": c.Name, "input": json.RawMessage(c.Args)})
		}
		return Marshal(obj{
			"id": fmt.Sprintf("msg_fake%d", id), "type": "message", "role": "assistant", "model": model,
			"content": content, "stop_reason": turn.stop(Messages), "stop_sequence": nil,
			"usage": obj{"input_tokens": turn.In, "output_tokens": turn.Out},
		})
	}
}

func response(turn Turn, model string, id int, status string, output []obj) obj {
	r := obj{
		"id": fmt.Sprintf("resp_fake%d", id), "object": "response", "created_at": 1700000000 + id, "status": status,
		"model": model, "output": output, "parallel_tool_calls": true, "tool_choice": "auto", "tools": []obj{},
		"error": nil, "incomplete_details": nil, "instructions": nil, "metadata": obj{}, "temperature": 1.0, "top_p": 1.0,
		"usage": nil,
	}
	if status == "completed" {
		r["usage"] = obj{"input_tokens": turn.In, "output_tokens": turn.Out, "total_tokens": turn.In + turn.Out,
			"input_tokens_details": obj{"cached_tokens": 0}, "output_tokens_details": obj{"reasoning_tokens": 0}}
	}
	return r
}

// ResponseItems are the output items of turn as a Responses answer
// numbered id carries them, each with its own id, for a fake that keeps
// what it answered.
func ResponseItems(turn Turn, id int) []json.RawMessage {
	var out []json.RawMessage
	for _, it := range responseItems(turn, id) {
		out = append(out, Marshal(it))
	}
	return out
}

func responseItems(turn Turn, id int) []obj {
	out := []obj{}
	if turn.Text != "" {
		out = append(out, obj{"type": "message", "id": fmt.Sprintf("msg_fake%d", id), "status": "completed", "role": "assistant",
			"content": []obj{{"type": "output_text", "text": turn.Text, "annotations": []obj{}}}})
	}
	for i, c := range turn.Calls {
		out = append(out, obj{"type": "function_call", "id": fmt.Sprintf("fc_fake%d_%d", id, i), "call_id": c.ID,
			"name": c.Name, "arguments": c.Args, "status": "completed"})
	}
	return out
}

// Stream is turn as the server-sent events of protocol proto, as the
// provider sends them, answering a request for model; id numbers the ids
// it carries. A Chat Completions stream carries usage only when usage is
// set, as OpenAI does for a request with stream_options.include_usage.
func Stream(proto string, turn Turn, model string, id int, usage bool) []byte {
	var b strings.Builder
	switch proto {
	case Chat:
		chunk := func(delta obj, finish any) {
			c := obj{"id": fmt.Sprintf("chatcmpl-fake%d", id), "object": "chat.completion.chunk", "created": 1700000000 + id,
				"model": model, "system_fingerprint": "fp_fake",
				"choices": []obj{{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": nil}}}
			if usage {
				c["usage"] = nil
			}
			b.WriteString("data: ")
			b.Write(Marshal(c))
			b.WriteString("\n\n")
		}
		chunk(obj{"role": "assistant", "content": ""}, nil)
		for _, part := range halves(turn.Text) {
			if part != "" {
				chunk(obj{"content": part}, nil)
			}
		}
		for i, c := range turn.Calls {
			chunk(obj{"tool_calls": []obj{{"index": i, "id": c.ID, "type": "function", "function": obj{"name": c.Name, "arguments": ""}}}}, nil)
			for _, part := range halves(c.Args) {
				chunk(obj{"tool_calls": []obj{{"index": i, "function": obj{"arguments": part}}}}, nil)
			}
		}
		chunk(obj{}, turn.stop(Chat))
		if usage {
			b.WriteString("data: ")
			b.Write(Marshal(obj{"id": fmt.Sprintf("chatcmpl-fake%d", id), "object": "chat.completion.chunk", "created": 1700000000 + id,
				"model": model, "system_fingerprint": "fp_fake", "choices": []obj{},
				"usage": obj{"prompt_tokens": turn.In, "completion_tokens": turn.Out, "total_tokens": turn.In + turn.Out}}))
			b.WriteString("\n\n")
		}
		b.WriteString("data: [DONE]\n\n")
	case Responses:
		seq := 0
		event := func(typ string, data obj) {
			data["type"] = typ
			data["sequence_number"] = seq
			seq++
			fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", typ, Marshal(data))
		}
		event("response.created", obj{"response": response(turn, model, id, "in_progress", []obj{})})
		event("response.in_progress", obj{"response": response(turn, model, id, "in_progress", []obj{})})
		items := responseItems(turn, id)
		for i, item := range items {
			if item["type"] == "message" {
				itemID := item["id"]
				event("response.output_item.added", obj{"output_index": i, "item": obj{"type": "message", "id": itemID, "status": "in_progress", "role": "assistant", "content": []obj{}}})
				event("response.content_part.added", obj{"output_index": i, "item_id": itemID, "content_index": 0, "part": obj{"type": "output_text", "text": "", "annotations": []obj{}}})
				for _, part := range halves(turn.Text) {
					event("response.output_text.delta", obj{"output_index": i, "item_id": itemID, "content_index": 0, "delta": part, "logprobs": []obj{}})
				}
				event("response.output_text.done", obj{"output_index": i, "item_id": itemID, "content_index": 0, "text": turn.Text, "logprobs": []obj{}})
				event("response.content_part.done", obj{"output_index": i, "item_id": itemID, "content_index": 0, "part": obj{"type": "output_text", "text": turn.Text, "annotations": []obj{}}})
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
		event("response.completed", obj{"response": response(turn, model, id, "completed", items)})
	default:
		event := func(typ string, data obj) {
			data["type"] = typ
			fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", typ, Marshal(data))
		}
		event("message_start", obj{"message": obj{"id": fmt.Sprintf("msg_fake%d", id), "type": "message", "role": "assistant", "model": model,
			"content": []obj{}, "stop_reason": nil, "stop_sequence": nil, "usage": obj{"input_tokens": turn.In, "output_tokens": 1}}})
		event("ping", obj{})
		idx := 0
		if turn.Text != "" {
			event("content_block_start", obj{"index": idx, "content_block": obj{"type": "text", "text": ""}})
			for _, part := range halves(turn.Text) {
				event("content_block_delta", obj{"index": idx, "delta": obj{"type": "text_delta", "text": part}})
			}
			event("content_block_stop", obj{"index": idx})
			idx++
		}
		for _, c := range turn.Calls {
			event("content_block_start", obj{"index": idx, "content_block": obj{"type": "tool_use", "id": c.ID, "name": c.Name, "input": obj{}}})
			for _, part := range halves(c.Args) {
				event("content_block_delta", obj{"index": idx, "delta": obj{"type": "input_json_delta", "partial_json": part}})
			}
			event("content_block_stop", obj{"index": idx})
			idx++
		}
		event("message_delta", obj{"delta": obj{"stop_reason": turn.stop(Messages), "stop_sequence": nil}, "usage": obj{"output_tokens": turn.Out}})
		event("message_stop", obj{})
	}
	return []byte(b.String())
}
