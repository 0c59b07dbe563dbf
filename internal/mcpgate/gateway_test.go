package mcpgate

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hookhost/hookhost/dispatch"
	"github.com/hookhost/hookhost/hookbus"
	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/bustest"
)

func newBus(t *testing.T, plugins ...hooks.Plugin) *hookbus.Bus { return bustest.New(t, plugins...) }

// connect serves a gateway over ups and bus in memory and returns a Go
// SDK client's session to it.
func connect(t *testing.T, bus *hookbus.Bus, clientOpts *mcp.ClientOptions, ups ...*Upstream) *mcp.ClientSession {
	t.Helper()
	g, err := NewGateway(ups, GatewayOptions{Bus: bus})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Close)
	st, ct := mcp.NewInMemoryTransports()
	ss, err := g.Server().Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, clientOpts).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cs.Close()
		_ = ss.Wait()
	})
	return cs
}

func call(t *testing.T, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

func upstreamCalls(t *testing.T, logFile, tool string) int {
	n := 0
	for _, c := range calls(t, logFile) {
		if strings.HasPrefix(c, "call "+tool+" ") {
			n++
		}
	}
	return n
}

func TestGatewayGuardBlocksWithoutCallingUpstream(t *testing.T) {
	spec, logFile := fake(t, "fake", "normal")
	u := startUpstream(t, spec, Options{})
	guard := &hooks.Funcs{Name: "guard", Matchers: []string{"fake__*"},
		PreToolCallFunc: func(_ context.Context, req hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
			if strings.Contains(string(req.Arguments), "rm -rf") {
				return &hooks.PreToolCallDecision{Block: &hooks.Block{Message: "no deleting everything"}}, nil
			}
			return nil, nil
		}}
	cs := connect(t, newBus(t, guard), nil, u)
	res := call(t, cs, "fake__echo", map[string]any{"text": "rm -rf /"})
	if !res.IsError || textOf(res) != "no deleting everything" {
		t.Fatalf("blocked call = %+v", res)
	}
	if n := upstreamCalls(t, logFile, "echo"); n != 0 {
		t.Fatalf("the server was called %d times for a blocked call", n)
	}
	res = call(t, cs, "fake__echo", map[string]any{"text": "ls"})
	if res.IsError || textOf(res) != "echo: ls" {
		t.Fatalf("allowed call = %+v", res)
	}
	if n := upstreamCalls(t, logFile, "echo"); n != 1 {
		t.Fatalf("the server was called %d times, want 1", n)
	}
}

func TestGatewayCacheProvidesWithoutCallingUpstream(t *testing.T) {
	spec, logFile := fake(t, "fake", "normal")
	u := startUpstream(t, spec, Options{})
	cache := &hooks.Funcs{Name: "cache", Matchers: []string{"fake__echo"},
		PreToolCallCanProvideResultFunc: func(context.Context, hooks.ToolCallRequest) (*hooks.ToolResult, error) {
			return &hooks.ToolResult{Content: "cached answer"}, nil
		}}
	cs := connect(t, newBus(t, cache), nil, u)
	res := call(t, cs, "fake__echo", map[string]any{"text": "x"})
	if res.IsError || textOf(res) != "cached answer" {
		t.Fatalf("provided call = %+v", res)
	}
	if n := upstreamCalls(t, logFile, "echo"); n != 0 {
		t.Fatalf("the server was called %d times for a provided result", n)
	}
}

func TestGatewayTransformRedactsSecret(t *testing.T) {
	spec, _ := fake(t, "fake", "normal")
	u := startUpstream(t, spec, Options{})
	var seen atomic.Value
	redactor := &hooks.Funcs{Name: "redactor",
		TransformToolResultFunc: func(_ context.Context, ev hooks.ToolCallOutcome) (*hooks.ToolResult, error) {
			seen.Store(ev.Result.Content)
			if !strings.Contains(ev.Result.Content, "hunter2") {
				return nil, nil
			}
			r := ev.Result
			r.Content = strings.ReplaceAll(r.Content, "hunter2", "[redacted]")
			return &r, nil
		}}
	cs := connect(t, newBus(t, redactor), nil, u)
	res := call(t, cs, "fake__secret", nil)
	if res.IsError || textOf(res) != "the password is [redacted]" {
		t.Fatalf("transformed result = %+v %q", res, textOf(res))
	}
	if got, want := seen.Load(), `{"content":[{"type":"text","text":"the password is hunter2"}]}`; got != want {
		t.Fatalf("the hook saw %v, want the MCP result's JSON %s", got, want)
	}
}

func TestGatewayModifyChangesUpstreamArguments(t *testing.T) {
	spec, logFile := fake(t, "fake", "normal")
	u := startUpstream(t, spec, Options{})
	modifier := &hooks.Funcs{Name: "modifier",
		PreToolCallFunc: func(context.Context, hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
			return &hooks.PreToolCallDecision{ModifiedArgs: json.RawMessage(`{"text":"changed"}`)}, nil
		}}
	cs := connect(t, newBus(t, modifier), nil, u)
	res := call(t, cs, "fake__echo", map[string]any{"text": "original"})
	if textOf(res) != "echo: changed" {
		t.Fatalf("modified call = %+v", res)
	}
	if got := calls(t, logFile); !slices.Contains(got, `call echo {"text":"changed"}`) {
		t.Fatalf("the server saw %q", got)
	}
}

func TestGatewayRichResultSurvivesUntouched(t *testing.T) {
	spec, _ := fake(t, "fake", "normal")
	u := startUpstream(t, spec, Options{})
	direct, err := u.CallTool(context.Background(), "rich", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(direct)
	if !strings.Contains(string(want), `"type":"image"`) || !strings.Contains(string(want), `"type":"resource_link"`) || !strings.Contains(string(want), `"structuredContent"`) {
		t.Fatalf("the fake's rich result lacks what this test is about: %s", want)
	}
	var observed atomic.Int64
	lookers := []hooks.Plugin{&hooks.Funcs{Name: "looker",
		PostToolCallFunc: func(context.Context, hooks.ToolCallOutcome) error { observed.Add(1); return nil },
		TransformToolResultFunc: func(context.Context, hooks.ToolCallOutcome) (*hooks.ToolResult, error) {
			return nil, nil // looked, changed nothing
		}}}
	looking := newBus(t, lookers...)
	for _, tc := range []struct {
		name string
		bus  *hookbus.Bus
	}{{"no hooks", nil}, {"hooks that change nothing", looking}} {
		cs := connect(t, tc.bus, nil, u)
		got, _ := json.Marshal(call(t, cs, "fake__rich", nil))
		if got, want := withoutEnvelope(t, got), withoutEnvelope(t, want); got != want {
			t.Errorf("%s: client got %s\nserver sent %s", tc.name, got, want)
		}
	}
	// Close delivers the observer events still queued.
	if err := looking.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := observed.Load(); n != 1 {
		t.Fatalf("post_tool_call saw %d calls, want 1", n)
	}
}

func TestGatewayTransformedRichResultKeepsItsShape(t *testing.T) {
	spec, _ := fake(t, "fake", "normal")
	u := startUpstream(t, spec, Options{})
	renamer := &hooks.Funcs{Name: "renamer",
		TransformToolResultFunc: func(_ context.Context, ev hooks.ToolCallOutcome) (*hooks.ToolResult, error) {
			r := ev.Result
			r.Content = strings.ReplaceAll(r.Content, "report", "summary")
			return &r, nil
		}}
	cs := connect(t, newBus(t, renamer), nil, u)
	res := call(t, cs, "fake__rich", nil)
	if len(res.Content) != 3 {
		t.Fatalf("content = %+v", res.Content)
	}
	if img, ok := res.Content[1].(*mcp.ImageContent); !ok || img.MIMEType != "image/png" || string(img.Data) != string(richResult().Content[1].(*mcp.ImageContent).Data) {
		t.Errorf("image = %+v", res.Content[1])
	}
	if link, ok := res.Content[2].(*mcp.ResourceLink); !ok || link.Name != "summary" || link.URI != "file:///tmp/summary.txt" {
		t.Errorf("resource link = %+v", res.Content[2])
	}
	if sc, _ := json.Marshal(res.StructuredContent); string(sc) != `{"items":["a","b"],"n":42}` {
		t.Errorf("structured content = %s", sc)
	}
}

func TestGatewayUpstreamErrorsAreErrorResults(t *testing.T) {
	spec, _ := fake(t, "fake", "normal")
	spec.Timeout = 300 * time.Millisecond
	u := startUpstream(t, spec, Options{})
	cs := connect(t, nil, nil, u)
	if res := call(t, cs, "fake__fails", nil); !res.IsError || textOf(res) != "disk full" {
		t.Fatalf("the server's error result = %+v", res)
	}
	res := call(t, cs, "fake__hang", nil)
	if !res.IsError || !strings.Contains(textOf(res), `mcp server "fake": tool "hang" did not answer within 300ms`) {
		t.Fatalf("hung call = %+v", res)
	}
}

func TestGatewayToolListFilterIsAnAllowlist(t *testing.T) {
	spec, logFile := fake(t, "fake", "normal")
	u := startUpstream(t, spec, Options{})
	filter := &hooks.Funcs{Name: "filter",
		PreToolListFinalizedFunc: func(_ context.Context, req hooks.ToolListRequest) (*hooks.ToolListOverride, error) {
			var keep []hooks.ToolSpec
			for _, t := range req.Tools {
				if t.Name == "fake__echo" {
					keep = append(keep, t)
				}
			}
			return &hooks.ToolListOverride{Tools: append(keep, hooks.ToolSpec{Name: "invented"})}, nil
		}}
	cs := connect(t, newBus(t, filter), nil, u)
	list, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Tools) != 1 || list.Tools[0].Name != "fake__echo" || list.Tools[0].Description != "fake echo" {
		t.Fatalf("listed %+v", list.Tools)
	}
	res := call(t, cs, "fake__secret", nil)
	if !res.IsError || !strings.Contains(textOf(res), `tool "fake__secret" is not offered to this client`) {
		t.Fatalf("call to a filtered-out tool = %+v", res)
	}
	if n := upstreamCalls(t, logFile, "secret"); n != 0 {
		t.Fatalf("a filtered-out tool reached the server %d times", n)
	}
}

func TestGatewayRelaysProgressAndCancellation(t *testing.T) {
	spec, logFile := fake(t, "fake", "normal")
	spec.Timeout = 500 * time.Millisecond
	u := startUpstream(t, spec, Options{})
	var progress atomic.Int64
	cs := connect(t, nil, &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
		if req.Params.ProgressToken == "mine" && req.Params.Message == "working" {
			progress.Add(1)
		}
	}}, u)
	params := &mcp.CallToolParams{Name: "fake__progress"}
	params.SetProgressToken("mine")
	res, err := cs.CallTool(context.Background(), params)
	if err != nil || !res.IsError || !strings.Contains(textOf(res), "did not answer within 500ms") {
		t.Fatalf("endless progress = %+v, %v", res, err)
	}
	if progress.Load() == 0 {
		t.Fatal("no progress notification reached the client")
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "fake__hang"})
		done <- err
	}()
	eventually(t, "the hang call to reach the server", func() bool { return upstreamCalls(t, logFile, "hang") == 1 })
	cancel()
	if err := <-done; err == nil {
		t.Fatal("a cancelled call returned no error")
	}
	eventually(t, "the server to see the client's cancellation", func() bool {
		return slices.Contains(calls(t, logFile), "cancelled hang")
	})
}

