package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/hookhost/hookhost/gateway/dialect"
	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/llm"
)

// serveEndpoint answers one POST to a protocol endpoint; the key has been
// checked already.
func (s *Server) serveEndpoint(w *recorder, r *http.Request, f dialect.Front) {
	render := renderer(f.ErrorBody)
	reject := func(reason string, e *dialect.Error) {
		s.metrics.rejected.WithLabelValues(reason).Inc()
		writeError(w, render, e)
	}

	// Never wait for a slot: a client told to retry is better off than
	// one queued behind requests that may run for minutes.
	select {
	case s.sem <- struct{}{}:
		defer func() { <-s.sem }()
	default:
		// A slot frees as soon as any request ends; an upstream 429
		// carries no such promise, so only this one says when to retry.
		w.Header().Set("Retry-After", "1")
		reject("concurrency", &dialect.Error{Status: http.StatusTooManyRequests, Type: "rate_limit_error",
			Message: fmt.Sprintf("hookhost is already serving server.max_concurrent (%d) requests; retry shortly", cap(s.sem))})
		return
	}
	s.metrics.inFlight.Inc()
	defer s.metrics.inFlight.Dec()

	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		reject("content_type", &dialect.Error{Status: http.StatusUnsupportedMediaType, Type: "invalid_request_error",
			Message: fmt.Sprintf("Content-Type is %q; send the request body as application/json", r.Header.Get("Content-Type"))})
		return
	}
	tooLarge := &dialect.Error{Status: http.StatusRequestEntityTooLarge, Type: "request_too_large",
		Message: fmt.Sprintf("the request body is over server.max_body_size (%d bytes); send less, or raise server.max_body_size", s.p.server.MaxBodySize)}
	if r.ContentLength > s.p.server.MaxBodySize {
		reject("too_large", tooLarge)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w.ResponseWriter, r.Body, s.p.server.MaxBodySize))
	if err != nil {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			reject("too_large", tooLarge)
			return
		}
		// The client stopped sending (or server.read_timeout passed);
		// it may still be there to read why.
		reject("read", dialect.Invalid("", "the request body could not be read to its end: "+err.Error()))
		return
	}

	ctx, cancel := context.WithTimeout(r.Context(), s.p.server.RequestTimeout)
	defer cancel()
	r = r.WithContext(ctx)

	if s.p.route != hooks.RouteGateway && s.proxies(f) {
		w.route = string(hooks.RouteBypass)
		var head struct {
			Model json.RawMessage `json:"model"`
		}
		if err := json.Unmarshal(body, &head); err != nil {
			reject("bad_request", dialect.Invalid("", "the request body is not a JSON object: "+err.Error()))
			return
		}
		var model string
		if len(head.Model) > 0 && json.Unmarshal(head.Model, &model) != nil {
			reject("bad_request", dialect.Invalid("model", "model must be a string"))
			return
		}
		if e := s.knownModel(model); e != nil {
			reject("unknown_model", e)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		s.proxy.ServeHTTP(w, r)
		return
	}

	if s.p.server.ForwardClientKey {
		// The provider sends this key instead of its own and keeps it
		// out of its errors; a client with none must not run on
		// hookhost's account when the configuration says it should not.
		key := presentedKey(r)
		if key == "" {
			reject("no_client_key", &dialect.Error{Status: http.StatusUnauthorized, Type: "authentication_error",
				Message: "server.forward_client_key is on: send your own provider key (Authorization: Bearer <key> or x-api-key: <key>), which hookhost sends upstream"})
			return
		}
		ctx = llm.WithAPIKey(ctx, key)
		r = r.WithContext(ctx)
	}

	run := s.p.plain
	w.route = string(hooks.RouteBypass)
	if s.p.route == hooks.RouteGateway {
		run, w.route = s.p.hooked, string(hooks.RouteGateway)
	}
	call, err := f.Decode(body)
	if err != nil {
		var e *dialect.Error
		if !errors.As(err, &e) {
			e = dialect.Invalid("", err.Error())
		}
		reject("bad_request", e)
		return
	}
	call.Tenant = tenant(r)
	if e := s.knownModel(call.Request.Model); e != nil {
		reject("unknown_model", e)
		return
	}

	fail := func(err error, sink dialect.Sink) {
		e, toolsRan := s.toClient(r, ctx, err)
		if e == nil {
			return
		}
		if s.p.server.ForwardClientKey {
			e = clientKeyRefused(err, e)
		}
		if sink != nil && sink.Started() {
			sink.Fail(e)
			return
		}
		if toolsRan {
			// A plugin tool's side effects are done: an SDK that
			// retries on 5xx would run them again.
			w.Header().Set("X-Should-Retry", "false")
		}
		writeError(w, render, e)
	}

	if call.Stream {
		tokens := max(1, len(body)/4)
		sink := f.NewStream(w, call, dialect.Meta{Model: call.Request.Model, InputTokens: tokens})
		if _, err := run.Run(ctx, f, call, sink); err != nil {
			fail(err, sink)
		}
		return
	}
	res, err := run.Run(ctx, f, call, nil)
	if err != nil {
		fail(err, nil)
		return
	}
	out, err := f.Encode(call, res)
	if err != nil {
		s.log.Error("encoding an answer failed", "path", r.URL.Path, "error", err)
		writeError(w, render, apiError(http.StatusInternalServerError, "hookhost could not encode the answer (a host error, logged on the server): "+err.Error()))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	w.Write(out)
}

// presentedKey is the key the client authenticated with, as the official
// SDKs send it: x-api-key (Anthropic's) or Authorization: Bearer
// (OpenAI's).
func presentedKey(r *http.Request) string {
	if k := strings.TrimSpace(r.Header.Get("X-Api-Key")); k != "" {
		return k
	}
	if a := r.Header.Get("Authorization"); len(a) > 7 && strings.EqualFold(a[:7], "bearer ") {
		return strings.TrimSpace(a[7:])
	}
	return ""
}

// clientKeyRefused is e, unless the upstream refused the credentials: with
// server.forward_client_key those are the client's own, so the client gets
// the upstream's 401 or 403 rather than a 502 about hookhost's key.
func clientKeyRefused(err error, e *dialect.Error) *dialect.Error {
	var pe *llm.ProviderError
	if !errors.As(err, &pe) || (pe.StatusCode != http.StatusUnauthorized && pe.StatusCode != http.StatusForbidden) {
		return e
	}
	msg := pe.Message
	if msg == "" {
		msg = pe.Error()
	}
	typ := "authentication_error"
	if pe.StatusCode == http.StatusForbidden {
		typ = "permission_error"
	}
	return &dialect.Error{Status: pe.StatusCode, Type: typ,
		Message: fmt.Sprintf("the upstream provider refused your key (server.forward_client_key sends it in place of hookhost's; HTTP %d): %s", pe.StatusCode, msg)}
}
