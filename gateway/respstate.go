package gateway

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hookhost/hookhost/config"
	"github.com/hookhost/hookhost/gateway/statestore"
	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/codec"
	"github.com/hookhost/hookhost/internal/codec/responses"
	"github.com/hookhost/hookhost/internal/dialect"
	"github.com/hookhost/hookhost/internal/upstream"
	"github.com/hookhost/hookhost/llm"
)

// storedPrefix is where stored Responses objects are served:
// GET and DELETE /v1/responses/{id}.
const storedPrefix = "/v1/responses/"

// newStates returns the store of Responses objects: store when given (a
// test's, or a shared backend), else one in memory within the [server]
// bounds; responses_max_bytes = 0 keeps none.
func newStates(cfg config.Server, store statestore.Store) *responses.States {
	st := &responses.States{Store: store, TTL: cfg.StateTTL}
	if store == nil && cfg.ResponsesMaxBytes > 0 {
		entries := cfg.ResponsesEntries
		if entries <= 0 {
			entries = config.DefaultResponsesEntries
		}
		st.Store = statestore.NewMemory(statestore.Limits{Entries: entries, Bytes: cfg.ResponsesMaxBytes}, nil)
	}
	return st
}

// registerStateMetrics exports what the in-memory store of responses
// holds and has evicted, so that a store too small for its traffic shows.
func registerStateMetrics(reg *prometheus.Registry, st *responses.States) {
	mem, ok := st.Store.(*statestore.Memory)
	if !ok {
		return
	}
	reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "hookhost_gateway_responses_stored_bytes",
			Help: "Bytes of stored Responses objects and their items, against server.responses_max_bytes.",
		}, func() float64 { _, b, _ := mem.Usage(); return float64(b) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "hookhost_gateway_responses_evicted_total",
			Help: "Stored responses and items dropped before their time to stay within server.responses_entries and server.responses_max_bytes.",
		}, func() float64 { _, _, n := mem.Usage(); return float64(n) }),
	)
}

// forwardsResponses reports whether the upstream speaks Responses itself,
// so that ids hookhost did not mint are the upstream's own state.
func (s *Server) forwardsResponses() bool {
	f, ok := s.p.provider.(upstream.Forwarder)
	return ok && f.Protocol() == llm.ProtocolResponses
}

// resolveState is the Responses front's part before Decode: the body with
// the stored responses and items it names put in (see
// responses.States.Resolve), and the turn to bind to the decoded call. For
// other fronts it returns body as it came and no turn. The bytes the body
// grew by are taken from the body budget like the body's own (release
// gives them back), and the grown body is held to server.max_body_size: a
// conversation continued by id costs what it would cost sent whole.
func (s *Server) resolveState(ctx context.Context, w http.ResponseWriter, r *http.Request, f dialect.Front, body []byte) ([]byte, *responses.Turn, func(), *dialect.Error) {
	none := func() {}
	if _, ok := f.(*responses.Front); !ok || s.states == nil {
		return body, nil, none, nil
	}
	out, turn, err := s.states.Resolve(ctx, tenant(r), body, s.forwardsResponses())
	if err != nil {
		var e *dialect.Error
		if !errors.As(err, &e) {
			e = apiError(http.StatusInternalServerError, "hookhost could not resolve the stored responses this request names: "+err.Error())
		}
		if e.Status >= 500 && !s.backendDown() {
			s.log.Error("the store of responses failed", "error", err)
		}
		return nil, nil, none, e
	}
	if s.backend != nil && turn.Stores() {
		// The response would be lost once sent: refuse it now, while the
		// client can still retry or send store:false.
		if err := s.backend.health(ctx); err != nil {
			return nil, nil, none, s.backend.unavailable(err, "the request asks to store its response (store defaults to true), which is kept there; retry once it is back, or send store: false")
		}
	}
	grew := int64(len(out) - len(body))
	if grew <= 0 {
		return out, turn, none, nil
	}
	if limit := s.p.server.MaxBodySize; int64(len(out)) > limit {
		return nil, nil, none, &dialect.Error{Status: http.StatusRequestEntityTooLarge, Type: "request_too_large",
			Message: fmt.Sprintf("with the stored responses it continues from, this request is %d bytes, over server.max_body_size (%d bytes); start a new conversation, or raise server.max_body_size", len(out), limit)}
	}
	if !s.budget.reserve(grew) {
		w.Header().Set("Retry-After", "1")
		return nil, nil, none, &dialect.Error{Status: http.StatusTooManyRequests, Type: "rate_limit_error",
			Message: fmt.Sprintf("hookhost already holds server.max_body_bytes_in_flight (%d bytes) of request bodies, counting the stored responses requests continue from; retry shortly", s.budget.limit)}
	}
	return out, turn, func() { s.budget.release(grew) }, nil
}

// backendDown reports an outage of the state backend, which is logged
// once as it starts rather than with every request it fails.
func (s *Server) backendDown() bool { return s.backend != nil && s.backend.down.Load() }

// stateReason names a refusal by resolveState in the metrics.
func stateReason(e *dialect.Error) string {
	switch {
	case e.Status == http.StatusNotFound:
		return "state_not_found"
	case e.Status == http.StatusRequestEntityTooLarge:
		return "too_large"
	case e.Status == http.StatusTooManyRequests:
		return "body_budget"
	case e.Status >= 500:
		return "state_store"
	}
	return "bad_request"
}

// keptState logs a response that was not stored (the front stores it as
// it is sent); a failure costs only later continuations from it, which
// get a 404.
func (s *Server) keptState(turn *responses.Turn) {
	if err := turn.Err(); err != nil {
		s.log.Warn("a response was not stored; a request continuing from it will get a 404 (raise server.responses_max_bytes if it is too small)", "error", err)
	}
}

// serveStored answers GET and DELETE /v1/responses/{id}. On the bypass
// route to an upstream that serves /v1/responses itself they are proxied,
// as every request there is; otherwise the id is looked up among the
// responses hookhost stored for the client's tenant.
func (s *Server) serveStored(w *recorder, r *http.Request) {
	render := renderer(codec.OpenAIErrorBody)
	front := s.fronts["/v1/responses"]
	if front != nil {
		render = front.ErrorBody
	}
	if s.p.route != hooks.RouteGateway && front != nil && s.proxies(front) {
		w.route = string(hooks.RouteBypass)
		s.proxy.ServeHTTP(w, r)
		return
	}
	w.route = string(s.p.route)
	id := strings.TrimPrefix(r.URL.Path, storedPrefix)
	if id == "" || strings.Contains(id, "/") {
		s.metrics.rejected.WithLabelValues("not_found").Inc()
		writeError(w, render, notFound("hookhost serves GET and DELETE /v1/responses/{id} for the responses it stored; "+r.URL.Path+" is not one of them"))
		return
	}
	if r.Method == http.MethodGet && r.URL.Query().Get("stream") == "true" {
		writeError(w, render, dialect.Invalid("stream", "a stored response cannot be streamed again here; GET it without stream=true"))
		return
	}
	var (
		out []byte
		e   *dialect.Error
	)
	if r.Method == http.MethodDelete {
		out, e = s.states.Delete(r.Context(), tenant(r), id)
	} else {
		out, e = s.states.Get(r.Context(), tenant(r), id)
	}
	if e != nil {
		if e.Status >= 500 && !s.backendDown() {
			s.log.Error("the store of responses failed", "error", e.Message)
		}
		writeError(w, render, e)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	w.Write(out)
}
