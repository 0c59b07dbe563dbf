package mcpgate

import (
	"context"
	"encoding/json"
	"os/exec"
	"runtime"
	"testing"
	"time"

	"github.com/hookhost/hookhost/internal/childproc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestNothingLeftRunning drives an upstream through every way a call can
// end (answered, timed out, server killed mid-call, progress) behind a
// gateway and a client, closes them all, and checks that every goroutine
// they started has returned.
func TestNothingLeftRunning(t *testing.T) {
	// The spawn thread lives as long as the host, by design.
	if err := childproc.Start(exec.Command("true")); err != nil {
		t.Fatal(err)
	}
	before := runtime.NumGoroutine()

	spec, _ := fake(t, "leak", "normal")
	spec.Timeout = 300 * time.Millisecond
	u, err := New(spec, Options{BackoffInitial: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := u.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	g, err := NewGateway([]*Upstream{u}, GatewayOptions{})
	if err != nil {
		t.Fatal(err)
	}
	st, ct := mcp.NewInMemoryTransports()
	ss, err := g.Server().Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) {},
	}).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "nosuch"}); err == nil {
		t.Fatal("a call to an unknown tool succeeded")
	}
	for _, name := range []string{"leak__echo", "leak__hang", "leak__crash"} {
		if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name}); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	eventually(t, "the server to be back", func() bool { return u.Status().State == StateRunning })
	params := &mcp.CallToolParams{Name: "leak__progress"}
	params.SetProgressToken("p")
	if _, err := cs.CallTool(context.Background(), params); err != nil {
		t.Fatal(err)
	}
	if res, err := u.CallTool(context.Background(), "echo", json.RawMessage(`{}`), nil); err != nil || res.IsError {
		t.Fatalf("echo after all that = %v, %v", res, err)
	}

	_ = cs.Close()
	_ = ss.Wait()
	g.Close()
	if err := u.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	var stacks []byte
	deadline := time.Now().Add(20 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			stacks = make([]byte, 1<<20)
			stacks = stacks[:runtime.Stack(stacks, true)]
			t.Fatalf("%d goroutines before, %d after everything closed:\n%s", before, runtime.NumGoroutine(), stacks)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
