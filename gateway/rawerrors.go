package gateway

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/hookhost/hookhost/internal/codec"
	"github.com/hookhost/hookhost/internal/codec/messages"
	"github.com/hookhost/hookhost/internal/dialect"
)

// net/http answers some requests itself, before any handler runs: headers
// over MaxHeaderBytes (431), a Transfer-Encoding it does not read (501),
// malformed header bytes or request lines (400). It writes those answers
// as plain text straight on the connection, which no SDK can read as an
// error, and one of them is a 5xx that SDKs retry. http.Server has no hook
// for them, so the listener's connections recognise them as they are
// written and write them again as a 4xx in the error shape of the endpoint
// the request was sent to.

// netHTTPErrorHeaders are the headers net/http writes, and only there,
// after the status line of an answer it gives itself. A handler's answer
// cannot carry them in this order followed by the blank line: net/http
// writes a Date after Connection.
const netHTTPErrorHeaders = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"

// requestHeadKept is how much of a request's start a connection keeps to
// find the path and the anthropic-version header in.
const requestHeadKept = 8 << 10

// shapingListener hands out connections that reshape net/http's own
// error answers.
type shapingListener struct {
	net.Listener
	s *Server
}

func (l *shapingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &shapingConn{Conn: c, s: l.s}, nil
}

// shapingConn keeps the start of what it read since it last wrote (the
// head of the request being read), and rewrites net/http's own error
// answers.
type shapingConn struct {
	net.Conn
	s    *Server
	mu   sync.Mutex
	head []byte
}

func (c *shapingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.mu.Lock()
		if room := requestHeadKept - len(c.head); room > 0 {
			c.head = append(c.head, p[:min(n, room)]...)
		}
		c.mu.Unlock()
	}
	return n, err
}

func (c *shapingConn) Write(b []byte) (int, error) {
	c.mu.Lock()
	head := c.head
	c.head = nil
	c.mu.Unlock()
	if status, detail, ok := netHTTPError(b); ok {
		if _, err := c.Conn.Write(c.s.reshape(head, status, detail)); err != nil {
			return 0, err
		}
		return len(b), nil
	}
	return c.Conn.Write(b)
}

// CloseWrite lets net/http half-close the connection after a 431, so that
// the client can read the answer while it is still sending.
func (c *shapingConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// netHTTPError reports whether b is an answer net/http wrote itself, with
// its status and the detail after the status text ("invalid header name").
func netHTTPError(b []byte) (status int, detail string, ok bool) {
	rest, found := bytes.CutPrefix(b, []byte("HTTP/1.1 "))
	if !found {
		return 0, "", false
	}
	line, body, found := bytes.Cut(rest, []byte(netHTTPErrorHeaders))
	if !found || bytes.Contains(line, []byte("\r\n")) || len(line) < 3 {
		return 0, "", false
	}
	status, err := strconv.Atoi(string(line[:3]))
	if err != nil {
		return 0, "", false
	}
	if _, d, ok := strings.Cut(string(line), ": "); ok {
		detail = d
	} else if status == http.StatusNotImplemented {
		detail = string(body)
	}
	return status, detail, true
}

// reshape is the answer to write instead of net/http's own: a 4xx in the
// error shape of the endpoint named in head, the request as read so far.
func (s *Server) reshape(head []byte, status int, detail string) []byte {
	path, anthropic := requestHead(head)
	render := codec.OpenAIErrorBody
	if f, ok := s.fronts[path]; ok {
		render = f.ErrorBody
	} else if anthropic {
		render = messages.ErrorBody
	}
	e := &dialect.Error{Status: status, Type: "invalid_request_error"}
	switch {
	case status == http.StatusRequestHeaderFieldsTooLarge:
		e.Message = "the request's headers are larger than hookhost accepts (1 MiB in all); send fewer or smaller headers"
	case status == http.StatusNotImplemented:
		// The client's framing, not a missing feature of the server's:
		// a 5xx would only be retried.
		e.Status = http.StatusBadRequest
		e.Message = "the request's Transfer-Encoding is not one hookhost reads: send the body with a Content-Length, or with Transfer-Encoding: chunked alone"
	default:
		if status < 400 || status > 499 {
			e.Status = http.StatusBadRequest
		}
		e.Message = "malformed HTTP request"
		if detail = strings.TrimSpace(detail); detail != "" && len(detail) <= 100 {
			e.Message += " (" + strings.ToValidUTF8(detail, "") + ")"
		}
		e.Message += "; the client sent bytes that are not a valid HTTP/1.1 request"
	}
	s.metrics.rejected.WithLabelValues("malformed").Inc()
	body := render(e)
	return fmt.Appendf(nil, "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
		e.Status, http.StatusText(e.Status), len(body), body)
}

// requestHead reads the path and whether an anthropic-version header was
// sent out of the start of a request; "" when the request line is not
// there to read.
func requestHead(head []byte) (path string, anthropic bool) {
	line, _, _ := bytes.Cut(head, []byte("\r\n"))
	if fields := strings.Fields(string(line)); len(fields) >= 2 {
		path, _, _ = strings.Cut(fields[1], "?")
	}
	anthropic = bytes.Contains(bytes.ToLower(head), []byte("\nanthropic-version:"))
	return path, anthropic
}