func TestGatewayOffersPluginAndNativeTools(t *testing.T) {
	spec, _ := fake(t, "fake", "normal")
	u := startUpstream(t, spec, Options{})
	plugin := &hooks.Funcs{Name: "p", Tools: []hooks.ToolSpec{{Name: "p__hello", Description: "hello"}},
		PreToolCallCanProvideResultFunc: func(context.Context, hooks.ToolCallRequest) (*hooks.ToolResult, error) {
			return &hooks.ToolResult{Content: `"hello from the plugin"`}, nil
		}}
	bus := newBus(t, plugin)
	native := dispatch.Tool{Spec: hooks.ToolSpec{Name: "clock", Description: "time", InputSchema: json.RawMessage(`{"type":"object"}`)},
		Run: func(context.Context, json.RawMessage) (any, error) { return map[string]string{"now": "noon"}, nil }}
	g, err := NewGateway([]*Upstream{u}, GatewayOptions{Bus: bus, Native: []dispatch.Tool{native}})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range g.Tools() {
		names = append(names, tool.Name)
	}
	for _, want := range []string{"clock", "p__hello", "fake__echo"} {
		if !slices.Contains(names, want) {
			t.Fatalf("tools %v lack %s", names, want)
		}
	}
	cs := connect(t, bus, nil, u)
	if res := call(t, cs, "p__hello", nil); textOf(res) != "hello from the plugin" {
		t.Fatalf("plugin tool = %+v", res)
	}
	g2, err := NewGateway([]*Upstream{u}, GatewayOptions{Native: []dispatch.Tool{native}})
	if err != nil {
		t.Fatal(err)
	}
	st, ct := mcp.NewInMemoryTransports()
	ss, err := g2.Server().Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs2, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs2.Close()
	if res := call(t, cs2, "clock", nil); textOf(res) != `{"now":"noon"}` {
		t.Fatalf("native tool = %+v", res)
	}
}

