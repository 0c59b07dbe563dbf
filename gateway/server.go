// Package gateway serves hookhost over HTTP as an OpenAI- and
// Anthropic-compatible API: POST /v1/chat/completions, /v1/responses and
// /v1/messages, GET and DELETE /v1/responses/{id} (the Responses objects
// hookhost stored, see responses.States), GET /v1/models, /healthz,
// /readyz and /metrics, and, when MCP servers are configured, /mcp: the MCP
// gateway over Streamable HTTP, behind the same inbound keys. Any agent
// built on the official SDKs points its base URL here. On the bypass route
// a request is proxied to the upstream provider as it came (but for a
// model alias, renamed both ways: see alias.go); on the gateway route it
// runs through the hook loop of package relay.
//
// Lifecycle: New checks the [server] settings and builds the routes;
// ListenAndServe opens the listener and serves until its context ends,
// then drains: it stops accepting, /readyz answers 503, requests in flight
// get server.drain_timeout to finish, and whatever remains is cut. The
// host (plugins included) outlives the server and is closed by its owner.
package gateway

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/hookhost/hookhost"
	"github.com/hookhost/hookhost/config"
	"github.com/hookhost/hookhost/dispatch"
	"github.com/hookhost/hookhost/gateway/statestore"
	"github.com/hookhost/hookhost/hookbus"
	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/host"
	"github.com/hookhost/hookhost/internal/codec/codecs"
	"github.com/hookhost/hookhost/internal/codec/responses"
	"github.com/hookhost/hookhost/internal/dialect"
	"github.com/hookhost/hookhost/internal/mcpgate"
	"github.com/hookhost/hookhost/internal/relay"
	"github.com/hookhost/hookhost/llm"
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
	p              parts
	log            hclog.Logger
	keys           []acceptedKey
	listen         string
	listenFrom     string // "-listen" or "server.listen", for errors
	fronts         map[string]dialect.Front
	sem            chan struct{}
	budget         *bodyBudget
	metrics        *metrics
	metricsHandler http.Handler
	proxy          *httputil.ReverseProxy
	handler        http.Handler
	started        time.Time
	// states are the stored Responses objects (see responses.States).
	states *responses.States
	// backend is the shared server states live in; nil in memory.
	backend *stateBackend
	// limits keeps keys within server.limits; nil when no limit is set.
	limits *limiter

	draining atomic.Bool
	mu       sync.Mutex
	addr     string
	// handlers counts the requests being handled, so that a drain that
	// cuts them can wait until none still calls into the host.
	handlers sync.WaitGroup
	cutOnce  sync.Once
	cut      chan struct{}
}

// runner answers one client request; *relay.Relay is the real one.
type runner interface {
	Run(ctx context.Context, front dialect.Front, call *dialect.Call, sink dialect.Sink) (*dialect.Result, error)
}

var _ runner = (*relay.Relay)(nil)

// parts are what a Server takes from its host, so that it can be built
// from test doubles as well.
type parts struct {
	provider      llm.Provider
	bus           *hookbus.Bus
	route         hooks.Route
	models        []string
	upstream      hookhost.Upstream
	server        config.Server
	maxIterations int
	plugins       func() []host.Status
	// decisionsDropped counts the decision log's dropped records for
	// /metrics; nil when there is none to count.
	decisionsDropped func() uint64
	getenv           func(string) string
	logger           hclog.Logger
	listen           string
	// mcp serves /mcp (the MCP gateway over Streamable HTTP); nil when
	// no MCP server is configured.
	mcp http.Handler
	// hosted are the MCP servers' tools offered to the model on the
	// gateway route (offer_to_model); nil when none is.
	hosted dispatch.ToolSet
	// mcpServers and mcpStats report the MCP servers' states and calls
	// for /metrics; nil when there are none.
	mcpServers func() []mcpgate.Status
	mcpStats   func() []mcpgate.ToolStats

	// fronts default to the three real ones.
	fronts []dialect.Front
	// hooked runs the hook loop (gateway route); plain runs it with no
	// Bus (bypass route through a translating upstream). Both default to
	// relays built from the fields above.
	hooked, plain runner
	// transport carries bypass requests upstream; nil means a copy of
	// http.DefaultTransport sized for server.max_concurrent.
	transport http.RoundTripper
	// responses keeps the Responses objects clients may continue from;
	// nil means an in-memory store bounded by server.responses_entries
	// and server.responses_max_bytes.
	responses statestore.Store
	// counter counts what server.limits bound; nil means the state
	// backend's, or one in memory when [state] keeps none.
	counter statestore.Counter
	// state is the [state] table: a redis backend, unless responses is
	// set, keeps the Responses objects; where says where a key is written
	// in the config file, for errors (nil: nowhere).
	state config.State
	where func(key string) string
}

