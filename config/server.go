package config

import (
	"maps"
	"slices"
	"time"

	"github.com/BurntSushi/toml"
)

// Defaults of the [server] table, the settings of `hookhost serve`.
const (
	defaultListen         = "127.0.0.1:8080"
	defaultMaxBodySize    = 32 << 20
	defaultMaxConcurrent  = 256
	defaultHeaderTimeout  = 10 * time.Second
	defaultReadTimeout    = 60 * time.Second
	defaultIdleTimeout    = 120 * time.Second
	defaultRequestTimeout = 10 * time.Minute
	defaultDrainTimeout   = 30 * time.Second
	defaultStateTTL       = time.Hour
	defaultStateEntries   = 10000
	// DefaultResponsesEntries and DefaultResponsesMaxBytes bound the
	// store of Responses objects: each response and each of its output
	// items is one entry.
	DefaultResponsesEntries  = 100000
	DefaultResponsesMaxBytes = 256 << 20
)

// DefaultMaxBodyBytesInFlight is server.max_body_bytes_in_flight when the
// configuration does not set it (and max_body_size is no larger).
const DefaultMaxBodyBytesInFlight = 256 << 20

// Server is the [server] table: how `hookhost serve` listens, whom it
// lets in and what it bounds.
type Server struct {
	// Listen is the address to listen on, host:port.
	Listen string `toml:"listen" rule:"listen"`
	// APIKeyEnv names the environment variable holding the inbound keys
	// clients must present (Authorization: Bearer or x-api-key); several
	// keys may be given separated by commas. "" means no key is required,
	// which is allowed only on a loopback address unless AllowNoKey is set.
	APIKeyEnv string `toml:"api_key_env" rule:"api_key_env"`
	// Keys are the named inbound keys, each [server.keys.<name>] table;
	// nil when there are none. They are accepted beside those of
	// APIKeyEnv.
	Keys map[string]ServerKey `toml:"keys" rule:"server_keys"`
	// Limits are the requests and tokens per minute each inbound key may
	// use ([server.limits]); a key's table may override them.
	Limits Limits `toml:"limits"`
	// AllowNoKey allows listening on a non-loopback address with no
	// inbound key. It exists so that doing so is a written decision.
	AllowNoKey bool `toml:"allow_no_key"`
	// ForwardClientKey sends the client's own key upstream instead of the
	// one named by llm.api_key_env.
	ForwardClientKey bool `toml:"forward_client_key"`
	// Models are model names clients may ask for besides llm.model and
	// llm.tiers; nil when none.
	Models []string `toml:"models" rule:"models"`
	// ModelAliases maps a model name clients may ask for to the upstream
	// model that answers it (Claude Code's claude-… names onto whatever
	// the upstream serves); nil when none. An alias is served and listed
	// like Models, is none of llm.model, the tiers or Models, and is not
	// the target of another alias: one name, one meaning, no chains.
	ModelAliases map[string]string `toml:"model_aliases" rule:"model_aliases"`
	// MaxBodySize bounds a request body, in bytes.
	MaxBodySize int64 `toml:"max_body_size" range:"body_size"`
	// MaxBodyBytesInFlight bounds the request-body bytes held at once,
	// over every request; one that would pass it gets 429 with
	// retry-after. Serving a body takes 12 to 20 times its size in
	// memory, so this bounds what bodies take to about 20 times it. At
	// least MaxBodySize.
	MaxBodyBytesInFlight int64 `toml:"max_body_bytes_in_flight" range:"body_bytes"`
	// MaxConcurrent bounds the requests served at once; the next one gets
	// 429 with retry-after.
	MaxConcurrent int `toml:"max_concurrent" range:"concurrent"`
	// HeaderTimeout, ReadTimeout and IdleTimeout bound reading a request's
	// headers, reading its whole body, and an idle keep-alive connection.
	HeaderTimeout time.Duration `toml:"header_timeout"`
	ReadTimeout   time.Duration `toml:"read_timeout"`
	IdleTimeout   time.Duration `toml:"idle_timeout"`
	// RequestTimeout bounds one request from its first byte to its last,
	// every upstream round and plugin tool included.
	RequestTimeout time.Duration `toml:"request_timeout"`
	// DrainTimeout bounds how long in-flight requests may run on after
	// SIGTERM or SIGINT before they are cut and plugins are stopped.
	DrainTimeout time.Duration `toml:"drain_timeout"`
	// StateTTL and StateEntries bound the store of rounds hidden from
	// clients (plugin tool calls in a response that also returned the
	// client's own calls), which the gateway splices back into the history
	// when the client continues.
	StateTTL     time.Duration `toml:"state_ttl"`
	StateEntries int           `toml:"state_entries" range:"entries"`
	// ResponsesEntries and ResponsesMaxBytes bound the store of the
	// Responses objects /v1/responses returned with store:true (each
	// response and each of its output items is an entry), which
	// previous_response_id and item_reference resolve against; they live
	// StateTTL after their last use. ResponsesMaxBytes 0 keeps none.
	ResponsesEntries  int   `toml:"responses_entries" range:"entries"`
	ResponsesMaxBytes int64 `toml:"responses_max_bytes" range:"response_bytes"`
	// OnAsk decides a tool call hookhost runs itself (a plugin's or an MCP
	// server's tool) that a pre_tool_call plugin answered ask on, since
	// the gateway has no person to ask: OnAskBlock blocks it with the
	// plugin's reason in its error result, OnAskAllow runs it. A client's
	// own tool call on ask goes back to the client, whose own permission
	// flow decides, whatever this says.
	OnAsk string `toml:"on_ask" rule:"on_ask"`
}

