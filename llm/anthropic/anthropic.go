// Package anthropic is the model provider for Anthropic's Messages API
// (POST {base}/v1/messages, anthropic-version 2023-06-01).
//
// The system prompt goes in the request's system field. An assistant
// message is sent as its text block followed by one tool_use block per
// call; the results of those calls go back as ONE user message of
// tool_result blocks, with is_error set on failures, as the API requires.
// max_tokens is mandatory in this API, so a request without one gets
// Config.MaxTokens, or DefaultMaxTokens.
//
// The neutral request's sampling and identity settings are sent as the
// API names them: top_p, stop_sequences (llm.Request.Stop) and
// metadata.user_id (llm.Request.User). top_p and temperature are both sent
// when both are set, as asked, though some newer models refuse the pair
// with a 400 that then reaches the caller. The API has no seed: it is left
// out (see Unsupported).
//
// # Tool arguments
//
// A tool_use block's input is a JSON object, carried into
// ToolCall.Arguments compacted, so that a streamed call and the same call
// received whole are byte for byte equal. When a call's arguments are not
// a JSON object (a model of another provider wrote them, earlier in a
// conversation whose provider was switched, or a plugin rewrote the
// history), the history cannot carry them as input; they are sent as
// {"invalid_arguments": "<the text as written>"} so the model still sees
// what was attempted next to the error result that explains it.
//
// # Usage
//
// InputTokens is the sum of input_tokens and the cache creation and cache
// read counts, which Anthropic reports separately: together they are what
// the prompt cost in tokens.
//
// # Streaming
//
// Stream reads the named events (message_start, content_block_start,
// content_block_delta with text_delta or input_json_delta,
// content_block_stop, message_delta, message_stop), ignores ping, and
// builds the same message object a non-streaming call returns before
// mapping it with the same code. An error event, or a stream that stops
// before message_stop, is an error. So is a malformed block, before any of
// its text is shown: blocks must open in order, each with a type, and
// every delta must be for a block started and not yet stopped, a text or
// tool-input delta for a block of its kind. Block and delta types hookhost
// does not know are passed over, as in a whole response: none of them is
// shown or kept. What was shown is therefore always what the message
// keeps.
//
// Only events that add to the answer restart llm.timeout, the idle
// timeout: a ping, an empty delta or a message_delta without a stop
// reason does not, so a server sending only those is cut off as idle.
//
// An answer without what the protocol requires is an error naming what is
// missing, never an empty answer: a message needs its type, content and
// stop_reason, every block a type, and a tool_use block its id and name.
//
// # Forwarding
//
// Forward (upstream.Forwarder) serves a gateway whose clients speak Messages
// too: what a client sent in wire forms the neutral request does not model
// (images, thinking blocks and their signatures, cache_control, server
// tools, top-level fields) goes upstream byte for byte, and the answer's
// wire form comes back beside the neutral response. The same parsers
// check the answer, so a forwarded call fails exactly where Complete or
// Stream would.
//
// # Wire shapes
//
// The requests sent and the answers read, whole and streamed, are
// internal/codec/messages' (its Upstream), which the gateway's Messages
// front shares; this package is the transport: endpoint, headers, key,
// retries.
package anthropic

import (
	"context"
	"net/http"
	"time"

	"github.com/hookhost/hookhost/internal/codec/messages"
	"github.com/hookhost/hookhost/internal/upstream"
	"github.com/hookhost/hookhost/llm"
	"github.com/hookhost/hookhost/llm/internal/transport"
)

// Name is the provider's config name.
const Name = "anthropic"

// Defaults.
const (
	DefaultBaseURL   = "https://api.anthropic.com"
	DefaultMaxTokens = 1024
	// Version is the anthropic-version header value the wire shapes here
	// follow.
	Version = "2023-06-01"
)

