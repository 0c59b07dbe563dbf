// Command lookup is the plugin the client tests run behind hookhost serve.
// It owns one tool, lookup__weather, whose result it provides itself; it
// blocks the client tool delete_everything, upper-cases the zone a
// client's get_time call asks for, and answers get_time for UTC itself as
// a cache would. So one plugin exercises both halves of the gateway's tool
// split: calls hookhost runs and hides, and client calls hookhost answers
// or rewrites before the client sees them. It also answers a model call
// itself, the model not called, when the client's last message starts
// with "PROVIDE": a text for "PROVIDE: <text>", a get_time call for the
// client for "PROVIDE CALL".
package main

import (
	"context"
	"encoding/json"
	"strings"

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
	_ sdk.ToolCallGuard                       = (*lookup)(nil)
	_ sdk.ResultProvider                      = (*lookup)(nil)
	_ sdk.PreLLMCallCanProvideResponseHandler = (*lookup)(nil)
)

// ProvidedPrefix starts the text the plugin answers instead of the model.
const ProvidedPrefix = "Provided by lookup: "

func (*lookup) PreLLMCallCanProvideResponse(_ context.Context, req hooks.LLMRequest) (*hooks.ModelResponse, error) {
	msgs := req.Request.Messages
	if len(msgs) == 0 || msgs[len(msgs)-1].Role != hooks.RoleUser {
		return nil, nil
	}
	last := msgs[len(msgs)-1].Content
	usage := hooks.Usage{InputTokens: 2, OutputTokens: 7}
	if last == "PROVIDE CALL" {
		return &hooks.ModelResponse{Usage: usage, Message: hooks.Message{
			ToolCalls: []hooks.ToolCall{{ID: "call_provided_1", Name: "get_time", Arguments: json.RawMessage(`{"zone":"CET"}`)}},
		}}, nil
	}
	if text, ok := strings.CutPrefix(last, "PROVIDE: "); ok {
		return &hooks.ModelResponse{Usage: usage, Message: hooks.Message{Content: ProvidedPrefix + text}}, nil
	}
	return nil, nil
}

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

// CachedTime is the get_time result the plugin gives for UTC.
const CachedTime = `{"time":"12:00","zone":"UTC","source":"lookup cache"}`

// zone is the zone a get_time call asks for.
func zone(args json.RawMessage) string {
	var a struct {
		Zone string `json:"zone"`
	}
	json.Unmarshal(args, &a)
	return a.Zone
}

func (*lookup) PreToolCall(_ context.Context, call hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
	switch call.Name {
	case Blocked:
		return &hooks.PreToolCallDecision{Block: &hooks.Block{Message: BlockMessage}}, nil
	case "get_time":
		if z := zone(call.Arguments); z != strings.ToUpper(z) {
			args, _ := json.Marshal(map[string]string{"zone": strings.ToUpper(z)})
			return &hooks.PreToolCallDecision{ModifiedArgs: args}, nil
		}
	}
	return nil, nil
}

func (*lookup) PreToolCallCanProvideResult(_ context.Context, call hooks.ToolCallRequest) (*hooks.ToolResult, error) {
	if call.Name == "get_time" && zone(call.Arguments) == "UTC" {
		return &hooks.ToolResult{Content: CachedTime}, nil
	}
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
