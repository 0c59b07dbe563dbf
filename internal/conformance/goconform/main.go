// Command goconform is the conform plugin of package conformance written
// with the Go SDK: the reference the other languages' conform plugins are
// held to, and the proof that the conformance checks can pass.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/plugins/sdk"
)

type conform struct {
	sdk.Base
	// defaults (hooks_gen.go) serves the hooks the spec does not name.
	defaults
	tag string

	mu   sync.Mutex
	seen []string
}

func (c *conform) Info() sdk.Info {
	object := func(props string, required ...string) json.RawMessage {
		if props == "" {
			return json.RawMessage(`{"type":"object"}`)
		}
		req, _ := json.Marshal(required)
		return json.RawMessage(fmt.Sprintf(`{"type":"object","properties":%s,"required":%s}`, props, req))
	}
	return sdk.Info{
		Name:    "conform",
		Version: "1.0.0",
		Config: struct {
			Tag string `json:"tag"`
		}{},
		HookMatchers: map[hooks.Name][]string{hooks.PreToolCallCanProvideResult: {"conform__*"}},
		Tools: []hooks.ToolSpec{
			{Name: "conform__echo", Description: "Echoes its text.", InputSchema: object(`{"text":{"type":"string"}}`, "text")},
			{Name: "conform__seen", Description: "Lists the observer events seen.", InputSchema: object("")},
			{Name: "conform__sleep", Description: "Sleeps ms milliseconds.", InputSchema: object(`{"ms":{"type":"integer"}}`, "ms")},
			{Name: "conform__raise", Description: "Always fails.", InputSchema: object("")},
		},
	}
}

func (c *conform) Configure(_ context.Context, raw json.RawMessage) error {
	var cfg map[string]any
	if err := json.Unmarshal(raw, &cfg); err != nil {
		return fmt.Errorf("config is not a JSON object: %v", err)
	}
	c.tag = "conform"
	for k, v := range cfg {
		if k != "tag" {
			return fmt.Errorf("unknown config key %q", k)
		}
		s, ok := v.(string)
		if !ok {
			return fmt.Errorf("config key tag must be a string, got %v", v)
		}
		c.tag = s
	}
	c.Logger().Warn("conform configured", "tag", c.tag)
	return nil
}

func (c *conform) record(line string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seen = append(c.seen, line)
	return nil
}

func (c *conform) OnSessionStart(_ context.Context, ev hooks.SessionStart) error {
	return c.record("on_session_start " + ev.SessionID)
}

func (c *conform) OnSessionEnd(_ context.Context, ev hooks.SessionEnd) error {
	return c.record(fmt.Sprintf("on_session_end %s %s", ev.SessionID, ev.Reason))
}

func (c *conform) PostLLMCall(_ context.Context, ev hooks.Inference) error {
	return c.record(fmt.Sprintf("post_llm_call %s %s", ev.SessionID, ev.Model))
}

func (c *conform) PostToolCall(_ context.Context, ev hooks.ToolCallOutcome) error {
	line := fmt.Sprintf("post_tool_call %s %s", ev.Name, ev.Status)
	if ev.Origin != "" {
		line += " " + string(ev.Origin)
	}
	return c.record(line)
}

func (c *conform) PreToolListFinalized(_ context.Context, req hooks.ToolListRequest) (*hooks.ToolListOverride, error) {
	kept := []hooks.ToolSpec{}
	for _, t := range req.Tools {
		if !strings.HasPrefix(t.Name, "hidden_") {
			kept = append(kept, t)
		}
	}
	if len(kept) == len(req.Tools) {
		return nil, nil
	}
	return &hooks.ToolListOverride{Tools: kept}, nil
}

func (c *conform) PreAPIRequestMutable(_ context.Context, ev hooks.APIRequest) (*hooks.RequestPatch, error) {
	if ev.Request.Model != "patch-me" {
		return nil, nil
	}
	system, temperature := "patched by "+c.tag, 0.5
	return &hooks.RequestPatch{System: &system, Temperature: &temperature}, nil
}

