// Package hookhost assembles a running hookhost from a config.Config: the
// model provider, the native tools, the plugin processes, the Bus over
// them and the route traffic takes. `hookhost chat` and `hookhost serve`
// are built on it, and so can any Go program:
//
//	h, err := hookhost.Open(ctx, cfg, hookhost.Options{})
//	if err != nil { ... }
//	defer h.Close(context.Background())
//	s, err := h.NewSession(hookhost.SessionOptions{})
//	turn, err := s.Send(ctx, "what is 2+2?")
//
// Lifecycle: Open starts every enabled plugin concurrently and returns
// once each has started or failed (a failure is reported by StartErrors,
// not returned: the host runs without that plugin). Sessions may then be
// created and run concurrently, each on its own goroutine. Close stops
// the plugins, bounded by its context; sessions must be done by then.
package hookhost

import (
	"context"
	"net/http"

	"github.com/hashicorp/go-hclog"

	"github.com/hookhost/hookhost/config"
	"github.com/hookhost/hookhost/conversation"
	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/host"
	"github.com/hookhost/hookhost/llm"
)

// Options are what a host needs besides its config.
type Options struct {
	// Logger receives the host's and the plugins' log lines; nil
	// discards them.
	Logger hclog.Logger
	// Getenv reads the environment (HOOKHOST_USE_GATEWAY, the API key
	// variables the config names); nil means os.Getenv.
	Getenv func(string) string
}

// SessionOptions configure one session; the zero value is a plain one.
type SessionOptions struct {
	// Trace, when set, receives a readable account of each step.
	Trace func(conversation.Event)
	// OnText, when set, receives the model's text as it is generated.
	OnText func(delta string)
}

// Host is a running hookhost. Its methods are safe for concurrent use.
type Host struct {
}

// Open assembles a host from cfg.
func Open(ctx context.Context, cfg *config.Config, opts Options) (*Host, error) {
	panic("not yet")
}

// Config returns the configuration the host was opened with.
func (h *Host) Config() *config.Config { panic("not yet") }

// Provider returns the model provider every session and the gateway call.
func (h *Host) Provider() llm.Provider { panic("not yet") }

// Bus returns the Bus over the running plugins; nil when none runs.
func (h *Host) Bus() *hooks.Bus { panic("not yet") }

// Route returns the route traffic takes, and where that was decided
// (HOOKHOST_USE_GATEWAY or routing.gateway).
func (h *Host) Route() (route hooks.Route, source string) { panic("not yet") }

// Upstream is where the model provider sends its calls, for a gateway
// that proxies a client's request as it came (the bypass route).
type Upstream struct {
	Provider string // "offline", "openai" or "anthropic"
	// BaseURL is the API root (llm.base_url); "" for offline.
	BaseURL string
	// Header holds the credentials and the llm.headers every upstream
	// request carries.
	Header http.Header
}

// Upstream returns the configured provider's address and credentials.
func (h *Host) Upstream() Upstream { panic("not yet") }

// Models returns the model names clients may ask for: llm.model, the
// llm.tiers models and server.models, without duplicates.
func (h *Host) Models() []string { panic("not yet") }

// Plugins returns the state of every plugin that started, in priority
// order.
func (h *Host) Plugins() []host.Status { panic("not yet") }

// StartErrors returns why each plugin that failed to start did.
func (h *Host) StartErrors() []error { panic("not yet") }

// NewSession starts a conversation on the host's route.
func (h *Host) NewSession(opts SessionOptions) (*conversation.Session, error) {
	panic("not yet")
}

// Close stops every plugin, bounded by ctx.
func (h *Host) Close(ctx context.Context) error { panic("not yet") }
