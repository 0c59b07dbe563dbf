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

	"google.golang.org/grpc/peer"

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
	// carriers are those hook calls came by so far: "lane" or "grpc".
	carriers sync.Map
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

// arrived logs, the first time a hook call comes by each carrier, which
// one it came by: the lane, or gRPC (a call on gRPC, a unary RPC or the
// Hooks stream, has a peer in its context; one on the lane has none). The
// conformance check of this plugin asserts that over protocol 2 its calls
// came on the lane.
func (c *conform) arrived(ctx context.Context) {
	carrier := "lane"
	if _, ok := peer.FromContext(ctx); ok {
		carrier = "grpc"
	}
	if _, seen := c.carriers.LoadOrStore(carrier, true); !seen {
		c.Logger().Info("conform hook calls arrive", "carrier", carrier)
	}
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

func (c *conform) PreToolListFinalized(ctx context.Context, req hooks.ToolListRequest) (*hooks.ToolListOverride, error) {
	c.arrived(ctx)
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

func (c *conform) PreAPIRequestMutable(ctx context.Context, ev hooks.APIRequest) (*hooks.RequestPatch, error) {
	c.arrived(ctx)
	if ev.Request.Model != "patch-me" {
		return nil, nil
	}
	system, temperature := "patched by "+c.tag, 0.5
	return &hooks.RequestPatch{System: &system, Temperature: &temperature}, nil
}

func (c *conform) PreLLMCallCanProvideResponse(ctx context.Context, ev hooks.LLMRequest) (*hooks.ModelResponse, error) {
	c.arrived(ctx)
	if ev.Request.Model != "provide-me" {
		return nil, nil
	}
	return &hooks.ModelResponse{
		Message: hooks.Message{
			Role: hooks.RoleAssistant, Content: "provided by " + c.tag,
			ToolCalls: []hooks.ToolCall{{ID: "conform_call", Name: "conform__echo", Arguments: json.RawMessage(`{"text":"hi"}`)}},
		},
		Usage: hooks.Usage{InputTokens: 3, OutputTokens: 5},
	}, nil
}

func (c *conform) PostLLMCallCanReissue(ctx context.Context, ev hooks.LLMCall) (*hooks.Reissue, error) {
	c.arrived(ctx)
	if !strings.Contains(ev.Response.Message.Content, "REISSUE") {
		return nil, nil
	}
	messages := append(append([]hooks.Message{}, ev.Request.Messages...), hooks.Message{Role: hooks.RoleUser, Content: "again"})
	return &hooks.Reissue{Reason: "conform asked again", Patch: hooks.RequestPatch{Messages: messages}}, nil
}

func (c *conform) TransformLLMOutput(ctx context.Context, ev hooks.LLMOutput) (*hooks.TextReplacement, error) {
	c.arrived(ctx)
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

func (c *conform) PreToolCall(ctx context.Context, req hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
	c.arrived(ctx)
	s, ok := text(req.Arguments)
	switch {
	case !ok:
		return nil, nil
	case s == "forbidden":
		return &hooks.PreToolCallDecision{Block: &hooks.Block{Message: "conform blocks forbidden text"}}, nil
	case strings.HasPrefix(s, "ask:"):
		return &hooks.PreToolCallDecision{Ask: &hooks.ApprovalRequest{Reason: strings.TrimPrefix(s, "ask:")}}, nil
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
	c.arrived(ctx)
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

func (c *conform) TransformToolResult(ctx context.Context, ev hooks.ToolCallOutcome) (*hooks.ToolResult, error) {
	c.arrived(ctx)
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

func (c *conform) OnUserMessage(ctx context.Context, m hooks.UserMessage) (*hooks.UserMessageDecision, error) {
	c.arrived(ctx)
	switch {
	case m.Text == "forbidden":
		return &hooks.UserMessageDecision{Block: &hooks.Block{Message: "conform blocks forbidden text"}}, nil
	case strings.HasPrefix(m.Text, "context:"):
		return &hooks.UserMessageDecision{AdditionalContext: strings.TrimPrefix(m.Text, "context:") + " -- " + c.tag}, nil
	}
	return nil, nil
}

func (c *conform) PostToolCallCanAddContext(ctx context.Context, ev hooks.ToolCallOutcome) (*hooks.AddedContext, error) {
	c.arrived(ctx)
	if ev.Name == "conform__echo" && strings.HasPrefix(string(ev.Status), "provided_by:") {
		return &hooks.AddedContext{AdditionalContext: "echo checked by " + c.tag}, nil
	}
	return nil, nil
}

func main() {
	c := &conform{}
	c.defaults.record = c.record
	sdk.Serve(c)
}
