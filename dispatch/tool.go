package dispatch

import (
	"context"
	"encoding/json"

	"github.com/hookhost/hookhost/hooks"
)

// ToolFunc runs a native tool on arguments that already passed the tool's
// input schema. Its value is marshalled to JSON as the tool result; an error
// becomes an error result the model can read.
type ToolFunc func(ctx context.Context, args json.RawMessage) (any, error)

// Tool is a native tool: its spec as offered to the model and its code.
type Tool struct {
	Spec hooks.ToolSpec
	Run  ToolFunc
}
