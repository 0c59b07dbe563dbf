package config

import "time"

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
)

// Server is the [server] table: how `hookhost serve` listens, whom it
// lets in and what it bounds.
type Server struct {
	// Listen is the address to listen on, host:port.
	Listen string
	// APIKeyEnv names the environment variable holding the inbound keys
	// clients must present (Authorization: Bearer or x-api-key); several
	// keys may be given separated by commas. "" means no key is required,
	// which is allowed only on a loopback address unless AllowNoKey is set.
	APIKeyEnv string
	// AllowNoKey allows listening on a non-loopback address with no
	// inbound key. It exists so that doing so is a written decision.
	AllowNoKey bool
	// ForwardClientKey sends the client's own key upstream instead of the
	// one named by llm.api_key_env.
	ForwardClientKey bool
	// Models are model names clients may ask for besides llm.model and
	// llm.tiers; nil when none.
	Models []string
	// MaxBodySize bounds a request body, in bytes.
	MaxBodySize int64
	// MaxConcurrent bounds the requests served at once; the next one gets
	// 429 with retry-after.
	MaxConcurrent int
	// HeaderTimeout, ReadTimeout and IdleTimeout bound reading a request's
	// headers, reading its whole body, and an idle keep-alive connection.
	HeaderTimeout time.Duration
	ReadTimeout   time.Duration
	IdleTimeout   time.Duration
	// RequestTimeout bounds one request from its first byte to its last,
	// every upstream round and plugin tool included.
	RequestTimeout time.Duration
	// DrainTimeout bounds how long in-flight requests may run on after
	// SIGTERM or SIGINT before they are cut and plugins are stopped.
	DrainTimeout time.Duration
	// StateTTL and StateEntries bound the store of rounds hidden from
	// clients (plugin tool calls in a response that also returned the
	// client's own calls), which the gateway splices back into the history
	// when the client continues.
	StateTTL     time.Duration
	StateEntries int
}

func defaultServer() Server {
	return Server{
		Listen:         defaultListen,
		MaxBodySize:    defaultMaxBodySize,
		MaxConcurrent:  defaultMaxConcurrent,
		HeaderTimeout:  defaultHeaderTimeout,
		ReadTimeout:    defaultReadTimeout,
		IdleTimeout:    defaultIdleTimeout,
		RequestTimeout: defaultRequestTimeout,
		DrainTimeout:   defaultDrainTimeout,
		StateTTL:       defaultStateTTL,
		StateEntries:   defaultStateEntries,
	}
}
