package responses

import (
	"encoding/json"

	"github.com/hookhost/hookhost/internal/codec"
	"github.com/hookhost/hookhost/internal/upstream"
)

var _ codec.Codec = (*Front)(nil)

// ResponseWire is the package's ResponseWire, for a response that holds
// its output.
func (f *Front) ResponseWire(body []byte) (*upstream.WireResponse, error) {
	return ResponseWire(body, nil)
}

// HistoryForm is the response's output items as they came: a request's
// input carries them in the same shape.
func (f *Front) HistoryForm(w *upstream.WireResponse) []json.RawMessage {
	if w == nil || len(w.Message) == 0 {
		return nil
	}
	return w.Message
}

// IDFields: the call_id of function and custom tool calls and of their
// outputs.
func (f *Front) IDFields() codec.IDFields {
	return codec.IDFields{ByType: map[string]string{
		"function_call":           "call_id",
		"function_call_output":    "call_id",
		"custom_tool_call":        "call_id",
		"custom_tool_call_output": "call_id",
	}}
}

// Upstream is the package's Upstream.
func (f *Front) Upstream() upstream.Codec { return Upstream }
