// Package gateway serves hookhost over HTTP as an OpenAI- and
// Anthropic-compatible API: POST /v1/chat/completions, /v1/responses and
// /v1/messages, GET /v1/models, /healthz, /readyz and /metrics. Any agent
// built on the official SDKs points its base URL here. On the bypass route
// a request is proxied to the upstream provider as it came; on the
// gateway route it runs through the hook loop of package relay.
package gateway

import (
	"context"
	"net/http"

	"github.com/hashicorp/go-hclog"

	"github.com/hookhost/hookhost"
)

// Options are what a Server needs besides its host.
type Options struct {
	// Logger receives the server's log lines; nil discards them.
	Logger hclog.Logger
	// Listen overrides server.listen when not "".
	Listen string
}

// Server is the HTTP gateway in front of one host.
type Server struct {
}

// New checks the host's [server] settings (an address that is not
// loopback with no inbound key is refused unless server.allow_no_key is
// set; the inbound key variable must be set when named) and returns a
// server that is not yet listening.
func New(h *hookhost.Host, opts Options) (*Server, error) { panic("not yet") }

// Handler returns the server's routes, for tests and for programs that
// mount them in their own http.Server.
func (s *Server) Handler() http.Handler { panic("not yet") }

// Addr returns the address the server listens on, once it does.
func (s *Server) Addr() string { panic("not yet") }

// ListenAndServe listens and serves until ctx is done, then stops taking
// requests, lets those in flight finish within server.drain_timeout, and
// returns. It does not close the host. ready, when not nil, is called
// once the listener is open.
func (s *Server) ListenAndServe(ctx context.Context, ready func(addr string)) error {
	panic("not yet")
}
