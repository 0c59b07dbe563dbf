package gateway

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/hookhost/hookhost/config"
	"github.com/hookhost/hookhost/hookbus"
	"github.com/hookhost/hookhost/internal/codec"
	"github.com/hookhost/hookhost/internal/dialect"
	"github.com/hookhost/hookhost/internal/mcpgate"
	"github.com/hookhost/hookhost/internal/telemetry"
)

// recorder remembers what a handler wrote, for the request's log line and
// metrics, and whether an error can still be sent as a whole response.
type recorder struct {
	http.ResponseWriter
	status int
	route  string
	// key is the name of the inbound key the request presented.
	key  string
	span trace.Span // the request's span; ended by finish
}

func (w *recorder) WriteHeader(code int) {
	// An informational answer (100 Continue passed on by the proxy) is
	// not the request's status; the final one follows it.
	if w.status == 0 && (code < 100 || code > 199) {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *recorder) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Flush lets streams reach the client event by event.
func (w *recorder) Flush() {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	// The server's own writer is a Flusher; asserting it directly spares
	// a ResponseController per flush, which a stream makes per event.
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
		return
	}
	http.NewResponseController(w.ResponseWriter).Flush()
}

// Hijack is here only so that http.ResponseController and ReverseProxy
// find what the connection offers.
func (w *recorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return http.NewResponseController(w.ResponseWriter).Hijack()
}

func (w *recorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// page is one path of the gateway.
type page struct {
	method string
	// other is a second method the page takes ("" for none).
	other    string
	endpoint bool // a /v1 endpoint: keys, limits and metrics apply
	// keyed pages outside /v1 need an inbound key too; anyMethod pages
	// check their methods themselves.
	keyed, anyMethod bool
	serve            func(w *recorder, r *http.Request)
	render           renderer
}

func (s *Server) routes() http.Handler {
	pages := map[string]page{
		"/v1/models": {method: http.MethodGet, serve: s.serveModels},
		"/healthz":   {method: http.MethodGet, serve: s.serveHealth},
		"/readyz":    {method: http.MethodGet, serve: s.serveReady},
		"/metrics": {method: http.MethodGet, serve: func(w *recorder, r *http.Request) {
			s.metricsHandler.ServeHTTP(w, r)
		}},
	}
	if s.p.mcp != nil {
		// Streamable HTTP takes POST, GET (a stream of server messages)
		// and DELETE (end of session); the SDK answers the rest.
		pages["/mcp"] = page{keyed: true, anyMethod: true, serve: func(w *recorder, r *http.Request) {
			w.route = "mcp"
			s.p.mcp.ServeHTTP(w, r)
		}}
	}
	for path, f := range s.fronts {
		f := f
		pages[path] = page{method: http.MethodPost, endpoint: true, render: f.ErrorBody,
			serve: func(w *recorder, r *http.Request) { s.serveEndpoint(w, r, f) }}
	}
	s.metricsHandler = promhttp.HandlerFor(s.metrics.reg, promhttp.HandlerOpts{})
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		begin := time.Now()
		s.handlers.Add(1)
		defer s.handlers.Done()
		w := &recorder{ResponseWriter: rw, route: "none"}
		// Every response, errors and streams included, names the request
		// its hook calls are filed under in the decision log.
		id := newRequestID()
		w.Header().Set(RequestIDHeader, id)
		r = r.WithContext(hookbus.WithRequestID(r.Context(), id))
		// No server-wide write timeout (a stream lasts as long as the
		// model takes), so each request gets one: otherwise a client that
		// stops reading blocks a write, and the slot it holds, for good,
		// since a blocked write never looks at the request's context.
		// The grace leaves room to send the timeout error itself.
		if err := http.NewResponseController(rw).SetWriteDeadline(begin.Add(s.p.server.RequestTimeout + writeGrace)); err != nil && !errors.Is(err, http.ErrNotSupported) {
			s.log.Debug("could not set a write deadline", "error", err)
		}
		pg, known := pages[r.URL.Path]
		endpoint := r.URL.Path
		if !known && strings.HasPrefix(r.URL.Path, storedPrefix) {
			// One label for every id, so metrics stay few.
			pg, known, endpoint = page{method: http.MethodGet, other: http.MethodDelete, endpoint: true,
				render: codec.OpenAIErrorBody, serve: s.serveStored}, true, storedPrefix+"{id}"
		}
		if !known {
			endpoint = "other"
		}
		if telemetry.Enabled() {
			var ctx context.Context
			ctx, w.span = telemetry.StartRequest(r.Context(), r.Method+" "+endpoint, id,
				attribute.String("http.request.method", r.Method), attribute.String("http.route", endpoint))
			r = r.WithContext(ctx)
		}
		render := pg.render
		if render == nil {
			render = plainErrors(r)
		}
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					// The proxy's way of cutting a response whose
					// upstream failed mid-way; the server handles it.
					s.finish(w, r, endpoint, begin)
					panic(v)
				}
				s.log.Error("panic while serving a request; the server goes on", "path", r.URL.Path, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
				if w.status == 0 {
					writeError(w, render, apiError(http.StatusInternalServerError, "hookhost failed while serving this request (a host error, logged on the server with its stack)"))
				}
			}
			s.finish(w, r, endpoint, begin)
		}()
		switch {
		case !known:
			s.metrics.rejected.WithLabelValues("not_found").Inc()
			writeError(w, render, notFound(fmt.Sprintf("no endpoint %s %s here; hookhost serves POST /v1/chat/completions, POST /v1/responses, GET and DELETE /v1/responses/{id}, POST /v1/messages and GET /v1/models", r.Method, r.URL.Path)))
		case !pg.anyMethod && r.Method != pg.method && (pg.other == "" || r.Method != pg.other) && !(pg.method == http.MethodGet && r.Method == http.MethodHead):
			s.metrics.rejected.WithLabelValues("method").Inc()
			allow, takes := pg.method, pg.method
			if pg.other != "" {
				allow, takes = allow+", "+pg.other, takes+" or "+pg.other
			}
			w.Header().Set("Allow", allow)
			writeError(w, render, &dialect.Error{Status: http.StatusMethodNotAllowed, Type: "invalid_request_error",
				Message: fmt.Sprintf("%s takes %s, not %s", r.URL.Path, takes, r.Method)})
		case (strings.HasPrefix(r.URL.Path, "/v1/") || pg.keyed) && !s.admitKey(w, &r):
			s.metrics.rejected.WithLabelValues("auth").Inc()
			writeError(w, render, &dialect.Error{Status: http.StatusUnauthorized, Type: "authentication_error",
				Message: "missing or wrong API key: send one of the inbound keys (server.api_key_env, server.keys) as Authorization: Bearer <key> or x-api-key: <key>"})
		default:
			pg.serve(w, r)
		}
	})
}

