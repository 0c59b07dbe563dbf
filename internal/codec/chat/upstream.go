package chat

import (
	"encoding/json"
	"fmt"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/rawjson"
	"github.com/hookhost/hookhost/internal/upstream"
)

// The upstream side: what the openai provider needs to turn a completion
// it received into the wire form the front sends on (upstream.WireResponse).

// ResponseWire is the wire form of a whole completion: every top-level
// field but choices, the first choice's fields but message under
// "choice", and the message itself.
func ResponseWire(data []byte) (*upstream.WireResponse, error) {
	// Members reads what json.Unmarshal into a map would, without
	// copying each value; json.Unmarshal reads only what it refuses, to
	// say why.
	top, ok := rawjson.Members(data)
	if !ok {
		if err := json.Unmarshal(data, &top); err != nil {
			return nil, err
		}
	}
	var choices []map[string]json.RawMessage
	if err := json.Unmarshal(top["choices"], &choices); err != nil || len(choices) == 0 {
		return nil, fmt.Errorf("choices is not a non-empty array of objects")
	}
	delete(top, "choices")
	w := &upstream.WireResponse{Fields: top}
	first := choices[0]
	if m, ok := first["message"]; ok && string(m) != "null" {
		w.Message = []json.RawMessage{m}
	}
	delete(first, "message")
	choice, err := json.Marshal(first)
	if err != nil {
		return nil, err
	}
	top["choice"] = choice
	return w, nil
}

// WithCallIDs gives the wire message's tool calls the ids the neutral
// response gave those that came without one, so that the message, sent
// back in a later round, matches the tool results that answer it.
func WithCallIDs(msg []json.RawMessage, calls []hooks.ToolCall) []json.RawMessage {
	if len(msg) != 1 || len(calls) == 0 {
		return msg
	}
	var m map[string]json.RawMessage
	var list []map[string]json.RawMessage
	if json.Unmarshal(msg[0], &m) != nil || json.Unmarshal(m["tool_calls"], &list) != nil || len(list) != len(calls) {
		return msg
	}
	changed := false
	for i, c := range list {
		var id string
		if json.Unmarshal(c["id"], &id) != nil || id == "" {
			c["id"] = QuoteJSON(calls[i].ID)
			changed = true
		}
	}
	if !changed {
		return msg
	}
	tc, err1 := json.Marshal(list)
	m["tool_calls"] = tc
	b, err2 := json.Marshal(m)
	if err1 != nil || err2 != nil {
		return msg
	}
	return []json.RawMessage{b}
}

// ChunkMeta are the fields of a chunk that describe the whole completion.
type ChunkMeta struct {
	ID                string          `json:"id"`
	Created           json.RawMessage `json:"created"`
	Model             string          `json:"model"`
	SystemFingerprint json.RawMessage `json:"system_fingerprint"`
	ServiceTier       json.RawMessage `json:"service_tier"`
	Usage             json.RawMessage `json:"usage"`
}

// StreamedMessage is the message a stream assembled, shaped as a whole
// completion's message.
func StreamedMessage(ch Choice) ResponseMessage {
	return ResponseMessage{Role: "assistant", Content: ch.Message.Content, Refusal: ch.Message.Refusal, ToolCalls: ch.Message.ToolCalls}
}

// QuoteJSON is s as a JSON string.
func QuoteJSON(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}
