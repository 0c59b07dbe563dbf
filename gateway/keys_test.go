package gateway

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hookhost/hookhost/config"
	"github.com/hookhost/hookhost/dispatch"
	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/dialect"
	"github.com/hookhost/hookhost/internal/mcpgate"
)

// envOf is a getenv over vars.
func envOf(vars map[string]string) func(string) string {
	return func(name string) string { return vars[name] }
}

func ptr[T any](v T) *T { return &v }

// The keys of api_key_env are named by position, named keys by their
// table; the handler knows the name of the key a request presented, never
// its secret, and so does the request's log line.
func TestNamedKeysReachTheHandler(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	p := testParts()
	p.server.APIKeyEnv = "HK"
	p.server.Keys = map[string]config.ServerKey{"ci": {Name: "ci", Env: "HK_CI"}}
	p.getenv = envOf(map[string]string{"HK": "secret-one, secret-two", "HK_CI": "secret-ci"})
	p.hooked = runFunc(func(ctx context.Context, f dialect.Front, call *dialect.Call, sink dialect.Sink) (*dialect.Result, error) {
		mu.Lock()
		seen = append(seen, KeyName(ctx))
		mu.Unlock()
		return echo(ctx, f, call, sink)
	})
	s := newTest(t, p)
	for _, tc := range []struct{ header, value string }{
		{"Authorization", "Bearer secret-one"},
		{"x-api-key", "secret-two"},
		{"Authorization", "Bearer secret-ci"},
	} {
		if resp := post(t, s.url, "/v1/chat/completions", chatBody, tc.header, tc.value); resp.StatusCode != 200 {
			t.Fatalf("%s %s: %d %s", tc.header, tc.value, resp.StatusCode, readAll(t, resp))
		} else {
			readAll(t, resp)
		}
	}
	if want := []string{"default-1", "default-2", "ci"}; !slices.Equal(seen, want) {
		t.Fatalf("the handler saw keys %q, want %q", seen, want)
	}
	msg := wantFrontError(t, post(t, s.url, "/v1/chat/completions", chatBody, "Authorization", "Bearer secret-other"), 401, "/v1/chat/completions", "authentication_error")
	if !strings.Contains(msg, "server.keys") {
		t.Errorf("401 message %q does not say where keys are set", msg)
	}
	// A request's line is logged once its answer is out.
	eventually(t, "the log lines to name the keys", func() bool {
		logs := s.logs.String()
		return strings.Contains(logs, "key=ci") && strings.Contains(logs, "key=default-2")
	})
	logs := s.logs.String()
	if strings.Contains(logs, "secret-") {
		t.Errorf("a key's secret reached the log:\n%s", logs)
	}

	// One key in api_key_env is "default".
	p = testParts()
	p.server.APIKeyEnv = "HK"
	p.getenv = envOf(map[string]string{"HK": "only"})
	p.hooked = runFunc(func(ctx context.Context, f dialect.Front, call *dialect.Call, sink dialect.Sink) (*dialect.Result, error) {
		mu.Lock()
		seen = append(seen, KeyName(ctx))
		mu.Unlock()
		return echo(ctx, f, call, sink)
	})
	s = newTest(t, p)
	seen = nil
	readAll(t, post(t, s.url, "/v1/chat/completions", chatBody, "x-api-key", "only"))
	if !slices.Equal(seen, []string{"default"}) {
		t.Fatalf("the one key of api_key_env is named %q, want default", seen)
	}
}

// A named key whose variable is unset stops the server at start, naming
// the key, the variable and where the file sets it; two keys with one
// secret are refused too.
func TestNamedKeyErrors(t *testing.T) {
	p := testParts()
	p.server.Keys = map[string]config.ServerKey{"ci": {Name: "ci", Env: "HK_CI"}, "ops": {Name: "ops", Env: "HK_OPS"}}
	p.getenv = envOf(map[string]string{"HK_OPS": "x"})
	p.where = func(key string) string {
		if key == "server.keys.ci.env" {
			return "hookhost.toml:12"
		}
		return ""
	}
	_, err := newServer(p)
	want := `config: hookhost.toml:12: server.keys.ci.env: the environment variable HK_CI, holding the secret of inbound key "ci", is unset or empty`
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("err = %v, want it to start %q", err, want)
	}
	p.getenv = envOf(map[string]string{"HK_OPS": "same", "HK_CI": "same"})
	if _, err := newServer(p); err == nil || !strings.Contains(err.Error(), `inbound keys "ci" and "ops" have the same secret`) {
		t.Fatalf("err = %v, want the same-secret refusal", err)
	}
	p.getenv = envOf(map[string]string{"HK_OPS": "a", "HK_CI": "b"})
	p.server.ForwardClientKey = true
	if _, err := newServer(p); err == nil || !strings.Contains(err.Error(), "forward_client_key") {
		t.Fatalf("err = %v, want forward_client_key refused beside named keys", err)
	}
}

