package sdk

import (
	"context"
	"encoding/json"

	"github.com/hookhost/hookhost/hooks"
)

// Tool is a plugin-owned tool written as a Go function: the SDK derives its
// JSON schema from the function's argument type, decodes the model's
// arguments strictly into it, and answers pre_tool_call_can_provide_result
// for it. List tools in Info.ToolFuncs.
type Tool struct {
	spec hooks.ToolSpec
	run  func(ctx context.Context, args json.RawMessage) hooks.ToolResult
}

// NewTool declares the tool name, answered by run. Args must be a struct
// type; its exported fields are the tool's parameters (see the package
// documentation for the tags that shape the schema). The arguments are
// decoded strictly: an unknown or mistyped field is an error result the
// model can read, and run is not called. An error from run becomes the
// error result {"error": "<its message>"}; any other value is marshalled
// as the JSON result.
func NewTool[Args any](name, description string, run func(ctx context.Context, args Args) (any, error)) Tool {
	panic("sdk: NewTool: not written yet")
}

// Spec is the tool as declared in the manifest.
func (t Tool) Spec() hooks.ToolSpec { return t.spec }