// admitKey checks the inbound key *r presents and, when it is one of the
// server's, records its name in the request's context and w, for the
// handler, the log line and /mcp's tool allowlist.
func (s *Server) admitKey(w *recorder, r **http.Request) bool {
	k, ok := s.authorize(*r)
	if !ok {
		return false
	}
	if k != nil {
		w.key = k.name
		ctx := withKey((*r).Context(), k)
		ctx = mcpgate.WithCaller(ctx, mcpgate.Caller{Key: k.name, Tools: k.mcpTools})
		*r = (*r).WithContext(ctx)
	}
	return true
}

// writeGrace is how long past server.request_timeout a response may still
// be written, for the error that says the request ran out of time.
const writeGrace = 2 * time.Second

func (s *Server) finish(w *recorder, r *http.Request, endpoint string, begin time.Time) {
	status := w.status
	if status == 0 {
		// Nothing was written: the client went away first.
		status = 499
	}
	d := time.Since(begin)
	if w.span != nil {
		telemetry.EndRequest(w.span, status, nil)
	}
	s.metrics.observeServed(endpoint, w.route, status, d)
	if !s.log.IsInfo() {
		// Spares building the line's arguments for a logger that
		// would drop it.
		return
	}
	s.log.Info("request", "method", r.Method, "path", r.URL.Path, "status", status, "route", w.route, "key", w.key, "duration", d, "request_id", w.Header().Get(RequestIDHeader))
}

func apiError(status int, msg string) *dialect.Error {
	return &dialect.Error{Status: status, Type: "api_error", Message: msg}
}

