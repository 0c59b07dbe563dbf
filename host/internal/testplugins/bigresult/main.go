// Command bigresult is a test plugin for the edges of the plugin boundary:
// results far larger than the host accepts, results that are not JSON, text
// that is not valid UTF-8, and handler panics. What it does is chosen by the
// tool name of each pre_tool_call_can_provide_result call. Its name is the
// base name it was started as, so that links to one binary can play several
// plugins. Started under a name beginning with "oldsdk" it serves with
// gRPC's default 4 MiB request limit and protocol version 1 only, as a
// plugin built with an older SDK or a third-party go-plugin server does.
package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/hookhost/hookhost/plugins/handshake"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/plugins/sdk"
)

type bigresult struct {
	sdk.Base
	name string
}

func (b *bigresult) Info() sdk.Info { return sdk.Info{Name: b.name, Version: "1.0.0"} }

func (b *bigresult) PreToolCallCanProvideResult(_ context.Context, req hooks.ToolCallRequest) (*hooks.ToolResult, error) {
	var args struct {
		Size int `json:"size"`
	}
	_ = json.Unmarshal(req.Arguments, &args)
	switch req.Name {
	case "big":
		// A JSON string of exactly args.Size bytes, built once per call as
		// a real plugin would.
		n := max(args.Size, 2)
		return &hooks.ToolResult{Content: `"` + strings.Repeat("x", n-2) + `"`}, nil
	case "text":
		return &hooks.ToolResult{Content: "plain text from " + b.name}, nil
	case "badutf8":
		return &hooks.ToolResult{Content: "{\"s\":\"bad \xff\xfe byte\"}"}, nil
	case "argsize":
		return &hooks.ToolResult{Content: strconv.Itoa(len(req.Arguments))}, nil
	case "panic":
		panic("boom from " + b.name)
	}
	return &hooks.ToolResult{Content: `"answered by ` + b.name + `"`}, nil
}

// TransformLLMOutput echoes the text it was given, so a test can see what
// crossed the boundary.
func (b *bigresult) TransformLLMOutput(_ context.Context, ev hooks.LLMOutput) (*hooks.TextReplacement, error) {
	return &hooks.TextReplacement{Text: "seen: " + ev.Text}, nil
}

// TransformToolResult replaces every result with plain text quoting it,
// which is not JSON.
func (b *bigresult) TransformToolResult(_ context.Context, ev hooks.ToolCallOutcome) (*hooks.ToolResult, error) {
	return &hooks.ToolResult{Content: b.name + " transformed " + ev.Result.Content}, nil
}

func main() {
	b := &bigresult{name: filepath.Base(os.Args[0])}
	if !strings.HasPrefix(b.name, "oldsdk") {
		sdk.Serve(b)
	}
	// An older SDK speaks protocol version 1 only.
	sets := handshake.VersionedPlugins(sdk.Adapt(b), b.Configure)
	for v := range sets {
		if v != 1 {
			delete(sets, v)
		}
	}
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig:  handshake.Config,
		VersionedPlugins: sets,
		GRPCServer:       plugin.DefaultGRPCServer,
		Logger:           hclog.New(&hclog.LoggerOptions{Name: b.name, Output: os.Stderr, JSONFormat: true}),
	})
}
