package gateway

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"

	"github.com/hookhost/hookhost/internal/dialect"
	"github.com/hookhost/hookhost/internal/redact"
	"github.com/hookhost/hookhost/llm"
)

// proxies reports whether the bypass route sends f's requests upstream as
// they came: the upstream speaks f's protocol over HTTP (OpenAI's API
// serves both Chat Completions and Responses whichever one llm.api picks).
func (s *Server) proxies(f dialect.Front) bool {
	if s.proxy == nil {
		return false
	}
	info, ok := llm.LookupProvider(s.p.upstream.Provider)
	return ok && info.Speaks(f.Protocol())
}

// credentialHeaders are the ones a client authenticates with; they are
// never sent upstream unless server.forward_client_key says so.
var credentialHeaders = []string{"Authorization", "X-Api-Key"}

func isCredential(name string) bool {
	for _, c := range credentialHeaders {
		if strings.EqualFold(name, c) {
			return true
		}
	}
	return false
}

// newProxy returns the bypass route's transparent proxy, or nil when the
// upstream is not reached over HTTP (offline).
func (s *Server) newProxy() (*httputil.ReverseProxy, error) {
	up := s.p.upstream
	info, ok := llm.LookupProvider(up.Provider)
	if up.BaseURL == "" || !ok || len(info.Protocols) == 0 {
		return nil, nil
	}
	// A provider whose own API root ends in the version (OpenAI's
	// https://api.openai.com/v1) takes paths without it.
	trimVersion := strings.HasSuffix(info.DefaultBaseURL, "/v1")
	base, err := url.Parse(strings.TrimSuffix(up.BaseURL, "/"))
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return nil, errors.New("config: llm.base_url: the upstream's base URL must be an http or https URL with a host")
	}
	transport := s.p.transport
	if transport == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		// Every request goes to the one upstream host; keep as many
		// connections to it as requests may run at once.
		t.MaxIdleConnsPerHost = cap(s.sem)
		// The bytes go through as they came, compressed or not.
		t.DisableCompression = true
		transport = t
	}
	forward := s.p.server.ForwardClientKey
	keys := upstreamKeys(up.Header)
	return &httputil.ReverseProxy{
		Transport: transport,
		// No periodic flush: ReverseProxy flushes event streams and
		// bodies of unknown length after every write anyway, and a
		// body whose length is known goes out whole, headers and
		// bytes in one write, when the handler returns.
		FlushInterval: 0,
		BufferPool:    copyBuffers,
		ErrorLog:      s.log.StandardLogger(nil),
		Rewrite: func(pr *httputil.ProxyRequest) {
			path := pr.In.URL.Path
			if trimVersion {
				path = strings.TrimPrefix(path, "/v1")
			}
			out := *base
			out.Path = base.Path + path
			out.RawPath = ""
			out.RawQuery = pr.In.URL.RawQuery
			pr.Out.URL = &out
			pr.Out.Host = ""
			// hookhost has read the whole body already: an Expect
			// passed on would only bring back a 100 from upstream.
			pr.Out.Header.Del("Expect")
			// Cookies are for hookhost's own origin, never the
			// provider's.
			pr.Out.Header.Del("Cookie")
			// A compressed answer could not be searched for the key
			// below; the client gets the same content uncompressed.
			pr.Out.Header.Del("Accept-Encoding")
			if !forward {
				for _, c := range credentialHeaders {
					pr.Out.Header.Del(c)
				}
			}
			for k, v := range up.Header {
				if forward && isCredential(k) {
					continue
				}
				pr.Out.Header[http.CanonicalHeaderKey(k)] = append([]string(nil), v...)
			}
		},
		ModifyResponse: func(resp *http.Response) error {
			if resp.StatusCode >= 300 && resp.StatusCode < 400 {
				// Passed on, it would send the client, and what it
				// sends, to wherever the upstream points.
				resp.Body.Close()
				return &redirected{status: resp.StatusCode}
			}
			secrets := keys
			if forward {
				secrets = append(secrets[:len(secrets):len(secrets)], presentedKey(resp.Request))
			}
			hideKeys(resp, secrets)
			if asked, ok := askedModel(resp.Request.Context()); ok {
				renameModels(resp, asked)
			}
			noteUsage(resp)
			return nil
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if clientGone(r) {
				return
			}
			render := plainErrors(r)
			if f, ok := s.fronts[r.URL.Path]; ok {
				render = f.ErrorBody
			}
			var rd *redirected
			if errors.As(err, &rd) {
				s.log.Warn("the upstream answered with a redirect, which is not followed", "path", r.URL.Path, "status", rd.status)
				writeError(w, render, apiError(http.StatusBadGateway, fmt.Sprintf("the upstream provider answered with a redirect (HTTP %d), which hookhost does not follow or pass on: it would send the conversation elsewhere; llm.base_url must be the address that answers", rd.status)))
				return
			}
			if errors.Is(r.Context().Err(), context.DeadlineExceeded) {
				writeError(w, render, timeoutError(s.p.server.RequestTimeout))
				return
			}
			// The error names the upstream's URL, which is the
			// server's business: the log has it, the client the kind.
			s.log.Warn("the upstream could not be reached", "path", r.URL.Path, "error", err)
			writeError(w, render, apiError(http.StatusBadGateway, "the upstream provider could not be reached ("+failureKind(err)+"; details in the server log)"))
		},
	}, nil
}

