package upstream

import (
	"context"

	"github.com/hookhost/hookhost/llm"
	"github.com/hookhost/hookhost/llm/toolfmt"
)

// Codec is a wire protocol as a provider speaks it upstream: what it
// sends and how it reads what comes back. Each codec package
// (internal/codec/chat, responses, messages) has one, named Upstream, so
// that a provider is only the transport around it: endpoint, headers,
// key, retries. The name map each body comes with turns the names the
// model calls back into tool ids.
type Codec struct {
	// Protocol is the wire protocol spoken.
	Protocol llm.Protocol
	// Body is the request body of a provider's own call (Complete,
	// Stream) for req, with s's defaults.
	Body func(req llm.Request, s Settings, stream bool) ([]byte, *toolfmt.NameMap, error)
	// ForwardBody is the body of a gateway's call (Forward): Body's, with
	// the wire forms pass kept put back.
	ForwardBody func(req llm.Request, s Settings, pass *Passthrough, stream bool) ([]byte, *toolfmt.NameMap, error)
	// Decode reads a whole response body.
	Decode func(data []byte, names *toolfmt.NameMap) (llm.Response, error)
	// DecodeForward is Decode that also splits the body into its wire
	// form.
	DecodeForward func(data []byte, names *toolfmt.NameMap) (llm.Response, *WireResponse, error)
	// Read reads a stream to its end, passing text to onText as it
	// arrives; ctx is the call's (see llm.ReportInput).
	Read func(ctx context.Context, events Events, names *toolfmt.NameMap, onText func(string)) (llm.Response, error)
	// ReadForward is Read that also builds the answer's wire form.
	ReadForward func(ctx context.Context, events Events, names *toolfmt.NameMap, onText func(string)) (llm.Response, *WireResponse, error)
}
