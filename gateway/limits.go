package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hookhost/hookhost/config"
	"github.com/hookhost/hookhost/gateway/statestore"
	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/dialect"
)

// limitWindow is the length of the fixed windows limits count in.
const limitWindow = time.Minute

// anonymous is the name requests count under when the server takes no
// inbound key: [server.limits] then bounds every client together.
const anonymous = "anonymous"

// Estimates of a request's tokens, reserved when it starts and corrected
// by its usage when it ends: a token per bytesPerToken bytes of the body,
// plus the output the request allows (max_tokens, max_completion_tokens or
// max_output_tokens), or defaultOutputEstimate when it sets none.
const (
	bytesPerToken         = 4
	defaultOutputEstimate = 4096
)

// limiter keeps each inbound key within its requests and tokens per
// minute. The counts live in the state backend, so every replica sharing
// it draws on the same budget.
type limiter struct {
	counter statestore.Counter
	// backend is the shared backend the counts are in; nil in memory.
	backend    *stateBackend
	rejections *prometheus.CounterVec
	// anonymous is who a request is when the server takes no key: the
	// limits of [server.limits].
	anonymous acceptedKey
}

// The counters' names in the backend, under the key's name as tenant.
const (
	requestsCounter = "limit:requests"
	tokensCounter   = "limit:tokens"
)

// needLimits says why a request needed the backend when it is down.
const needLimits = "the request counts against the rate limits of server.limits, which are kept there; retry once it is back"

func newLimiter(counter statestore.Counter, backend *stateBackend, defaults config.Limits, reg *prometheus.Registry) *limiter {
	l := &limiter{counter: counter, backend: backend,
		anonymous: acceptedKey{name: anonymous, requestsPerMinute: defaults.RequestsPerMinute, tokensPerMinute: defaults.TokensPerMinute},
		rejections: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "hookhost_limit_rejections_total",
			Help: "Requests refused with 429 because an inbound key (label key, its name) used up its requests or tokens per minute (label limit).",
		}, []string{"key", "limit"}),
	}
	reg.MustRegister(l.rejections)
	return l
}

// admission is what a request reserved, for settle.
type admission struct {
	tokens   statestore.Reservation
	estimate int64
	counted  bool // tokens were reserved, so usage is to be settled
}

// admit reserves a request and its estimated tokens for the key, or says
// why not: a 429 with retry-after over a limit, a 503 when the backend
// failed. Nothing is reserved when it refuses.
func (l *limiter) admit(ctx context.Context, w http.ResponseWriter, key *acceptedKey, body []byte) (admission, *dialect.Error) {
	if key == nil {
		key = &l.anonymous
	}
	name, rpm, tpm := key.name, key.requestsPerMinute, key.tokensPerMinute
	var a admission
	if rpm > 0 {
		r, err := l.counter.Reserve(ctx, name, requestsCounter, 1, rpm, limitWindow)
		if err != nil {
			return a, l.unavailable(err)
		}
		if !r.OK {
			return a, l.refuse(w, name, "requests", r, fmt.Sprintf("inbound key %q has used its %d requests per minute", name, rpm))
		}
		if tpm > 0 {
			defer func() {
				if !a.counted {
					// Refused on tokens: the request does not count either.
					_ = l.counter.Settle(context.WithoutCancel(ctx), r, -1)
				}
			}()
		}
	}
	if tpm > 0 {
		a.estimate = min(estimateTokens(body), tpm)
		r, err := l.counter.Reserve(ctx, name, tokensCounter, a.estimate, tpm, limitWindow)
		if err != nil {
			return a, l.unavailable(err)
		}
		if !r.OK {
			return a, l.refuse(w, name, "tokens", r, fmt.Sprintf("inbound key %q has used its %d tokens per minute (%d counted in this minute; this request is estimated at %d)", name, tpm, r.Count, a.estimate))
		}
		a.tokens, a.counted = r, true
	}
	return a, nil
}

// settle corrects the tokens reserved by the request's usage: what the
// upstream reported, every round included.
func (l *limiter) settle(ctx context.Context, a admission, used hooks.Usage) {
	if !a.counted {
		return
	}
	delta := int64(used.InputTokens+used.OutputTokens) - a.estimate
	if delta == 0 {
		return
	}
	// The request is over; its context may be too.
	_ = l.counter.Settle(context.WithoutCancel(ctx), a.tokens, delta)
}

func (l *limiter) refuse(w http.ResponseWriter, name, limit string, r statestore.Reservation, what string) *dialect.Error {
	l.rejections.WithLabelValues(name, limit).Inc()
	wait := max(1, int64((r.RetryAfter+time.Second-1)/time.Second))
	w.Header().Set("Retry-After", strconv.FormatInt(wait, 10))
	return &dialect.Error{Status: http.StatusTooManyRequests, Type: "rate_limit_error",
		Message: fmt.Sprintf("%s (server.limits); retry in %d s, when the next minute starts", what, wait)}
}

func (l *limiter) unavailable(err error) *dialect.Error {
	if l.backend != nil {
		return l.backend.unavailable(err, needLimits)
	}
	return apiError(http.StatusInternalServerError, "hookhost could not count the request against server.limits (a host error): "+err.Error())
}

// estimateTokens is what a request is expected to use, before it runs:
// its body's bytes over bytesPerToken, plus the output it allows.
func estimateTokens(body []byte) int64 {
	var b struct {
		MaxTokens           *int64 `json:"max_tokens"`
		MaxCompletionTokens *int64 `json:"max_completion_tokens"`
		MaxOutputTokens     *int64 `json:"max_output_tokens"`
	}
	_ = json.Unmarshal(body, &b)
	out := int64(defaultOutputEstimate)
	for _, n := range []*int64{b.MaxCompletionTokens, b.MaxOutputTokens, b.MaxTokens} {
		if n != nil && *n > 0 {
			out = *n
			break
		}
	}
	return int64(len(body)+bytesPerToken-1)/bytesPerToken + out
}
