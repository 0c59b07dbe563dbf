// Command testplugin is a deliberately misbehaving plugin used by the SDK's
// process tests. Its tool hooks react to special tool names:
//
//	crash      the process exits with status 3 mid-call
//	panic      the handler panics
//	sleep      the handler blocks until its call's context ends
//	cancelled  the result is how many sleep calls have seen their context end
//	stdout     the handler prints to stdout, which must not disturb anything
//	pid        the result is the plugin's process id
//	spawn      the plugin starts a long-lived child; the result is its pid
//	config     the result is the config JSON the host sent
//	block      pre_tool_call blocks the call
//
// pre_tool_call_can_provide_result answers testplugin__echo with its
// arguments; testplugin__add is a typed tool (sdk.NewTool) that adds a and
// b, and panics when they sum to zero; other names get no opinion. With
// TESTPLUGIN_BAD_TOOL set, the plugin also declares a tool of that name, and
// with TESTPLUGIN_DUP_TOOL a typed tool of that name, to test manifest
// validation.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/plugins/sdk"
)

type testPlugin struct {
	sdk.Base

	mu     sync.Mutex
	config json.RawMessage
	// cancelled counts sleep calls whose context ended.
	cancelled atomic.Int64
}

var (
	_ sdk.ToolCallGuard  = (*testPlugin)(nil)
	_ sdk.ResultProvider = (*testPlugin)(nil)
	_ sdk.Configurer     = (*testPlugin)(nil)
)

func (p *testPlugin) Info() sdk.Info {
	// A print before the handshake: Serve must keep it off stdout.
	fmt.Println("testplugin: Info called")
	info := sdk.Info{
		Name:    "testplugin",
		Version: "0.1.0",
		Tools:   []hooks.ToolSpec{{Name: "testplugin__echo", Description: "echoes its arguments", InputSchema: json.RawMessage(`{"type":"object"}`)}},
	}
	if bad := os.Getenv("TESTPLUGIN_BAD_TOOL"); bad != "" {
		info.Tools = append(info.Tools, hooks.ToolSpec{Name: bad})
	}
	info.ToolFuncs = []sdk.Tool{sdk.NewTool("testplugin__add", "adds two integers", add)}
	if dup := os.Getenv("TESTPLUGIN_DUP_TOOL"); dup != "" {
		info.ToolFuncs = append(info.ToolFuncs, sdk.NewTool(dup, "a second tool of that name", add))
	}
	return info
}

type addArgs struct {
	A int `json:"a"`
	B int `json:"b"`
}

// add is a typed tool; a sum of zero panics, to test that a tool's panic
// costs one call.
func add(_ context.Context, a addArgs) (any, error) {
	if a.A+a.B == 0 {
		panic("zero")
	}
	return map[string]int{"sum": a.A + a.B}, nil
}

func (p *testPlugin) Configure(_ context.Context, cfg json.RawMessage) error {
	var probe map[string]any
	if err := json.Unmarshal(cfg, &probe); err != nil {
		return fmt.Errorf("config is not a JSON object: %w", err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.config = append(json.RawMessage{}, cfg...)
	return nil
}

// special runs the misbehaviour a tool name asks for. A nil result and nil
// error mean the name is not special.
func (p *testPlugin) special(ctx context.Context, name string) (*hooks.ToolResult, error) {
	switch name {
	case "crash":
		p.Logger().Warn("crashing on purpose")
		os.Exit(3)
	case "panic":
		panic("boom")
	case "sleep":
		<-ctx.Done()
		p.cancelled.Add(1)
		return nil, ctx.Err()
	case "cancelled":
		return &hooks.ToolResult{Content: strconv.FormatInt(p.cancelled.Load(), 10)}, nil
	case "stdout":
		fmt.Println("stray output after the handshake")
		fmt.Fprintln(os.Stdout, "more of it")
		return &hooks.ToolResult{Content: "printed"}, nil
	case "pid":
		return &hooks.ToolResult{Content: strconv.Itoa(os.Getpid())}, nil
	case "spawn":
		child := exec.Command("sleep", "30")
		if err := child.Start(); err != nil {
			return nil, err
		}
		go func() { _ = child.Wait() }()
		return &hooks.ToolResult{Content: strconv.Itoa(child.Process.Pid)}, nil
	case "config":
		p.mu.Lock()
		defer p.mu.Unlock()
		return &hooks.ToolResult{Content: string(p.config)}, nil
	}
	return nil, nil
}

func (p *testPlugin) PreToolCall(ctx context.Context, call hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
	if call.Name == "block" {
		return &hooks.PreToolCallDecision{Block: &hooks.Block{Message: "blocked by testplugin"}}, nil
	}
	if _, err := p.special(ctx, call.Name); err != nil {
		return nil, err
	}
	return nil, nil
}

func (p *testPlugin) PreToolCallCanProvideResult(ctx context.Context, call hooks.ToolCallRequest) (*hooks.ToolResult, error) {
	if call.Name == "testplugin__echo" {
		return &hooks.ToolResult{Content: string(call.Arguments)}, nil
	}
	return p.special(ctx, call.Name)
}

func main() { sdk.Serve(&testPlugin{}) }