// forwardWithInboundKey says why server.forward_client_key and
// server.api_key_env cannot both be set.
const forwardWithInboundKey = "config: server.forward_client_key and server.api_key_env are both set: a client then presents hookhost's inbound key and its own provider key in the same two headers (Authorization, x-api-key), so the inbound key could be sent upstream to the provider; set only one of them"

// New checks the host's [server] settings (an address that is not
// loopback with no inbound key is refused unless server.allow_no_key is
// set; the inbound key variable must be set when named) and returns a
// server that is not yet listening.
func New(h *hookhost.Host, opts Options) (*Server, error) {
	cfg := h.Config()
	route, _ := h.Route()
	var mcpHandler http.Handler
	if len(cfg.MCP.Servers) > 0 {
		log := opts.Logger
		if log == nil {
			log = hclog.NewNullLogger()
		}
		gw, err := h.MCPGateway(log.Named("mcp"))
		if err != nil {
			return nil, fmt.Errorf("gateway: /mcp: %w", err)
		}
		mcpHandler = gw.HTTPHandler()
	}
	return newServer(parts{
		mcp:              mcpHandler,
		hosted:           h.MCPModelTools(),
		mcpServers:       h.MCPServers,
		mcpStats:         h.MCPCallStats,
		provider:         h.Provider(),
		bus:              h.Bus(),
		route:            route,
		models:           h.Models(),
		upstream:         h.Upstream(),
		server:           cfg.Server,
		maxIterations:    cfg.Conversation.MaxIterations,
		plugins:          h.Plugins,
		decisionsDropped: h.DecisionsDropped,
		getenv:           h.Getenv,
		logger:           opts.Logger,
		listen:           opts.Listen,
		state:            cfg.State,
		where:            cfg.Where,
	})
}