// Config configures a Provider. Zero values get the documented defaults.
type Config struct {
	// BaseURL is the API root without "/v1"; "" means DefaultBaseURL.
	BaseURL string
	// APIKey is sent as x-api-key; "" sends none (for a gateway that adds
	// it). A call whose context carries a key (llm.WithAPIKey) sends that
	// one instead.
	APIKey string
	// Headers are added to every request after the defaults, so they may
	// replace them (an anthropic-beta flag, for instance).
	Headers map[string]string
	// MaxTokens is used when a request does not set it; 0 means
	// DefaultMaxTokens.
	MaxTokens int
	// Temperature is used when a request does not set one; nil sends none.
	Temperature *float64
	// Timeout bounds each attempt (see httpretry); 0 means none. For a
	// stream it is the longest wait for the next event.
	Timeout time.Duration
	// CallTimeout bounds a whole call, retries included; 0 means none.
	CallTimeout time.Duration
	// MaxRetries is how often a failed attempt is repeated.
	MaxRetries int
	// HTTPClient replaces the default client.
	HTTPClient *http.Client
	// Sleep replaces the wait between retries, for tests.
	Sleep func(ctx context.Context, d time.Duration) error
}

// Provider calls the Messages API. It is safe for concurrent use.
type Provider struct {
	t *transport.Transport
}

var (
	_ llm.Provider       = (*Provider)(nil)
	_ llm.Streamer       = (*Provider)(nil)
	_ upstream.Forwarder = (*Provider)(nil)
	_ llm.Unsupported    = (*Provider)(nil)
)

// Unsupported names the settings of req the Messages API lacks (see
// llm.Unsupported): a seed, which is dropped. Stop sequences, top_p and
// the user (metadata.user_id) it has.
func (p *Provider) Unsupported(req llm.Request) (refused, dropped []string) {
	if req.Seed != nil {
		dropped = append(dropped, "seed")
	}
	return nil, dropped
}

// New checks cfg and returns a provider. It makes no request.
func New(cfg Config) (*Provider, error) {
	base := cfg.BaseURL
	if base == "" {
		base = DefaultBaseURL
	}
	maxTokens := cfg.MaxTokens
	if maxTokens == 0 {
		maxTokens = DefaultMaxTokens
	}
	t, err := transport.New(transport.Config{
		Provider: Name, BaseURL: base, Path: "/v1/messages", APIKey: cfg.APIKey, Auth: llm.AuthXAPIKey,
		Defaults: map[string]string{"anthropic-version": Version}, Headers: cfg.Headers,
		MaxTokens: cfg.MaxTokens, MaxRetries: cfg.MaxRetries, Timeout: cfg.Timeout, CallTimeout: cfg.CallTimeout,
		HTTPClient: cfg.HTTPClient, Sleep: cfg.Sleep,
		Settings: upstream.Settings{MaxTokens: maxTokens, Temperature: cfg.Temperature},
		Codec:    messages.Upstream,
	})
	if err != nil {
		return nil, err
	}
	return &Provider{t: t}, nil
}

// Name returns "anthropic".
func (p *Provider) Name() string { return Name }

// Complete makes one non-streaming call.
func (p *Provider) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	return p.t.Complete(ctx, req)
}

// Stream makes one streaming call, passing text to onText as it arrives.
// A nil onText discards it.
func (p *Provider) Stream(ctx context.Context, req llm.Request, onText func(string)) (llm.Response, error) {
	return p.t.Stream(ctx, req, onText)
}

// Protocol returns llm.ProtocolMessages.
func (p *Provider) Protocol() llm.Protocol { return llm.ProtocolMessages }

// Forward makes one call for a gateway whose client speaks Anthropic
// Messages; see upstream.Forwarder. The body is the one Complete would
// send with every wire form pass kept put back byte for byte (see
// messages.Upstream); the client's feature headers kept in pass
// (anthropic-beta, which the beta-gated fields it sent need, and
// anthropic-version) are sent too, and betas the configuration sets stay
// on beside the client's.
func (p *Provider) Forward(ctx context.Context, req llm.Request, pass *upstream.Passthrough, onText func(string)) (llm.Response, *upstream.WireResponse, error) {
	return p.t.Forward(ctx, req, pass, onText)
}
