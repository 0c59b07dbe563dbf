package clienttest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A fake upstream in model mode answers like a (very dull) model instead of
// following a script, so any number of clients can talk to it at once and
// each gets answers that follow from its own conversation:
//
//   - after tool results for the last user message, it answers from them:
//     "From NAME: RESULT." per result, as the offline model does;
//   - asked about the weather, with lookup__weather offered, it calls it
//     for Paris; asked about the time, with get_time offered, it calls it
//     for CET;
//   - otherwise it says what it heard: every user text in order and how
//     many answers of its own came before the last one, so a client's
//     second turn shows whether its history arrived whole.
//
// Every round costs modelIn input and modelOut output tokens, so a client
// that sums usage over hidden rounds can be checked exactly.
//
// Speaking Responses, it keeps what it answered as the API does with
// store on: previous_response_id and item_reference to its own ids
// resolve; any other id is a 404 in OpenAI's shape, as the API answers.
const (
	modelIn  = 7
	modelOut = 3
)

// storedResponse is a response the fake Responses model keeps.
type storedResponse struct {
	input, output []json.RawMessage
}

// newModelUpstream starts a fake provider of protocol proto in model mode.
func newModelUpstream(t testing.TB, proto string) *upstream {
	u := &upstream{t: t, proto: proto, model: true, stored: map[string]storedResponse{}, items: map[string]json.RawMessage{}}
	u.srv = httptest.NewServer(http.HandlerFunc(u.serve))
	t.Cleanup(u.srv.Close)
	return u
}

