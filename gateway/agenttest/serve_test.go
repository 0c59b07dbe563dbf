package agenttest

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookhost/hookhost/gateway/internal/servetest"
)

// Set by TestMain: where hookhost and the plugins were built, or why they
// could not be.
var (
	binDir   string
	buildErr error
)

func TestMain(m *testing.M) { os.Exit(runMain(m)) }

func runMain(m *testing.M) int {
	binDir, buildErr = servetest.Build("hookhost-agenttest", map[string]string{
		"hookhost": "github.com/hookhost/hookhost/cmd/hookhost",
		"lookup":   "github.com/hookhost/hookhost/gateway/clienttest/internal/lookup",
		"guard":    "github.com/hookhost/hookhost/examples/guard",
		"kora":     "github.com/hookhost/hookhost/plugins/kora",
	})
	defer os.RemoveAll(binDir)
	return m.Run()
}

// The keys the tests use: the one hookhost sends upstream, and the one the
// client presents.
const (
	upstreamKeyEnv = "AGENTTEST_UPSTREAM_KEY"
	upstreamKey    = "sk-upstream-0123456789"
	clientKey      = "sk-client-9876543210"
)

// serve starts hookhost serve with config text cfg, on the gateway route,
// on a free loopback port, and stops it with SIGTERM when the test ends,
// checking that it exits cleanly.
func serve(t *testing.T, cfg string) *servetest.Server {
	t.Helper()
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return servetest.StartWithConfig(t, filepath.Join(binDir, "hookhost"), cfg,
		append(environ(), "HOOKHOST_USE_GATEWAY=true", upstreamKeyEnv+"="+upstreamKey))
}

// environ is this process's environment without what would change the
// route, point a client elsewhere or leak a real key into the children.
func environ() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case name == "HOOKHOST_USE_GATEWAY",
			strings.HasPrefix(name, "OPENAI_"), strings.HasPrefix(name, "ANTHROPIC_"),
			strings.HasPrefix(name, "CLAUDE_"), strings.HasPrefix(name, "CODEX_"), strings.HasPrefix(name, "OPENCODE"):
			continue
		}
		env = append(env, kv)
	}
	return env
}

// exchange is one HTTP request a client sent to hookhost and the status it
// got; the answer's body is kept only when it is an error.
type exchange struct {
	Method string
	Path   string
	Header http.Header
	Body   []byte
	Status int
	Answer []byte
}

// recorder is a reverse proxy in front of hookhost that keeps every
// request a client sends, so a test sees exactly what the client put on
// the wire and what hookhost said to it.
type recorder struct {
	srv     *httptest.Server
	mu      sync.Mutex
	ex      []exchange
	pending int // requests whose answer is still being written
}

func record(t *testing.T, target string) *recorder {
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(u)
	proxy.FlushInterval = -1
	r := &recorder{}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(body))
		// The request is kept as it arrives, not once its answer is
		// written: a CLI may exit on the answer's last byte, before this
		// handler returns, and the test must still see what it sent.
		r.mu.Lock()
		i := len(r.ex)
		r.ex = append(r.ex, exchange{Method: req.Method, Path: req.URL.Path, Header: req.Header.Clone(), Body: body})
		r.pending++
		r.mu.Unlock()
		cw := &capture{ResponseWriter: w}
		proxy.ServeHTTP(cw, req)
		r.mu.Lock()
		r.ex[i].Status, r.ex[i].Answer = cw.status, cw.errBody.Bytes()
		r.pending--
		r.mu.Unlock()
	}))
	t.Cleanup(r.srv.Close)
	return r
}

// exchanges is every request sent so far, each with its answer's status
// once the proxy has finished answering it. It waits a while for answers
// still being written, so that a status read after the CLI exited is
// final.
func (r *recorder) exchanges() []exchange {
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		r.mu.Lock()
		if r.pending == 0 || time.Now().After(deadline) {
			defer r.mu.Unlock()
			return append([]exchange(nil), r.ex...)
		}
		r.mu.Unlock()
	}
}

// capture passes a response through, keeping its status and, for an
// error, its body.
type capture struct {
	http.ResponseWriter
	status  int
	errBody bytes.Buffer
}

func (c *capture) WriteHeader(code int) {
	if c.status == 0 {
		c.status = code
	}
	c.ResponseWriter.WriteHeader(code)
}

func (c *capture) Write(p []byte) (int, error) {
	if c.status == 0 {
		c.status = http.StatusOK
	}
	if c.status >= 400 && c.errBody.Len() < 64<<10 {
		c.errBody.Write(p)
	}
	return c.ResponseWriter.Write(p)
}

func (c *capture) Flush() {
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
