// Command decider is a test plugin whose pre_tool_call answer is chosen by
// the call's arguments, so that several plugins started from one binary
// (its name is the base name it was started as) can block, ask and modify
// the same call: the argument named after the plugin says what it answers
// ("block", "ask" or "modify"), and without one the plugin answers its
// config's "default" (no opinion when unset). It also serves one tool,
// <name>__stamp, whose result is the arguments it ran with.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/plugins/sdk"
)

type decider struct {
	sdk.Base
	name string
	def  string
}

var (
	_ sdk.Configurer     = (*decider)(nil)
	_ sdk.ToolCallGuard  = (*decider)(nil)
	_ sdk.ResultProvider = (*decider)(nil)
)

type config struct {
	Default string `json:"default"`
}

func (d *decider) Info() sdk.Info {
	return sdk.Info{Name: d.name, Version: "1.0.0", Config: config{},
		HookMatchers: map[hooks.Name][]string{hooks.PreToolCallCanProvideResult: {d.name + "__*"}},
		Tools: []hooks.ToolSpec{{Name: d.name + "__stamp", Description: "returns the arguments it ran with",
			InputSchema: json.RawMessage(`{"type":"object"}`)}}}
}

func (d *decider) Configure(_ context.Context, raw json.RawMessage) error {
	var c config
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &c); err != nil {
			return err
		}
	}
	d.def = c.Default
	return nil
}

func (d *decider) PreToolCall(_ context.Context, req hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
	var args map[string]any
	if err := json.Unmarshal(req.Arguments, &args); err != nil {
		return nil, nil
	}
	what, _ := args[d.name].(string)
	if what == "" {
		what = d.def
	}
	switch what {
	case "block":
		return &hooks.PreToolCallDecision{Block: &hooks.Block{Message: d.name + " blocks " + req.Name}}, nil
	case "ask":
		return &hooks.PreToolCallDecision{Ask: &hooks.ApprovalRequest{Reason: d.name + " wants a person to approve " + req.Name}}, nil
	case "modify":
		args["modified_by_"+d.name] = true
		b, err := json.Marshal(args)
		return &hooks.PreToolCallDecision{ModifiedArgs: b}, err
	}
	return nil, nil
}

func (d *decider) PreToolCallCanProvideResult(_ context.Context, req hooks.ToolCallRequest) (*hooks.ToolResult, error) {
	if req.Name != d.name+"__stamp" {
		return nil, nil
	}
	b, err := json.Marshal(map[string]any{"stamped_by": d.name, "args": json.RawMessage(req.Arguments)})
	return &hooks.ToolResult{Content: string(b)}, err
}

func main() {
	name := filepath.Base(os.Args[0])
	if name == "" {
		fmt.Fprintln(os.Stderr, "decider: no name to serve under")
		os.Exit(1)
	}
	sdk.Serve(&decider{name: name})
}