func TestGatewayRefusesATwiceOfferedName(t *testing.T) {
	spec, _ := fake(t, "fake", "normal")
	u := startUpstream(t, spec, Options{})
	native := dispatch.Tool{Spec: hooks.ToolSpec{Name: "fake__echo", Description: "shadow"},
		Run: func(context.Context, json.RawMessage) (any, error) { return "x", nil }}
	_, err := NewGateway([]*Upstream{u}, GatewayOptions{Native: []dispatch.Tool{native}})
	if err == nil || !strings.Contains(err.Error(), `tool "fake__echo" is offered by both the native tools and mcp server "fake"`) {
		t.Fatalf("error = %v", err)
	}
}

// TestGatewayOverHTTPToAnHTTPUpstream runs the whole way over Streamable
// HTTP: a Go SDK client to the gateway's handler, the gateway to an
// upstream served over HTTP that requires a bearer token and a header.
func TestGatewayOverHTTPToAnHTTPUpstream(t *testing.T) {
	upstream := mcp.NewServer(&mcp.Implementation{Name: "remote", Version: "1"}, nil)
	upstream.AddTool(&mcp.Tool{Name: "whoami", InputSchema: objectInput}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "remote"}}}, nil
	})
	var unauthorized atomic.Int64
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return upstream }, nil)
	remote := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer s3cret" || r.Header.Get("X-Team") != "blue" {
			unauthorized.Add(1)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		mcpHandler.ServeHTTP(w, r)
	}))
	t.Cleanup(remote.Close) // after the upstream's close, which ends its requests
	t.Setenv("MCPGATE_TEST_TOKEN", "s3cret")
	u := startUpstream(t, ServerSpec{Name: "remote", URL: remote.URL, BearerTokenEnv: "MCPGATE_TEST_TOKEN", Headers: map[string]string{"X-Team": "blue"}}, Options{})
	st := u.Status()
	if st.Transport != "http" || st.State != StateRunning || !slices.Equal(st.Tools, []string{"remote__whoami"}) {
		t.Fatalf("status = %+v", st)
	}
	t.Logf("negotiated protocol version with the HTTP upstream: %s", st.Protocol)

	g, err := NewGateway([]*Upstream{u}, GatewayOptions{})
	if err != nil {
		t.Fatal(err)
	}
	front := httptest.NewServer(g.HTTPHandler())
	t.Cleanup(front.Close)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: front.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	t.Logf("negotiated protocol version with the gateway over HTTP: %s", cs.InitializeResult().ProtocolVersion)
	if res := call(t, cs, "remote__whoami", nil); res.IsError || textOf(res) != "remote" {
		t.Fatalf("call through two HTTP hops = %+v", res)
	}
	if n := unauthorized.Load(); n != 0 {
		t.Fatalf("%d requests reached the upstream without the token and header", n)
	}
}

