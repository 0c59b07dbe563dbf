// Command benchplugin is the remote plugin the benchmarks measure. It
// subscribes to every tool hook; only provide-result answers, so a tool call
// runs the whole pipeline. It provides no result for a namespaced tool
// (an MCP server's NAME__tool), so such a call still reaches its server. Its name is its file name, so one binary copied
// under several names can stand for several plugins. It answers a model
// call itself when the request's model is "provide", and gives no opinion
// for any other.
//
// A copy whose name starts with "stream" does not serve the lane: its
// hook calls come on the gRPC Hooks stream, the carrier of a plugin that
// does not serve the lane, and of any plugin once its lane broke.
package main

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/wire"
	"github.com/hookhost/hookhost/plugins/sdk"
)

type bench struct {
	sdk.Base
	name string
}

func (p *bench) Info() sdk.Info { return sdk.Info{Name: p.name, Version: "1"} }

func (p *bench) PreToolCall(context.Context, hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
	return nil, nil
}

func (p *bench) PreToolCallCanProvideResult(_ context.Context, req hooks.ToolCallRequest) (*hooks.ToolResult, error) {
	if strings.Contains(req.Name, "__") {
		return nil, nil
	}
	return &hooks.ToolResult{Content: `{"ok":true}`}, nil
}

func (p *bench) PostToolCall(context.Context, hooks.ToolCallOutcome) error { return nil }

func (p *bench) TransformToolResult(context.Context, hooks.ToolCallOutcome) (*hooks.ToolResult, error) {
	return nil, nil
}

func (p *bench) PreLLMCallCanProvideResponse(_ context.Context, req hooks.LLMRequest) (*hooks.ModelResponse, error) {
	if req.Request.Model != "provide" {
		return nil, nil
	}
	return &hooks.ModelResponse{Message: hooks.Message{Content: "provided"}}, nil
}

func main() {
	name := filepath.Base(os.Args[0])
	if strings.HasPrefix(name, "stream") {
		refuseLane()
	}
	sdk.Serve(&bench{name: name})
}

// refuseLane closes the lane the host handed the process and unsets its
// variable, so that the SDK does not serve it and the manifest says so.
func refuseLane() {
	if fd, err := strconv.Atoi(os.Getenv(wire.LaneFDEnv)); err == nil && fd > 2 {
		if f := os.NewFile(uintptr(fd), "lane"); f != nil {
			_ = f.Close()
		}
	}
	_ = os.Unsetenv(wire.LaneFDEnv)
}
