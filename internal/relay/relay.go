// Package relay runs the hook loop behind one gateway request: the
// catalogue's model hooks around every upstream round, plugin-owned tool
// calls (and those of the MCP servers offered to the model, Config.Hosted)
// run by hookhost and continued upstream, the client's own tool calls
// checked by pre_tool_call and handed back, rounds hidden from the client
// kept and spliced back when it continues, and the answer streamed through a
// dialect.Sink as it is produced.
//
// # Upstream modes
//
// When the provider is an upstream.Forwarder speaking the client's protocol, each
// round goes through Forward with the request's Passthrough, so what the
// neutral types do not model reaches the model and comes back (forward
// mode). Otherwise rounds go through Complete, or Stream when the client
// streams (translate mode), and a request carrying anything that only an
// upstream of its own protocol can carry (dialect.Call.Foreign) is refused
// with a 400 before any hook fires.
//
// # Hidden rounds
//
// The client sees one assistant message per request; what hookhost did in
// between (plugin-owned tool calls and their results, client calls it
// answered itself) is hidden from it. Calls handed to the client get ids
// minted by hookhost (128 random bits behind the upstream's prefix, such as
// "call_" or "toolu_"), since upstreams may number theirs and a guessable
// id must never let one client continue another's conversation. When a
// response hands calls to the client, everything the request added to the
// history is kept in the Store under the ids the client got and a digest of
// who is talking (client protocol, model, system prompt and
// dialect.Call.Tenant) and of the messages the client sent before them.
// When the client continues (the same of all that, then an assistant
// message with exactly those call ids), that message is replaced by the
// kept rounds, their wire forms included, and the client's results are
// given back the upstream's ids, so the model sees what it really did. The
// client's results for handed calls go through post_tool_call and
// transform_tool_result once; the outcome is kept, and the same result sent
// again in a later request is replaced by it without firing again.
//
// In forward mode the round that hands calls to the client is kept even
// when nothing was hidden and no plugin runs: its wire message holds what
// the client's echo of it may lack (Anthropic's thinking blocks and their
// signatures, which a streamed client never receives; Responses' reasoning
// items), and the upstream may refuse the continuation without it. After
// that entry expired, or on another replica, the echo goes upstream as the
// client sent it, and such an upstream may answer 400.
//
// A final answer reached through hidden rounds is kept the same way, under
// its place in the conversation: when the client's next turn holds an
// assistant message there that contains the (non-empty) text it was
// shown, the rounds that led to the answer take its place.
//
// A Store made by NewStore is one process's memory; one made by
// NewSharedStore keeps entries in a backend shared by every replica
// (Redis or Valkey), so that a continuation may land on any of them. A
// shared store that fails fails the request (the client retries), rather
// than letting the model continue from a history without its hidden
// rounds.
//
// After an entry expired or was evicted, or when the continuation reaches
// another replica of an in-memory Store, the history goes upstream as
// the client holds it: the model sees the text it wrote and the calls handed
// to the client (under the ids the client got, which its history uses
// throughout), but not the hidden tool calls and results, and plugins see
// a new session id; the client's results are not passed through
// post_tool_call or transform_tool_result. What is detectable is only that
// the conversation's last assistant message with tool calls is not in the
// store; that cannot be told apart from a conversation this gateway never
// saw, or from a client that rewrote the earlier history it sends (which
// also misses), so it is logged at WARN only when plugins offer tools (when
// there may have been hidden rounds). Deployments with several replicas
// share a store (NewSharedStore).
package relay

import (
	"context"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/hookhost/hookhost/dispatch"
	"github.com/hookhost/hookhost/hookbus"
	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/dialect"
	"github.com/hookhost/hookhost/internal/loop"
	"github.com/hookhost/hookhost/llm"
)

// Config is what a Relay works with.
type Config struct {
	Provider llm.Provider
	// Bus fires the hooks and runs plugin tools; nil means none (the
	// bypass route through a translating upstream: no hook fires and only
	// the client's tools are offered).
	Bus *hookbus.Bus
	// Hosted are tools hookhost offers and runs itself beside the plugin
	// tools (the MCP servers' with offer_to_model), read again for every
	// round; nil offers none. Their calls run through the tool pipeline
	// and are hidden from the client as plugin tools' are.
	Hosted dispatch.ToolSet
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
	// "plugin" (a plugin-owned tool run by hookhost), "mcp" (an MCP
	// server's tool run by hookhost), "blocked" or "provided" (a client
	// tool answered by hookhost) or "client" (handed back to the client).
	ToolCall(how string)
}

// DropObserver may also be implemented by an Observer: it is then told of
// every hint field dropped from a request because the upstream speaks
// another protocol (dialect.Call.Dropped), once per request and field.
type DropObserver interface {
	FieldDropped(endpoint, field string)
}

// StoreObserver may also be implemented by an Observer: it is then told of
// every entry the Store dropped to stay within its bounds or because it
// expired, so that a store too small for its traffic shows in metrics.
type StoreObserver interface {
	StoreEvicted(n int)
}

// Defaults for a zero Config.
const (
	DefaultMaxIterations = loop.DefaultMaxIterations
	DefaultKeepalive     = 5 * time.Second
)

// Relay runs requests; it is safe for concurrent use.
type Relay struct {
	cfg Config
	// pipeline runs plugin-owned tool calls; one per Relay, so that the
	// plugin tools' schemas are compiled once.
	pipeline *dispatch.Pipeline
}

// New returns a relay.
func New(cfg Config) *Relay {
	if cfg.MaxIterations <= 0 {
		cfg.MaxIterations = DefaultMaxIterations
	}
	if cfg.Keepalive <= 0 {
		cfg.Keepalive = DefaultKeepalive
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	return &Relay{cfg: cfg, pipeline: &dispatch.Pipeline{Bus: cfg.Bus, Hosted: cfg.Hosted}}
}

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
	run := &run{
		cfg: &r.cfg, bus: r.cfg.Bus, ctx: ctx, protocol: front.Protocol(), endpoint: front.Path(), call: call,
		res: &dialect.Result{Model: call.Request.Model},
	}
	if call.Stream && sink != nil {
		run.sink = sink
	}
	if err := run.check(); err != nil {
		return nil, &Error{Err: err}
	}
	started, err := run.restore()
	if err != nil {
		return nil, &Error{Err: err}
	}
	run.model = loop.Loop{Bus: run.bus, Pipeline: r.pipeline, SessionID: run.sessionID, Route: hooks.RouteGateway, Observer: logger{r: run}}
	if started {
		run.bus.OnSessionStart(hooks.SessionStart{SessionID: run.sessionID, Model: call.Request.Model, Route: hooks.RouteGateway})
	}
	reason, err := run.loop()
	end := hooks.SessionEnd{
		SessionID: run.sessionID, Model: call.Request.Model, Route: hooks.RouteGateway,
		Reason: reason, Iterations: run.rounds, Usage: run.res.Usage,
	}
	if err != nil {
		end.Error = err.Error()
	}
	run.bus.OnSessionEnd(end)
	if err != nil {
		return nil, &Error{Err: err, ToolsRan: run.toolsRan}
	}
	return run.res, nil
}
