package gateway

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"syscall"

	"github.com/hookhost/hookhost/internal/codec"
	"github.com/hookhost/hookhost/internal/codec/messages"
	"github.com/hookhost/hookhost/internal/dialect"
	"github.com/hookhost/hookhost/internal/relay"
	"github.com/hookhost/hookhost/llm"
)

// renderer writes an error in the shape its client expects: the
// endpoint's front, or for paths that have none, OpenAI's shape unless
// the client announced itself as an Anthropic one.
type renderer func(e *dialect.Error) []byte

func plainErrors(r *http.Request) renderer {
	if r.Header.Get("anthropic-version") != "" {
		return messages.ErrorBody
	}
	return codec.OpenAIErrorBody
}

// writeError sends e as a whole JSON response.
func writeError(w http.ResponseWriter, render renderer, e *dialect.Error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.Status)
	w.Write(render(e))
}

// clientGone reports whether a request ended because its client went
// away, as opposed to its deadline passing: then there is no one to tell.
func clientGone(r *http.Request) bool {
	return errors.Is(context.Cause(r.Context()), context.Canceled)
}

// toClient turns a failure of the hook loop into what its client is told,
// and whether a plugin tool had already run. A nil error means nothing
// should be written (the client is gone).
func (s *Server) toClient(r *http.Request, ctx context.Context, err error) (*dialect.Error, bool) {
	toolsRan := false
	var re *relay.Error
	if errors.As(err, &re) {
		toolsRan = re.ToolsRan
	}
	var de *dialect.Error
	var pe *llm.ProviderError
	switch {
	case errors.As(err, &de):
		return de, toolsRan
	case errors.Is(ctx.Err(), context.DeadlineExceeded) && !clientGone(r):
		return timeoutError(s.p.server.RequestTimeout), toolsRan
	case clientGone(r):
		return nil, toolsRan
	case errors.As(err, &pe):
		if pe.StatusCode == 0 {
			s.log.Warn("the upstream gave no usable answer", "path", r.URL.Path, "error", err)
		}
		return providerError(pe), toolsRan
	}
	s.log.Error("request failed inside hookhost", "path", r.URL.Path, "error", err)
	return &dialect.Error{Status: http.StatusInternalServerError, Type: "api_error",
		Message: "hookhost failed to answer (a host error, logged on the server): " + err.Error()}, toolsRan
}

func timeoutError(limit any) *dialect.Error {
	return &dialect.Error{Status: http.StatusGatewayTimeout, Type: "timeout_error",
		Message: fmt.Sprintf("the request ran past server.request_timeout (%v) before the answer was complete; retry, or raise server.request_timeout", limit)}
}

// providerError keeps an upstream failure's status and message, with the
// type clients branch on. A 401 or 403 from upstream is about hookhost's
// credentials, not the client's, so the client gets a 502 that says so.
func providerError(pe *llm.ProviderError) *dialect.Error {
	msg := pe.Message
	if msg == "" {
		msg = pe.Error()
	}
	e := &dialect.Error{Status: pe.StatusCode}
	switch st := pe.StatusCode; {
	case st == 0:
		e.Status, e.Type = http.StatusBadGateway, "api_error"
		// The message is hookhost's own wording; the cause underneath
		// may carry the upstream's internal URL, so only its kind is
		// shown.
		what := failureKind(pe.Err)
		if pe.Message != "" && pe.Err != nil {
			what = pe.Message + ": " + what
		} else if pe.Message != "" {
			what = pe.Message
		}
		e.Message = "the upstream provider gave no usable answer (" + what + "; details in the server log)"
		return e
	case st == http.StatusUnauthorized || st == http.StatusForbidden:
		e.Status, e.Type = http.StatusBadGateway, "api_error"
		e.Message = fmt.Sprintf("the upstream provider refused hookhost's credentials (HTTP %d: %s); check the key named by llm.api_key_env, or server.forward_client_key", st, msg)
		return e
	case st == http.StatusTooManyRequests:
		e.Type = "rate_limit_error"
	case st == 529 || st == http.StatusServiceUnavailable:
		e.Type = "overloaded_error"
	case st >= 400 && st < 500:
		e.Type = "invalid_request_error"
	case st >= 500 && st < 600:
		e.Type = "api_error"
	default:
		e.Status, e.Type = http.StatusBadGateway, "api_error"
	}
	e.Message = "upstream provider: " + msg
	return e
}

// failureKind names what went wrong on the way to the upstream without
// the error's own text, which carries the upstream's internal URL.
func failureKind(err error) string {
	var dns *net.DNSError
	var ne net.Error
	var tlsErr *tls.RecordHeaderError
	var certErr *tls.CertificateVerificationError
	var syn *json.SyntaxError
	switch {
	case err == nil:
		return "no answer"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET):
		return "the connection closed before a complete answer"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.As(err, &dns):
		return "its host name did not resolve"
	case errors.As(err, &tlsErr), errors.As(err, &certErr):
		return "the TLS handshake failed"
	case errors.As(err, &ne) && ne.Timeout():
		return "timed out"
	case errors.As(err, &syn):
		return "the answer was not valid JSON"
	}
	return "a network or protocol error"
}
