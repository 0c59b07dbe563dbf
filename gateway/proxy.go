package gateway

import (
	"context"
	"errors"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"

	"github.com/hookhost/hookhost/gateway/dialect"
	"github.com/hookhost/hookhost/llm"
)

// proxies reports whether the bypass route sends f's requests upstream as
// they came: the upstream speaks f's protocol over HTTP. OpenAI's API
// serves both Chat Completions and Responses whichever one llm.api picks.
func (s *Server) proxies(f dialect.Front) bool {
	if s.proxy == nil {
		return false
	}
	switch s.p.upstream.Provider {
	case "openai":
		return f.Protocol() == llm.ProtocolChat || f.Protocol() == llm.ProtocolResponses
	case "anthropic":
		return f.Protocol() == llm.ProtocolMessages
	}
	return false
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
	if up.BaseURL == "" || (up.Provider != "openai" && up.Provider != "anthropic") {
		return nil, nil
	}
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
	return &httputil.ReverseProxy{
		Transport:     transport,
		FlushInterval: -1,
		BufferPool:    copyBuffers,
		ErrorLog:      s.log.StandardLogger(nil),
		Rewrite: func(pr *httputil.ProxyRequest) {
			path := pr.In.URL.Path
			if up.Provider == "openai" {
				// OpenAI's base URL carries the /v1 already.
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
			if _, aliased := askedModel(pr.In.Context()); aliased {
				// The response's model names are renamed as they pass,
				// which compressed bytes would not allow.
				pr.Out.Header.Del("Accept-Encoding")
			}
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
			if asked, ok := askedModel(resp.Request.Context()); ok {
				renameModels(resp, asked)
			}
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

// copyBuffers lends the proxy its copy buffers; without a pool it
// allocates 32 KiB for every proxied response.
var copyBuffers = &bufferPool{pool: sync.Pool{New: func() any { return make([]byte, 32<<10) }}}

type bufferPool struct{ pool sync.Pool }

func (p *bufferPool) Get() []byte  { return p.pool.Get().([]byte) }
func (p *bufferPool) Put(b []byte) { p.pool.Put(b) }

var _ httputil.BufferPool = (*bufferPool)(nil)
