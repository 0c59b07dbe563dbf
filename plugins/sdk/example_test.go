package sdk_test

import (
	"context"
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