func TestHTTPUpstreamWithoutItsTokenDoesNotStart(t *testing.T) {
	u, err := New(ServerSpec{Name: "remote", URL: "http://127.0.0.1:1/mcp", BearerTokenEnv: "MCPGATE_TEST_UNSET"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close(context.Background())
	err = u.Start(context.Background())
	if err == nil || !strings.Contains(err.Error(), "bearer_token_env names MCPGATE_TEST_UNSET, which is not set") {
		t.Fatalf("error = %v", err)
	}
}

func TestDecodeResult(t *testing.T) {
	for _, tc := range []struct {
		in   hooks.ToolResult
		want string
	}{
		{hooks.ToolResult{Content: `"plain"`}, `{"content":[{"type":"text","text":"plain"}]}`},
		{hooks.ToolResult{Content: `{"error":"blocked"}`, IsError: true}, `{"content":[{"type":"text","text":"blocked"}],"isError":true}`},
		{hooks.ToolResult{Content: `{"a":1}`}, `{"content":[{"type":"text","text":"{\"a\":1}"}]}`},
		{hooks.ToolResult{Content: `{"content":[{"type":"text","text":"x"}],"structuredContent":{"k":1}}`}, `{"content":[{"type":"text","text":"x"}],"structuredContent":{"k":1}}`},
		{hooks.ToolResult{Content: `{"content":[{"type":"bogus"}]}`}, `{"content":[{"type":"text","text":"{\"content\":[{\"type\":\"bogus\"}]}"}]}`},
		{hooks.ToolResult{Content: `{"content":[],"extra":1}`}, `{"content":[{"type":"text","text":"{\"content\":[],\"extra\":1}"}]}`},
	} {
		got, _ := json.Marshal(decodeResult(tc.in))
		if string(got) != tc.want {
			t.Errorf("%+v: got %s, want %s", tc.in, got, tc.want)
		}
	}
}

// withoutEnvelope is a CallToolResult's JSON without what the SDK's
// server adds to every result it sends: the result type of the
// 2026-07-28 revision and its own serverInfo in _meta.
func withoutEnvelope(t *testing.T, result []byte) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(result, &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "resultType")
	if meta, ok := m["_meta"].(map[string]any); ok {
		delete(meta, "io.modelcontextprotocol/serverInfo")
		if len(meta) == 0 {
			delete(m, "_meta")
		}
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// TestHTTPUpstreamResultIsBounded has a remote server answer 2 MiB to an
// upstream allowed 1 MiB, as a JSON body and as an event stream: either
// way the call fails naming the server, and nothing larger than the limit
// is read.
func TestHTTPUpstreamResultIsBounded(t *testing.T) {
	for _, jsonResponse := range []bool{true, false} {
		server := mcp.NewServer(&mcp.Implementation{Name: "big", Version: "1"}, nil)
		server.AddTool(&mcp.Tool{Name: "big", InputSchema: objectInput}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("z", 2<<20)}}}, nil
		})
		remote := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server },
			&mcp.StreamableHTTPOptions{JSONResponse: jsonResponse}))
		t.Cleanup(remote.Close)
		u := startUpstream(t, ServerSpec{Name: "big", URL: remote.URL, MaxResultSize: 1 << 20}, Options{})
		_, err := u.CallTool(context.Background(), "big", nil, nil)
		if err == nil || !strings.Contains(err.Error(), `mcp server "big": tool "big": the server sent an answer over 1048576 bytes, the limit (mcp.servers.big.max_result_size)`) {
			t.Fatalf("JSONResponse %v: 2 MiB over a 1 MiB limit = %v", jsonResponse, err)
		}
		t.Logf("JSONResponse %v: %v", jsonResponse, err)
	}
}

