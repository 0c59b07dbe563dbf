// Command redactor is an example hookhost plugin that masks secrets in tool
// results before the model sees them, on transform_tool_result: API keys
// (OpenAI-style sk-…, AWS AKIA…, GitHub ghp_…), bearer tokens, values
// assigned to secret-looking keys (password=…, "api_key": "…"), email
// addresses, and patterns of the operator's own. See README.md.
package main

import (
	"context"
	"encoding/json"
	"sync/atomic"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/plugins/sdk"
)

type redactor struct {
	sdk.Base
	// rules is replaced whole by Configure while hooks may be running.
	rules atomic.Pointer[rules]
}

var (
	_ sdk.Configurer        = (*redactor)(nil)
	_ sdk.ResultTransformer = (*redactor)(nil)
)

// Info declares no matchers: a secret can turn up in any tool's result.
func (*redactor) Info() sdk.Info {
	return sdk.Info{Name: "redactor", Version: "1.0.0", Config: config{}}
}

func (r *redactor) Configure(_ context.Context, raw json.RawMessage) error {
	rs, err := parseRules(raw)
	if err != nil {
		return err
	}
	r.rules.Store(rs)
	return nil
}

// TransformToolResult returns the result with its secrets masked, or nil
// (no opinion) when there was nothing to mask, so that the trace shows
// the redactor only where it changed something.
func (r *redactor) TransformToolResult(_ context.Context, ev hooks.ToolCallOutcome) (*hooks.ToolResult, error) {
	rs := r.rules.Load()
	if rs == nil {
		rs = defaultRules
	}
	content, kinds := rs.redact(ev.Result.Content)
	if len(kinds) == 0 {
		return nil, nil
	}
	r.Logger().Info("masked secrets in a tool result", "tool", ev.Name, "call", ev.CallID, "kinds", kinds)
	return &hooks.ToolResult{Content: content, IsError: ev.Result.IsError}, nil
}

func main() { sdk.Serve(&redactor{}) }
