// Package dispatch runs tool calls: the native tool registry and the
// pipeline every call goes through, in the catalogue's order:
//
//	pre_tool_call → pre_tool_call_can_provide_result → native dispatch
//	(only when no plugin provided) → post_tool_call → transform_tool_result
//
// The native step runs a registered tool or, through Pipeline.Hosted, one
// of a set that changes while it is used (the MCP servers' tools).
//
// A plugin tool's arguments are checked against the schema its owner
// declared after pre_tool_call and before any plugin is asked for a
// result, so a provider never sees arguments its tool does not accept; a
// native tool's are checked against its own schema right before it runs.
// Both checks are package schema's, compiled once per tool, and fail with
// the same error text.
//
// Whatever goes wrong on the way (a block, an unknown tool, arguments that
// are not JSON or fail the tool's schema, a tool error or panic) becomes an
// error tool result the model can read, never an aborted conversation.
package dispatch

import (
	"fmt"

	"github.com/hookhost/hookhost/dispatch/schema"
	"github.com/hookhost/hookhost/hooks"
)

// Registry holds the native tools by name, in registration order, with
// their input schemas compiled once.
type Registry struct {
	byName  map[string]Tool
	schemas map[string]*schema.Schema
	order   []string
}

// NewRegistry checks and registers tools: legal provider names, no
// duplicates, a usable input schema and a Run function.
func NewRegistry(tools ...Tool) (*Registry, error) {
	r := &Registry{byName: map[string]Tool{}, schemas: map[string]*schema.Schema{}}
	for _, t := range tools {
		name := t.Spec.Name
		switch {
		case !hooks.ValidToolName(name):
			return nil, fmt.Errorf("host: native tool name %q must match ^[a-zA-Z0-9_-]{1,64}$", name)
		case r.byName[name].Run != nil:
			return nil, fmt.Errorf("host: native tool %q registered twice", name)
		case t.Run == nil:
			return nil, fmt.Errorf("host: native tool %q has no Run function", name)
		}
		sch, err := schema.Compile(t.Spec.InputSchema)
		if err != nil {
			return nil, fmt.Errorf("host: native tool %q: %w", name, err)
		}
		r.byName[name] = t
		r.schemas[name] = sch
		r.order = append(r.order, name)
	}
	return r, nil
}

// Specs returns the native tools' specs in registration order.
func (r *Registry) Specs() []hooks.ToolSpec {
	if r == nil {
		return nil
	}
	specs := make([]hooks.ToolSpec, len(r.order))
	for i, n := range r.order {
		specs[i] = r.byName[n].Spec
	}
	return specs
}

// Lookup finds a native tool by name.
func (r *Registry) Lookup(name string) (Tool, bool) {
	if r == nil {
		return Tool{}, false
	}
	t, ok := r.byName[name]
	return t, ok
}

// schemaOf returns the compiled input schema of a registered tool.
func (r *Registry) schemaOf(name string) *schema.Schema {
	if r == nil {
		return nil
	}
	return r.schemas[name]
}