// TestHTTPUpstreamComesBack stops a remote server and starts it again at
// the same address: calls fail naming the server meanwhile, and the
// upstream reconnects by itself.
func TestHTTPUpstreamComesBack(t *testing.T) {
	server := mcp.NewServer(&mcp.Implementation{Name: "remote", Version: "1"}, nil)
	server.AddTool(&mcp.Tool{Name: "ping", InputSchema: objectInput}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "pong"}}}, nil
	})
	serve := func(addr string) *httptest.Server {
		// A handler of its own, as a restarted server has: it knows none
		// of the sessions of the one before, so the upstream must
		// reconnect rather than carry on with its old session.
		handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)
		s := httptest.NewUnstartedServer(handler)
		l, err := net.Listen("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		s.Listener = l
		s.Start()
		return s
	}
	first := serve("127.0.0.1:0")
	addr := first.Listener.Addr().String()
	u := startUpstream(t, ServerSpec{Name: "remote", URL: "http://" + addr + "/"}, Options{BackoffInitial: 10 * time.Millisecond, BackoffMax: 50 * time.Millisecond, CircuitFailures: 1000})
	first.CloseClientConnections()
	first.Close()
	_, err := u.CallTool(context.Background(), "ping", nil, nil)
	if err == nil || !strings.Contains(err.Error(), `mcp server "remote"`) {
		t.Fatalf("call with the server gone = %v", err)
	}
	second := serve(addr)
	t.Cleanup(func() {
		// The upstream's requests end first, or Close would wait on them.
		_ = u.Close(context.Background())
		second.Close()
	})
	eventually(t, "the upstream to reconnect", func() bool {
		res, err := u.CallTool(context.Background(), "ping", nil, nil)
		return err == nil && textOf(res) == "pong"
	})
	if st := u.Status(); st.State != StateRunning || st.Restarts == 0 {
		t.Fatalf("status = %+v", st)
	}
}

