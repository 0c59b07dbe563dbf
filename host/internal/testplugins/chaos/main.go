// Command chaos is a test plugin that answers with what chaos testing found
// at the plugin boundary, as its config asks:
//
//	temperature  a request patch (and, with reissue, a reissue) setting
//	             this temperature, parsed by strconv.ParseFloat, so
//	             "NaN", "+Inf" and "1.5" are all possible; the patch also
//	             sets the system prompt to "patched by chaos"
//	reissue      ask once per iteration for a reissue with that temperature
//
// It owns chaos__bad, whose provided result is plain text that is not valid
// UTF-8, and transforms every result into {"saw": <the result it was
// shown>}, so a test reads exactly the text a later transform_tool_result
// receives. Its plugin name is its base name.
package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/plugins/sdk"
)

// BadText is the provided result of chaos__bad: "\xff" is no UTF-8.
const BadText = "bad \xff byte"

type chaos struct {
	sdk.Base
	name        string
	temperature *float64
	reissue     bool
}

func (c *chaos) Info() sdk.Info {
	return sdk.Info{Name: c.name, Version: "1.0.0", Tools: []hooks.ToolSpec{{
		Name: c.name + "__bad", Description: "answers with text that is not UTF-8",
		InputSchema: json.RawMessage(`{"type":"object"}`),
	}}}
}

func (c *chaos) Configure(_ context.Context, raw json.RawMessage) error {
	var cfg struct {
		Temperature string `json:"temperature"`
		Reissue     bool   `json:"reissue"`
	}
	if err := sdk.DecodeConfig(raw, &cfg); err != nil {
		return err
	}
	if cfg.Temperature != "" {
		t, err := strconv.ParseFloat(cfg.Temperature, 64)
		if err != nil {
			return err
		}
		c.temperature = &t
	}
	c.reissue = cfg.Reissue
	return nil
}

func (c *chaos) PreAPIRequestMutable(context.Context, hooks.APIRequest) (*hooks.RequestPatch, error) {
	if c.temperature == nil {
		return nil, nil
	}
	system := "patched by chaos"
	return &hooks.RequestPatch{Temperature: c.temperature, System: &system}, nil
}

func (c *chaos) PostLLMCallCanReissue(context.Context, hooks.LLMCall) (*hooks.Reissue, error) {
	if !c.reissue || c.temperature == nil {
		return nil, nil
	}
	return &hooks.Reissue{Patch: hooks.RequestPatch{Temperature: c.temperature}, Reason: "chaos"}, nil
}

func (c *chaos) PreToolCallCanProvideResult(_ context.Context, req hooks.ToolCallRequest) (*hooks.ToolResult, error) {
	if req.Name != c.name+"__bad" {
		return nil, nil
	}
	return &hooks.ToolResult{Content: BadText}, nil
}

func (c *chaos) TransformToolResult(_ context.Context, ev hooks.ToolCallOutcome) (*hooks.ToolResult, error) {
	out, err := json.Marshal(map[string]string{"saw": ev.Result.Content})
	if err != nil {
		return nil, err
	}
	return &hooks.ToolResult{Content: string(out)}, nil
}

func main() { sdk.Serve(&chaos{name: filepath.Base(os.Args[0])}) }
