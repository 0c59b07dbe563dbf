package messages

import (
	"encoding/json"

	"github.com/hookhost/hookhost/internal/codec"
	"github.com/hookhost/hookhost/internal/upstream"
)

var _ codec.Codec = (*Front)(nil)

// ResponseWire is the package's ResponseWire.
func (f *Front) ResponseWire(body []byte) (*upstream.WireResponse, error) { return ResponseWire(body) }

// HistoryForm wraps the response's content blocks in the assistant
// message a request's history carries them in.
func (f *Front) HistoryForm(w *upstream.WireResponse) []json.RawMessage {
	if w == nil || len(w.Message) == 0 {
		return nil
	}
	blocks, err := json.Marshal(w.Message)
	if err != nil {
		return nil
	}
	msg, err := json.Marshal(struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}{"assistant", blocks})
	if err != nil {
		return nil
	}
	return []json.RawMessage{msg}
}

// IDFields: a tool_use block's id and a tool_result block's tool_use_id,
// also inside a message object's content.
func (f *Front) IDFields() codec.IDFields {
	return codec.IDFields{
		ByType: map[string]string{"tool_use": "id", "tool_result": "tool_use_id"},
		Nested: []string{"content"},
	}
}

// Upstream is the package's Upstream.
func (f *Front) Upstream() upstream.Codec { return Upstream }
