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
// The shapes sent and read, and the assembly of a stream's blocks, are
// internal/codec/messages', which the gateway's Messages front shares;
// this package is the transport: endpoint, headers, key, retries.
package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/codec/messages"
	"github.com/hookhost/hookhost/llm"
	"github.com/hookhost/hookhost/llm/internal/history"
	"github.com/hookhost/hookhost/llm/internal/httpretry"
	"github.com/hookhost/hookhost/llm/internal/sampling"
	"github.com/hookhost/hookhost/llm/toolfmt"
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
	endpoint    string
	header      http.Header
	maxTokens   int
	temperature *float64
	client      *httpretry.Client
}

var (
	_ llm.Provider    = (*Provider)(nil)
	_ llm.Streamer    = (*Provider)(nil)
	_ llm.Unsupported = (*Provider)(nil)
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
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("provider anthropic: base URL %q is not an http(s) URL", base)
	}
	if cfg.MaxTokens < 0 || cfg.MaxRetries < 0 || cfg.Timeout < 0 || cfg.CallTimeout < 0 {
		return nil, fmt.Errorf("provider anthropic: max tokens, retries and timeouts must not be negative")
	}
	maxTokens := cfg.MaxTokens
	if maxTokens == 0 {
		maxTokens = DefaultMaxTokens
	}
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", "hookhost")
	h.Set("anthropic-version", Version)
	if cfg.APIKey != "" {
		h.Set("x-api-key", cfg.APIKey)
	}
	for k, v := range cfg.Headers {
		h.Set(k, v)
	}
	var secrets []string
	if cfg.APIKey != "" {
		secrets = []string{cfg.APIKey}
	}
	return &Provider{
		endpoint:    strings.TrimRight(base, "/") + "/v1/messages",
		header:      h,
		maxTokens:   maxTokens,
		temperature: cfg.Temperature,
		client: &httpretry.Client{
			Provider: Name, HTTP: cfg.HTTPClient, Timeout: cfg.Timeout, CallTimeout: cfg.CallTimeout,
			MaxRetries: cfg.MaxRetries, Secrets: secrets, Sleep: cfg.Sleep,
		},
	}, nil
}

// Name returns "anthropic".
func (p *Provider) Name() string { return Name }

func str(s string) *string { return &s }

func (p *Provider) body(req llm.Request, stream bool) (messages.Request, *toolfmt.NameMap, error) {
	names, err := toolfmt.NewNameMap(toolfmt.SpecNames(req.Tools))
	if err != nil {
		return messages.Request{}, nil, p.fail("cannot offer the tools", err)
	}
	body := messages.Request{
		Model: req.Model, MaxTokens: p.maxTokens, Temperature: req.Temperature, Stream: stream, Messages: []messages.Message{},
		TopP: req.TopP, StopSequences: req.Stop,
	}
	if req.MaxTokens > 0 {
		body.MaxTokens = req.MaxTokens
	}
	if body.Temperature == nil {
		body.Temperature = p.temperature
	}
	if req.User != "" {
		body.Metadata = &messages.Metadata{UserID: req.User}
	}
	// The API has no seed (see Unsupported).
	if err := sampling.Check(llm.Request{Temperature: body.Temperature, TopP: body.TopP}); err != nil {
		return messages.Request{}, nil, p.fail("request not sent", err)
	}
	for _, s := range req.Tools {
		t, err := toolfmt.ToAnthropic(s)
		if err != nil {
			return messages.Request{}, nil, p.fail("cannot offer the tools", err)
		}
		body.Tools = append(body.Tools, t)
	}
	system := []string{}
	if req.System != "" {
		system = append(system, req.System)
	}
	msgs, system, err := messages.History(history.Repair(req.Messages), system, names)
	if err != nil {
		return messages.Request{}, nil, p.fail(err.Error(), nil)
	}
	body.Messages = msgs
	body.System = strings.Join(system, "\n\n")
	return body, names, nil
}

func (p *Provider) post(ctx context.Context, body messages.Request) (*http.Response, error) {
	return p.client.PostJSON(ctx, p.endpoint, p.headerFor(ctx), body, body.Stream)
}

// headerFor is the header of a call made with ctx: with the key
// llm.WithAPIKey put in it, if any, in place of the configured one.
func (p *Provider) headerFor(ctx context.Context) http.Header {
	key, ok := llm.APIKey(ctx)
	if !ok {
		return p.header
	}
	h := p.header.Clone()
	h.Set("x-api-key", key)
	return h
}

func (p *Provider) fail(msg string, err error) error {
	return &llm.ProviderError{Provider: Name, Message: msg, Err: err}
}

func (p *Provider) badResponse(format string, a ...any) error {
	return &llm.ProviderError{Provider: Name, Message: fmt.Sprintf(format, a...)}
}

// Complete makes one non-streaming call.
func (p *Provider) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	resp, err := p.complete(ctx, req)
	return resp, p.client.SealFor(ctx, err)
}

