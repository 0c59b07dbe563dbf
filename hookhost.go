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
//
// What sessions share is read-only or safe for concurrent use: the
// provider (one HTTP client), the native tool registry (fixed at Open)
// and the Bus (each hook call is independent; observers queue per
// plugin). A session itself is not: one goroutine per session.
package hookhost

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"

	"github.com/hashicorp/go-hclog"

	"github.com/hookhost/hookhost/config"
	"github.com/hookhost/hookhost/conversation"
	"github.com/hookhost/hookhost/dispatch"
	"github.com/hookhost/hookhost/dispatch/builtin"
	"github.com/hookhost/hookhost/hookbus"
	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/host"
	"github.com/hookhost/hookhost/internal/decisionlog"
	"github.com/hookhost/hookhost/internal/telemetry"
	"github.com/hookhost/hookhost/llm"
	// The providers llm.provider may name register themselves.
	_ "github.com/hookhost/hookhost/llm/anthropic"
	_ "github.com/hookhost/hookhost/llm/offline"
	_ "github.com/hookhost/hookhost/llm/openai"
)

// Options are what a host needs besides its config.
type Options struct {
	// Logger receives the host's and the plugins' log lines; nil
	// discards them.
	Logger hclog.Logger
	// Getenv reads the environment (HOOKHOST_USE_GATEWAY,
	// HOOKHOST_REATTACH_PLUGINS, the API key variables the config names);
	// nil means os.Getenv.
	Getenv func(string) string
	// Version is hookhost's, told to MCP servers and clients.
	Version string
	// Decisions, when set, receives every plugin hook call at DEBUG, as
	// the decision log ([trace] file) records it: `chat -v` and
	// `serve -v` show them on stderr.
	Decisions hclog.Logger
}

// SessionOptions configure one session; the zero value is a plain one.
type SessionOptions struct {
	// Trace, when set, receives a readable account of each step.
	Trace func(conversation.Event)
	// OnText, when set, receives the model's text as it is generated.
	OnText func(delta string)
	// Approve, when set, asks a person whether a tool call a plugin
	// answered ask on may go ahead (see conversation.Options.Approve);
	// without it such a call is blocked with the plugin's reason.
	Approve func(ctx context.Context, call hooks.ToolCall, reason string) (bool, error)
}

// ConfigError is an Open failure the configuration or the environment it
// names is to blame for (a missing API key, a bad HOOKHOST_USE_GATEWAY, a
// provider setting the provider refuses): fixing the config or the
// environment fixes it, retrying does not.
type ConfigError struct{ Err error }

