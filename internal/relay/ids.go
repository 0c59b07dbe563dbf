package relay

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"

	"github.com/hookhost/hookhost/internal/codec/codecs"
)

// mintID returns the id a client gets for a call the upstream named
// upstream: 128 random bits behind the upstream's own prefix ("call_",
// "toolu_"), so that no client can guess another's ids and continue its
// conversation, and clients that look at the prefix are not surprised.
// The result matches ^[a-zA-Z0-9_-]+$, as Anthropic requires of ids.
func mintID(upstream string) string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return idPrefix(upstream) + hex.EncodeToString(b[:])
}

// idPrefix is upstream's leading letters and the '_' or '-' after them,
// or "call_" when it has none.
func idPrefix(upstream string) string {
	for i := 0; i < len(upstream) && i <= 16; i++ {
		c := upstream[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case (c == '_' || c == '-') && i > 0:
			return upstream[:i+1]
		default:
			return "call_"
		}
	}
	return "call_"
}

// idFields are where every protocol's wire units carry tool call ids.
var idFields = codecs.IDFields()

// rewireIDs returns units with every tool call id found in ids replaced
// by what ids maps it to, in the fields idFields names (the ids of
// tool_use and tool_result blocks, also inside a message object's
// content, of Responses' function_call and function_call_output items,
// and of a Chat Completions message's tool_calls and tool_call_id). Only
// those fields are looked at, never arguments or text. A unit with nothing to replace is returned as
// it came, byte for byte.
func rewireIDs(units []json.RawMessage, ids map[string]string) []json.RawMessage {
	if len(ids) == 0 || len(units) == 0 {
		return units
	}
	out := make([]json.RawMessage, len(units))
	for i, u := range units {
		out[i] = rewireUnit(u, ids)
	}
	return out
}

func rewireUnit(u json.RawMessage, ids map[string]string) json.RawMessage {
	var obj map[string]json.RawMessage
	if json.Unmarshal(u, &obj) != nil || obj == nil {
		return u
	}
	changed := false
	swap := func(key string) {
		var id string
		if json.Unmarshal(obj[key], &id) != nil {
			return
		}
		if to, ok := ids[id]; ok {
			obj[key] = marshalRaw(to)
			changed = true
		}
	}
	var typ string
	_ = json.Unmarshal(obj["type"], &typ)
	if key, ok := idFields.ByType[typ]; ok {
		swap(key)
	}
	if typ == "" {
		for _, key := range idFields.Direct {
			if _, ok := obj[key]; ok {
				swap(key)
			}
		}
		var list []json.RawMessage
		for _, key := range idFields.Calls {
			if json.Unmarshal(obj[key], &list) == nil && len(list) > 0 {
				if next := rewireCalls(list, ids); next != nil {
					obj[key] = next
					changed = true
				}
			}
		}
		for _, key := range idFields.Nested {
			if json.Unmarshal(obj[key], &list) == nil && len(list) > 0 {
				next := rewireIDs(list, ids)
				for j := range list {
					if !bytes.Equal(next[j], list[j]) {
						obj[key] = marshalRaw(next)
						changed = true
						break
					}
				}
			}
		}
	}
	if !changed {
		return u
	}
	return marshalRaw(obj)
}

// rewireCalls rewrites the ids of a Chat Completions message's
// tool_calls; nil when none changed.
func rewireCalls(list []json.RawMessage, ids map[string]string) json.RawMessage {
	changed := false
	for j, c := range list {
		var call map[string]json.RawMessage
		var id string
		if json.Unmarshal(c, &call) != nil || json.Unmarshal(call["id"], &id) != nil {
			continue
		}
		if to, ok := ids[id]; ok {
			call["id"] = marshalRaw(to)
			list[j] = marshalRaw(call)
			changed = true
		}
	}
	if !changed {
		return nil
	}
	return marshalRaw(list)
}

// marshalRaw encodes v (strings, raw JSON and collections of them, which
// always encode), leaving <, > and & as they are.
func marshalRaw(v any) json.RawMessage {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}
