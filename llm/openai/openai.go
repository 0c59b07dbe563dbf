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
// The shapes sent and read, and the assembly of a Chat Completions stream,
// are internal/codec/chat's and internal/codec/responses', which the
// gateway's fronts share; this package is the transport: endpoint,
// headers, key, retries.
package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/hookhost/hookhost/internal/upstream"
	"github.com/hookhost/hookhost/llm"
	"github.com/hookhost/hookhost/llm/internal/httpretry"
	"github.com/hookhost/hookhost/llm/internal/sampling"
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
	api         string
	endpoint    string
	header      http.Header
	maxTokens   int
	temperature *float64
	// completionTokens selects max_completion_tokens over max_tokens.
	completionTokens bool
	client           *httpretry.Client
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
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("provider openai: base URL %q is not an http(s) URL", base)
	}
	if cfg.MaxTokens < 0 || cfg.MaxRetries < 0 || cfg.Timeout < 0 || cfg.CallTimeout < 0 {
		return nil, fmt.Errorf("provider openai: max tokens, retries and timeouts must not be negative")
	}
	path := "/chat/completions"
	if api == APIResponses {
		path = "/responses"
	}
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", "hookhost")
	if cfg.APIKey != "" {
		h.Set("Authorization", "Bearer "+cfg.APIKey)
	}
	for k, v := range cfg.Headers {
		h.Set(k, v)
	}
	var secrets []string
	if cfg.APIKey != "" {
		secrets = []string{cfg.APIKey}
	}
	return &Provider{
		api:              api,
		endpoint:         strings.TrimRight(base, "/") + path,
		header:           h,
		maxTokens:        cfg.MaxTokens,
		temperature:      cfg.Temperature,
		completionTokens: strings.EqualFold(u.Hostname(), "api.openai.com"),
		client: &httpretry.Client{
			Provider: Name, HTTP: cfg.HTTPClient, Timeout: cfg.Timeout, CallTimeout: cfg.CallTimeout,
			MaxRetries: cfg.MaxRetries, Secrets: secrets, Sleep: cfg.Sleep,
		},
	}, nil
}

// Name returns "openai".
func (p *Provider) Name() string { return Name }

// API returns the API in use, APIChat or APIResponses.
func (p *Provider) API() string { return p.api }

// Complete makes one non-streaming call.
func (p *Provider) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	var (
		resp llm.Response
		err  error
	)
	if p.api == APIResponses {
		resp, err = p.completeResponses(ctx, req)
	} else {
		resp, err = p.completeChat(ctx, req)
	}
	return resp, p.client.SealFor(ctx, err)
}

// Stream makes one streaming call, passing text to onText as it arrives.
// A nil onText discards it.
func (p *Provider) Stream(ctx context.Context, req llm.Request, onText func(string)) (llm.Response, error) {
	if onText == nil {
		onText = func(string) {}
	}
	var (
		resp llm.Response
		err  error
	)
	if p.api == APIResponses {
		resp, err = p.streamResponses(ctx, req, onText)
	} else {
		resp, err = p.streamChat(ctx, req, onText)
	}
	return resp, p.client.SealFor(ctx, err)
}

// post sends body and returns the open response.
func (p *Provider) post(ctx context.Context, body any, stream bool) (*http.Response, error) {
	return p.client.PostJSON(ctx, p.endpoint, p.headerFor(ctx), body, stream)
}

// headerFor is the header of a call made with ctx: with the key
// llm.WithAPIKey put in it, if any, in place of the configured one.
func (p *Provider) headerFor(ctx context.Context) http.Header {
	key, ok := llm.APIKey(ctx)
	if !ok {
		return p.header
	}
	h := p.header.Clone()
	h.Set("Authorization", "Bearer "+key)
	return h
}

// fetch makes a non-streaming call and decodes the response into out;
// what names the expected object in the error when it does not decode or
// lacks one of the required fields.
func (p *Provider) fetch(ctx context.Context, body, out any, what string, required ...string) error {
	resp, err := p.post(ctx, body, false)
	if err != nil {
		return err
	}
	data, err := p.client.ReadAll(resp)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, out); err != nil {
		return p.badResponse("response is not %s: %v", what, err)
	}
	if missing := httpretry.Missing(data, required...); len(missing) > 0 {
		return p.badResponse("response is missing %s, which %s must have", strings.Join(missing, ", "), what)
	}
	return nil
}

func (p *Provider) fail(msg string, err error) error {
	return &llm.ProviderError{Provider: Name, Message: msg, Err: err}
}

// badResponse reports a response hookhost cannot use.
func (p *Provider) badResponse(format string, a ...any) error {
	return &llm.ProviderError{Provider: Name, Message: fmt.Sprintf(format, a...)}
}

// check refuses a request no upstream takes before it is encoded (see
// sampling.Check); nothing is sent.
func (p *Provider) check(req llm.Request) error {
	if err := sampling.Check(p.withDefaults(req)); err != nil {
		return p.fail("request not sent", err)
	}
	return nil
}

// withDefaults is req with the configured temperature when it sets none,
// as the body will carry it.
func (p *Provider) withDefaults(req llm.Request) llm.Request {
	req.Temperature = p.temperatureFor(req)
	return req
}

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

func (p *Provider) maxTokensFor(req llm.Request) int {
	if req.MaxTokens > 0 {
		return req.MaxTokens
	}
	return p.maxTokens
}

func (p *Provider) temperatureFor(req llm.Request) *float64 {
	if req.Temperature != nil {
		return req.Temperature
	}
	return p.temperature
}

// Protocol returns the wire protocol of the configured API.
func (p *Provider) Protocol() llm.Protocol {
	if p.api == APIResponses {
		return llm.ProtocolResponses
	}
	return llm.ProtocolChat
}

// Forward makes one call for a gateway whose client speaks the configured
// API; see upstream.Forwarder.
func (p *Provider) Forward(ctx context.Context, req llm.Request, pass *upstream.Passthrough, onText func(string)) (llm.Response, *upstream.WireResponse, error) {
	var (
		resp llm.Response
		wire *upstream.WireResponse
		err  error
	)
	if p.api == APIResponses {
		resp, wire, err = p.forwardResponses(ctx, req, pass, onText)
	} else {
		resp, wire, err = p.forwardChat(ctx, req, pass, onText)
	}
	return resp, wire, p.client.SealFor(ctx, err)
}
