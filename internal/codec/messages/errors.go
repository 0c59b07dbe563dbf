package messages

import (
	"encoding/json"

	"github.com/hookhost/hookhost/internal/dialect"
)

// ErrorBody renders e as {"type":"error","error":{"type","message"}},
// the shape of a whole error response and of the in-stream error event.
func ErrorBody(e *dialect.Error) []byte {
	typ := e.Type
	if typ == "" {
		typ = "api_error"
	}
	b, _ := json.Marshal(struct {
		Type  string `json:"type"`
		Error struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}{Type: "error", Error: struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	}{typ, e.Message}})
	return b
}
