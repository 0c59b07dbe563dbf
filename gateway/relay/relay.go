// Package relay runs the hook loop behind one gateway request: the
// catalogue's model hooks around every upstream round, plugin-owned tool
// calls run by hookhost and continued upstream, the client's own tool calls
// checked by pre_tool_call and handed back, rounds hidden from the client
// kept and spliced back when it continues, and the answer streamed through
// a dialect.Sink as it is produced.
package relay

import (
	"context"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/hookhost/hookhost/gateway/dialect"
	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/llm"
)

// Config is what a Relay works with.
type Config struct {
	Provider llm.Provider
	// Bus fires the hooks and runs plugin tools; nil means none (the
	// bypass route through a translating upstream: no hook fires and only
	// the client's tools are offered).
	Bus *hooks.Bus
	// MaxIterations bounds upstream rounds per request (reissues aside).
	MaxIterations int
	// Store keeps hidden rounds between a client's requests.
	Store *Store
	// Keepalive is how often a stream is pinged while plugin tools run.
	Keepalive time.Duration
	Logger    hclog.Logger
	// Observe, when set, counts what happens for metrics.
	Observe Observer
}

// Observer is told what each request did, for metrics.
type Observer interface {
	// Round counts one upstream call.
	Round(protocol llm.Protocol)
	// ToolCall counts one tool call the gateway handled: how is
	// "plugin" (a plugin-owned tool run by hookhost), "blocked" or
	// "provided" (a client tool answered by hookhost) or "client"
	// (handed back to the client).
	ToolCall(how string)
}

// Relay runs requests; it is safe for concurrent use.
type Relay struct {
}

// New returns a relay.
func New(cfg Config) *Relay { panic("not yet") }

// Error wraps a failure of Run, saying whether a plugin tool had already
// run (its side effects are done, so a client must not retry blindly).
type Error struct {
	Err      error
	ToolsRan bool
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Run answers one client request. With call.Stream, sink receives the
// answer as it is produced (sink is nil otherwise); the Result is returned
// either way. Errors are *Error, wrapping a *dialect.Error (for the
// client, as is), an *llm.ProviderError (upstream failed) or a context
// error.
func (r *Relay) Run(ctx context.Context, front dialect.Front, call *dialect.Call, sink dialect.Sink) (*dialect.Result, error) {
	panic("not yet")
}

// Store keeps rounds hidden from clients, bounded in entries and age.
type Store struct {
}

// NewStore returns a store of at most entries entries, each kept for ttl.
func NewStore(ttl time.Duration, entries int) *Store { panic("not yet") }
