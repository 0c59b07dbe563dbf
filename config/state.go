package config

import (
	"time"

	"github.com/BurntSushi/toml"
)

// The backends the [state] table may name.
const (
	StateMemory = "memory"
	StateRedis  = "redis"
)

// Defaults of the [state] table.
const (
	defaultStatePrefix       = "hookhost:"
	defaultStateDialTimeout  = 2 * time.Second
	defaultStateReadTimeout  = 3 * time.Second
	defaultStateWriteTimeout = 3 * time.Second
	exampleStateURLEnv       = "HOOKHOST_REDIS_URL"
)

// State is the [state] table: where `hookhost serve` keeps the state
// clients continue from (the stored Responses objects, the hidden rounds
// of mixed tool calls), so that several
// replicas sharing one Redis or Valkey server serve the same
// conversations. The bounds on what is kept stay in [server]
// (responses_entries, responses_max_bytes, state_ttl).
type State struct {
	// Backend is "memory" (the default: one process's memory) or "redis"
	// (a Redis or Valkey server shared by every replica).
	Backend string `toml:"backend" rule:"state_backend"`
	// URLEnv names the environment variable holding the server's URL,
	// redis://[user:password@]host:port[/db] or rediss:// for TLS. The
	// URL carries the password, so it never sits in the file. Required
	// for "redis".
	URLEnv string `toml:"url_env" rule:"state_url_env"`
	// Prefix starts every key hookhost writes, so that several
	// deployments can share one server.
	Prefix string `toml:"prefix" rule:"state_prefix"`
	// DialTimeout bounds one connection attempt; ReadTimeout and
	// WriteTimeout one command's reads and writes.
	DialTimeout  time.Duration `toml:"dial_timeout"`
	ReadTimeout  time.Duration `toml:"read_timeout"`
	WriteTimeout time.Duration `toml:"write_timeout"`
}

func defaultState() State {
	return State{
		Backend:      StateMemory,
		Prefix:       defaultStatePrefix,
		DialTimeout:  defaultStateDialTimeout,
		ReadTimeout:  defaultStateReadTimeout,
		WriteTimeout: defaultStateWriteTimeout,
	}
}

// validate checks that a redis backend says where its URL is.
func (c *State) validate(d *decoder, key toml.Key, set map[string]bool, ok, _ bool) bool {
	if c.Backend != StateRedis || c.URLEnv != "" {
		return ok
	}
	if _, written := set["url_env"]; written {
		if set["url_env"] {
			d.fail(join(key, toml.Key{"url_env"}), -1, "must name the environment variable holding the redis:// or rediss:// URL when state.backend is %q, e.g. url_env = %q", StateRedis, exampleStateURLEnv)
		}
		return false
	}
	d.fail(join(key, toml.Key{"backend"}), -1, "is %q but state.url_env is not set; name the environment variable holding the redis:// or rediss:// URL, e.g. url_env = %q", StateRedis, exampleStateURLEnv)
	return false
}
