package mcpgate

import (
	"context"
	"fmt"
	"net/http"
	"path"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Caller is who calls the gateway over HTTP: the name of the inbound key
// the request presented and the globs (path.Match syntax) on tool names
// that key may see and call. Tools nil allows every tool; empty, none.
type Caller struct {
	Key   string
	Tools []string
}

type callerKey struct{}

// WithCaller records in ctx who makes an HTTP request; HTTPHandler reads
// it. A request with no Caller may use every tool.
func WithCaller(ctx context.Context, c Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// callerExtra is where a Caller travels in the SDK's token info, which
// the SDK hands to every request of the session it came with.
const callerExtra = "hookhost.caller"

// callerHeader carries nothing secret: the handler sets it to the
// caller's key name, as the bearer token the SDK's middleware reads, so
// that the caller reaches the session's requests as its token info.
const callerHeader = "Authorization"

// withCallers passes the Caller of each request on to its MCP requests,
// and binds a session to the key that opened it: the SDK refuses a
// session's requests made with another key's token info (403).
func withCallers(next http.Handler) http.Handler {
	verify := func(ctx context.Context, _ string, _ *http.Request) (*auth.TokenInfo, error) {
		c, ok := ctx.Value(callerKey{}).(Caller)
		if !ok {
			return nil, fmt.Errorf("%w: no caller", auth.ErrInvalidToken)
		}
		// Far off: the key's validity is the host's to check, per request.
		return &auth.TokenInfo{UserID: c.Key, Expiration: time.Now().Add(24 * time.Hour), Extra: map[string]any{callerExtra: c}}, nil
	}
	bearer := auth.RequireBearerToken(verify, nil)(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, ok := r.Context().Value(callerKey{}).(Caller)
		if !ok {
			next.ServeHTTP(w, r)
			return
		}
		r = r.Clone(r.Context())
		// The client's own header holds the key's secret; the handlers
		// see the key's name instead.
		r.Header.Del("X-Api-Key")
		r.Header.Set(callerHeader, "Bearer "+c.Key)
		bearer.ServeHTTP(w, r)
	})
}

// callerOf is the Caller of an MCP request, false when it has none.
func callerOf(extra *mcp.RequestExtra) (Caller, bool) {
	if extra == nil || extra.TokenInfo == nil {
		return Caller{}, false
	}
	c, ok := extra.TokenInfo.Extra[callerExtra].(Caller)
	return c, ok
}

// may reports whether c may see and call the tool name.
func (c Caller) may(name string) bool {
	if c.Tools == nil {
		return true
	}
	for _, g := range c.Tools {
		if ok, err := path.Match(g, name); ok && err == nil {
			return true
		}
	}
	return false
}
