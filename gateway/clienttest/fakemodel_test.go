package clienttest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/hookhost/hookhost/internal/fakeapi"
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

// fakeModel is the answer of an upstream in model mode.
type fakeModel struct {
	proto  string
	mu     sync.Mutex
	minted int
	stored map[string]storedResponse
	items  map[string]json.RawMessage
}

// newModelUpstream starts a fake provider of protocol proto in model mode.
func newModelUpstream(t testing.TB, proto string) *upstream {
	u := &upstream{Upstream: fakeapi.NewUpstream(t, proto), proto: proto}
	m := &fakeModel{proto: proto, stored: map[string]storedResponse{}, items: map[string]json.RawMessage{}}
	u.Use(m.think)
	return u
}

// think answers one request in model mode.
func (m *fakeModel) think(r fakeapi.Request) round {
	convBody := r.Body
	var input []json.RawMessage
	if m.proto == responses {
		var status int
		var msg string
		input, status, msg = m.resolve(r.Body)
		if status != 0 {
			return round{Status: status, ErrorType: "invalid_request_error", Message: msg}
		}
		convBody = mustJSON(obj{"input": input})
	}
	conv, err := flatten(m.proto, convBody)
	if err != nil {
		return round{Status: http.StatusBadRequest, Message: "fake model: a request it cannot read: " + err.Error()}
	}
	tools, err := fakeapi.Tools(m.proto, r.Body)
	if err != nil {
		return round{Status: http.StatusBadRequest, Message: "fake model: tools it cannot read: " + err.Error()}
	}
	m.mu.Lock()
	m.minted++
	id := 1000 + m.minted
	m.mu.Unlock()
	rd := decide(m.proto, conv, tools, id)
	rd.ID = id
	if note := samplingNote(r.Body); note != "" && rd.Text != "" {
		rd.Text += " " + note
	}
	if m.proto == responses {
		m.keep(rd, id, input)
	}
	return rd
}

// resolve is a Responses request's whole input: the stored conversation
// previous_response_id names, then the input with item references
// replaced by the items they name.
func (m *fakeModel) resolve(body []byte) (input []json.RawMessage, status int, msg string) {
	var req struct {
		Input    json.RawMessage `json:"input"`
		Previous string          `json:"previous_response_id"`
	}
	json.Unmarshal(body, &req)
	m.mu.Lock()
	defer m.mu.Unlock()
	if req.Previous != "" {
		st, ok := m.stored[req.Previous]
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
		found, ok := m.items[ref.ID]
		if !ok {
			return nil, http.StatusNotFound, fmt.Sprintf("Item with id '%s' not found.", ref.ID)
		}
		input = append(input, found)
	}
	return input, 0, ""
}

// keep stores a Responses answer under its id and its items under theirs.
func (m *fakeModel) keep(rd round, id int, input []json.RawMessage) {
	output := fakeapi.ResponseItems(rd, id)
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, raw := range output {
		var it struct{ ID string }
		json.Unmarshal(raw, &it)
		m.items[it.ID] = raw
	}
	m.stored[fmt.Sprintf("resp_fake%d", id)] = storedResponse{input: input, output: output}
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
		rd.Calls = []call{{ID: fmt.Sprintf("%s%d", prefix, id), Name: pluginTool, Args: `{"city":"Paris"}`}}
	case strings.Contains(question, "time") && contains(tools, getTime.Name):
		rd.Calls = []call{{ID: fmt.Sprintf("%s%d", prefix, id), Name: getTime.Name, Args: `{"zone":"CET"}`}}
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
