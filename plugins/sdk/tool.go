package sdk

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"runtime/debug"
	"strings"

	"github.com/hashicorp/go-hclog"

	"github.com/hookhost/hookhost/hooks"
)

// Tool is a plugin-owned tool written as a Go function: the SDK derives its
// JSON schema from the function's argument type, decodes the model's
// arguments strictly into it, and answers pre_tool_call_can_provide_result
// for it. List tools in Info.ToolFuncs.
type Tool struct {
	spec hooks.ToolSpec
	run  func(ctx context.Context, args json.RawMessage, log hclog.Logger) hooks.ToolResult
}

// NewTool declares the tool name, answered by run. Args must be a struct
// type (or a pointer to one); its exported fields are the tool's parameters
// (see the package documentation for the tags that shape the schema). The
// arguments are decoded strictly: an unknown, missing or mistyped field is
// the error result {"error": "tool <name>: arguments: <what is wrong>"},
// which the model can read and correct, and run is not called. An error
// from run becomes the error result {"error": "<its message>"}, a panic in
// run an error result too (logged with its stack); any other value is
// marshalled as the JSON result.
//
// NewTool panics if Args has no JSON schema it can derive (a channel, a
// func, a map with non-string keys, a recursive type, a tag that does not
// fit its field): that is a bug in the plugin, caught when it starts.
func NewTool[Args any](name, description string, run func(ctx context.Context, args Args) (any, error)) Tool {
	if run == nil {
		panic(fmt.Sprintf("sdk: NewTool(%q): run is nil", name))
	}
	t := reflect.TypeFor[Args]()
	c, err := newArgsCodec(t)
	if err != nil {
		panic(fmt.Sprintf("sdk: NewTool(%q): argument type %v: %v", name, t, err))
	}
	schema, err := marshalJSON(c.schema("", nil))
	if err != nil {
		panic(fmt.Sprintf("sdk: NewTool(%q): encoding the schema: %v", name, err))
	}
	return Tool{
		spec: hooks.ToolSpec{Name: name, Description: description, InputSchema: schema},
		run: func(ctx context.Context, raw json.RawMessage, log hclog.Logger) hooks.ToolResult {
			var args Args
			if errs := c.decodeArgs(reflect.ValueOf(&args).Elem(), raw); len(errs) > 0 {
				msgs := make([]string, len(errs))
				for i, e := range errs {
					msgs[i] = e.Error()
				}
				return errorResult(fmt.Sprintf("tool %s: arguments: %s", name, strings.Join(msgs, "; ")))
			}
			v, err := runRecovered(ctx, name, args, run, log)
			if err != nil {
				return errorResult(err.Error())
			}
			content, err := marshalJSON(v)
			if err != nil {
				log.Error("tool result cannot be encoded as JSON", "tool", name, "error", err)
				return errorResult(fmt.Sprintf("tool %s: its result cannot be encoded as JSON: %v", name, strings.TrimPrefix(err.Error(), "json: ")))
			}
			return hooks.ToolResult{Content: string(content)}
		},
	}
}

// Spec is the tool as declared in the manifest.
func (t Tool) Spec() hooks.ToolSpec { return t.spec }

// Call runs the tool on raw arguments exactly as the SDK does when the host
// asks for its result, so a tool can be tested on its own. A panic in run
// is logged through hclog's default logger.
func (t Tool) Call(ctx context.Context, args json.RawMessage) hooks.ToolResult {
	return t.call(ctx, args, hclog.Default())
}

func (t Tool) call(ctx context.Context, args json.RawMessage, log hclog.Logger) hooks.ToolResult {
	if t.run == nil {
		return errorResult(fmt.Sprintf("tool %s: not declared with sdk.NewTool", t.spec.Name))
	}
	return t.run(ctx, args, log)
}

// runRecovered calls run, turning a panic into an error so that one bug
// costs one tool call, not the plugin process.
func runRecovered[Args any](ctx context.Context, name string, args Args, run func(context.Context, Args) (any, error), log hclog.Logger) (v any, err error) {
	defer func() {
		if p := recover(); p != nil {
			log.Error("tool panicked", "tool", name, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			v, err = nil, fmt.Errorf("tool %s failed: it panicked: %v", name, p)
		}
	}()
	return run(ctx, args)
}

// errorResult is {"error": msg} as an error result.
func errorResult(msg string) hooks.ToolResult {
	return hooks.ToolResult{Content: string(encodeJSON(map[string]string{"error": msg})), IsError: true}
}
