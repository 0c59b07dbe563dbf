// Package openai is the model provider for OpenAI's HTTP API and for the
// many servers that imitate it (Ollama, vLLM, llama.cpp's server, gateways),
// which are reached by pointing BaseURL at them.
//
// It speaks either of OpenAI's two conversation APIs, chosen by Config.API:
//
//   - "chat" (default): POST {base}/chat/completions. The system prompt is
//     the first message; tool results are role "tool" messages, one per
//     call. MaxTokens is sent as max_completion_tokens to api.openai.com,
//     whose newer models reject the older field, and as max_tokens to every
//     other server, since that is the field compatible servers read.
//   - "responses": POST {base}/responses. The system prompt is the
//     instructions; tool calls and results are function_call and
//     function_call_output items. Requests are sent with store=false:
//     hookhost sends the whole conversation every time, so nothing needs
//     to be kept on OpenAI's side.
//
// # Sampling and identity settings
//
// top_p, seed, stop and user are sent as Chat Completions names them. The
// Responses API has top_p and user only: a seed is left out, and stop
// sequences too, which Unsupported names so that a caller serving a
// client can refuse the request instead (llm.Unsupported). A temperature
// or top_p no upstream takes (NaN, out of range) is refused before
// anything is sent.
//
// # Tool arguments
//
// Arguments are passed through exactly as the model wrote them, even when
// they are not valid JSON: the tool-call pipeline turns such a call into an
// error result the model can read and correct, rather than failing the
// turn here. They are sent back in the history unchanged, as the string
// both APIs expect. Dotted tool ids are sent as "__" names and mapped back
// (see package toolfmt).
//
// # Streaming
//
// Stream asks for server-sent events and hands each text fragment to a
// callback as it arrives. Tool-call fragments are joined by their index.
// The Response it returns is built by the same code as Complete's, from the
// assembled chunks (chat) or from the final response.completed event
// (responses). A stream that ends before its end marker is an error, and
// so is a Responses stream whose final response holds other text than the
// deltas shown.
//
// # Required fields
//
// An answer without what its protocol requires is an error naming what is
// missing, never an empty answer: choices (chat); status and output
// (responses); a tool call's name (both). A tool call without an id, as
// Gemini's compatible endpoint sends them, is given one ("call_1", ...)
// that no other call of the same answer has. A streamed tool name that
// grows past 64 characters, the most either side accepts, is refused at
// once.
//
// # Wire shapes
//
// The requests sent and the answers read, whole and streamed, are
// internal/codec/chat's and internal/codec/responses' (their Upstream),
// which the gateway's fronts share; this package is the transport:
// endpoint, headers, key, retries.
package openai

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/hookhost/hookhost/internal/codec/chat"
	"github.com/hookhost/hookhost/internal/codec/responses"
	"github.com/hookhost/hookhost/internal/upstream"
	"github.com/hookhost/hookhost/llm"
	"github.com/hookhost/hookhost/llm/internal/transport"
)

// Name is the provider's config name.
const Name = "openai"

// The two APIs.
const (
	APIChat      = "chat"
	APIResponses = "responses"
)

// DefaultBaseURL is OpenAI's own API.
const DefaultBaseURL = "https://api.openai.com/v1"

// Config configures a Provider. Zero values get the documented defaults.
type Config struct {
	// API is APIChat or APIResponses; "" means APIChat.
	API string
	// BaseURL is the API root, without the endpoint; "" means
	// DefaultBaseURL. For Ollama it is "http://localhost:11434/v1".
	BaseURL string
	// APIKey is sent as a bearer token; "" sends no Authorization header,
	// for local servers that need none. A call whose context carries a
	// key (llm.WithAPIKey) sends that one instead.
	APIKey string
	// Headers are added to every request, after the defaults, so they may
	// replace them (an OpenAI-Organization header, a gateway's routing
	// header).
	Headers map[string]string
	// MaxTokens caps output when a request does not; 0 leaves it to the
	// server.
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
	// HTTPClient replaces the default client, e.g. for a proxy.
	HTTPClient *http.Client
	// Sleep replaces the wait between retries; tests use it to run the
	// backoff schedule without waiting for it.
	Sleep func(ctx context.Context, d time.Duration) error
}

// Provider calls one OpenAI-compatible server. It is safe for concurrent
// use.
type Provider struct {
	api string
	t   *transport.Transport
}

var (
	_ llm.Provider       = (*Provider)(nil)
	_ llm.Streamer       = (*Provider)(nil)
	_ upstream.Forwarder = (*Provider)(nil)
	_ llm.Unsupported    = (*Provider)(nil)
)

// New checks cfg and returns a provider. It makes no request.
func New(cfg Config) (*Provider, error) {
	api := cfg.API
	if api == "" {
		api = APIChat
	}
	if api != APIChat && api != APIResponses {
		return nil, fmt.Errorf("provider openai: unknown api %q (use %q or %q)", cfg.API, APIChat, APIResponses)
	}
	base := cfg.BaseURL
	if base == "" {
		base = DefaultBaseURL
	}
	path, wire := "/chat/completions", chat.Upstream
	if api == APIResponses {
		path, wire = "/responses", responses.Upstream
	}
	t, err := transport.New(transport.Config{
		Provider: Name, BaseURL: base, Path: path, APIKey: cfg.APIKey, Auth: llm.AuthBearer, Headers: cfg.Headers,
		MaxTokens: cfg.MaxTokens, MaxRetries: cfg.MaxRetries, Timeout: cfg.Timeout, CallTimeout: cfg.CallTimeout,
		HTTPClient: cfg.HTTPClient, Sleep: cfg.Sleep,
		Settings: upstream.Settings{MaxTokens: cfg.MaxTokens, Temperature: cfg.Temperature},
		Codec:    wire,
	})
	if err != nil {
		return nil, err
	}
	// transport.New has checked the URL.
	u, _ := url.Parse(base)
	t.Settings.CompletionTokens = strings.EqualFold(u.Hostname(), "api.openai.com")
	return &Provider{api: api, t: t}, nil
}

// Name returns "openai".
func (p *Provider) Name() string { return Name }

// API returns the API in use, APIChat or APIResponses.
func (p *Provider) API() string { return p.api }

// Unsupported names the settings of req the configured API lacks (see
// llm.Unsupported): the Responses API has no stop sequences, which are
// refused, and no seed, which is dropped. Chat Completions has both.
func (p *Provider) Unsupported(req llm.Request) (refused, dropped []string) {
	if p.api != APIResponses {
		return nil, nil
	}
	if len(req.Stop) > 0 {
		refused = append(refused, "stop")
	}
	if req.Seed != nil {
		dropped = append(dropped, "seed")
	}
	return refused, dropped
}

// Complete makes one non-streaming call.
func (p *Provider) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	return p.t.Complete(ctx, req)
}

// Stream makes one streaming call, passing text to onText as it arrives.
// A nil onText discards it.
func (p *Provider) Stream(ctx context.Context, req llm.Request, onText func(string)) (llm.Response, error) {
	return p.t.Stream(ctx, req, onText)
}

// Protocol returns the wire protocol of the configured API.
func (p *Provider) Protocol() llm.Protocol { return p.t.Codec.Protocol }

// Forward makes one call for a gateway whose client speaks the configured
// API; see upstream.Forwarder.
func (p *Provider) Forward(ctx context.Context, req llm.Request, pass *upstream.Passthrough, onText func(string)) (llm.Response, *upstream.WireResponse, error) {
	return p.t.Forward(ctx, req, pass, onText)
}