func (e *ConfigError) Error() string { return e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

// Host is a running hookhost. Its methods are safe for concurrent use.
type Host struct {
	cfg         *config.Config
	provider    llm.Provider
	registry    *dispatch.Registry
	plugins     *host.Host   // nil when no plugin is enabled
	bus         *hookbus.Bus // nil when no plugin is enabled
	startErrs   []error
	route       hooks.Route
	routeSource string
	upstream    Upstream
	models      []string
	getenv      func(string) string
	nativeTools []dispatch.Tool
	mcp         *mcpServers // nil when no MCP server is enabled
	version     string
	decisions   *decisionlog.Log // nil unless [trace] file is set

	closeOnce sync.Once
	closeErr  error
}

// Open assembles a host from cfg: it resolves the route, builds the
// provider with the key llm.api_key_env names, registers the native tools
// and starts the enabled plugins. Errors caused by the config or the
// environment are *ConfigError. ctx bounds the plugins' start only; a
// plugin that did not start in time is among StartErrors.
func Open(ctx context.Context, cfg *config.Config, opts Options) (*Host, error) {
	if cfg == nil {
		return nil, errors.New("hookhost: Open needs a config (config.Default() for the built-in one)")
	}
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	log := opts.Logger
	if log == nil {
		log = hclog.NewNullLogger()
	}
	gateway, source, err := config.ResolveGateway(cfg, getenv)
	if err != nil {
		return nil, &ConfigError{err}
	}
	h := &Host{cfg: cfg, route: hooks.RouteBypass, routeSource: source, getenv: getenv}
	if gateway {
		h.route = hooks.RouteGateway
	}
	info, err := lookupProvider(cfg.LLM)
	if err != nil {
		return nil, err
	}
	key, err := apiKey(cfg.LLM, info, getenv)
	if err != nil {
		return nil, err
	}
	if h.provider, err = newProvider(cfg.LLM, info, key); err != nil {
		return nil, err
	}
	h.upstream = upstream(cfg.LLM, info, key)
	h.models = models(cfg)
	tools, err := builtin.All(cfg.Tools.ReadRoot)
	if err != nil {
		return nil, &ConfigError{fmt.Errorf("config: tools.read_root: %w", err)}
	}
	if h.registry, err = dispatch.NewRegistry(tools...); err != nil {
		return nil, err
	}
	h.nativeTools, h.version = tools, opts.Version
	if len(cfg.MCP.EnabledServers()) > 0 {
		h.mcp = startMCP(ctx, cfg.MCP, log, opts.Version)
	}
	if len(cfg.Plugins.Enabled) == 0 {
		h.offerMCP(log)
		return h, nil
	}
	onCall, err := h.openDecisions(cfg, opts, log, key)
	if err != nil {
		h.mcp.close(context.WithoutCancel(ctx))
		return nil, err
	}
	ph, startErrs := host.Start(ctx, host.Specs(cfg), host.Options{Logger: log, Getenv: getenv})
	for _, e := range startErrs {
		h.startErrs = append(h.startErrs, e)
	}
	bus, err := hookbus.New(ph.Members(), hookbus.Config{Logger: log.Named("hooks"), MaxTemperature: info.MaxTemperature, OnCall: onCall})
	if err != nil {
		ph.Close(context.WithoutCancel(ctx))
		h.mcp.close(context.WithoutCancel(ctx))
		if h.decisions != nil {
			h.decisions.Close()
		}
		return nil, fmt.Errorf("host: assembling the plugins' Bus: %w", err)
	}
	h.plugins, h.bus = ph, bus
	h.offerMCP(log)
	return h, nil
}

// apiKey reads the upstream key from the variable llm.api_key_env names.
// A provider that takes no key (offline) needs none; a named variable that
// is unset is a config error rather than a request that fails later with a
// 401.
func apiKey(c config.LLM, info llm.ProviderInfo, getenv func(string) string) (string, error) {
	if info.AuthStyle == llm.AuthNone || c.APIKeyEnv == "" {
		return "", nil
	}
	key := strings.TrimSpace(getenv(c.APIKeyEnv))
	if key == "" {
		return "", &ConfigError{&config.Error{Key: "llm.api_key_env", Msg: fmt.Sprintf(
			"environment variable %s is not set; export the %s API key in it (or set api_key_env = \"\" for a server that needs no key)",
			c.APIKeyEnv, c.Provider)}}
	}
	return key, nil
}

// lookupProvider finds the provider llm.provider names among those linked
// into this program.
func lookupProvider(c config.LLM) (llm.ProviderInfo, error) {
	info, ok := llm.LookupProvider(c.Provider)
	if !ok {
		names := llm.ProviderNames()
		if n := len(names); n > 1 {
			names = append(names[:n-2:n-2], names[n-2]+" or "+names[n-1])
		}
		return info, &ConfigError{fmt.Errorf("config: llm.provider %q is not available in this build (use %s)", c.Provider, strings.Join(names, ", "))}
	}
	return info, nil
}

func newProvider(c config.LLM, info llm.ProviderInfo, key string) (llm.Provider, error) {
	p, err := info.New(llm.ProviderSettings{
		API: c.API, BaseURL: c.BaseURL, APIKey: key, Headers: c.Headers,
		MaxTokens: c.MaxTokens, Temperature: c.Temperature,
		Timeout: c.Timeout, CallTimeout: c.CallTimeout, MaxRetries: c.MaxRetries,
	})
	if err != nil {
		return nil, &ConfigError{err}
	}
	return p, nil
}

// upstream carries the credentials as the provider adapters send them, so
// that a proxied request authenticates the same way a model call does.
func upstream(c config.LLM, info llm.ProviderInfo, key string) Upstream {
	u := Upstream{Provider: c.Provider, Header: http.Header{}}
	if len(info.Protocols) == 0 {
		// Not reached over the network (offline): nothing to proxy to,
		// whatever base_url says.
		return u
	}
	u.BaseURL = c.BaseURL
	info.AuthStyle.SetKey(u.Header, key)
	for k, v := range c.Headers {
		u.Header.Set(k, v)
	}
	return u
}

func models(cfg *config.Config) []string {
	var out []string
	seen := map[string]bool{}
	for _, m := range append([]string{cfg.LLM.Model, cfg.LLM.Tiers.Small, cfg.LLM.Tiers.Strong}, cfg.Server.Models...) {
		if m != "" && !seen[m] {
			seen[m] = true
			out = append(out, m)
		}
	}
	return out
}

// Config returns the configuration the host was opened with.
func (h *Host) Config() *config.Config { return h.cfg }

// Provider returns the model provider every session and the gateway call.
func (h *Host) Provider() llm.Provider { return h.provider }

// Bus returns the Bus over the running plugins; nil when none runs.
func (h *Host) Bus() *hookbus.Bus { return h.bus }

// Route returns the route traffic takes, and where that was decided:
// HOOKHOST_USE_GATEWAY, routing.gateway, or "default" when neither is set.
func (h *Host) Route() (route hooks.Route, source string) { return h.route, h.routeSource }

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
// The Header is the caller's own copy.
func (h *Host) Upstream() Upstream {
	u := h.upstream
	u.Header = u.Header.Clone()
	return u
}

// Getenv reads the environment the host was opened with (Options.Getenv),
// so that what is built on the host, such as the gateway's inbound keys,
// reads the same one.
func (h *Host) Getenv(key string) string { return h.getenv(key) }

// Models returns the model names clients may ask for under their own
// name: llm.model, the llm.tiers models and server.models, without
// duplicates. The gateway also serves the server.model_aliases names,
// which are none of these.
func (h *Host) Models() []string { return append([]string(nil), h.models...) }

// Plugins returns the state of every plugin that started, in priority
// order, and of every fail_closed plugin that did not (host.StateDown).
func (h *Host) Plugins() []host.Status {
	if h.plugins == nil {
		return nil
	}
	return h.plugins.Plugins()
}

// StartErrors returns why each plugin that failed to start did; each is a
// *host.StartError.
func (h *Host) StartErrors() []error { return append([]error(nil), h.startErrs...) }

// NewSession starts a conversation on the host's route.
func (h *Host) NewSession(opts SessionOptions) (*conversation.Session, error) {
	return conversation.New(conversation.Options{
		Provider:      h.provider,
		Model:         h.cfg.LLM.Model,
		System:        h.cfg.Conversation.System,
		MaxIterations: h.cfg.Conversation.MaxIterations,
		Route:         h.route,
		Bus:           h.bus,
		Tools:         h.registry,
		Hosted:        h.MCPModelTools(),
		Trace:         opts.Trace,
		OnText:        opts.OnText,
		Approve:       opts.Approve,
	})
}

// Close stops every plugin and MCP server, bounded by ctx: queued observer events are
// delivered first, then the processes are stopped. A ctx without a
// deadline gets host.DefaultCloseTimeout for the whole of it, so that a
// slow observer cannot hold the caller. Later calls return the first
// call's result.
func (h *Host) Close(ctx context.Context) error {
	h.closeOnce.Do(func() {
		if h.plugins == nil && h.mcp == nil {
			return
		}
		if _, ok := ctx.Deadline(); !ok {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, host.DefaultCloseTimeout)
			defer cancel()
		}
		mcpErr := h.mcp.close(ctx)
		if h.plugins == nil {
			h.closeErr = mcpErr
			return
		}
		busErr := h.bus.Close(ctx)
		// The observer deliveries Close made are in the log too.
		var logErr error
		if h.decisions != nil {
			logErr = h.decisions.Close()
		}
		h.closeErr = errors.Join(busErr, h.plugins.Close(ctx), mcpErr, logErr)
	})
	return h.closeErr
}

