package clienttest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hookhost/hookhost/gateway/internal/servetest"
	"github.com/hookhost/hookhost/internal/testenv"
)

// installCommand is what makes the SDK clients available to these tests.
const installCommand = "cd gateway/clienttest && npm ci --no-audit --no-fund"

// Set by TestMain: where hookhost and the lookup plugin were built, and
// what is missing when the clients cannot run.
var (
	binDir   string
	setupErr error
	missing  clientsNeed
)

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	if missing = clientsMissing(); missing.reason != "" {
		return m.Run()
	}
	binDir, setupErr = servetest.Build("hookhost-clienttest", map[string]string{
		"hookhost": "github.com/hookhost/hookhost/cmd/hookhost",
		"lookup":   "github.com/hookhost/hookhost/gateway/clienttest/internal/lookup",
	})
	defer os.RemoveAll(binDir)
	return m.Run()
}

// npmClients are the packages the tests run, as package.json names them.
var npmClients = []string{
	"openai", "@anthropic-ai/sdk", "ai", "@ai-sdk/openai", "@ai-sdk/anthropic",
	"@langchain/core", "@langchain/openai", "@langchain/anthropic", "@langchain/langgraph", "@openai/agents", "zod",
}

// clientsNeed is what the npm clients lack to run, and what installs it.
type clientsNeed struct{ reason, install, detail string }

// clientsMissing says why the npm clients cannot run; its reason is ""
// when they can.
func clientsMissing() clientsNeed {
	if _, err := exec.LookPath("node"); err != nil {
		return clientsNeed{"node is not on PATH, so the gateway's npm clients cannot run",
			"sudo apt-get install nodejs npm && make clients", err.Error()}
	}
	for _, pkg := range npmClients {
		if _, err := os.Stat(filepath.Join("node_modules", pkg, "package.json")); err != nil {
			return clientsNeed{"the gateway's npm clients are not installed in gateway/clienttest/node_modules",
				"make clients (or: " + installCommand + ")", "the npm client " + pkg + " is missing"}
		}
	}
	return clientsNeed{}
}

// needClients stops a test that cannot run, failing it under CI, which
// installs the clients first (.ci/run runs make test, which runs make
// clients).
func needClients(t *testing.T) {
	t.Helper()
	if missing.reason != "" {
		testenv.Skip(t, missing.reason, missing.install, missing.detail)
	}
	if setupErr != nil {
		t.Fatal(setupErr)
	}
}

// The keys the tests use: the one hookhost sends upstream, and the one the
// client presents (which no upstream may ever see on the gateway route).
const (
	upstreamKeyEnv = "CLIENTTEST_UPSTREAM_KEY"
	upstreamKey    = "sk-upstream-0123456789"
	clientKey      = "sk-client-9876543210"
)

// serve starts hookhost serve with config text cfg on a free loopback port,
// on the gateway route or the bypass one, and stops it with SIGTERM when
// the test ends, checking that it exits cleanly.
func serve(t *testing.T, cfg string, gateway bool) *servetest.Server {
	t.Helper()
	route := "0"
	if gateway {
		route = "1"
	}
	return servetest.StartWithConfig(t, filepath.Join(binDir, "hookhost"), cfg,
		append(environ(), "HOOKHOST_USE_GATEWAY="+route, upstreamKeyEnv+"="+upstreamKey))
}

// environ is this process's environment without what would change the
// route or leak a real key into the children.
func environ() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "HOOKHOST_USE_GATEWAY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL":
			continue
		}
		env = append(env, kv)
	}
	return env
}

// sdkError is an error an SDK threw, as client.mjs describes it.
type sdkError struct {
	Class   string            `json:"class"`
	Status  int               `json:"status"`
	Message string            `json:"message"`
	Error   json.RawMessage   `json:"error"`
	Headers map[string]string `json:"headers"`
}

// exchange is one HTTP request the SDK made and the raw answer it got.
type exchange struct {
	URL     string            `json:"url"`
	Request *string           `json:"request"`
	Status  int               `json:"status"`
	Headers map[string]string `json:"headers"`
	Body    string            `json:"body"` // one char per byte
}

// bytes is the answer's body as it came over the wire.
func (e exchange) bytes() []byte {
	b := make([]byte, 0, len(e.Body))
	for _, r := range e.Body {
		b = append(b, byte(r))
	}
	return b
}

// outcome is what client.mjs printed.
type outcome struct {
	Result    json.RawMessage `json:"result"`
	Error     *sdkError       `json:"error"`
	Exchanges []exchange      `json:"exchanges"`
	Texts     []string        `json:"texts"`
}

// only returns the single HTTP exchange of a call made without retries.
func (o outcome) only(t *testing.T) exchange {
	t.Helper()
	if len(o.Exchanges) != 1 {
		t.Fatalf("the client made %d HTTP requests, want 1 (retries are off)", len(o.Exchanges))
	}
	return o.Exchanges[0]
}

// ok fails the test when the SDK threw.
func (o outcome) ok(t *testing.T) {
	t.Helper()
	if o.Error != nil {
		var body string
		if len(o.Exchanges) > 0 {
			body = o.Exchanges[len(o.Exchanges)-1].Body
		}
		t.Fatalf("the SDK threw %s (status %d): %s\nlast body: %s", o.Error.Class, o.Error.Status, o.Error.Message, body)
	}
}

// baseURL is what an SDK of kind sdk is given for a server at root.
func baseURL(sdk, root string) string {
	if sdk == messages {
		return root
	}
	return root + "/v1"
}

// runClient makes one call through an SDK: sdk is chat, responses or
// messages; stream picks the accumulating stream helper over create.
func runClient(t *testing.T, root, sdk string, stream bool, params map[string]any) outcome {
	t.Helper()
	scenario, err := json.Marshal(map[string]any{"sdk": sdk, "stream": stream, "params": params})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "client.mjs")
	cmd.Env = append(environ(), "BASE_URL="+baseURL(sdk, root), "API_KEY="+clientKey, "SCENARIO="+string(scenario))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("node client.mjs (%s, stream %v) was still running after 2 minutes\nstderr: %s", sdk, stream, stderr.String())
	}
	var ee *exec.ExitError
	if runErr != nil && !errors.As(runErr, &ee) {
		t.Fatalf("node client.mjs: %v", runErr)
	}
	var out outcome
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("node client.mjs (exit: %v) printed no JSON outcome: %v\nstdout: %s\nstderr: %s", runErr, err, stdout.String(), stderr.String())
	}
	return out
}
