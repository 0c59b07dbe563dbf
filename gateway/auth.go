package gateway

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
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

// inboundKeys reads the keys clients must present from the variable env
// names, comma-separated. They are kept only as digests: comparing equal
// lengths in constant time hides even how long a key is.
func inboundKeys(env string, getenv func(string) string) ([][32]byte, error) {
	if env == "" {
		return nil, nil
	}
	var keys [][32]byte
	for _, k := range strings.Split(getenv(env), ",") {
		if k = strings.TrimSpace(k); k != "" {
			keys = append(keys, sha256.Sum256([]byte(k)))
		}
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("config: server.api_key_env: the environment variable %s is unset or empty; set it to the inbound key (several separated by commas), or remove server.api_key_env to serve without one", env)
	}
	return keys, nil
}

// authorized reports whether r carries one of the keys, as
// "Authorization: Bearer <key>" (OpenAI's SDKs) or "x-api-key: <key>"
// (Anthropic's). Every key is compared, whatever matched, so the time taken
// says nothing about which one did.
func (s *Server) authorized(r *http.Request) bool {
	if len(s.keys) == 0 {
		return true
	}
	ok := 0
	for _, p := range presentedKeys(r) {
		d := sha256.Sum256([]byte(p))
		for i := range s.keys {
			ok |= subtle.ConstantTimeCompare(d[:], s.keys[i][:])
		}
	}
	return ok == 1
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
