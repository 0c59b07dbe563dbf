// Package codecs lists every wire protocol's codec: the gateway serves
// each as a front, and the relay finds the one a round speaks by its
// protocol.
package codecs

import (
	"encoding/json"

	"github.com/hookhost/hookhost/internal/codec"
	"github.com/hookhost/hookhost/internal/codec/chat"
	"github.com/hookhost/hookhost/internal/codec/messages"
	"github.com/hookhost/hookhost/internal/codec/responses"
	"github.com/hookhost/hookhost/internal/dialect"
	"github.com/hookhost/hookhost/internal/upstream"
	"github.com/hookhost/hookhost/llm"
)

// All returns one codec per protocol, in the order the README lists them.
func All() []codec.Codec {
	return []codec.Codec{chat.New(), responses.New(), messages.New()}
}

// Fronts returns All as the gateway's fronts.
func Fronts() []dialect.Front {
	all := All()
	out := make([]dialect.Front, len(all))
	for i, c := range all {
		out[i] = c
	}
	return out
}

// For returns the codec of protocol p, or nil when none speaks it.
func For(p llm.Protocol) codec.Codec {
	for _, c := range All() {
		if c.Protocol() == p {
			return c
		}
	}
	return nil
}

// HistoryForm is what For(p).HistoryForm makes of w; the message as it
// came when no codec speaks p.
func HistoryForm(p llm.Protocol, w *upstream.WireResponse) []json.RawMessage {
	if c := For(p); c != nil {
		return c.HistoryForm(w)
	}
	if w == nil || len(w.Message) == 0 {
		return nil
	}
	return w.Message
}

// IDFields is every codec's IDFields in one: a unit's fields are read the
// same whatever protocol it came in, as unit types do not clash.
func IDFields() codec.IDFields {
	all := codec.IDFields{ByType: map[string]string{}}
	for _, c := range All() {
		f := c.IDFields()
		for typ, key := range f.ByType {
			all.ByType[typ] = key
		}
		all.Direct = append(all.Direct, f.Direct...)
		all.Calls = append(all.Calls, f.Calls...)
		all.Nested = append(all.Nested, f.Nested...)
	}
	return all
}
