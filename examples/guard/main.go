// Command guard is an example hookhost plugin that blocks tool calls by
// rule, on pre_tool_call. A rule names a tool (a glob), where the call goes
// (its origin, such as "mcp:fs", a glob too) or both and, optionally, a
// regular expression its arguments must match; the model gets the block
// message as the tool's error result. See README.md.
//
// Run with fail_closed = true in its config entry, a guard that crashes or
// hangs blocks every call instead of letting it through.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/plugins/sdk"
)

type guard struct {
	sdk.Base
	// rules is replaced whole by Configure while hooks may be running.
	rules atomic.Pointer[ruleset]
}

var (
	_ sdk.Configurer    = (*guard)(nil)
	_ sdk.ToolCallGuard = (*guard)(nil)
)

// Info declares no matchers: the host then asks the guard about every
// tool, so the rules alone decide, and a fail_closed guard that is down
// stops every call rather than only the ones it would have matched.
func (*guard) Info() sdk.Info { return sdk.Info{Name: "guard", Version: "1.0.0", Config: config{}} }

func (g *guard) Configure(_ context.Context, raw json.RawMessage) error {
	rs, err := parseRules(raw)
	if err != nil {
		return err
	}
	if len(rs.deny) == 0 {
		g.Logger().Warn("no deny rules configured; every tool call is allowed")
	}
	g.rules.Store(rs)
	return nil
}

func (g *guard) PreToolCall(_ context.Context, call hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
	rs := g.rules.Load()
	if rs == nil {
		// The host always configures a plugin first; failing here lets
		// fail_closed block rather than let an unconfigured guard wave
		// calls through.
		return nil, errors.New("guard: no rules loaded: Configure was never called")
	}
	r, ok := rs.match(call.Name, call.Origin, call.Arguments)
	if !ok {
		return nil, nil
	}
	g.Logger().Info("blocked a tool call", "tool", call.Name, "origin", call.Origin, "rule", r.index, "session", call.SessionID, "call", call.CallID)
	return &hooks.PreToolCallDecision{Block: &hooks.Block{Message: rs.message(r, call.Name)}}, nil
}

func main() { sdk.Serve(&guard{}) }