// The values of server.on_ask.
const (
	OnAskBlock = "block"
	OnAskAllow = "allow"
)

func defaultServer() Server {
	return Server{
		Listen:               defaultListen,
		MaxBodySize:          defaultMaxBodySize,
		MaxBodyBytesInFlight: DefaultMaxBodyBytesInFlight,
		MaxConcurrent:        defaultMaxConcurrent,
		HeaderTimeout:        defaultHeaderTimeout,
		ReadTimeout:          defaultReadTimeout,
		IdleTimeout:          defaultIdleTimeout,
		RequestTimeout:       defaultRequestTimeout,
		DrainTimeout:         defaultDrainTimeout,
		StateTTL:             defaultStateTTL,
		StateEntries:         defaultStateEntries,
		ResponsesEntries:     DefaultResponsesEntries,
		ResponsesMaxBytes:    DefaultResponsesMaxBytes,
		OnAsk:                OnAskBlock,
	}
}

// Upper bounds of the [server] integers. A body is held in memory while
// it is decoded, so more than a GiB is a mistake rather than a need; the
// counts are capped where a typo would otherwise reserve absurd resources.
const (
	maxBodySizeLimit   = 1 << 30
	maxBodyBytesLimit  = 1 << 40
	maxConcurrentLimit = 1 << 20
	maxStateEntries    = 1 << 24
)

// validate checks the keys that only make sense together.
func (c *Server) validate(d *decoder, key toml.Key, set map[string]bool, ok, _ bool) bool {
	switch {
	case !set["max_body_bytes_in_flight"]:
		// A larger max_body_size raises the budget with it, so that
		// one body of the largest size can always be read.
		c.MaxBodyBytesInFlight = max(c.MaxBodyBytesInFlight, c.MaxBodySize)
	case c.MaxBodyBytesInFlight < c.MaxBodySize:
		d.fail(join(key, toml.Key{"max_body_bytes_in_flight"}), -1, "%d is less than server.max_body_size (%d), so a body of the largest size allowed could never be read; raise it to at least that", c.MaxBodyBytesInFlight, c.MaxBodySize)
	}
	c.validateKeys(d, key)
	if c.ForwardClientKey && len(c.Keys) > 0 {
		d.fail(join(key, toml.Key{"forward_client_key"}), -1, "is true while server.keys holds inbound keys: a client would then present hookhost's inbound key and its own provider key in the same two headers (Authorization, x-api-key), so the inbound key could be sent upstream to the provider; set only one of them")
	}
	if c.ForwardClientKey && c.APIKeyEnv != "" {
		d.fail(join(key, toml.Key{"forward_client_key"}), -1, "is true while server.api_key_env is set: a client would then present hookhost's inbound key and its own provider key in the same two headers (Authorization, x-api-key), so the inbound key could be sent upstream to the provider; set only one of them")
	}
	return ok
}

// aliasConflicts refuses an alias that is also a model served under its
// own name: a request for it would mean two things.
func (d *decoder) aliasConflicts(c *Config) {
	served := map[string]string{
		c.LLM.Model: "llm.model", c.LLM.Tiers.Small: "llm.tiers.small", c.LLM.Tiers.Strong: "llm.tiers.strong",
	}
	for _, m := range c.Server.Models {
		served[m] = "server.models"
	}
	for _, name := range slices.Sorted(maps.Keys(c.Server.ModelAliases)) {
		if where, ok := served[name]; ok && name != "" {
			d.fail(toml.Key{"server", "model_aliases", name}, -1, "%q is also %s, served under its own name; a request for it cannot mean both: drop one of them", abbrev(name), where)
		}
	}
}