// redirected is the proxy's failure when the upstream answers with a
// redirect.
type redirected struct{ status int }

func (r *redirected) Error() string {
	return fmt.Sprintf("the upstream redirected (HTTP %d)", r.status)
}

// upstreamKeys are the credentials hookhost sends upstream, as the
// upstream may echo them: the header values and the bare keys in them.
func upstreamKeys(h http.Header) []string {
	var keys []string
	for name, vs := range h {
		if !isCredential(name) {
			continue
		}
		for _, v := range vs {
			keys = append(keys, v)
			if len(v) > 7 && strings.EqualFold(v[:7], "bearer ") {
				keys = append(keys, strings.TrimSpace(v[7:]))
			}
		}
	}
	return keys
}

// hideKeys masks keys out of a proxied response's headers and body, in
// every form the upstream may echo them: as they are, or with JSON
// escapes. The mask has the key's length, so a response with no key in
// it passes byte for byte and Content-Length stays true.
func hideKeys(resp *http.Response, keys []string) {
	for name, vs := range resp.Header {
		for i, v := range vs {
			if !mayHoldKey(v, keys) {
				continue
			}
			b := []byte(v)
			if redact.Mask(b, keys...) {
				resp.Header[name][i] = string(b)
			}
		}
	}
	resp.Body = redact.NewReader(resp.Body, keys...)
}

// mayHoldKey is false when v cannot hold any of keys in a form Mask
// finds: with no backslash, only a key written as it is, so a value that
// contains none needs no copy to be masked. Most headers (Date,
// Content-Type, Content-Length) are such.
func mayHoldKey(v string, keys []string) bool {
	if strings.IndexByte(v, '\\') >= 0 {
		return true
	}
	for _, k := range keys {
		if k != "" && strings.Contains(v, k) {
			return true
		}
	}
	return false
}

// copyBuffers lends the proxy its copy buffers; without a pool it
// allocates 32 KiB for every proxied response.
var copyBuffers = &bufferPool{pool: sync.Pool{New: func() any { return make([]byte, 32<<10) }}}

type bufferPool struct{ pool sync.Pool }

func (p *bufferPool) Get() []byte  { return p.pool.Get().([]byte) }
func (p *bufferPool) Put(b []byte) { p.pool.Put(b) }

var _ httputil.BufferPool = (*bufferPool)(nil)