func notFound(msg string) *dialect.Error {
	return &dialect.Error{Status: http.StatusNotFound, Type: "not_found_error", Message: msg}
}

func (s *Server) serveHealth(w *recorder, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Write([]byte(`{"status":"ok"}`))
}

func (s *Server) serveReady(w *recorder, r *http.Request) {
	type plugin struct {
		Name     string `json:"name"`
		State    string `json:"state"`
		Restarts int    `json:"restarts"`
	}
	type state struct {
		Backend string `json:"backend"`
		Addr    string `json:"addr,omitempty"`
		State   string `json:"state"`
		Error   string `json:"error,omitempty"`
	}
	out := struct {
		Status  string   `json:"status"`
		Route   string   `json:"route"`
		Plugins []plugin `json:"plugins"`
		State   state    `json:"state"`
	}{Status: "ready", Route: string(s.p.route), Plugins: []plugin{}, State: state{Backend: config.StateMemory, State: "up"}}
	for _, p := range s.p.plugins() {
		out.Plugins = append(out.Plugins, plugin{p.Name, p.State, p.Restarts})
	}
	status := http.StatusOK
	if b := s.backend; b != nil {
		out.State = state{Backend: config.StateRedis, Addr: b.redis.Addr(), State: "up"}
		ctx, cancel := context.WithTimeout(r.Context(), healthWait)
		err := b.health(ctx)
		cancel()
		if err != nil {
			// Not ready: a replica whose backend is down cannot continue
			// conversations, so a load balancer should prefer another.
			out.State.State, out.State.Error = "down", b.unavailable(err, "requests that continue or store a response get 503 until it is back").Message
			out.Status, status = "not_ready", http.StatusServiceUnavailable
		}
	}
	if s.draining.Load() {
		out.Status, status = "draining", http.StatusServiceUnavailable
	}
	b, _ := json.Marshal(out)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}

// serveModels lists the models clients may ask for, aliases included, in
// Anthropic's shape when the client is an Anthropic one and OpenAI's
// otherwise.
func (s *Server) serveModels(w *recorder, r *http.Request) {
	models := s.servedModels()
	var out any
	if r.Header.Get("anthropic-version") != "" {
		type model struct {
			Type        string `json:"type"`
			ID          string `json:"id"`
			DisplayName string `json:"display_name"`
			CreatedAt   string `json:"created_at"`
		}
		list := struct {
			Data    []model `json:"data"`
			HasMore bool    `json:"has_more"`
			FirstID *string `json:"first_id"`
			LastID  *string `json:"last_id"`
		}{Data: []model{}}
		for _, m := range models {
			list.Data = append(list.Data, model{"model", m, m, s.started.Format(time.RFC3339)})
		}
		if n := len(models); n > 0 {
			list.FirstID, list.LastID = &models[0], &models[n-1]
		}
		out = list
	} else {
		type model struct {
			ID      string `json:"id"`
			Object  string `json:"object"`
			Created int64  `json:"created"`
			OwnedBy string `json:"owned_by"`
		}
		list := struct {
			Object string  `json:"object"`
			Data   []model `json:"data"`
		}{Object: "list", Data: []model{}}
		for _, m := range models {
			list.Data = append(list.Data, model{m, "model", s.started.Unix(), "hookhost"})
		}
		out = list
	}
	b, _ := json.Marshal(out)
	w.Header().Set("Content-Type", "application/json")
	w.Write(b)
}

// knownModel is nil when clients may ask for model, or the 404 saying
// they may not.
func (s *Server) knownModel(model string) *dialect.Error {
	if model == "" {
		return dialect.Invalid("model", "model is required; GET /v1/models lists the models served here")
	}
	if _, alias := s.upstreamModel(model); alias || slices.Contains(s.p.models, model) {
		return nil
	}
	e := notFound(fmt.Sprintf("model %q is not served here; GET /v1/models lists the models served; server.models in the gateway's config adds more, and server.model_aliases serves a name on another model", model))
	e.Param = "model"
	return e
}

// RequestIDHeader is the response header that carries the request's id:
// the request_id of its hook calls in the decision log ([trace] file).
const RequestIDHeader = "x-hookhost-request-id"

// newRequestID returns a fresh random request id.
func newRequestID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "req_" + hex.EncodeToString(b[:])
}
