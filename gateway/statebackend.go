package gateway

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/hookhost/hookhost/config"
	"github.com/hookhost/hookhost/gateway/statestore"
	"github.com/hookhost/hookhost/internal/dialect"
	"github.com/hookhost/hookhost/internal/relay"
)

// stateBackend is the server the Responses store lives in when [state]
// backend = "redis", shared by every replica: its failures become 503s
// that name it, its outages are logged once each, and /readyz reports it.
type stateBackend struct {
	// redis keeps the Responses objects; rounds the hidden rounds of
	// mixed tool calls (relay.NewSharedStore), on the same server under
	// their own prefix, so that each has its own bounds per tenant.
	redis, rounds *statestore.Redis
	log           hclog.Logger
	// down is set while the server does not answer either store, from
	// their OnStateChange; failing is each one's (responses, rounds).
	down    atomic.Bool
	mu      sync.Mutex
	failing [2]bool
}

// healthWait bounds how long /readyz and the check at startup wait for
// the backend to answer.
const healthWait = 2 * time.Second

// openStateBackend connects to the Redis or Valkey server [state] names,
// with the [server] bounds per tenant. The URL comes from the variable
// state.url_env names; where says where a key is written in the file.
func openStateBackend(p parts) (*stateBackend, error) {
	cfg := p.state
	at := "state.url_env"
	if p.where != nil {
		if w := p.where(at); w != "" {
			at = w + ": " + at
		}
	}
	url := strings.TrimSpace(p.getenv(cfg.URLEnv))
	if url == "" {
		return nil, fmt.Errorf("config: %s: the environment variable %s is unset or empty; set it to the redis:// or rediss:// URL of the state backend (e.g. redis://:password@host:6379/0), or set state.backend = %q to keep state in this process", at, cfg.URLEnv, config.StateMemory)
	}
	b := &stateBackend{log: p.logger.Named("state")}
	entries := p.server.ResponsesEntries
	if entries <= 0 {
		entries = config.DefaultResponsesEntries
	}
	r, err := statestore.NewRedis(statestore.RedisOptions{
		URL:           url,
		Prefix:        cfg.Prefix,
		DialTimeout:   cfg.DialTimeout,
		ReadTimeout:   cfg.ReadTimeout,
		WriteTimeout:  cfg.WriteTimeout,
		TenantBytes:   p.server.ResponsesMaxBytes,
		TenantEntries: entries,
		OnStateChange: b.watch(0),
	})
	if err != nil {
		// NewRedis's error never repeats the URL, which holds the password.
		return nil, fmt.Errorf("config: %s: the URL in %s: %w", at, cfg.URLEnv, err)
	}
	b.redis = r
	// The rounds' bounds per tenant are the memory store's in all
	// (server.state_entries, relay.DefaultStoreMaxBytes, which also
	// bounds one entry): a replica's share of a tenant is the whole
	// tenant's, and what one replica would keep, all keep.
	if b.rounds, err = statestore.NewRedis(statestore.RedisOptions{
		URL:           url,
		Prefix:        cfg.Prefix + roundsPrefix,
		DialTimeout:   cfg.DialTimeout,
		ReadTimeout:   cfg.ReadTimeout,
		WriteTimeout:  cfg.WriteTimeout,
		MaxValue:      relay.DefaultStoreMaxBytes,
		TenantBytes:   relay.DefaultStoreMaxBytes,
		TenantEntries: p.server.StateEntries,
		OnStateChange: b.watch(1),
	}); err != nil {
		r.Close()
		return nil, fmt.Errorf("config: %s: the URL in %s: %w", at, cfg.URLEnv, err)
	}
	b.log.Info("keeping stored responses and hidden tool-call rounds in redis", "addr", r.Addr(), "prefix", cfg.Prefix)
	ctx, cancel := context.WithTimeout(context.Background(), healthWait)
	defer cancel()
	// Unreachable at startup is not fatal: requests needing no state are
	// served, and the outage is logged (by changed) and shown on /readyz.
	_ = b.health(ctx)
	return b, nil
}

// roundsPrefix follows state.prefix in the keys of hidden rounds.
const roundsPrefix = "rounds:"

// watch returns the OnStateChange of store which (0 responses, 1
// rounds): an outage of the backend is logged as it starts and as it
// ends, once, though both stores see it, each in its own time.
func (b *stateBackend) watch(which int) func(error) {
	return func(err error) { b.changed(which, err) }
}

func (b *stateBackend) changed(which int, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.failing[which] = err != nil
	down := b.failing[0] || b.failing[1]
	if b.down.Swap(down) == down {
		return
	}
	if err != nil {
		b.log.Warn("the state backend is unreachable; requests that continue or store a response get 503 until it is back", "error", err)
		return
	}
	b.log.Info("the state backend is reachable again")
}

// health asks the server whether it answers, through both stores, so
// that each learns the end of an outage.
func (b *stateBackend) health(ctx context.Context) error {
	if err := b.redis.Health(ctx); err != nil {
		return err
	}
	return b.rounds.Health(ctx)
}

// unavailable is the 503 for a request that needs the backend, which
// failed with err; why says what the request needed it for.
func (b *stateBackend) unavailable(err error, why string) *dialect.Error {
	cause := strings.TrimPrefix(err.Error(), "statestore: redis at "+b.redis.Addr()+": ")
	what := "failed"
	if b.down.Load() {
		what = "is unreachable"
	}
	return &dialect.Error{Status: http.StatusServiceUnavailable, Type: "api_error",
		Message: fmt.Sprintf("hookhost: state backend redis at %s %s: %s; %s", b.redis.Addr(), what, cause, why)}
}

// close closes the connections to the server.
func (b *stateBackend) close() error { return errors.Join(b.redis.Close(), b.rounds.Close()) }

// register exports whether the backend answers.
func (b *stateBackend) register(reg *prometheus.Registry) {
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "hookhost_gateway_state_backend_up",
		Help: "1 while the state backend (state.backend) answers, 0 during an outage.",
	}, func() float64 {
		if b.down.Load() {
			return 0
		}
		return 1
	}))
}

// backendStore is the backend as the Responses store: its failures are
// the 503s of unavailable, which the store passes on to the client as
// they are.
type backendStore struct {
	statestore.Store
	b *stateBackend
	// why says what a request needed the backend for; needStored when
	// empty.
	why string
}

const (
	needStored = "the request names stored responses, which are kept there; retry once it is back"
	needRounds = "the request continues a conversation whose hidden tool-call rounds (or the response's own, to be continued from) are kept there; retry once it is back"
)

func (s backendStore) fail(err error) error {
	if err == nil || errors.Is(err, statestore.ErrTooLarge) {
		return err
	}
	why := s.why
	if why == "" {
		why = needStored
	}
	return s.b.unavailable(err, why)
}

func (s backendStore) Get(ctx context.Context, tenant, key string) ([]byte, bool, error) {
	v, ok, err := s.Store.Get(ctx, tenant, key)
	return v, ok, s.fail(err)
}

func (s backendStore) Put(ctx context.Context, tenant, key string, value []byte, ttl time.Duration) error {
	return s.fail(s.Store.Put(ctx, tenant, key, value, ttl))
}

func (s backendStore) Delete(ctx context.Context, tenant, key string) (bool, error) {
	ok, err := s.Store.Delete(ctx, tenant, key)
	return ok, s.fail(err)
}