// openDecisions opens the decision log [trace] file names, and returns
// what the Bus tells of each call: the log's record and the DEBUG line of
// Options.Decisions, built once, redacted of every secret the host holds,
// and the call's span when traces are exported. It returns nil when none
// is wanted, so that the Bus spends nothing.
func (h *Host) openDecisions(cfg *config.Config, opts Options, log hclog.Logger, key string) (func(context.Context, hookbus.CallRecord), error) {
	debug := opts.Decisions
	if debug != nil && !debug.IsDebug() {
		debug = nil
	}
	spans := telemetry.Enabled()
	if cfg.Trace.File == "" && debug == nil {
		if spans {
			return telemetry.HookCall, nil
		}
		return nil, nil
	}
	if cfg.Trace.File != "" {
		l, err := decisionlog.Open(decisionlog.Options{
			File: cfg.Trace.File, MaxSize: cfg.Trace.MaxSize, Keep: cfg.Trace.Keep, Queue: cfg.Trace.Queue,
			Logger: log.Named("trace"),
		})
		if err != nil {
			return nil, &ConfigError{fmt.Errorf("config: trace.file: %w", err)}
		}
		h.decisions = l
	}
	red := decisionlog.NewRedactor(h.secrets(cfg, key)...)
	file := h.decisions
	return func(ctx context.Context, c hookbus.CallRecord) {
		if spans {
			telemetry.HookCall(ctx, c)
		}
		e := decisionlog.FromCall(c, red)
		if file != nil {
			file.Record(e)
		}
		if debug != nil {
			debug.Debug(e.Summary())
		}
	}, nil
}

// secrets are the values the decision log must never show: the provider
// key, credential headers sent upstream, the inbound keys and the MCP
// servers' bearer tokens.
func (h *Host) secrets(cfg *config.Config, key string) []string {
	out := []string{key}
	for name, v := range h.upstream.Header {
		if n := strings.ToLower(name); strings.Contains(n, "auth") || strings.Contains(n, "key") || strings.Contains(n, "token") || strings.Contains(n, "secret") {
			for _, s := range v {
				out = append(out, s, strings.TrimPrefix(s, "Bearer "))
			}
		}
	}
	if cfg.Server.APIKeyEnv != "" {
		out = append(out, strings.Split(h.getenv(cfg.Server.APIKeyEnv), ",")...)
	}
	for _, s := range cfg.MCP.EnabledServers() {
		if s.BearerTokenEnv != "" {
			out = append(out, h.getenv(s.BearerTokenEnv))
		}
	}
	return out
}

// DecisionsDropped returns how many records the decision log ([trace]
// file) has dropped since the host opened because its queue was full; 0
// when there is no decision log.
func (h *Host) DecisionsDropped() uint64 {
	if h.decisions == nil {
		return 0
	}
	return h.decisions.Dropped()
}
