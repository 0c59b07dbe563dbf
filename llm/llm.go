// Package llm defines the provider-neutral model interface that the
// conversation loop talks to. Adapters for real providers live in
// subpackages; llm/offline is the embedded default model that needs no key
// and no network.
//
// The neutral message types are those of package hooks, because plugins see
// requests and responses too and one definition cannot drift from another.
package llm

import (
	"context"
	"fmt"
	"time"

	"github.com/hookhost/hookhost/hooks"
)

// Neutral types, re-exported so provider code reads naturally.
type (
	Request  = hooks.ModelRequest
	Response = hooks.ModelResponse
	Message  = hooks.Message
	ToolCall = hooks.ToolCall
	ToolSpec = hooks.ToolSpec
	Usage    = hooks.Usage
)

// Provider makes one model call. Implementations must honour ctx
// cancellation and must not retain req after returning.
type Provider interface {
	// Name is the provider's config name, such as "offline" or "openai".
	Name() string
	Complete(ctx context.Context, req Request) (Response, error)
}

// Streamer is implemented by providers that can hand out an answer's text
// while it is being generated, so a person watching sees progress instead
// of a pause. onText receives each fragment in order, from the calling
// goroutine. The returned Response is the same one Complete would return
// for the same model output: streaming changes when text is seen, never
// what the conversation records. A stream that ends early is an error, not
// a shorter answer.
type Streamer interface {
	Stream(ctx context.Context, req Request, onText func(delta string)) (Response, error)
}

// Unsupported is implemented by providers whose API lacks some of the
// neutral request's settings. Unsupported names them, by their neutral
// names ("stop", "seed"), in two lists:
//
//   - refused: settings whose loss would silently change the answer the
//     caller relies on (stop sequences on an API that has none: the answer
//     would run past them). A caller serving a client refuses the request
//     rather than send it without them.
//   - dropped: settings the provider leaves out because they cannot
//     change what the answer says, only how repeatable it is (seed). A
//     caller may log them; the call goes ahead.
//
// Complete and Stream send a request with refused settings anyway (they
// are left out): it is the caller that decides whether to ask.
type Unsupported interface {
	Unsupported(req Request) (refused, dropped []string)
}

// ProviderError is a failure reported by (or while reaching) a model
// provider, as opposed to one caused by the host or a plugin.
type ProviderError struct {
	Provider   string
	StatusCode int    // HTTP status, 0 when none
	Type       string // the provider's error type, when it gave one
	Message    string
	// RetryAfter is how long the provider asked callers to wait before
	// trying again (Retry-After on a 429 or 503); 0 when it did not say.
	RetryAfter time.Duration
	Err        error // underlying cause, if any
}

func (e *ProviderError) Error() string {
	s := "provider " + e.Provider
	if e.StatusCode != 0 {
		s += fmt.Sprintf(": HTTP %d", e.StatusCode)
	}
	if e.Type != "" {
		s += " " + e.Type
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *ProviderError) Unwrap() error { return e.Err }
