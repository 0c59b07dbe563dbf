// Package httpretry is the HTTP client shared by the model provider
// adapters. It behaves the way the providers' official clients do, so that
// hookhost is neither more fragile nor more aggressive than they are:
//
//   - network errors and HTTP 408, 409, 429 and 5xx (Anthropic's 529
//     included) are retried with exponential backoff and jitter, up to
//     MaxRetries times; other statuses are never retried;
//   - a server's own advice wins: retry-after-ms and Retry-After (seconds
//     or an HTTP date) set the wait, capped at MaxWait, and
//     x-should-retry: true or false overrides the status rule;
//   - Timeout bounds each attempt: the whole exchange for an ordinary call;
//     for a stream, which may legitimately run for minutes, the wait for
//     each next event read through Events that the adapter reports as
//     progress. Comments, blank lines and keep-alives never count, nor do
//     events such as pings that carry nothing, so a server that keeps a
//     stream open without answering is cut off all the same;
//   - CallTimeout bounds the whole call, retries, waits between them and
//     reading the body included;
//   - a response body is capped at MaxResponse bytes and one event at
//     MaxEvent; going over is an error naming the cap, found while
//     reading, before more than the cap is held;
//   - a redirect is never followed (it would resend the conversation and
//     the key to wherever the server points): it is an error, never
//     retried;
//   - cancelling the context stops the request at once, including a wait
//     between attempts;
//   - every failure is a *llm.ProviderError carrying the HTTP status and the
//     provider's error type and message. Whatever a server sends may end
//     up in one, so an adapter passes every error it returns through Seal,
//     which blanks the configured secrets (the API key) out of all of it.
//
// The clock, the sleeper and the jitter source are fields so tests can run
// a retry schedule without waiting for it.
package httpretry

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/hookhost/hookhost/internal/redact"
	"github.com/hookhost/hookhost/internal/upstream"
	"github.com/hookhost/hookhost/llm"
	"github.com/hookhost/hookhost/llm/internal/sse"
)

// Defaults for zero fields of Client.
const (
	DefaultBaseDelay = 500 * time.Millisecond
	DefaultMaxDelay  = 8 * time.Second
	DefaultMaxWait   = 30 * time.Second
	// DefaultMaxResponse caps one response body, streamed or not: far
	// above any real answer, far below what would hurt the host.
	DefaultMaxResponse = 64 << 20
)

// maxErrorBody bounds how much of an error response is read: enough for
// any JSON error object, not enough for a proxy to make us buffer a page.
const maxErrorBody = 64 << 10

// Client sends requests to one provider's API. The zero value works; only
// Provider should always be set, because it names who failed in errors.
type Client struct {
	// Provider is the config name of the provider, used in errors.
	Provider string
	// HTTP is the underlying client; nil means one with no overall timeout
	// of its own, since Timeout below is applied per attempt.
	HTTP *http.Client
	// Timeout bounds each attempt (see the package doc); 0 means none.
	Timeout time.Duration
	// CallTimeout bounds a whole call, from Do until the body is closed;
	// 0 means none.
	CallTimeout time.Duration
	// MaxResponse caps a response body in bytes; 0 means
	// DefaultMaxResponse.
	MaxResponse int64
	// MaxEvent caps one server-sent event in bytes; 0 means
	// sse.DefaultMaxEvent.
	MaxEvent int
	// MaxRetries is how many times a failed attempt may be repeated.
	MaxRetries int
	// BaseDelay is the first backoff; each retry doubles it, up to MaxDelay.
	BaseDelay time.Duration
	MaxDelay  time.Duration
	// MaxWait caps a wait the server asks for with Retry-After.
	MaxWait time.Duration
	// Secrets are blanked out of error messages echoed from the server.
	Secrets []string

	// Sleep waits d or until ctx ends; nil means a real timer.
	Sleep func(ctx context.Context, d time.Duration) error
	// Jitter returns a number in [0, 1); nil means math/rand.
	Jitter func() float64
	// Now is the clock Retry-After dates are measured against.
	Now func() time.Time
}

// Request is one API call. Body is sent as-is on every attempt.
type Request struct {
	Method string
	URL    string
	Header http.Header
	Body   []byte
	// Stream makes Timeout an idle timeout between the events that carry
	// progress (see Events), instead of a bound on the whole exchange.
	Stream bool
}

