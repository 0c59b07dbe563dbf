// Command lookup is the plugin the client tests run behind hookhost serve.
// It owns one tool, lookup__weather, whose result it provides itself, and
// blocks the client tool delete_everything, so one plugin exercises both
// halves of the gateway's tool split: calls hookhost runs and hides, and
// client calls hookhost answers instead of the client.
package main

import (
	"context"
	"encoding/json"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/plugins/sdk"
)

// Blocked is the client tool the plugin refuses, and BlockMessage the
// error result the model gets in its place.
const (
	Blocked      = "delete_everything"
	BlockMessage = "lookup: delete_everything is not allowed through this gateway"
)

type lookup struct{ sdk.Base }

var (
	_ sdk.ToolCallGuard  = (*lookup)(nil)
	_ sdk.ResultProvider = (*lookup)(nil)
)

// Info declares no matchers so that pre_tool_call also sees the client's
// tools, which is where the block applies.
func (*lookup) Info() sdk.Info {
	return sdk.Info{
		Name:    "lookup",
		Version: "1.0.0",
		Tools: []hooks.ToolSpec{{
			Name:        "lookup__weather",
			Description: "Current weather for a city",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`),
		}},
	}
}

func (*lookup) PreToolCall(_ context.Context, call hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
	if call.Name == Blocked {
		return &hooks.PreToolCallDecision{Block: &hooks.Block{Message: BlockMessage}}, nil
	}
	return nil, nil
}

func (*lookup) PreToolCallCanProvideResult(_ context.Context, call hooks.ToolCallRequest) (*hooks.ToolResult, error) {
	if call.Name != "lookup__weather" {
		return nil, nil
	}
	var args struct {
		City string `json:"city"`
	}
	if err := json.Unmarshal(call.Arguments, &args); err != nil || args.City == "" {
		return &hooks.ToolResult{Content: `{"error":"lookup__weather needs {\"city\": string}"}`, IsError: true}, nil
	}
	out, _ := json.Marshal(map[string]string{"city": args.City, "forecast": "sunny, 21 C"})
	return &hooks.ToolResult{Content: string(out)}, nil
}

func main() { sdk.Serve(&lookup{}) }
