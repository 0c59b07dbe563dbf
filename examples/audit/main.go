// Command audit is an example hookhost plugin that keeps an audit trail of
// every tool call, on post_tool_call, and lets the model read it through a
// typed tool of its own, audit__recent. See README.md.
//
// It shows per-hook matchers: the plugin observes every tool, but answers
// pre_tool_call_can_provide_result only for its own tools, so a call of
// any other tool costs it no synchronous round trip at all.
package main

import (
	"context"
	"encoding/json"
	"sync/atomic"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/plugins/sdk"
)

type audit struct {
	sdk.Base
	// trail is set by Configure; hooks run concurrently with each other,
	// and on other goroutines than Configure.
	trail atomic.Pointer[trail]
}

var (
	_ sdk.Configurer       = (*audit)(nil)
	_ sdk.ToolCallObserver = (*audit)(nil)
)

func (a *audit) Info() sdk.Info {
	return sdk.Info{
		Name:    "audit",
		Version: "1.0.0",
		Config:  config{},
		HookMatchers: map[hooks.Name][]string{
			hooks.PostToolCall:                {},           // every tool
			hooks.PreToolCallCanProvideResult: {"audit__*"}, // its own tools only
		},
		ToolFuncs: []sdk.Tool{
			sdk.NewTool("audit__recent",
				"Audit trail: the latest tool calls of this host, newest first, with tool name, status and duration.",
				a.recent),
		},
	}
}

func (a *audit) Configure(_ context.Context, raw json.RawMessage) error {
	conf, err := parseConfig(raw)
	if err != nil {
		return err
	}
	t, err := openTrail(conf)
	if err != nil {
		return err
	}
	if old := a.trail.Swap(t); old != nil {
		old.close()
	}
	return nil
}

// PostToolCall records every finished tool call, its own tool's included.
func (a *audit) PostToolCall(_ context.Context, ev hooks.ToolCallOutcome) error {
	t := a.trail.Load()
	if t == nil {
		return errNotConfigured
	}
	return t.add(entryOf(ev))
}

// recentArgs are audit__recent's arguments; the model sees the schema
// derived from them.
type recentArgs struct {
	Limit *int    `json:"limit" minimum:"1" maximum:"100" default:"10" desc:"How many calls to return, newest first."`
	Tool  *string `json:"tool" desc:"Only calls of this tool."`
}

func (a *audit) recent(_ context.Context, args recentArgs) (any, error) {
	t := a.trail.Load()
	if t == nil {
		return nil, errNotConfigured
	}
	limit := 10
	if args.Limit != nil {
		limit = *args.Limit
	}
	tool := ""
	if args.Tool != nil {
		tool = *args.Tool
	}
	return map[string]any{"calls": t.recent(limit, tool)}, nil
}

func main() { sdk.Serve(&audit{}) }
