package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/dialect"
	"github.com/hookhost/hookhost/internal/rawjson"
	"github.com/hookhost/hookhost/internal/upstream"
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

	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		reject("content_type", &dialect.Error{Status: http.StatusUnsupportedMediaType, Type: "invalid_request_error",
			Message: fmt.Sprintf("Content-Type is %q; send the request body as application/json", r.Header.Get("Content-Type"))})
		return
	}
	// The body is read before a concurrency slot is taken: a client that
	// sends it slowly then holds only its share of the byte budget, not a
	// slot that requests ready to run need.
	body, release, reason, e := s.readBody(w, r)
	if e != nil {
		reject(reason, e)
		return
	}
	defer release()

	// Limits are checked before anything goes upstream, and before a
	// slot is taken, so that a key over its budget holds none.
	var (
		used    hooks.Usage
		settled bool
		counted bool
	)
	if s.limits != nil {
		a, e := s.limits.admit(r.Context(), w, keyOf(r.Context()), body)
		if e != nil {
			reject("limit", e)
			return
		}
		counted = a.counted
		// A request that ends without usage (an error, an answer that
		// reports none) keeps its estimate.
		defer func() {
			if settled {
				s.limits.settle(r.Context(), a, used)
			}
		}()
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

	ctx, cancel := context.WithTimeout(r.Context(), s.p.server.RequestTimeout)
	defer cancel()
	r = r.WithContext(ctx)

	if s.p.route != hooks.RouteGateway && s.proxies(f) {
		w.route = string(hooks.RouteBypass)
		model, e := topLevelModel(body)
		if e != nil {
			reject("bad_request", e)
			return
		}
		if e := s.knownModel(model); e != nil {
			reject("unknown_model", e)
			return
		}
		if target, ok := s.upstreamModel(model); ok {
			renamed, err := setModel(body, target)
			if err != nil {
				reject("bad_request", dialect.Invalid("model", "the request's model could not be replaced by its alias's target: "+err.Error()))
				return
			}
			body = renamed
			r = r.WithContext(context.WithValue(ctx, aliasKey{}, model))
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		if !counted {
			s.proxy.ServeHTTP(w, r)
			return
		}
		note := &usageNote{}
		s.proxy.ServeHTTP(w, r.WithContext(withUsageNote(r.Context(), note)))
		used, settled = note.result()
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
	body, turn, releaseState, e := s.resolveState(ctx, w, r, f, body)
	if e != nil {
		reject(stateReason(e), e)
		return
	}
	defer releaseState()
	size := len(body)
	call, err := f.Decode(body)
	// The decoded call is all that is needed from here on; the bytes are
	// not kept alive while the answer takes minutes.
	body = nil
	if err != nil {
		var e *dialect.Error
		if !errors.As(err, &e) {
			e = dialect.Invalid("", err.Error())
		}
		reject("bad_request", e)
		return
	}
	call.Tenant = tenant(r)
	if call.Pass != nil {
		// Only an upstream of the front's protocol sends them; the
		// allowlist keeps credentials, cookies and hop-by-hop headers out.
		call.Pass.Header = upstream.FeatureHeader(f.Protocol(), r.Header)
	}
	turn.Bind(call)
	dropHeaders(r.Header, f, call)
	if e := s.knownModel(call.Request.Model); e != nil {
		reject("unknown_model", e)
		return
	}
	// Hooks and the upstream see the model that answers; the client, the
	// name it asked for.
	asked := call.Request.Model
	if target, ok := s.upstreamModel(asked); ok {
		call.Request.Model = target
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
		} else if wait := upstreamRetryAfter(err); wait > 0 {
			// The SDKs wait as long as the upstream asked before they
			// retry, so its rate limit is not hit again at once.
			w.Header().Set("Retry-After", strconv.FormatInt(int64((wait+time.Second-1)/time.Second), 10))
		}
		writeError(w, render, e)
	}

	if call.Stream {
		tokens := max(1, size/4)
		sink := f.NewStream(w, call, dialect.Meta{Model: asked, InputTokens: tokens})
		res, err := run.Run(ctx, f, call, sink)
		if err != nil {
			fail(err, sink)
			return
		}
		if res != nil {
			used, settled = res.Usage, true
		}
		s.keptState(turn)
		return
	}
	res, err := run.Run(ctx, f, call, nil)
	if err != nil {
		fail(err, nil)
		return
	}
	used, settled = res.Usage, true
	res.Model = asked
	out, err := f.Encode(call, res)
	if err != nil {
		s.log.Error("encoding an answer failed", "path", r.URL.Path, "error", err)
		writeError(w, render, apiError(http.StatusInternalServerError, "hookhost could not encode the answer (a host error, logged on the server): "+err.Error()))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	w.Write(out)
	s.keptState(turn)
}

// dropHeaders names in call.Dropped the hint headers of f's field table
// that the request holds: headers never reach Decode. A row's header name
// may end in "*", for a family of headers (x-stainless-*).
func dropHeaders(h http.Header, f dialect.Front, call *dialect.Call) {
	for _, row := range hintHeadersOf(f) {
		if row.family {
			for k := range h {
				if len(k) >= len(row.name) && strings.EqualFold(k[:len(row.name)], row.name) {
					call.Drop(row.path)
					break
				}
			}
		} else if h.Get(row.name) != "" {
			call.Drop(row.path)
		}
	}
}

// hintHeader is a hint row of a front's field table that names a header:
// its path, the header's name (a prefix when family), and whether it names
// a family of headers.
type hintHeader struct {
	path, name string
	family     bool
}

// hintHeaders keeps each front's hint header rows: Fields hands out a
// fresh copy of the whole table, too much to make per request.
var hintHeaders sync.Map // dialect.Front → []hintHeader

func hintHeadersOf(f dialect.Front) []hintHeader {
	if rows, ok := hintHeaders.Load(f); ok {
		return rows.([]hintHeader)
	}
	var rows []hintHeader
	for _, row := range f.Fields() {
		name, ok := strings.CutPrefix(row.Path, "header: ")
		if !ok || row.Handling != dialect.Hint {
			continue
		}
		prefix, family := strings.CutSuffix(name, "*")
		rows = append(rows, hintHeader{path: row.Path, name: prefix, family: family})
	}
	got, _ := hintHeaders.LoadOrStore(f, rows)
	return got.([]hintHeader)
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

// readBody reads r's body within server.max_body_size and the server's
// budget of body bytes held at once. On success release gives the bytes
// back to the budget; otherwise the client is told why (reason names the
// rejection in the metrics).
func (s *Server) readBody(w *recorder, r *http.Request) (body []byte, release func(), reason string, e *dialect.Error) {
	limit := s.p.server.MaxBodySize
	tooLarge := &dialect.Error{Status: http.StatusRequestEntityTooLarge, Type: "request_too_large",
		Message: fmt.Sprintf("the request body is over server.max_body_size (%d bytes); send less, or raise server.max_body_size", limit)}
	busy := func() *dialect.Error {
		// Bodies held now are released as their requests end, within
		// seconds for most.
		w.Header().Set("Retry-After", "1")
		return &dialect.Error{Status: http.StatusTooManyRequests, Type: "rate_limit_error",
			Message: fmt.Sprintf("hookhost already holds server.max_body_bytes_in_flight (%d bytes) of request bodies; retry shortly", s.budget.limit)}
	}
	if r.ContentLength > limit {
		return nil, nil, "too_large", tooLarge
	}
	// The budget is taken as bytes arrive, never from the announced
	// length: a client that announces the largest body and sends nothing
	// holds nothing, and cannot lock the others out until read_timeout.
	in := &budgetReader{r: http.MaxBytesReader(w.ResponseWriter, r.Body, limit), budget: s.budget}
	release = func() { s.budget.release(in.held) }
	body, err := readAtMost(in, r.ContentLength)
	if err != nil {
		release()
		var mb *http.MaxBytesError
		switch {
		case errors.As(err, &mb):
			return nil, nil, "too_large", tooLarge
		case errors.Is(err, errOverBudget):
			return nil, nil, "body_budget", busy()
		}
		// The client stopped sending (or server.read_timeout passed);
		// it may still be there to read why. The error's own text names
		// the sockets, which are no business of the client's.
		return nil, nil, "read", dialect.Invalid("", "the request body could not be read to its end: "+bodyFailure(err))
	}
	return body, release, "", nil
}

// firstRead is how much a body's buffer holds before it grows: enough for
// most requests, little for one that announces more than it sends.
const firstRead = 64 << 10

// readAtMost reads src to its end. The buffer grows by doubling as bytes
// arrive, up to the announced length (when one is known, -1 if not), so a
// body that arrives whole ends in a buffer of exactly its size, and one
// announced but never sent costs no more than what came.
func readAtMost(src io.Reader, announced int64) ([]byte, error) {
	size := int64(firstRead)
	if announced >= 0 {
		size = min(size, announced)
	}
	buf := make([]byte, 0, size)
	for {
		if len(buf) == cap(buf) {
			if announced >= 0 && int64(len(buf)) >= announced {
				// Everything announced is here: what follows should be
				// the end, which needs no room.
				var probe [1]byte
				n, err := src.Read(probe[:])
				buf = append(buf, probe[:n]...)
				if err == io.EOF {
					return buf, nil
				}
				if err != nil {
					return nil, err
				}
				continue
			}
			grow := max(int64(cap(buf))*2, firstRead)
			if announced > int64(len(buf)) {
				grow = min(grow, announced)
			}
			next := make([]byte, len(buf), grow)
			copy(next, buf)
			buf = next
		}
		n, err := src.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// bodyFailure says why a body could not be read, in words that carry no
// socket address.
func bodyFailure(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return "it was truncated (the connection closed before the length announced in Content-Length, or before the last chunk)"
	case errors.As(err, &ne) && ne.Timeout():
		return "timeout (server.read_timeout passed before the whole body arrived)"
	case errors.Is(err, http.ErrBodyReadAfterClose):
		return "the body was closed before it was read"
	}
	return "the connection failed while it was being sent (a network error, or a malformed chunked encoding)"
}

// topLevelModel is the body's top-level "model", read key by key as the
// upstream will read it. encoding/json matches keys ignoring case and keeps
// the last of several, so {"model":"x","MODEL":"y"} would pass a check of
// "y" and reach the upstream as "x"; such a body is refused instead.
//
// The bypass route needs nothing else from the body, so a valid one is
// read in one pass (rawjson.EachMember), with no copy of its values; an
// invalid one is read again by topLevelModelSlow only to say what is
// wrong with it.
func topLevelModel(body []byte) (string, *dialect.Error) {
	var (
		model string
		seen  bool
		bad   *dialect.Error
	)
	object := rawjson.EachMember(body, func(name string, value json.RawMessage) bool {
		switch {
		case name == "model" && seen:
			bad = dialect.Invalid("model", "model is given twice; send it once")
		case name == "model":
			seen = true
			if json.Unmarshal(value, &model) != nil {
				bad = dialect.Invalid("model", "model must be a string")
			}
		case strings.EqualFold(name, "model"):
			bad = dialect.Invalid(name, fmt.Sprintf("the key %q differs from \"model\" only in case; send \"model\" alone", name))
		}
		return bad == nil
	})
	switch {
	case bad != nil:
		return "", bad
	case !object:
		return topLevelModelSlow(body)
	}
	return model, nil
}

// topLevelModelSlow is topLevelModel token by token, which says where and
// why a body that is not a JSON object fails.
func topLevelModelSlow(body []byte) (string, *dialect.Error) {
	notObject := func(err error) *dialect.Error {
		return dialect.Invalid("", "the request body is not a JSON object: "+err.Error())
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	tok, err := dec.Token()
	if err != nil {
		return "", notObject(err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return "", dialect.Invalid("", "the request body is not a JSON object")
	}
	var model string
	seen := false
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return "", notObject(err)
		}
		key, _ := tok.(string)
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return "", notObject(err)
		}
		switch {
		case key == "model" && seen:
			return "", dialect.Invalid("model", "model is given twice; send it once")
		case key == "model":
			seen = true
			if json.Unmarshal(value, &model) != nil {
				return "", dialect.Invalid("model", "model must be a string")
			}
		case strings.EqualFold(key, "model"):
			return "", dialect.Invalid(key, fmt.Sprintf("the key %q differs from \"model\" only in case; send \"model\" alone", key))
		}
	}
	if _, err := dec.Token(); err != nil {
		return "", notObject(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return "", dialect.Invalid("", "the request body has data after its JSON object")
	}
	return model, nil
}

// upstreamRetryAfter is the delay the upstream asked for with the error
// that ended the request, 0 when it asked for none.
func upstreamRetryAfter(err error) time.Duration {
	var pe *llm.ProviderError
	if errors.As(err, &pe) {
		return pe.RetryAfter
	}
	return 0
}
