// Package transport is what the HTTP providers (openai, anthropic) share
// around a codec (upstream.Codec): a call sends the body the codec
// encodes to one endpoint through httpretry, with the configured headers
// and key, and hands the answer, whole or streamed, to the codec to read.
// Every error leaves through httpretry's seal, which names the provider
// and blanks its secrets out.
package transport

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/hookhost/hookhost/internal/upstream"
	"github.com/hookhost/hookhost/llm"
	"github.com/hookhost/hookhost/llm/internal/httpretry"
)

// Transport calls one endpoint in one protocol. It is safe for concurrent
// use.
type Transport struct {
	Client   *httpretry.Client
	Endpoint string
	// Header is sent with every call; a key put in a call's context
	// (llm.WithAPIKey) replaces the configured one, sent as Auth says.
	Header   http.Header
	Auth     llm.AuthStyle
	Settings upstream.Settings
	Codec    upstream.Codec
}

// Config is what both HTTP providers' configurations say about the
// transport, with their defaults already filled in.
type Config struct {
	// Provider is the provider's config name, used in errors.
	Provider string
	// BaseURL is the API root; Path is appended to it.
	BaseURL, Path string
	// APIKey is sent as Auth says; "" sends none.
	APIKey string
	Auth   llm.AuthStyle
	// Defaults are the protocol's own headers (a version); Headers, the
	// configured ones, are set after them and may replace them.
	Defaults, Headers map[string]string
	// MaxTokens, MaxRetries and the timeouts must not be negative.
	MaxTokens            int
	MaxRetries           int
	Timeout, CallTimeout time.Duration
	HTTPClient           *http.Client
	Sleep                func(ctx context.Context, d time.Duration) error
	Settings             upstream.Settings
	Codec                upstream.Codec
}

// New checks c and returns its transport. It makes no request.
func New(c Config) (*Transport, error) {
	u, err := url.Parse(c.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("provider %s: base URL %q is not an http(s) URL", c.Provider, c.BaseURL)
	}
	if c.MaxTokens < 0 || c.MaxRetries < 0 || c.Timeout < 0 || c.CallTimeout < 0 {
		return nil, fmt.Errorf("provider %s: max tokens, retries and timeouts must not be negative", c.Provider)
	}
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", "hookhost")
	for k, v := range c.Defaults {
		h.Set(k, v)
	}
	c.Auth.SetKey(h, c.APIKey)
	for k, v := range c.Headers {
		h.Set(k, v)
	}
	var secrets []string
	if c.APIKey != "" {
		secrets = []string{c.APIKey}
	}
	return &Transport{
		Endpoint: strings.TrimRight(c.BaseURL, "/") + c.Path,
		Header:   h,
		Auth:     c.Auth,
		Settings: c.Settings,
		Codec:    c.Codec,
		Client: &httpretry.Client{
			Provider: c.Provider, HTTP: c.HTTPClient, Timeout: c.Timeout, CallTimeout: c.CallTimeout,
			MaxRetries: c.MaxRetries, Secrets: secrets, Sleep: c.Sleep,
		},
	}, nil
}

// HeaderFor is the header of a call made with ctx: with the key
// llm.WithAPIKey put in it, if any, in place of the configured one.
func (t *Transport) HeaderFor(ctx context.Context) http.Header {
	key, ok := llm.APIKey(ctx)
	if !ok {
		return t.Header
	}
	h := t.Header.Clone()
	t.Auth.SetKey(h, key)
	return h
}

// Complete makes one non-streaming call.
func (t *Transport) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	resp, err := t.complete(ctx, req)
	return resp, t.Client.SealFor(ctx, err)
}

func (t *Transport) complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	body, names, err := t.Codec.Body(req, t.Settings, false)
	if err != nil {
		return llm.Response{}, err
	}
	resp, err := t.Client.Post(ctx, t.Endpoint, t.HeaderFor(ctx), body, false)
	if err != nil {
		return llm.Response{}, err
	}
	data, err := t.Client.ReadAll(resp)
	if err != nil {
		return llm.Response{}, err
	}
	return t.Codec.Decode(data, names)
}

// Stream makes one streaming call, passing text to onText as it arrives.
// A nil onText discards it.
func (t *Transport) Stream(ctx context.Context, req llm.Request, onText func(string)) (llm.Response, error) {
	if onText == nil {
		onText = func(string) {}
	}
	resp, err := t.stream(ctx, req, onText)
	return resp, t.Client.SealFor(ctx, err)
}

func (t *Transport) stream(ctx context.Context, req llm.Request, onText func(string)) (llm.Response, error) {
	body, names, err := t.Codec.Body(req, t.Settings, true)
	if err != nil {
		return llm.Response{}, err
	}
	resp, err := t.Client.Post(ctx, t.Endpoint, t.HeaderFor(ctx), body, true)
	if err != nil {
		return llm.Response{}, err
	}
	defer resp.Body.Close()
	return t.Codec.Read(callContext(resp), t.Client.Stream(resp), names, onText)
}

// Forward makes one call for a gateway whose client speaks the codec's
// protocol (see upstream.Forwarder). The client's feature headers kept in
// pass are sent too.
func (t *Transport) Forward(ctx context.Context, req llm.Request, pass *upstream.Passthrough, onText func(string)) (llm.Response, *upstream.WireResponse, error) {
	resp, wire, err := t.forward(ctx, req, pass, onText)
	return resp, wire, t.Client.SealFor(ctx, err)
}

func (t *Transport) forward(ctx context.Context, req llm.Request, pass *upstream.Passthrough, onText func(string)) (llm.Response, *upstream.WireResponse, error) {
	stream := onText != nil
	body, names, err := t.Codec.ForwardBody(req, t.Settings, pass, stream)
	if err != nil {
		return llm.Response{}, nil, err
	}
	header := upstream.WithFeatureHeaders(t.Codec.Protocol, t.HeaderFor(ctx), pass)
	resp, err := t.Client.Post(ctx, t.Endpoint, header, body, stream)
	if err != nil {
		return llm.Response{}, nil, err
	}
	if stream {
		defer resp.Body.Close()
		return t.Codec.ReadForward(callContext(resp), t.Client.Stream(resp), names, onText)
	}
	data, err := t.Client.ReadAll(resp)
	if err != nil {
		return llm.Response{}, nil, err
	}
	return t.Codec.DecodeForward(data, names)
}

// callContext is the context of the attempt that answered, which carries
// the caller's values (llm.WithInputReport); an empty one when the
// response has no request.
func callContext(resp *http.Response) context.Context {
	if resp.Request != nil {
		return resp.Request.Context()
	}
	return context.Background()
}
