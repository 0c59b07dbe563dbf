package mcpgate

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The test binary doubles as the fake upstream MCP servers: started with
// fakeMarker as its first argument it serves MCP on stdio instead of
// running tests. Arguments: fakeMarker MODE LOGFILE.
const fakeMarker = "mcpgate-fake-server"

// childMarker makes the test binary a child a fake server leaves behind:
// it sleeps until killed.
const childMarker = "mcpgate-fake-child"

func TestMain(m *testing.M) {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case fakeMarker:
			runFake(os.Args[2], os.Args[3])
			os.Exit(0)
		case childMarker:
			time.Sleep(time.Hour)
			os.Exit(0)
		case gatewayMarker:
			os.Exit(runGatewayProcess(os.Args[2:]))
		case hostMarker:
			runHostProcess(os.Args[2])
		}
	}
	os.Exit(m.Run())
}

// hostMarker makes the test binary a host with one fake upstream: it
// prints the server's pid and waits to be killed. Arguments: hostMarker
// LOGFILE.
const hostMarker = "mcpgate-host"

func runHostProcess(logFile string) {
	u, err := New(ServerSpec{Name: "fake", Command: os.Args[0], Args: []string{fakeMarker, "stubborn", logFile}}, Options{})
	if err != nil {
		os.Exit(1)
	}
	if err := u.Start(context.Background()); err != nil {
		os.Exit(1)
	}
	fmt.Println(u.Status().PID)
	select {}
}

// richResult is what the fake's "rich" tool returns: every kind of content
// that must reach a client untouched.
func richResult() *mcp.CallToolResult {
	return &mcp.CallToolResult{
		Content: []mcp.Content{
			&mcp.TextContent{Text: `{"n":42}`},
			&mcp.ImageContent{Data: []byte{0x89, 'P', 'N', 'G', 0, 1, 2, 3}, MIMEType: "image/png"},
			&mcp.ResourceLink{URI: "file:///tmp/report.txt", Name: "report", MIMEType: "text/plain"},
		},
		StructuredContent: map[string]any{"n": 42.0, "items": []any{"a", "b"}},
	}
}

var objectInput = map[string]any{"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}}}

// runFake serves MCP on stdio. Every call is logged to logFile as
// "call TOOL ARGS" before it is handled, so that a test can count what
// reached the server.
func runFake(mode, logFile string) {
	var logMu sync.Mutex
	record := func(line string) {
		logMu.Lock()
		defer logMu.Unlock()
		f, err := os.OpenFile(logFile, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			return
		}
		fmt.Fprintln(f, line)
		f.Close()
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "fake", Version: "1"}, nil)
	add := func(name string, h func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error)) {
		s.AddTool(&mcp.Tool{Name: name, Description: "fake " + name, InputSchema: objectInput}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			record("call " + name + " " + string(req.Params.Arguments))
			return h(ctx, req)
		})
	}
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	askName := &mcp.ElicitParams{
		Message: "what is your name?",
		RequestedSchema: map[string]any{"type": "object",
			"properties": map[string]any{"name": map[string]any{"type": "string"}}, "required": []string{"name"}},
	}
	said := func(res *mcp.ElicitResult) *mcp.CallToolResult {
		return text(fmt.Sprintf("%s %v", res.Action, res.Content["name"]))
	}
	switch mode {
	case "elicit":
		// ask asks the user for a name the current protocol's way: a
		// result that needs input, and the call again with the answer.
		add("ask", func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if r, ok := req.Params.InputResponses["name"].(*mcp.ElicitResult); ok {
				return said(r), nil
			}
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"name": askName}}, nil
		})
	case "elicit-legacy":
		// ask asks the user for a name the way of protocol 2025-11-25: a
		// request to the client while the call runs.
		s = mcp.NewServer(&mcp.Implementation{Name: "fake", Version: "1"}, &mcp.ServerOptions{SupportedProtocolVersions: []string{"2025-11-25"}})
		add("ask", func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res, err := req.Session.Elicit(ctx, askName)
			if err != nil {
				return text("elicitation failed: " + err.Error()), nil
			}
			return said(res), nil
		})
	case "collide":
		add("a.b", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return text("dot"), nil })
		add("a__b", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text("underscores"), nil
		})
	default:
		add("echo", func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var args struct{ Text string }
			_ = json.Unmarshal(req.Params.Arguments, &args)
			return text("echo: " + args.Text), nil
		})
		add("dotted.name", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return text("dotted"), nil })
		add("pid", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text(fmt.Sprint(os.Getpid())), nil
		})
		add("rich", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return richResult(), nil })
		add("secret", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text("the password is hunter2"), nil
		})
		add("fails", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "disk full"}}, IsError: true}, nil
		})
		add("hang", func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			<-ctx.Done()
			record("cancelled hang")
			select {}
		})
		add("crash", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {}
		})
		add("garbage", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			os.Stdout.WriteString("this is not JSON-RPC\n")
			select {}
		})
		add("huge", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			// 64 MiB in one message, written straight to stdout: the SDK
			// takes most of a minute to encode a result that large, and
			// the host's bound is on each message the server writes.
			os.Stdout.WriteString(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"` +
				strings.Repeat("x", 64<<20) + `"}}` + "\n")
			select {}
		})
		add("progress", func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			tok := req.Params.GetProgressToken()
			for i := 0; ; i++ {
				if tok != nil {
					_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i), Message: "working"})
				}
				select {
				case <-ctx.Done():
					select {}
				case <-time.After(time.Millisecond):
				}
			}
		})
		add("grow", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			// A new tool: the SDK tells the client its tool list changed.
			add("grown", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return text("new"), nil })
			return text("grew"), nil
		})
		add("child", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			cmd := exec.Command(os.Args[0], childMarker)
			if err := cmd.Start(); err != nil {
				return nil, err
			}
			return text(fmt.Sprint(cmd.Process.Pid)), nil
		})
	}
	_ = s.Run(context.Background(), &mcp.StdioTransport{})
	if mode == "stubborn" {
		// A server that does not exit when its stdin closes: only a
		// signal ends it.
		time.Sleep(time.Hour)
	}
}

// fake returns the spec of a fake server named name and the file its
// calls are logged to.
func fake(t *testing.T, name, mode string) (ServerSpec, string) {
	t.Helper()
	logFile := filepath.Join(t.TempDir(), "calls.log")
	return ServerSpec{Name: name, Command: os.Args[0], Args: []string{fakeMarker, mode, logFile}}, logFile
}

// calls returns the calls a fake logged.
func calls(t *testing.T, logFile string) []string {
	t.Helper()
	b, err := os.ReadFile(logFile)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

// startUpstream starts spec and closes it when the test ends.
func startUpstream(t *testing.T, spec ServerSpec, opts Options) *Upstream {
	t.Helper()
	u, err := New(spec, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := u.Close(ctx); err != nil {
			t.Error(err)
		}
	})
	if err := u.Start(context.Background()); err != nil {
		t.Fatalf("start %s: %v", spec.Name, err)
	}
	return u
}

// eventually polls cond until it holds, failing the test after a long
// while: it waits for something to happen, it does not time it.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting: %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// textOf is a result's text contents, joined.
func textOf(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}