// The cancellation causes of the two limits, so that each can be told
// apart from the other and from the caller cancelling.
var (
	errTimeout     = errors.New("attempt timed out")
	errCallTimeout = errors.New("call timed out")
)

// Do sends r, retrying as described in the package doc, and returns a
// response with a 2xx status whose Body the caller must close. Reading the
// body stays under the attempt's timeout. Every other outcome is a
// *llm.ProviderError; when the caller's context ended it wraps ctx.Err(),
// so errors.Is(err, context.Canceled) holds.
func (c *Client) Do(ctx context.Context, r Request) (*http.Response, error) {
	resp, err := c.do(ctx, r)
	return resp, c.SealFor(ctx, err)
}

func (c *Client) do(ctx context.Context, r Request) (*http.Response, error) {
	caller := ctx
	endCall := func() {}
	if c.CallTimeout > 0 {
		ctx, endCall = context.WithTimeoutCause(ctx, c.CallTimeout, errCallTimeout)
	}
	attempts := c.MaxRetries + 1
	for attempt := 1; ; attempt++ {
		resp, next, err := c.attempt(ctx, r)
		if err == nil {
			resp.Body.(*body).endCall = endCall
			return resp, nil
		}
		if ctx.Err() != nil {
			endCall()
			return nil, c.stopped(caller)
		}
		if !next.retry || attempt >= attempts {
			endCall()
			if next.retry && attempts > 1 {
				note(err, fmt.Sprintf("gave up after %d attempts", attempt))
			}
			return nil, err
		}
		wait := next.wait
		if wait < 0 {
			wait = c.backoff(attempt)
		}
		if err := c.sleep(ctx, wait); err != nil {
			endCall()
			return nil, c.stopped(caller)
		}
	}
}

// stopped explains why a call ended early: the caller's context, or the
// call deadline.
func (c *Client) stopped(caller context.Context) error {
	if caller.Err() != nil {
		return c.cancelled(caller)
	}
	return c.callTimeoutErr()
}

// verdict says whether a failed attempt is worth another one, and how long
// the server asked to wait first (-1: it did not say).
type verdict struct {
	retry bool
	wait  time.Duration
}

var final = verdict{retry: false, wait: -1}

// attempt makes one try.
func (c *Client) attempt(ctx context.Context, r Request) (*http.Response, verdict, error) {
	actx, cancel := context.WithCancelCause(ctx)
	var timer *time.Timer
	if c.Timeout > 0 {
		timer = time.AfterFunc(c.Timeout, func() { cancel(errTimeout) })
	}
	stop := func() {
		if timer != nil {
			timer.Stop()
		}
		cancel(nil)
	}
	req, err := http.NewRequestWithContext(actx, r.Method, r.URL, bytes.NewReader(r.Body))
	if err != nil {
		stop()
		return nil, final, &llm.ProviderError{Provider: c.Provider, Message: "cannot build the request", Err: err}
	}
	for k, vs := range r.Header {
		req.Header[k] = append([]string(nil), vs...)
	}
	resp, err := c.client().Do(req)
	if err != nil {
		stop()
		again := verdict{retry: true, wait: -1}
		if context.Cause(actx) == errTimeout {
			return nil, again, c.timeoutErr("no response")
		}
		return nil, again, &llm.ProviderError{Provider: c.Provider, Message: "request failed", Err: err}
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		limit := c.MaxResponse
		if limit <= 0 {
			limit = DefaultMaxResponse
		}
		resp.Body = &body{rc: resp.Body, c: c, ctx: actx, stop: stop, timer: timer, stream: r.Stream, limit: limit, endCall: func() {}}
		return resp, final, nil
	}
	data, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	resp.Body.Close()
	stop()
	wait := c.retryAfter(resp.Header)
	pe := c.statusError(resp.StatusCode, data)
	if wait > 0 {
		pe.RetryAfter = wait
	}
	return nil, verdict{retry: shouldRetry(resp.StatusCode, resp.Header), wait: wait}, pe
}

func (c *Client) client() *http.Client {
	if c.HTTP == nil {
		return defaultHTTP
	}
	// The caller's client may follow redirects (the zero value does); a
	// copy that follows none is cheap and leaves the caller's as it is.
	own := *c.HTTP
	own.CheckRedirect = noRedirects
	return &own
}