func newServer(p parts) (*Server, error) {
	if p.logger == nil {
		p.logger = hclog.NewNullLogger()
	}
	if p.getenv == nil {
		p.getenv = os.Getenv
	}
	if p.plugins == nil {
		p.plugins = func() []host.Status { return nil }
	}
	s := &Server{p: p, log: p.logger, started: time.Now().UTC()}

	s.listen, s.listenFrom = p.server.Listen, "server.listen"
	if p.listen != "" {
		s.listen, s.listenFrom = p.listen, "-listen"
	}
	loopback, err := checkListen(s.listen)
	if err != nil {
		return nil, fmt.Errorf("config: server.listen: %q (from %s) %v", s.listen, s.listenFrom, err)
	}
	if s.keys, err = inboundKeys(p.server, p.getenv, p.where); err != nil {
		return nil, err
	}
	if !loopback && len(s.keys) == 0 && !p.server.AllowNoKey {
		return nil, fmt.Errorf("config: server.allow_no_key: listening on %q, which is not a loopback address, with no inbound key would let anyone who can reach it spend the upstream's credits; name a variable holding the keys in server.api_key_env, listen on 127.0.0.1, or set server.allow_no_key = true to accept it", s.listen)
	}
	if p.server.MaxConcurrent <= 0 {
		return nil, fmt.Errorf("config: server.max_concurrent: %d must be at least 1", p.server.MaxConcurrent)
	}
	if p.server.MaxBodySize <= 0 {
		return nil, fmt.Errorf("config: server.max_body_size: %d must be at least 1", p.server.MaxBodySize)
	}
	if p.server.MaxBodyBytesInFlight == 0 {
		p.server.MaxBodyBytesInFlight = max(config.DefaultMaxBodyBytesInFlight, p.server.MaxBodySize)
	}
	if p.server.MaxBodyBytesInFlight < p.server.MaxBodySize {
		return nil, fmt.Errorf("config: server.max_body_bytes_in_flight: %d is less than server.max_body_size (%d), so a body of the largest size allowed could never be read; raise it to at least that", p.server.MaxBodyBytesInFlight, p.server.MaxBodySize)
	}
	if p.server.ForwardClientKey && (p.server.APIKeyEnv != "" || len(p.server.Keys) > 0) {
		return nil, errors.New(forwardWithInboundKey)
	}
	s.sem = make(chan struct{}, p.server.MaxConcurrent)
	s.budget = &bodyBudget{limit: p.server.MaxBodyBytesInFlight}
	s.cut = make(chan struct{})

	s.metrics = newMetrics(p.bus, p.plugins, s.budget)
	s.metrics.reg.MustRegister(&mcpCollector{servers: p.mcpServers, stats: p.mcpStats})
	if p.decisionsDropped != nil {
		s.metrics.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "hookhost_decision_log_dropped_total",
			Help: "Decision-log records ([trace] file) dropped because the writer's queue was full (trace.queue).",
		}, func() float64 { return float64(p.decisionsDropped()) }))
	}
	if p.responses == nil && p.state.Backend == config.StateRedis && p.server.ResponsesMaxBytes == 0 {
		s.log.Warn("state.backend is redis, but server.responses_max_bytes = 0 keeps no responses: only hidden tool-call rounds are stored there")
	}
	limited := s.limited()
	if p.state.Backend == config.StateRedis && (p.responses == nil || (limited && p.counter == nil)) {
		if s.backend, err = openStateBackend(p); err != nil {
			return nil, err
		}
		s.backend.register(s.metrics.reg)
		if p.responses == nil && p.server.ResponsesMaxBytes > 0 {
			p.responses = backendStore{Store: s.backend.redis, b: s.backend}
		}
	}
	if limited {
		counter, backend := p.counter, (*stateBackend)(nil)
		switch {
		case counter != nil:
		case s.backend != nil:
			counter, backend = s.backend.redis, s.backend
		default:
			counter = statestore.NewMemory(statestore.Limits{}, time.Now)
		}
		s.limits = newLimiter(counter, backend, p.server.Limits, s.metrics.reg)
	}
	s.states = newStates(p.server, p.responses)
	registerStateMetrics(s.metrics.reg, s.states)
	if p.fronts == nil {
		p.fronts = codecs.Fronts()
	}
	s.fronts = map[string]dialect.Front{}
	for _, f := range p.fronts {
		s.fronts[f.Path()] = f
	}
	if p.hooked == nil || p.plain == nil {
		store := relay.NewStore(p.server.StateTTL, p.server.StateEntries)
		if s.backend != nil {
			store = relay.NewSharedStore(backendStore{Store: s.backend.rounds, b: s.backend, why: needRounds}, p.server.StateTTL)
		}
		cfg := relay.Config{
			Provider:      p.provider,
			MaxIterations: p.maxIterations,
			Store:         store,
			Keepalive:     relay.DefaultKeepalive,
			Logger:        p.logger.Named("relay"),
			Observe:       s.metrics,
			AllowAsked:    p.server.OnAsk == config.OnAskAllow,
		}
		if p.hooked == nil {
			hooked := cfg
			hooked.Bus = p.bus
			hooked.Hosted = p.hosted
			p.hooked = relay.New(hooked)
		}
		if p.plain == nil {
			p.plain = relay.New(cfg)
		}
	}
	s.p = p
	if s.proxy, err = s.newProxy(); err != nil {
		s.Close()
		return nil, err
	}
	s.handler = s.routes()
	return s, nil
}