func (c *conform) PostLLMCallCanReissue(_ context.Context, ev hooks.LLMCall) (*hooks.Reissue, error) {
	if !strings.Contains(ev.Response.Message.Content, "REISSUE") {
		return nil, nil
	}
	messages := append(append([]hooks.Message{}, ev.Request.Messages...), hooks.Message{Role: hooks.RoleUser, Content: "again"})
	return &hooks.Reissue{Reason: "conform asked again", Patch: hooks.RequestPatch{Messages: messages}}, nil
}

func (c *conform) TransformLLMOutput(_ context.Context, ev hooks.LLMOutput) (*hooks.TextReplacement, error) {
	if ev.Text == "" {
		return nil, nil
	}
	return &hooks.TextReplacement{Text: ev.Text + " -- " + c.tag}, nil
}

// text is the arguments' "text" string, if the arguments are an object
// that has one.
func text(args json.RawMessage) (string, bool) {
	var a map[string]any
	if json.Unmarshal(args, &a) != nil {
		return "", false
	}
	s, ok := a["text"].(string)
	return s, ok
}

func (c *conform) PreToolCall(_ context.Context, req hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
	s, ok := text(req.Arguments)
	switch {
	case !ok:
		return nil, nil
	case s == "forbidden":
		return &hooks.PreToolCallDecision{Block: &hooks.Block{Message: "conform blocks forbidden text"}}, nil
	case strings.HasPrefix(s, "shout:"):
		var a map[string]any
		_ = json.Unmarshal(req.Arguments, &a)
		a["text"] = asciiUpper(strings.TrimPrefix(s, "shout:"))
		modified, err := json.Marshal(a)
		return &hooks.PreToolCallDecision{ModifiedArgs: modified}, err
	}
	return nil, nil
}

func (c *conform) PreToolCallCanProvideResult(ctx context.Context, req hooks.ToolCallRequest) (*hooks.ToolResult, error) {
	switch req.Name {
	case "conform__echo":
		s, _ := text(req.Arguments)
		if s == "fail" {
			return &hooks.ToolResult{Content: "conform refuses to echo fail", IsError: true}, nil
		}
		echo := map[string]string{"echo": s, "tag": c.tag}
		if req.Origin != "" {
			echo["origin"] = string(req.Origin)
		}
		out, err := json.Marshal(echo)
		return &hooks.ToolResult{Content: string(out)}, err
	case "conform__seen":
		c.mu.Lock()
		out, err := json.Marshal(append([]string{}, c.seen...))
		c.mu.Unlock()
		return &hooks.ToolResult{Content: string(out)}, err
	case "conform__sleep":
		var a struct{ MS int64 }
		if err := json.Unmarshal(req.Arguments, &a); err != nil {
			return nil, err
		}
		select {
		case <-time.After(time.Duration(a.MS) * time.Millisecond):
		case <-ctx.Done():
		}
		return &hooks.ToolResult{Content: "slept"}, nil
	case "conform__raise":
		return nil, errors.New("conform__raise always fails")
	}
	return nil, nil
}

func (c *conform) TransformToolResult(_ context.Context, ev hooks.ToolCallOutcome) (*hooks.ToolResult, error) {
	switch {
	case ev.Name == "conform__echo" && strings.HasPrefix(string(ev.Status), "provided_by:"):
		return &hooks.ToolResult{Content: ev.Result.Content + " (transformed)", IsError: ev.Result.IsError}, nil
	case ev.Name == "native_upper":
		return &hooks.ToolResult{Content: asciiUpper(ev.Result.Content), IsError: ev.Result.IsError}, nil
	}
	return nil, nil
}

// asciiUpper upper-cases ASCII letters only, as the spec says, so that
// every language agrees on the answer.
func asciiUpper(s string) string {
	return string(bytes.Map(func(r rune) rune {
		if 'a' <= r && r <= 'z' {
			return r - 'a' + 'A'
		}
		return r
	}, []byte(s)))
}

func main() {
	c := &conform{}
	c.defaults.record = c.record
	sdk.Serve(c)
}