func (p *Provider) complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	body, names, err := p.body(req, false)
	if err != nil {
		return llm.Response{}, err
	}
	resp, err := p.post(ctx, body)
	if err != nil {
		return llm.Response{}, err
	}
	data, err := p.client.ReadAll(resp)
	if err != nil {
		return llm.Response{}, err
	}
	return p.parse(data, names)
}

// parse reads a whole (non-streamed) response body.
func (p *Provider) parse(data []byte, names *toolfmt.NameMap) (llm.Response, error) {
	var r messages.Response
	if err := json.Unmarshal(data, &r); err != nil {
		return llm.Response{}, p.badResponse("response is not a message: %v", err)
	}
	if r.Type == "error" {
		typ, msg := httpretry.ParseError(data)
		return llm.Response{}, &llm.ProviderError{Provider: Name, Type: typ, Message: msg}
	}
	if missing := httpretry.Missing(data, "type", "content", "stop_reason"); len(missing) > 0 {
		return llm.Response{}, p.badResponse("response is missing %s, which a message must have", strings.Join(missing, ", "))
	}
	if r.Type != "message" {
		return llm.Response{}, p.badResponse("response has type %q, not \"message\"", r.Type)
	}
	return p.result(r, names)
}

// result maps a message, received whole or assembled from a stream, to the
// neutral response. Text blocks are joined as they are, which is also how
// their deltas were printed.
func (p *Provider) result(r messages.Response, names *toolfmt.NameMap) (llm.Response, error) {
	msg := hooks.Message{Role: hooks.RoleAssistant}
	var text strings.Builder
	var other string
	for i, b := range r.Content {
		switch {
		case b.Type == "":
			return llm.Response{}, p.badResponse("content block %d has no type", i)
		case b.Type == "tool_use" && (b.ID == "" || b.Name == ""):
			return llm.Response{}, p.badResponse("tool_use content block %d needs an id and a name (got id %q, name %q)", i, b.ID, b.Name)
		}
		switch b.Type {
		case "text":
			text.WriteString(b.Text)
		case "tool_use":
			msg.ToolCalls = append(msg.ToolCalls, hooks.ToolCall{ID: b.ID, Name: names.ID(b.Name), Arguments: messages.ArgsOf(b.Input)})
		default:
			if !messages.ProviderRun(b.Type) && other == "" {
				other = fmt.Sprintf("content block %d is a %s", i, b.Type)
			}
		}
		// thinking and server tool blocks have no neutral form.
	}
	// A block of a kind not known here might be a call that needs an
	// answer; the conversation must not go on upstream without it.
	if other != "" && len(msg.ToolCalls) > 0 {
		return llm.Response{}, p.badResponse("%s, beside tool calls, which hookhost does not model: it cannot tell whether the block needs an answer in the next request, so it cannot continue the conversation after it", other)
	}
	msg.Content = text.String()
	out := llm.Response{
		Model: r.Model, Message: msg,
		Usage: hooks.Usage{
			InputTokens:  r.Usage.InputTokens + r.Usage.CacheCreationInputTokens + r.Usage.CacheReadInputTokens,
			OutputTokens: r.Usage.OutputTokens,
		},
	}
	out.StopReason = messages.StopOf(r.StopReason)
	return out, nil
}

// Stream makes one streaming call, passing text to onText as it arrives.
// A nil onText discards it.
func (p *Provider) Stream(ctx context.Context, req llm.Request, onText func(string)) (llm.Response, error) {
	if onText == nil {
		onText = func(string) {}
	}
	resp, err := p.stream(ctx, req, onText)
	return resp, p.client.SealFor(ctx, err)
}

func (p *Provider) stream(ctx context.Context, req llm.Request, onText func(string)) (llm.Response, error) {
	body, names, err := p.body(req, true)
	if err != nil {
		return llm.Response{}, err
	}
	resp, err := p.post(ctx, body)
	if err != nil {
		return llm.Response{}, err
	}
	return p.read(resp, names, onText, nil)
}

