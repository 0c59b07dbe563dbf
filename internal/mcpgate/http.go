package mcpgate

import (
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// httpTransport is the Streamable HTTP transport to a remote server, with
// the spec's headers and bearer token on every request and every answer
// bounded: an event stream's events by the SDK (MaxEventSize), a plain
// JSON answer by the body it may read.
func httpTransport(spec ServerSpec, maxMessage int) (*mcp.StreamableClientTransport, error) {
	headers := http.Header{}
	for k, v := range spec.Headers {
		headers.Set(k, v)
	}
	if spec.BearerTokenEnv != "" {
		tok, ok := os.LookupEnv(spec.BearerTokenEnv)
		if !ok || tok == "" {
			return nil, fmt.Errorf("mcp server %q: bearer_token_env names %s, which is not set in the host's environment (export it before starting hookhost)",
				spec.Name, spec.BearerTokenEnv)
		}
		headers.Set("Authorization", "Bearer "+tok)
	}
	return &mcp.StreamableClientTransport{
		Endpoint:     spec.URL,
		HTTPClient:   &http.Client{Transport: &boundedTransport{base: http.DefaultTransport, headers: headers, limit: int64(maxMessage)}},
		MaxEventSize: maxMessage,
		// The supervisor reconnects; the SDK's own retries would hide a
		// server that is gone.
		MaxRetries: -1,
	}, nil
}

// boundedTransport adds headers to each request and cuts off a JSON answer
// longer than limit.
type boundedTransport struct {
	base    http.RoundTripper
	headers http.Header
	limit   int64
}

func (t *boundedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	for k, v := range t.headers {
		req.Header[k] = v
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "text/event-stream" {
		resp.Body = &limitedBody{rc: resp.Body, left: t.limit}
	}
	return resp, nil
}

// limitedBody fails a read past its limit instead of truncating silently,
// so that a cut answer is an error, not a different answer.
type limitedBody struct {
	rc   io.ReadCloser
	left int64
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// One byte more tells a body of exactly the limit from a longer one.
		var one [1]byte
		if n, _ := b.rc.Read(one[:]); n > 0 {
			return 0, errMessageTooLarge
		}
		return b.rc.Read(p)
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *limitedBody) Close() error { return b.rc.Close() }
