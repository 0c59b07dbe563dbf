package responses

import (
	"encoding/json"
	"sort"

	"github.com/hookhost/hookhost/internal/upstream"
)

// The upstream side: what the openai provider needs to turn a response it
// received into the wire form the front sends on (upstream.WireResponse).

// ResponseWire splits a response object into its top-level fields and its
// output items; items replaces the output when the object has none.
func ResponseWire(data []byte, items []json.RawMessage) (*upstream.WireResponse, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return nil, err
	}
	var output []json.RawMessage
	if raw, ok := fields["output"]; ok {
		if err := json.Unmarshal(raw, &output); err != nil {
			return nil, err
		}
	}
	delete(fields, "output")
	if len(output) == 0 {
		output = items
	}
	return &upstream.WireResponse{Fields: fields, Message: output}, nil
}

// StreamedWire is the WireResponse of a stream from its final event's data
// and the items it finished, by output index.
func StreamedWire(event string, finished map[int]json.RawMessage) *upstream.WireResponse {
	idx := make([]int, 0, len(finished))
	for i := range finished {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	items := make([]json.RawMessage, 0, len(idx))
	for _, i := range idx {
		items = append(items, finished[i])
	}
	var ev struct {
		Response json.RawMessage `json:"response"`
	}
	if json.Unmarshal([]byte(event), &ev) == nil {
		if w, err := ResponseWire(ev.Response, items); err == nil {
			return w
		}
	}
	return &upstream.WireResponse{Fields: map[string]json.RawMessage{}, Message: items}
}