// limited reports whether any inbound key, or the clients of a server
// that takes none, has a limit.
func (s *Server) limited() bool {
	if len(s.keys) == 0 {
		lim := s.p.server.Limits
		return lim.RequestsPerMinute > 0 || lim.TokensPerMinute > 0
	}
	for _, k := range s.keys {
		if k.requestsPerMinute > 0 || k.tokensPerMinute > 0 {
			return true
		}
	}
	return false
}

// Handler returns the server's routes, for tests and for programs that
// mount them in their own http.Server.
func (s *Server) Handler() http.Handler { return s.handler }

// Close closes the server's connections to its state backend, once it
// no longer serves; it does not close the host.
func (s *Server) Close() error {
	if s.backend == nil {
		return nil
	}
	return s.backend.close()
}

// Addr returns the address the server listens on, once it does.
func (s *Server) Addr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addr
}

// CloseNow ends a drain at once: ListenAndServe cuts the requests still
// running instead of waiting out server.drain_timeout. Called before the
// drain starts, it makes the drain cut at once.
func (s *Server) CloseNow() {
	s.cutOnce.Do(func() { close(s.cut) })
}

// cutWait bounds how long a drain that cut its requests waits for their
// handlers to return: a handler blocked on a plugin call sees its context
// end and returns within this in practice.
const cutWait = 5 * time.Second

// ListenAndServe listens and serves until ctx is done, then stops taking
// requests, lets those in flight finish within server.drain_timeout (or
// until CloseNow), and returns once the requests it cut have returned (for
// at most a few seconds), so that the host can then be closed. It does not
// close the host. ready, when not nil, is called once the listener is
// open.
func (s *Server) ListenAndServe(ctx context.Context, ready func(addr string)) error {
	ln, err := net.Listen("tcp", s.listen)
	if err != nil {
		return fmt.Errorf("gateway: cannot listen on %s (from %s): %w", s.listen, s.listenFrom, err)
	}
	cfg := s.p.server
	srv := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: cfg.HeaderTimeout,
		ReadTimeout:       cfg.ReadTimeout,
		IdleTimeout:       cfg.IdleTimeout,
		// No WriteTimeout: a stream lasts as long as the model takes;
		// server.request_timeout bounds each request instead.
		MaxHeaderBytes: 1 << 20,
		ErrorLog:       s.log.StandardLogger(&hclog.StandardLoggerOptions{InferLevels: true}),
	}
	s.mu.Lock()
	s.addr = ln.Addr().String()
	s.mu.Unlock()
	s.draining.Store(false)
	s.log.Info("serving", "addr", s.addr, "route", string(s.p.route))
	if ready != nil {
		ready(s.addr)
	}

	served := make(chan error, 1)
	go func() { served <- srv.Serve(&shapingListener{Listener: ln, s: s}) }()
	select {
	case err := <-served:
		return fmt.Errorf("gateway: serving on %s: %w", s.addr, err)
	case <-ctx.Done():
	}

	s.draining.Store(true)
	s.log.Info("draining", "in_flight", len(s.sem), "drain_timeout", cfg.DrainTimeout)
	drain, cancel := context.WithTimeout(context.Background(), cfg.DrainTimeout)
	defer cancel()
	go func() {
		select {
		case <-s.cut:
			cancel()
		case <-drain.Done():
		}
	}()
	err = srv.Shutdown(drain)
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		select {
		case <-s.cut:
			s.log.Warn("told to stop now; cutting the requests still running")
		default:
			s.log.Warn("drain deadline passed; cutting the requests still running", "drain_timeout", cfg.DrainTimeout)
		}
		srv.Close()
		err = nil
		// Close does not wait for the handlers it cut; one may still be
		// calling a plugin that the host's owner is about to stop.
		returned := make(chan struct{})
		go func() { s.handlers.Wait(); close(returned) }()
		select {
		case <-returned:
		case <-time.After(cutWait):
			s.log.Warn("requests cut by the drain are still running; returning anyway", "waited", cutWait)
		}
	}
	<-served
	return err
}
