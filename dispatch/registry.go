// Package dispatch runs tool calls: the native tool registry and the
// pipeline every call goes through, in the catalogue's order:
//
//	pre_tool_call → pre_tool_call_can_provide_result → native dispatch
//	(only when no plugin provided) → post_tool_call → transform_tool_result
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

// Registry holds the native tools by name, in registration order.
type Registry struct {
	byName map[string]Tool
	order  []string
}

// NewRegistry checks and registers tools: legal provider names, no
// duplicates, a usable input schema and a Run function.
func NewRegistry(tools ...Tool) (*Registry, error) {
	r := &Registry{byName: map[string]Tool{}}
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
		if len(t.Spec.InputSchema) > 0 {
			if err := schema.Check(t.Spec.InputSchema); err != nil {
				return nil, fmt.Errorf("host: native tool %q: bad input schema: %w", name, err)
			}
		}
		r.byName[name] = t
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