// read parses an event stream into the answer it builds, passing text to
// onText as it arrives. A non-nil wire also collects the message's wire
// form (see Forward).
func (p *Provider) read(resp *http.Response, names *toolfmt.NameMap, onText func(string), wire *messages.WireStream) (llm.Response, error) {
	defer resp.Body.Close()

	var (
		msg    *messages.Response
		blocks []*messages.StreamBlock
		shown  strings.Builder
	)
	show := func(s string) {
		if s != "" {
			shown.WriteString(s)
			onText(s)
		}
	}
	events := p.client.Events(resp)
	for {
		ev, err := events.Next()
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return llm.Response{}, p.badResponse("stream ended before message_stop")
			}
			return llm.Response{}, p.client.ReadError(err)
		}
		var e messages.Event
		if err := json.Unmarshal([]byte(ev.Data), &e); err != nil {
			return llm.Response{}, p.badResponse("stream event %q is not JSON: %v", ev.Name, err)
		}
		name := ev.Name
		if name == "" {
			name = e.Type
		}
		if msg == nil && name != "message_start" && name != "ping" && name != "error" {
			return llm.Response{}, p.badResponse("stream event %s came before message_start", name)
		}
		switch name {
		case "ping":
		case "error":
			typ, m := httpretry.ParseError([]byte(ev.Data))
			return llm.Response{}, &llm.ProviderError{Provider: Name, Type: typ, Message: "error in stream: " + m}
		case "message_start":
			if e.Message == nil {
				return llm.Response{}, p.badResponse("message_start without a message")
			}
			if msg != nil {
				return llm.Response{}, p.badResponse("second message_start in one stream")
			}
			msg = e.Message
			// Blocks come from the block events; a non-empty list here
			// would be counted twice.
			msg.Content = nil
			if resp.Request != nil {
				// Counted as Usage counts them, cache reads included.
				u := msg.Usage
				llm.ReportInput(resp.Request.Context(), u.InputTokens+u.CacheCreationInputTokens+u.CacheReadInputTokens)
			}
			wire.Start([]byte(ev.Data))
			events.Progress()
		case "content_block_start":
			if e.ContentBlock == nil {
				return llm.Response{}, p.badResponse("content_block_start without a block")
			}
			if e.BlockIndex() != len(blocks) {
				return llm.Response{}, p.badResponse("content_block_start for index %d, expected %d (blocks open in order)", e.BlockIndex(), len(blocks))
			}
			b := messages.NewStreamBlock(*e.ContentBlock)
			if err := b.Check(e.BlockIndex()); err != nil {
				return llm.Response{}, p.badResponse("%v", err)
			}
			blocks = append(blocks, b)
			wire.Open([]byte(ev.Data))
			if first := b.Started(); first.Type == "text" {
				show(first.Text)
			}
			// A block opened empty (text "") is no news yet; a tool
			// call's name, or text already in it, is.
			var raw struct {
				ContentBlock json.RawMessage `json:"content_block"`
			}
			if json.Unmarshal([]byte(ev.Data), &raw) == nil && messages.Carries(raw.ContentBlock, messages.Delta{}) {
				events.Progress()
			}
		case "content_block_delta":
			b, err := messages.OpenBlock(blocks, e.BlockIndex())
			if err != nil {
				return llm.Response{}, p.badResponse("content_block_delta: %v", err)
			}
			var d messages.Delta
			if err := json.Unmarshal(e.Delta, &d); err != nil {
				return llm.Response{}, p.badResponse("content_block_delta: %v", err)
			}
			if err := b.Apply(e.BlockIndex(), d); err != nil {
				return llm.Response{}, p.badResponse("content_block_delta: %v", err)
			}
			wire.Delta(e.BlockIndex(), e.Delta)
			if d.Type == "text_delta" {
				show(d.Text)
			}
			if messages.Carries(e.Delta, d) {
				events.Progress()
			}
		case "content_block_stop":
			b, err := messages.OpenBlock(blocks, e.BlockIndex())
			if err != nil {
				return llm.Response{}, p.badResponse("content_block_stop: %v", err)
			}
			// Closing a block adds nothing to it.
			b.Stop()
		case "message_delta":
			var d messages.Delta
			if len(e.Delta) > 0 {
				if err := json.Unmarshal(e.Delta, &d); err != nil {
					return llm.Response{}, p.badResponse("message_delta: %v", err)
				}
			}
			wire.MessageDelta([]byte(ev.Data))
			if d.StopReason != nil {
				// News once; told again, it adds nothing.
				if msg.StopReason == nil {
					events.Progress()
				}
				msg.StopReason = d.StopReason
			}
			if d.StopSequence != nil {
				msg.StopSequence = d.StopSequence
			}
			if e.Usage != nil {
				// Counts here are cumulative; input counts appear only
				// when the server revises them.
				msg.Usage.OutputTokens = e.Usage.OutputTokens
				if e.Usage.InputTokens > 0 {
					msg.Usage.InputTokens = e.Usage.InputTokens
				}
				if e.Usage.CacheCreationInputTokens > 0 {
					msg.Usage.CacheCreationInputTokens = e.Usage.CacheCreationInputTokens
				}
				if e.Usage.CacheReadInputTokens > 0 {
					msg.Usage.CacheReadInputTokens = e.Usage.CacheReadInputTokens
				}
			}
		case "message_stop":
			if msg.StopReason == nil {
				return llm.Response{}, p.badResponse("stream ended without a stop_reason")
			}
			for _, sb := range blocks {
				msg.Content = append(msg.Content, sb.Block())
			}
			out, err := p.result(*msg, names)
			if err == nil && out.Message.Content != shown.String() {
				return llm.Response{}, p.badResponse("the text streamed differs from the message it builds (%d bytes shown, %d kept)", shown.Len(), len(out.Message.Content))
			}
			return out, err
		}
	}
}
