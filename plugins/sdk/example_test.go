package sdk_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/plugins/sdk"
)

// redactor is a complete plugin: it hides API keys in tool results before
// the model sees them.
type redactor struct{ sdk.Base }

var apiKey = regexp.MustCompile(`sk-[A-Za-z0-9]+`)

func (redactor) Info() sdk.Info { return sdk.Info{Name: "redactor", Version: "1.0.0"} }

func (r *redactor) TransformToolResult(_ context.Context, ev hooks.ToolCallOutcome) (*hooks.ToolResult, error) {
	if !apiKey.MatchString(ev.Result.Content) {
		return nil, nil // no opinion: the result stays as it is
	}
	r.Logger().Info("redacted a tool result", "tool", ev.Name)
	return &hooks.ToolResult{Content: apiKey.ReplaceAllString(ev.Result.Content, "[redacted]"), IsError: ev.Result.IsError}, nil
}

// This is the whole main package of a plugin binary. Build it, put it in the
// host's plugins.dir and list its name in plugins.enabled.
func ExampleServe() {
	sdk.Serve(&redactor{})
}

func ExampleAdapt() {
	p := sdk.Adapt(&redactor{})
	fmt.Println(p.Manifest().Name, p.Manifest().Hooks)

	res, _ := hooks.Ask[*hooks.ToolResult](context.Background(), p, hooks.TransformToolResult, hooks.ToolCallOutcome{
		Name:   "read_env",
		Result: hooks.ToolResult{Content: "OPENAI_API_KEY=sk-abc123"},
	})
	fmt.Println(res.Content)

	// Hooks the plugin does not implement answer "no opinion".
	d, err := hooks.Ask[*hooks.PreToolCallDecision](context.Background(), p, hooks.PreToolCall, hooks.ToolCallRequest{Name: "read_env"})
	fmt.Println(d, err)
	// Output:
	// redactor [transform_tool_result]
	// OPENAI_API_KEY=[redacted]
	// <nil> <nil>
}

// burnArgs are the arguments of a typed tool: the schema the model sees is
// derived from the fields and their tags.
type burnArgs struct {
	Window *string `json:"window" enum:"today,7d,all" default:"today" desc:"period to total"`
	Model  string  `json:"model,omitempty" desc:"only this model"`
}

func ExampleNewTool() {
	burn := sdk.NewTool("ledger__get_burn", "cost in USD over a window", func(_ context.Context, a burnArgs) (any, error) {
		window := "today"
		if a.Window != nil {
			window = *a.Window
		}
		if window == "all" {
			return nil, errors.New("the ledger for all time is archived; ask for today or 7d")
		}
		return map[string]any{"window": window, "usd": 1.25}, nil
	})
	// List it in Info.ToolFuncs; the SDK answers it.
	fmt.Println(string(burn.Spec().InputSchema))

	ctx := context.Background()
	fmt.Println(burn.Call(ctx, json.RawMessage(`{"window":"7d"}`)).Content)
	fmt.Println(burn.Call(ctx, json.RawMessage(`{"window":"all"}`)).Content)
	fmt.Println(burn.Call(ctx, json.RawMessage(`{"window":"month"}`)).Content)
	fmt.Println(burn.Call(ctx, json.RawMessage(`{"windw":"7d"}`)).Content)
	// Output:
	// {"type":"object","properties":{"window":{"type":"string","description":"period to total","enum":["today","7d","all"],"default":"today"},"model":{"type":"string","description":"only this model"}},"additionalProperties":false}
	// {"usd":1.25,"window":"7d"}
	// {"error":"the ledger for all time is archived; ask for today or 7d"}
	// {"error":"tool ledger__get_burn: arguments: args.window: must be one of \"today\", \"7d\", \"all\", got string \"month\""}
	// {"error":"tool ledger__get_burn: arguments: args: unexpected property \"windw\"; allowed properties are \"window\", \"model\""}
}

// ledger audits every tool call but answers only its own tools.
type ledger struct{ sdk.Base }

func (*ledger) Info() sdk.Info {
	return sdk.Info{
		Name: "ledger",
		HookMatchers: map[hooks.Name][]string{
			hooks.PostToolCall:                {},            // every tool
			hooks.PreToolCallCanProvideResult: {"ledger__*"}, // its own
		},
		Tools: []hooks.ToolSpec{{Name: "ledger__total", Description: "total spent"}},
	}
}

func (*ledger) PostToolCall(context.Context, hooks.ToolCallOutcome) error { return nil }

func (*ledger) PreToolCallCanProvideResult(_ context.Context, call hooks.ToolCallRequest) (*hooks.ToolResult, error) {
	return &hooks.ToolResult{Content: `{"usd":1.25}`}, nil
}

func ExampleInfo_hookMatchers() {
	m := sdk.Adapt(&ledger{}).Manifest()
	for _, h := range m.Hooks {
		fmt.Printf("%s: %q\n", h, m.MatchersFor(h))
	}
	// Output:
	// pre_tool_call_can_provide_result: ["ledger__*"]
	// post_tool_call: []
}
