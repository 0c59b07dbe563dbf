// Command contextplugin is a plugin for the tests of on_user_message and
// post_tool_call_can_add_context. A user message holding "forbidden" is
// blocked with BlockMessage; any other gets UserContext. It owns the tool
// ctx__lookup, whose result it provides, and adds ToolContext (with the
// tool's name) to the result of every tool call.
package main

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/plugins/sdk"
)

// What the plugin answers; the tests look for these texts.
const (
	BlockMessage = "That request is not allowed here."
	UserContext  = "ticket ACME-7 is open"
	ToolContext  = "checked by ctx: "
)

type ctxPlugin struct{ sdk.Base }

var (
	_ sdk.OnUserMessageHandler = (*ctxPlugin)(nil)
	_ sdk.ResultProvider       = (*ctxPlugin)(nil)
)

func (*ctxPlugin) Info() sdk.Info {
	return sdk.Info{Name: "ctx", Version: "1.0.0", Tools: []hooks.ToolSpec{{
		Name:        "ctx__lookup",
		Description: "looks up the ticket's status",
		InputSchema: json.RawMessage(`{"type":"object","properties":{}}`),
	}}}
}

func (*ctxPlugin) OnUserMessage(_ context.Context, m hooks.UserMessage) (*hooks.UserMessageDecision, error) {
	if strings.Contains(m.Text, "forbidden") {
		return &hooks.UserMessageDecision{Block: &hooks.Block{Message: BlockMessage}}, nil
	}
	return &hooks.UserMessageDecision{AdditionalContext: UserContext}, nil
}

func (*ctxPlugin) PreToolCallCanProvideResult(_ context.Context, req hooks.ToolCallRequest) (*hooks.ToolResult, error) {
	if req.Name != "ctx__lookup" {
		return nil, nil
	}
	return &hooks.ToolResult{Content: `{"status":"open"}`}, nil
}

func (*ctxPlugin) PostToolCallCanAddContext(_ context.Context, ev hooks.ToolCallOutcome) (*hooks.AddedContext, error) {
	return &hooks.AddedContext{AdditionalContext: ToolContext + ev.Name}, nil
}

func main() { sdk.Serve(&ctxPlugin{}) }
