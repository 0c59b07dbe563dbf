// Package codec ties each wire protocol hookhost speaks to the loop and
// the gateway's fronts. A protocol is one codec package (chat, responses,
// messages), which holds its wire shapes once for both sides: the
// gateway's front (decode client requests, encode answers whole and
// streamed, the error body, the field table) and what the provider that
// speaks the protocol upstream sends and reads with it. Package codecs
// lists them all.
//
// # How to add a protocol
//
//  1. Name it: a llm.Protocol constant in llm/protocol.go, and its
//     feature headers in upstream.FeatureHeaders.
//  2. Create internal/codec/<name>: wire.go with the protocol's shapes
//     (requests, responses, stream events, usage, errors), defined
//     nowhere else; fields.go with its field table (Fields), one row per
//     documented request field and client header; decode, encode and
//     stream files implementing Codec; send.go and receive.go with
//     Upstream (an upstream.Codec): the request body a provider sends,
//     built from the neutral request, the provider's upstream.Settings
//     and, for a gateway's call, the passthrough, and the reading of its
//     answers, whole and streamed, into the neutral response and their
//     wire form; upstream.go with ResponseWire; IDFields, the fields of
//     its wire units that carry tool call ids.
//  3. Add a decode test file with a Fuzz target (fuzz_test.go) and a
//     stream test checked with internal/streamcheck.
//  4. Register the codec in codecs.All; the gateway serves every codec
//     listed there, and the relay finds it by protocol.
//  5. Give a provider (llm/<provider>) a transport (llm/internal/transport)
//     over the codec's Upstream: the provider holds the endpoint,
//     headers, key and retries, and implements upstream.Forwarder
//     through the transport.
//  6. Generate the README's field table from Fields and run the real
//     clients (gateway/clienttest) against it.
//
// TestEveryCodecIsComplete in package codecs checks steps 2 to 4.
package codec

import (
	"encoding/json"

	"github.com/hookhost/hookhost/internal/dialect"
	"github.com/hookhost/hookhost/internal/upstream"
)

// Codec is one wire protocol, both sides.
type Codec interface {
	// The client side: protocol, path, request decoding, answers whole
	// and streamed, error body and field table.
	dialect.Front
	// ResponseWire splits a whole upstream response body of this
	// protocol into its wire form: the top-level fields and the message's
	// units (a message, output items, content blocks).
	ResponseWire(body []byte) (*upstream.WireResponse, error)
	// HistoryForm turns a response's wire form into the units a request
	// of this protocol carries the same message in, for the rounds the
	// loop keeps.
	HistoryForm(w *upstream.WireResponse) []json.RawMessage
	// IDFields says which fields of this protocol's wire units carry a
	// tool call's id, so that ids can be swapped without decoding them.
	IDFields() IDFields
	// Upstream is the protocol as a provider speaks it: the request body
	// it sends and how it reads the answer (the package's Upstream).
	Upstream() upstream.Codec
}

// IDFields are the fields of a protocol's wire units (messages, items,
// content blocks) that carry tool call ids. Nothing else in a unit, such
// as arguments or text, is an id.
type IDFields struct {
	// ByType is the field holding the id, by the unit's "type".
	ByType map[string]string
	// Of a unit without a "type" (a message object): Direct are the
	// fields that hold an id, Calls the lists of calls whose "id" is
	// one, Nested the lists of units to look into in turn.
	Direct, Calls, Nested []string
}
