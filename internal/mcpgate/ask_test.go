package mcpgate

import (
	"cmp"
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hookhost/hookhost/hooks"
)

// asker answers ask on every call of the fake server's tools.
func asker() *hooks.Funcs {
	return &hooks.Funcs{Name: "asker", Matchers: []string{"fake__*"},
		PreToolCallFunc: func(context.Context, hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
			return &hooks.PreToolCallDecision{Ask: &hooks.ApprovalRequest{Reason: "echo talks to the outside"}}, nil
		}}
}

// A client that declared elicitation is asked, by an elicitation naming the
// tool, its arguments and the reason, to approve a call a plugin answered
// ask on: accept runs it, decline blocks it with the reason. The newest
// protocol version carries the elicitation as an input request of the
// call's result; an older one as a request of the server's, which the SDK
// makes of it.
func TestGatewayAsksAnElicitingClientToApprove(t *testing.T) {
	for _, version := range []string{"", "2025-11-25", "2025-06-18"} {
		t.Run("protocol "+cmp.Or(version, "latest"), func(t *testing.T) { testAsksAnElicitingClient(t, version) })
	}
}

func testAsksAnElicitingClient(t *testing.T, version string) {
	spec, logFile := fake(t, "fake", "normal")
	u := startUpstream(t, spec, Options{})
	var mu sync.Mutex
	var asked []string
	action := "accept"
	g, err := NewGateway([]*Upstream{u}, GatewayOptions{Bus: newBus(t, asker())})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Close)
	st, ct := mcp.NewInMemoryTransports()
	ss, err := g.Server().Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			mu.Lock()
			defer mu.Unlock()
			asked = append(asked, req.Params.Message)
			return &mcp.ElicitResult{Action: action}, nil
		},
	}).Connect(context.Background(), ct, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cs.Close()
		_ = ss.Wait()
	})
	if version != "" {
		if got := ss.InitializeParams().ProtocolVersion; got != version {
			t.Fatalf("the session speaks protocol %s, want %s", got, version)
		}
	}

	res := call(t, cs, "fake__echo", map[string]any{"text": "hi"})
	if res.IsError || textOf(res) != "echo: hi" {
		t.Fatalf("approved call = %+v (%s), want the server's echo", res, textOf(res))
	}
	if n := upstreamCalls(t, logFile, "echo"); n != 1 {
		t.Fatalf("the server was called %d times for an approved call, want 1", n)
	}
	mu.Lock()
	if len(asked) != 1 || !strings.Contains(asked[0], "fake__echo") || !strings.Contains(asked[0], `{"text":"hi"}`) || !strings.Contains(asked[0], "echo talks to the outside") {
		t.Errorf("the client was asked %q, want one request naming the tool, its arguments and the reason", asked)
	}
	action = "decline"
	mu.Unlock()

	res = call(t, cs, "fake__echo", map[string]any{"text": "again"})
	if !res.IsError || textOf(res) != "denied by the user: echo talks to the outside" {
		t.Fatalf("declined call = %+v, want blocked, denied by the user", res)
	}
	if n := upstreamCalls(t, logFile, "echo"); n != 1 {
		t.Fatalf("the server was called %d times after a declined call, want still 1", n)
	}
}

// A client that cannot be asked (it declared no elicitation) gets the call
// blocked with the reason, and the server is never called.
func TestGatewayBlocksAskWhenTheClientCannotBeAsked(t *testing.T) {
	spec, logFile := fake(t, "fake", "normal")
	u := startUpstream(t, spec, Options{})
	cs := connect(t, newBus(t, asker()), nil, u)
	res := call(t, cs, "fake__echo", map[string]any{"text": "hi"})
	if !res.IsError || textOf(res) != "blocked: approval required: echo talks to the outside" {
		t.Fatalf("call = %+v, want blocked, approval required", res)
	}
	if n := upstreamCalls(t, logFile, "echo"); n != 0 {
		t.Fatalf("the server was called %d times for a call no one approved", n)
	}
}
