package gateway

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"maps"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/hookhost/hookhost/config"
)

// checkListen parses a listen address and reports whether its host is a
// loopback one (127.0.0.0/8, ::1, localhost). An empty host means every
// interface, which is not loopback.
func checkListen(addr string) (loopback bool, err error) {
	hostPart, port, err := net.SplitHostPort(addr)
	if err != nil {
		return false, fmt.Errorf("is not host:port (%v); for example 127.0.0.1:8080", err)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return false, fmt.Errorf("has port %q, which is not a number from 0 to 65535", port)
	}
	if strings.EqualFold(hostPart, "localhost") {
		return true, nil
	}
	ip := net.ParseIP(hostPart)
	return ip != nil && ip.IsLoopback(), nil
}

// acceptedKey is one key clients may present, kept only as a digest:
// comparing equal lengths in constant time hides even how long a key is.
type acceptedKey struct {
	// name is the key's name ([server.keys.<name>], or "default" and
	// "default-N" for those of server.api_key_env): what logs, metrics
	// and the request's context carry instead of the secret.
	name   string
	digest [32]byte
	// mcpTools are globs on the tool names /mcp offers this key; nil
	// allows every tool.
	mcpTools []string
	// requestsPerMinute and tokensPerMinute are the key's limits; 0 is
	// none.
	requestsPerMinute, tokensPerMinute int64
}

// inboundKeys reads the keys clients must present: those of the variable
// server.api_key_env names (comma-separated, named by position), then each
// of server.keys from its own variable. where says where a key is written
// in the config file, for errors ("" when unknown).
func inboundKeys(cfg config.Server, getenv func(string) string, where func(string) string) ([]acceptedKey, error) {
	at := func(key string) string {
		if where != nil {
			if w := where(key); w != "" {
				return w + ": " + key
			}
		}
		return key
	}
	var keys []acceptedKey
	if env := cfg.APIKeyEnv; env != "" {
		var secrets []string
		for _, k := range strings.Split(getenv(env), ",") {
			if k = strings.TrimSpace(k); k != "" {
				secrets = append(secrets, k)
			}
		}
		if len(secrets) == 0 {
			return nil, fmt.Errorf("config: server.api_key_env: the environment variable %s is unset or empty; set it to the inbound key (several separated by commas), or remove server.api_key_env to serve without one", env)
		}
		for i, k := range secrets {
			name := config.UnnamedKeyName(i, len(secrets))
			rpm, tpm := cfg.KeyLimits(name)
			keys = append(keys, acceptedKey{name: name, digest: sha256.Sum256([]byte(k)), requestsPerMinute: rpm, tokensPerMinute: tpm})
		}
	}
	for _, name := range slices.Sorted(maps.Keys(cfg.Keys)) {
		k := cfg.Keys[name]
		secret := strings.TrimSpace(getenv(k.Env))
		if secret == "" {
			return nil, fmt.Errorf("config: %s: the environment variable %s, holding the secret of inbound key %q, is unset or empty; set it before starting hookhost serve, or remove [server.keys.%s]", at("server.keys."+name+".env"), k.Env, name, name)
		}
		rpm, tpm := cfg.KeyLimits(name)
		keys = append(keys, acceptedKey{name: name, digest: sha256.Sum256([]byte(secret)), mcpTools: k.MCPTools, requestsPerMinute: rpm, tokensPerMinute: tpm})
	}
	for i := range keys {
		for j := range i {
			if keys[i].digest == keys[j].digest {
				return nil, fmt.Errorf("config: server.keys: inbound keys %q and %q have the same secret, so a request could not tell which it is; give each key its own secret", keys[j].name, keys[i].name)
			}
		}
	}
	return keys, nil
}

// authorize returns the key r carries, as "Authorization: Bearer <key>"
// (OpenAI's SDKs) or "x-api-key: <key>" (Anthropic's), and whether it is
// one of the server's; with no keys every request is let in, with none.
// Every key is compared, whatever matched, so the time taken says nothing
// about which one did.
func (s *Server) authorize(r *http.Request) (*acceptedKey, bool) {
	if len(s.keys) == 0 {
		return nil, true
	}
	found := -1
	for _, p := range presentedKeys(r) {
		d := sha256.Sum256([]byte(p))
		for i := range s.keys {
			found = subtle.ConstantTimeSelect(subtle.ConstantTimeCompare(d[:], s.keys[i].digest[:]), i, found)
		}
	}
	if found < 0 {
		return nil, false
	}
	return &s.keys[found], true
}

type keyNameKey struct{}

// withKey records in ctx the inbound key a request presented.
func withKey(ctx context.Context, k *acceptedKey) context.Context {
	return context.WithValue(ctx, keyNameKey{}, k)
}

// keyOf is the inbound key recorded in ctx, nil when none is.
func keyOf(ctx context.Context) *acceptedKey {
	k, _ := ctx.Value(keyNameKey{}).(*acceptedKey)
	return k
}

// KeyName is the name of the inbound key the request whose context is ctx
// presented: its [server.keys.<name>] name, or "default" ("default-1",
// "default-2", ... by position when it holds several) for the keys of
// server.api_key_env. It is "" when the server takes no key. The secret
// itself is never in the context.
func KeyName(ctx context.Context) string {
	if k := keyOf(ctx); k != nil {
		return k.name
	}
	return ""
}

// presentedKeys returns the keys a request carries, in either header
// style.
func presentedKeys(r *http.Request) []string {
	var presented []string
	if a := r.Header.Get("Authorization"); len(a) > 7 && strings.EqualFold(a[:7], "bearer ") {
		presented = append(presented, strings.TrimSpace(a[7:]))
	}
	if k := r.Header.Get("X-Api-Key"); k != "" {
		presented = append(presented, k)
	}
	return presented
}

// tenant names who is talking without naming their key: a digest of the
// key the request presents, "" when it presents none. The hook loop keeps
// the rounds it hides from one client apart from every other's by it.
func tenant(r *http.Request) string {
	keys := presentedKeys(r)
	if len(keys) == 0 {
		return ""
	}
	d := sha256.Sum256([]byte(keys[0]))
	return hex.EncodeToString(d[:])
}