// TestGatewayFollowsAnUpstreamsNewTools has the server add a tool while
// running: the gateway offers it and runs it.
func TestGatewayFollowsAnUpstreamsNewTools(t *testing.T) {
	spec, _ := fake(t, "fake", "normal")
	u := startUpstream(t, spec, Options{})
	cs := connect(t, nil, nil, u)
	listed := func() []string {
		list, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tool := range list.Tools {
			names = append(names, tool.Name)
		}
		return names
	}
	if slices.Contains(listed(), "fake__grown") {
		t.Fatal("fake__grown offered before the server has it")
	}
	if res := call(t, cs, "fake__grow", nil); textOf(res) != "grew" {
		t.Fatalf("grow = %+v", res)
	}
	eventually(t, "the gateway to offer the new tool", func() bool { return slices.Contains(listed(), "fake__grown") })
	if res := call(t, cs, "fake__grown", nil); res.IsError || textOf(res) != "new" {
		t.Fatalf("the new tool = %+v", res)
	}
}

// A call arriving over MCP tells tool hooks where it goes: the configured
// server's tool is that server's, a plugin's tool the plugin's, an exposed
// native tool the host's.
func TestGatewayToolHooksSeeTheCallsOrigin(t *testing.T) {
	spec, _ := fake(t, "fs", "normal")
	u := startUpstream(t, spec, Options{})
	var mu sync.Mutex
	seen := map[string][]string{}
	note := func(hook hooks.Name, name string, origin hooks.Origin) {
		mu.Lock()
		defer mu.Unlock()
		seen[name] = append(seen[name], string(hook)+"="+string(origin))
	}
	watch := &hooks.Funcs{Name: "p", Tools: []hooks.ToolSpec{{Name: "p__hello", Description: "hello"}},
		PreToolCallFunc: func(_ context.Context, r hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
			note(hooks.PreToolCall, r.Name, r.Origin)
			return nil, nil
		},
		PreToolCallCanProvideResultFunc: func(_ context.Context, r hooks.ToolCallRequest) (*hooks.ToolResult, error) {
			note(hooks.PreToolCallCanProvideResult, r.Name, r.Origin)
			if r.Name == "p__hello" {
				return &hooks.ToolResult{Content: `"hello"`}, nil
			}
			return nil, nil
		},
		PostToolCallFunc: func(_ context.Context, o hooks.ToolCallOutcome) error {
			note(hooks.PostToolCall, o.Name, o.Origin)
			return nil
		},
		TransformToolResultFunc: func(_ context.Context, o hooks.ToolCallOutcome) (*hooks.ToolResult, error) {
			note(hooks.TransformToolResult, o.Name, o.Origin)
			return nil, nil
		},
	}
	bus := newBus(t, watch)
	native := dispatch.Tool{Spec: hooks.ToolSpec{Name: "clock", InputSchema: json.RawMessage(`{"type":"object"}`)},
		Run: func(context.Context, json.RawMessage) (any, error) { return "noon", nil }}
	g, err := NewGateway([]*Upstream{u}, GatewayOptions{Bus: bus, Native: []dispatch.Tool{native}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Close)
	st, ct := mcp.NewInMemoryTransports()
	ss, err := g.Server().Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close(); _ = ss.Wait() })

	for tool, origin := range map[string]string{"fs__echo": "mcp:fs", "p__hello": "plugin", "clock": "native"} {
		if res := call(t, cs, tool, map[string]any{"text": "x"}); res.IsError {
			t.Fatalf("%s: %+v", tool, res)
		}
		bustest.Flush(t, bus)
		want := []string{"post_tool_call=" + origin, "pre_tool_call=" + origin, "pre_tool_call_can_provide_result=" + origin, "transform_tool_result=" + origin}
		mu.Lock()
		got := append([]string(nil), seen[tool]...)
		mu.Unlock()
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s: hooks saw %q, want %q", tool, got, want)
		}
	}
}