// mcpKeysServer serves /mcp over native tools with two keys: "all", who
// may use every tool, and "gh", whose mcp_tools allow github__* only.
func mcpKeysServer(t *testing.T) *testServer {
	t.Helper()
	var tools []dispatch.Tool
	for _, name := range []string{"github__issues", "github__pulls", "fs__read"} {
		name := name
		tools = append(tools, dispatch.Tool{
			Spec: hooks.ToolSpec{Name: name, Description: name, InputSchema: json.RawMessage(`{"type":"object"}`)},
			Run:  func(context.Context, json.RawMessage) (any, error) { return "ran " + name, nil },
		})
	}
	g, err := mcpgate.NewGateway(nil, mcpgate.GatewayOptions{Native: tools})
	if err != nil {
		t.Fatal(err)
	}
	p := testParts()
	p.mcp = g.HTTPHandler()
	p.server.Keys = map[string]config.ServerKey{
		"all": {Name: "all", Env: "K_ALL"},
		"gh":  {Name: "gh", Env: "K_GH", MCPTools: []string{"github__*"}},
	}
	p.getenv = envOf(map[string]string{"K_ALL": "secret-all", "K_GH": "secret-gh"})
	return newTest(t, p)
}

// keyed adds an inbound key to every request, as the x-api-key header.
type keyed struct{ key string }

func (k keyed) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("x-api-key", k.key)
	return http.DefaultTransport.RoundTrip(r)
}

// mcpSession connects the Go MCP client to s's /mcp with key.
func mcpSession(t *testing.T, s *testServer, key string) *mcp.ClientSession {
	t.Helper()
	tr := &mcp.StreamableClientTransport{Endpoint: s.url + "/mcp", HTTPClient: &http.Client{Transport: keyed{key}}, MaxRetries: -1}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "keys-test", Version: "1"}, nil).Connect(context.Background(), tr, nil)
	if err != nil {
		t.Fatalf("connecting with key %s: %v", key, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return names
}

// On /mcp a key with mcp_tools sees in tools/list only the tools its
// globs match, and a call of another tool is refused with an MCP error
// result naming the key; a key without the list sees and calls them all.
func TestMCPToolAllowlistPerKey(t *testing.T) {
	s := mcpKeysServer(t)
	all, gh := mcpSession(t, s, "secret-all"), mcpSession(t, s, "secret-gh")
	if got, want := toolNames(t, all), []string{"fs__read", "github__issues", "github__pulls"}; !slices.Equal(got, want) {
		t.Fatalf("key all lists %q, want %q", got, want)
	}
	if got, want := toolNames(t, gh), []string{"github__issues", "github__pulls"}; !slices.Equal(got, want) {
		t.Fatalf("key gh lists %q, want %q", got, want)
	}
	call := func(cs *mcp.ClientSession, name string) *mcp.CallToolResult {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: map[string]any{}})
		if err != nil {
			t.Fatalf("calling %s: %v", name, err)
		}
		return res
	}
	text := func(res *mcp.CallToolResult) string {
		var b strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				b.WriteString(tc.Text)
			}
		}
		return b.String()
	}
	if res := call(gh, "github__issues"); res.IsError || !strings.Contains(text(res), "ran github__issues") {
		t.Fatalf("key gh calling an allowed tool: %+v %q", res, text(res))
	}
	res := call(gh, "fs__read")
	if want := `the inbound key "gh" may not call tool "fs__read": server.keys.gh.mcp_tools does not allow it`; !res.IsError || text(res) != want {
		t.Fatalf("key gh calling a tool outside its list: isError %v %q, want %q", res.IsError, text(res), want)
	}
	if res := call(all, "fs__read"); res.IsError || !strings.Contains(text(res), "ran fs__read") {
		t.Fatalf("key all calling fs__read: %+v %q", res, text(res))
	}
}

// A session opened with one key cannot be used with another: its tool
// list would otherwise be the first key's.
func TestMCPSessionBoundToItsKey(t *testing.T) {
	s := mcpKeysServer(t)
	gh := mcpSession(t, s, "secret-gh")
	id := gh.ID()
	if id == "" {
		t.Fatal("the session has no id")
	}
	body := `{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{}}`
	resp := post(t, s.url, "/mcp", body, "x-api-key", "secret-all", "Mcp-Session-Id", id,
		"Accept", "application/json, text/event-stream", "Mcp-Protocol-Version", "2025-06-18")
	raw := readAll(t, resp)
	if resp.StatusCode != http.StatusForbidden || strings.Contains(string(raw), "fs__read") {
		t.Fatalf("key all on key gh's session: %d %s, want 403", resp.StatusCode, raw)
	}
}

// The limits that hold for a key: its own where it sets them.
func TestKeyLimitsOverride(t *testing.T) {
	c := config.Server{Limits: config.Limits{RequestsPerMinute: 10, TokensPerMinute: 1000},
		Keys: map[string]config.ServerKey{"a": {RequestsPerMinute: ptr(int64(0))}, "b": {TokensPerMinute: ptr(int64(5))}}}
	for name, want := range map[string][2]int64{"a": {0, 1000}, "b": {10, 5}, "default": {10, 1000}} {
		if r, tk := c.KeyLimits(name); r != want[0] || tk != want[1] {
			t.Errorf("KeyLimits(%q) = %d, %d, want %v", name, r, tk, want)
		}
	}
}
