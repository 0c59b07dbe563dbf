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
	// Origin is what tool hooks are told of where the call goes; empty is
	// hooks.OriginNative. A configured MCP server's tool run by hookhost
	// has hooks.OriginMCP(server).
	Origin hooks.Origin
}

// ToolSet is a set of tools hookhost runs itself that may change while it
// is used, such as the tools of the MCP servers offered to the model: each
// call reads it anew. A Registry is one that never changes.
type ToolSet interface {
	// Specs returns the tools offered now, in order.
	Specs() []hooks.ToolSpec
	// Lookup finds a tool offered now by name.
	Lookup(name string) (Tool, bool)
}

var _ ToolSet = (*Registry)(nil)