// noRedirects hands a redirect back as the response: following one would
// send the conversation and the key to wherever the server points.
func noRedirects(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// defaultHTTP is shared by every provider that brings no client of its
// own. A provider talks to one host, and a gateway makes many calls to it
// at once: http.DefaultTransport keeps only 2 idle connections per host,
// so under concurrency most calls would open a new connection (and leave
// one in TIME_WAIT), which costs a handshake per call.
var defaultHTTP = &http.Client{CheckRedirect: noRedirects, Transport: func() http.RoundTripper {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = MaxIdleConnsPerHost
	return t
}()}

// MaxIdleConnsPerHost is how many idle connections to its one upstream
// host a provider keeps for reuse.
const MaxIdleConnsPerHost = 256

func (c *Client) cancelled(ctx context.Context) error {
	return &llm.ProviderError{Provider: c.Provider, Message: "request stopped", Err: ctx.Err()}
}

func (c *Client) timeoutErr(what string) *llm.ProviderError {
	return &llm.ProviderError{Provider: c.Provider, Message: fmt.Sprintf("%s within llm.timeout (%s) (raise llm.timeout if the model needs longer)", what, c.Timeout)}
}

func (c *Client) callTimeoutErr() *llm.ProviderError {
	return &llm.ProviderError{Provider: c.Provider, Message: fmt.Sprintf("the call did not finish within llm.call_timeout (%s) (raise llm.call_timeout for longer answers)", c.CallTimeout)}
}

// note appends a remark to a ProviderError's message.
func note(err error, s string) {
	var pe *llm.ProviderError
	if errors.As(err, &pe) {
		if pe.Message == "" {
			pe.Message = s
		} else {
			pe.Message += " (" + s + ")"
		}
	}
}

// shouldRetry applies the status rule, unless the server said otherwise:
// a gateway that has already run side-effecting tools sends
// x-should-retry: false on its own failures.
func shouldRetry(status int, h http.Header) bool {
	switch strings.ToLower(strings.TrimSpace(h.Get("x-should-retry"))) {
	case "true":
		return true
	case "false":
		return false
	}
	return status == http.StatusRequestTimeout || status == http.StatusConflict ||
		status == http.StatusTooManyRequests || status >= 500
}

// retryAfter reads the server's requested delay, capped at MaxWait; -1
// when it gave none that can be used.
func (c *Client) retryAfter(h http.Header) time.Duration {
	maxWait := c.MaxWait
	if maxWait <= 0 {
		maxWait = DefaultMaxWait
	}
	capped := func(d time.Duration) time.Duration {
		if d < 0 {
			return 0
		}
		return min(d, maxWait)
	}
	if v := strings.TrimSpace(h.Get("retry-after-ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 && ms < 1e12 {
			return capped(time.Duration(ms * float64(time.Millisecond)))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return -1
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s < 0 || s > 1e9 {
			return -1
		}
		return capped(time.Duration(s * float64(time.Second)))
	}
	if t, err := http.ParseTime(v); err == nil {
		now := time.Now
		if c.Now != nil {
			now = c.Now
		}
		return capped(t.Sub(now()))
	}
	return -1
}

// backoff is the delay before retry n (1-based) when the server gave no
// advice: BaseDelay doubling up to MaxDelay, less up to a quarter at random
// so that many clients hit by one outage do not return in lockstep.
func (c *Client) backoff(n int) time.Duration {
	base, maxDelay := c.BaseDelay, c.MaxDelay
	if base <= 0 {
		base = DefaultBaseDelay
	}
	if maxDelay <= 0 {
		maxDelay = DefaultMaxDelay
	}
	d := base
	for i := 1; i < n && d < maxDelay; i++ {
		d *= 2
	}
	d = min(d, maxDelay)
	j := rand.Float64
	if c.Jitter != nil {
		j = c.Jitter
	}
	return time.Duration(float64(d) * (1 - 0.25*j()))
}

func (c *Client) sleep(ctx context.Context, d time.Duration) error {
	if c.Sleep != nil {
		return c.Sleep(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// statusError turns an error response into a ProviderError. The OpenAI and
// Anthropic shapes both nest {type, message} under "error"; servers that
// imitate them sometimes put a bare string there, or the fields at the top
// level, so those are read too. A body that is not JSON at all (a proxy's
// HTML page) is quoted briefly.
func (c *Client) statusError(status int, body []byte) *llm.ProviderError {
	pe := &llm.ProviderError{Provider: c.Provider, StatusCode: status}
	if status >= 300 && status < 400 {
		// Where it points is not shown: it may be an internal address.
		pe.Message = fmt.Sprintf("the server answered with a redirect (HTTP %d), which is not followed, since it would resend the conversation and the key elsewhere; set llm.base_url to the address that answers", status)
		return pe
	}
	pe.Type, pe.Message = upstream.ParseError(body)
	if pe.Type == "" && pe.Message == "" {
		// Blank the secrets before cutting: a cut through one would
		// leave part of it behind.
		text := strings.TrimSpace(c.Redact(string(body)))
		if len(text) > 200 {
			text = strings.ToValidUTF8(text[:200], "") + "…"
		}
		if text == "" {
			text = http.StatusText(status)
		}
		pe.Message = text
	}
	return pe
}

// Redact blanks out every configured secret in s.
func (c *Client) Redact(s string) string { return c.redact(s, "") }

func (c *Client) redact(s, key string) string {
	return redact.String(redact.String(s, c.Secrets...), key)
}

// Seal is the one place secrets leave errors: it returns err as a
// *llm.ProviderError whose every field, and the text of everything it
// wraps, has the configured secrets blanked out. An error whose wrapped
// chain would reveal a secret is cut from that chain; errors.Is still
// answers for it, so a cancelled call is still recognised as one.
func (c *Client) Seal(err error) error { return c.seal(err, "") }

// SealFor is Seal for an error of a call made with ctx: the key
// llm.WithAPIKey put in ctx, if any, is blanked out too.
func (c *Client) SealFor(ctx context.Context, err error) error {
	key, _ := llm.APIKey(ctx)
	return c.seal(err, key)
}

func (c *Client) seal(err error, key string) error {
	if err == nil {
		return nil
	}
	pe, ok := err.(*llm.ProviderError)
	if !ok {
		pe = &llm.ProviderError{Provider: c.Provider, Err: err}
	}
	if pe.Provider == "" {
		// A codec's error (upstream.Fail, upstream.Bad) names no provider.
		pe.Provider = c.Provider
	}
	pe.Provider = c.redact(pe.Provider, key)
	pe.Type = c.redact(pe.Type, key)
	pe.Message = c.redact(pe.Message, key)
	if pe.Err != nil {
		if text := pe.Err.Error(); c.redact(text, key) != text {
			pe.Err = &sealed{text: c.redact(text, key), cause: pe.Err}
		}
	}
	return pe
}

// sealed stands in for an error whose text held a secret.
type sealed struct {
	text  string
	cause error
}

func (s *sealed) Error() string { return s.text }

func (s *sealed) Is(target error) bool { return errors.Is(s.cause, target) }

// PostJSON encodes body as JSON and sends it with Post. It encodes without
// HTML escaping, so "<" in a prompt reaches the model as written rather
// than as \u003c.
func (c *Client) PostJSON(ctx context.Context, url string, header http.Header, body any, stream bool) (*http.Response, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(body); err != nil {
		return nil, &llm.ProviderError{Provider: c.Provider, Message: "cannot encode the request", Err: err}
	}
	return c.Post(ctx, url, header, bytes.TrimRight(b.Bytes(), "\n"), stream)
}

// Post sends body, already encoded JSON, to url with Do, asking for an
// event stream when stream is set and for JSON otherwise. header is not
// changed.
func (c *Client) Post(ctx context.Context, url string, header http.Header, body []byte, stream bool) (*http.Response, error) {
	h := header.Clone()
	if h == nil {
		h = http.Header{}
	}
	if stream {
		h.Set("Accept", "text/event-stream")
	} else {
		h.Set("Accept", "application/json")
	}
	return c.Do(ctx, Request{Method: http.MethodPost, URL: url, Header: h, Body: body, Stream: stream})
}

// ReadAll reads a successful response body whole, under the attempt's
// timeout and the response cap, and closes it.
func (c *Client) ReadAll(resp *http.Response) ([]byte, error) {
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, c.ReadError(err)
	}
	return data, nil
}

// ReadError wraps an error met while reading a response body.
func (c *Client) ReadError(err error) error {
	var pe *llm.ProviderError
	if errors.As(err, &pe) {
		return err
	}
	var big *sse.TooLargeError
	if errors.As(err, &big) {
		return &llm.ProviderError{Provider: c.Provider, Message: big.Error() + " (the server is broken or hostile; no setting raises the cap)"}
	}
	return &llm.ProviderError{Provider: c.Provider, Message: "reading the response failed", Err: err}
}

// Events reads the server-sent events of a stream response from Do.
// The idle timeout restarts only when the caller reports progress, so
// that pings and events adding nothing keep a stream no more alive than
// comments do.
func (c *Client) Events(resp *http.Response) *Events {
	b, _ := resp.Body.(*body)
	return &Events{r: sse.NewReaderLimit(resp.Body, c.MaxEvent), b: b}
}

// Events is a stream's event reader; see Client.Events.
type Events struct {
	r *sse.Reader
	b *body
}

// Next returns the next event, with the errors of sse.Reader.Next; the
// limits' errors are *llm.ProviderError.
func (e *Events) Next() (sse.Event, error) {
	return e.r.Next()
}

// Progress restarts the idle timeout: the caller calls it for an event
// that carried content or changed the answer's state, and only then.
func (e *Events) Progress() {
	if e.b != nil {
		e.b.sawEvent()
	}
}

// Stream reads the events of a stream response from Do as a codec
// decodes them (upstream.Events): as Events does, with every error but
// the stream's end worded by ReadError.
func (c *Client) Stream(resp *http.Response) upstream.Events { return decoded{c.Events(resp), c} }

type decoded struct {
	e *Events
	c *Client
}

func (d decoded) Next() (name, data string, err error) {
	ev, err := d.e.Next()
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return "", "", err
		}
		return "", "", d.c.ReadError(err)
	}
	return ev.Name, ev.Data, nil
}

func (d decoded) Progress() { d.e.Progress() }

// body keeps an attempt's context and timer alive while the caller reads,
// caps what is read, and turns a limit into an error that names it.
type body struct {
	rc      io.ReadCloser
	c       *Client
	ctx     context.Context
	stop    func()
	endCall func()
	timer   *time.Timer
	stream  bool
	limit   int64
	read    int64
	// capErr, once set, answers every later Read: a caller that reads on
	// past the cap (a bufio.Reader does) must get neither more of the
	// body nor a negative count.
	capErr error
}

// sawEvent restarts the idle timeout of a stream.
func (b *body) sawEvent() {
	if b.stream && b.timer != nil && b.ctx.Err() == nil {
		b.timer.Reset(b.c.Timeout)
	}
}

func (b *body) Read(p []byte) (int, error) {
	if b.capErr != nil {
		return 0, b.capErr
	}
	// Read at most one byte past the cap: enough to know it was passed.
	if left := b.limit - b.read; int64(len(p)) > left+1 {
		p = p[:left+1]
	}
	n, err := b.rc.Read(p)
	b.read += int64(n)
	if b.read > b.limit {
		b.capErr = &llm.ProviderError{Provider: b.c.Provider,
			Message: fmt.Sprintf("the response is larger than the %s cap on one response (the server is broken or hostile; no setting raises the cap)", sse.Size(b.limit))}
		return n - int(b.read-b.limit), b.capErr
	}
	if err != nil && err != io.EOF {
		switch cause := context.Cause(b.ctx); {
		case cause == errTimeout && b.stream:
			return n, b.c.timeoutErr("no event from the stream that carried content (only keep-alives, pings or empty events, or nothing)")
		case cause == errTimeout:
			return n, b.c.timeoutErr("no complete response")
		case cause == errCallTimeout:
			return n, b.c.callTimeoutErr()
		case b.ctx.Err() != nil:
			return n, &llm.ProviderError{Provider: b.c.Provider, Message: "request stopped", Err: context.Cause(b.ctx)}
		}
	}
	return n, err
}

func (b *body) Close() error {
	err := b.rc.Close()
	b.stop()
	b.endCall()
	return err
}