// think answers one request in model mode.
func (u *upstream) think(path string, body []byte) (status int, ctype string, out []byte) {
	if path != paths[u.proto] {
		return http.StatusNotFound, "application/json", u.errorBody(fmt.Sprintf("fake %s model: no endpoint %s (want %s)", u.proto, path, paths[u.proto]))
	}
	var req struct {
		Stream        bool `json:"stream"`
		StreamOptions struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
		Model string `json:"model"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return http.StatusBadRequest, "application/json", u.errorBody("fake model: the request body is not JSON: " + err.Error())
	}
	convBody := body
	var input []json.RawMessage
	if u.proto == responses {
		var msg string
		input, status, msg = u.resolve(body)
		if status != 0 {
			return status, "application/json", mustJSON(obj{"error": obj{"message": msg, "type": "invalid_request_error", "param": nil, "code": nil}})
		}
		convBody = mustJSON(obj{"input": input})
	}
	conv, err := flatten(u.proto, convBody)
	if err != nil {
		return http.StatusBadRequest, "application/json", u.errorBody("fake model: a request it cannot read: " + err.Error())
	}
	tools, err := toolNames(u.proto, body)
	if err != nil {
		return http.StatusBadRequest, "application/json", u.errorBody("fake model: tools it cannot read: " + err.Error())
	}
	u.mu.Lock()
	u.minted++
	id := 1000 + u.minted
	u.mu.Unlock()
	rd := decide(u.proto, conv, tools, id)
	if note := samplingNote(body); note != "" && rd.Text != "" {
		rd.Text += " " + note
	}
	if u.proto == responses {
		u.keep(rd, id, input)
	}
	if !req.Stream {
		return http.StatusOK, "application/json", u.render(rd, req.Model, id)
	}
	return http.StatusOK, "text/event-stream", u.stream(rd, req.Model, id, req.StreamOptions.IncludeUsage)
}

// resolve is a Responses request's whole input: the stored conversation
// previous_response_id names, then the input with item references
// replaced by the items they name.
func (u *upstream) resolve(body []byte) (input []json.RawMessage, status int, msg string) {
	var req struct {
		Input    json.RawMessage `json:"input"`
		Previous string          `json:"previous_response_id"`
	}
	json.Unmarshal(body, &req)
	u.mu.Lock()
	defer u.mu.Unlock()
	if req.Previous != "" {
		st, ok := u.stored[req.Previous]
		if !ok {
			return nil, http.StatusNotFound, fmt.Sprintf("Previous response with id '%s' not found.", req.Previous)
		}
		input = append(append(input, st.input...), st.output...)
	}
	var s string
	if json.Unmarshal(req.Input, &s) == nil {
		return append(input, mustJSON(user(s))), 0, ""
	}
	var items []json.RawMessage
	if err := json.Unmarshal(req.Input, &items); err != nil {
		return nil, http.StatusBadRequest, "fake model: input is neither a string nor a list: " + err.Error()
	}
	for _, it := range items {
		var ref struct{ Type, ID string }
		json.Unmarshal(it, &ref)
		if ref.Type != "item_reference" {
			input = append(input, it)
			continue
		}
		found, ok := u.items[ref.ID]
		if !ok {
			return nil, http.StatusNotFound, fmt.Sprintf("Item with id '%s' not found.", ref.ID)
		}
		input = append(input, found)
	}
	return input, 0, ""
}

// keep stores a Responses answer under its id and its items under theirs.
func (u *upstream) keep(rd round, id int, input []json.RawMessage) {
	var output []json.RawMessage
	u.mu.Lock()
	defer u.mu.Unlock()
	for _, it := range u.outputItems(rd, id) {
		raw := mustJSON(it)
		output = append(output, raw)
		u.items[it["id"].(string)] = raw
	}
	u.stored[fmt.Sprintf("resp_fake%d", id)] = storedResponse{input: input, output: output}
}

// decide is the fake model's answer to conversation conv with tools
// offered; id makes its call ids unique.
func decide(proto string, conv []item, tools []string, id int) round {
	q := -1
	for i, it := range conv {
		if it.Kind == "text" && it.Role == "user" {
			q = i
		}
	}
	rd := round{In: modelIn, Out: modelOut}
	var results []string
	for _, it := range conv[q+1:] {
		if it.Kind != "result" {
			continue
		}
		name := "tool"
		if c := find(conv, "call", it.ID); c >= 0 {
			name = conv[c].Name
		}
		results = append(results, fmt.Sprintf("From %s: %s.", name, it.Content))
	}
	if len(results) > 0 {
		rd.Text = strings.Join(results, " ")
		return rd
	}
	question := ""
	if q >= 0 {
		question = strings.ToLower(conv[q].Content)
	}
	prefix := "call_"
	if proto == messages {
		prefix = "toolu_"
	}
	switch {
	case strings.Contains(question, "weather") && contains(tools, pluginTool):
		rd.Calls = []call{{fmt.Sprintf("%s%d", prefix, id), pluginTool, `{"city":"Paris"}`}}
	case strings.Contains(question, "time") && contains(tools, getTime.Name):
		rd.Calls = []call{{fmt.Sprintf("%s%d", prefix, id), getTime.Name, `{"zone":"CET"}`}}
	default:
		var heard []string
		answers := 0
		for i, it := range conv {
			switch {
			case it.Kind == "text" && it.Role == "user":
				heard = append(heard, fmt.Sprintf("%q", it.Content))
			case it.Kind == "text" && it.Role == "assistant" && i < q:
				answers++
			}
		}
		rd.Text = fmt.Sprintf("Heard %s after %d answer(s).", strings.Join(heard, " then "), answers)
	}
	return rd
}

// samplingNote says which sampling and identity fields a request carried,
// in one vocabulary whatever the protocol ("[got top_p=0.9 seed=7
// stop=\"\\n\\nEND\" user=u-1]"), so a client's answer shows what reached
// the upstream; "" when it carried none.
func samplingNote(body []byte) string {
	var r struct {
		TopP          *float64        `json:"top_p"`
		Seed          *int            `json:"seed"`
		Stop          json.RawMessage `json:"stop"`
		StopSequences []string        `json:"stop_sequences"`
		User          string          `json:"user"`
		Safety        string          `json:"safety_identifier"`
		Metadata      struct {
			UserID string `json:"user_id"`
		} `json:"metadata"`
	}
	json.Unmarshal(body, &r)
	var got []string
	if r.TopP != nil {
		got = append(got, fmt.Sprintf("top_p=%g", *r.TopP))
	}
	if r.Seed != nil {
		got = append(got, fmt.Sprintf("seed=%d", *r.Seed))
	}
	stops := r.StopSequences
	var one string
	if json.Unmarshal(r.Stop, &one) == nil && one != "" {
		stops = append(stops, one)
	} else {
		var many []string
		json.Unmarshal(r.Stop, &many)
		stops = append(stops, many...)
	}
	if len(stops) > 0 {
		got = append(got, fmt.Sprintf("stop=%q", stops[0]))
	}
	for _, u := range []string{r.User, r.Safety, r.Metadata.UserID} {
		if u != "" {
			got = append(got, "user="+u)
			break
		}
	}
	if len(got) == 0 {
		return ""
	}
	return "[got " + strings.Join(got, " ") + "]"
}

// toolNames names the tools a request body of protocol proto offers.
func toolNames(proto string, body []byte) ([]string, error) {
	var r struct {
		Tools []struct {
			Name     string `json:"name"`
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, err
	}
	var names []string
	for _, tl := range r.Tools {
		if proto == chat {
			names = append(names, tl.Function.Name)
		} else {
			names = append(names, tl.Name)
		}
	}
	return names, nil
}
