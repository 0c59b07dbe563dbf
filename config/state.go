package config

import (
	"fmt"
	"strings"
	"time"
	"unicode"

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
// clients continue from (the stored Responses objects), so that several
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

type stateBackend string

func (b *stateBackend) UnmarshalTOML(v any) error {
	return set(b, v, func(v any) (stateBackend, error) {
		s, err := asString(v)
		backends := []string{StateMemory, StateRedis}
		if err == nil && s != StateMemory && s != StateRedis {
			hint := ""
			if near := closest(s, backends); near != "" {
				hint = fmt.Sprintf("did you mean %q? ", near)
			}
			return "", fault("unknown state backend %q (%suse %q to keep state in this process, or %q for a Redis or Valkey server shared by several replicas)", abbrev(s), hint, StateMemory, StateRedis)
		}
		return stateBackend(s), err
	})
}

func (b *stateBackend) example(name string) string {
	return fmt.Sprintf("strings need double quotes: %s = %q", name, StateRedis)
}

type stateURLEnv string

func (e *stateURLEnv) UnmarshalTOML(v any) error {
	return set(e, v, func(v any) (stateURLEnv, error) {
		s, err := asString(v)
		switch {
		case err != nil || s == "" || envNameRE.MatchString(s):
			return stateURLEnv(s), err
		case strings.Contains(s, "://"):
			// Never echo the value: the URL may carry a password.
			return "", fault("must be the name of an environment variable holding the URL (e.g. %q), not the URL itself, which carries the password; set the variable to the redis:// or rediss:// URL", exampleStateURLEnv)
		}
		return "", fault("%q is not an environment variable name (letters, digits and \"_\", not starting with a digit, e.g. %q)", abbrev(s), exampleStateURLEnv)
	})
}

type statePrefix string

func (p *statePrefix) UnmarshalTOML(v any) error {
	return set(p, v, func(v any) (statePrefix, error) {
		s, err := asString(v)
		if err == nil && (len(s) > 64 || strings.IndexFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0) {
			return "", fault("%q must be at most 64 characters without spaces or control characters (e.g. prefix = %q)", abbrev(s), defaultStatePrefix)
		}
		return statePrefix(s), err
	})
}
