package chat

import (
	"encoding/json"

	"github.com/hookhost/hookhost/internal/codec"
	"github.com/hookhost/hookhost/internal/upstream"
)

var _ codec.Codec = (*Front)(nil)

// ResponseWire is the package's ResponseWire.
func (f *Front) ResponseWire(body []byte) (*upstream.WireResponse, error) { return ResponseWire(body) }

// HistoryForm is the response's message as it came: a request's history
// carries assistant messages in the same shape.
func (f *Front) HistoryForm(w *upstream.WireResponse) []json.RawMessage {
	if w == nil || len(w.Message) == 0 {
		return nil
	}
	return w.Message
}

// IDFields: a tool message's tool_call_id and the ids of an assistant
// message's tool_calls.
func (f *Front) IDFields() codec.IDFields {
	return codec.IDFields{Direct: []string{"tool_call_id"}, Calls: []string{"tool_calls"}}
}

// Upstream is the package's Upstream.
func (f *Front) Upstream() upstream.Codec { return Upstream }
