package mcpgate

import (
	"context"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// connectAt is connect with the client speaking protocol version.
func connectAt(t *testing.T, version string, clientOpts *mcp.ClientOptions, ups ...*Upstream) *mcp.ClientSession {
	t.Helper()
	g, err := NewGateway(ups, GatewayOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Close)
	st, ct := mcp.NewInMemoryTransports()
	ss, err := g.Server().Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, clientOpts).Connect(context.Background(), ct, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cs.Close()
		_ = ss.Wait()
	})
	return cs
}

// A server's elicitation during a call from an MCP client reaches that
// client, and its answer goes back to the server, whichever way the server
// asks (a result that needs input, or a request while the call runs). A
// client that does not support elicitation has it declined for it, and so
// has one on protocol 2026-07-28, which a server may not ask while serving
// its call, and a call that no MCP client made (the model's,
// offer_to_model).
func TestElicitationIsRelayedToTheCallingClient(t *testing.T) {
	for _, mode := range []string{"elicit", "elicit-legacy"} {
		t.Run(mode, func(t *testing.T) {
			spec, _ := fake(t, "fake", mode)
			u := startUpstream(t, spec, Options{})

			var mu sync.Mutex
			var asked []string
			answering := &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				mu.Lock()
				asked = append(asked, req.Params.Message)
				mu.Unlock()
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
			}}
			if got := textOf(call(t, connectAt(t, "2025-11-25", answering, u), "fake__ask", nil)); got != "accept Ada" {
				t.Errorf("a client that answers: the server got %q, want accept Ada", got)
			}
			mu.Lock()
			if len(asked) != 1 || asked[0] != "what is your name?" {
				t.Errorf("the client was asked %q, want the server's question once", asked)
			}
			mu.Unlock()

			refusing := &mcp.ClientOptions{ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				return &mcp.ElicitResult{Action: "cancel"}, nil
			}}
			if got := textOf(call(t, connectAt(t, "2025-11-25", refusing, u), "fake__ask", nil)); got != "cancel <nil>" {
				t.Errorf("a client that cancels: the server got %q, want cancel", got)
			}
			if got := textOf(call(t, connectAt(t, "2025-11-25", nil, u), "fake__ask", nil)); got != "decline <nil>" {
				t.Errorf("a client without elicitation: the server got %q, want decline", got)
			}
			if got := textOf(call(t, connectAt(t, "2026-07-28", answering, u), "fake__ask", nil)); got != "decline <nil>" {
				t.Errorf("a client on protocol 2026-07-28: the server got %q, want decline", got)
			}

			res, err := u.CallTool(context.Background(), "ask", nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := textOf(res); got != "decline <nil>" {
				t.Errorf("a call no MCP client made: the server got %q, want decline", got)
			}
		})
	}
}
