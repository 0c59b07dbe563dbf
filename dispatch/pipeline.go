package dispatch

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/hookhost/hookhost/dispatch/schema"
	"github.com/hookhost/hookhost/hooks"
)

// Path says what answered a tool call.
type Path string

// The ways a call can be answered.
const (
	PathNative   Path = "native"   // a native tool ran (successfully or not)
	PathProvided Path = "provided" // a plugin supplied the result
	PathBlocked  Path = "blocked"  // a pre_tool_call plugin blocked it
	PathRejected Path = "rejected" // never ran: bad arguments or unknown tool
)

// Outcome is everything that happened to one tool call.
type Outcome struct {
	Call          hooks.ToolCall // as run: arguments after every modify
	Result        hooks.ToolResult
	Status        hooks.CallStatus
	Path          Path
	AnsweredBy    string   // the plugin that blocked or provided
	ModifiedBy    []string // plugins whose pre_tool_call modify applied
	TransformedBy []string // plugins whose transform_tool_result applied
	Duration      time.Duration
}

// Pipeline runs tool calls through the hooks and the native registry. Its
// Bus may be nil (the bypass route): then only native dispatch happens.
type Pipeline struct {
	Registry *Registry
	Bus      *hooks.Bus
}

// Run executes one tool call. It always returns a result for the model,
// and its content is always JSON: a plugin's plain-text answer, provided or
// transformed, is carried as a JSON string (hooks.ToolResult.AsJSON).
func (p *Pipeline) Run(ctx context.Context, sessionID string, call hooks.ToolCall) Outcome {
	start := time.Now()
	out := p.decide(ctx, sessionID, &call)
	out.Call = call
	out.Result = out.Result.AsJSON()
	out.Duration = time.Since(start)

	ev := hooks.ToolCallOutcome{
		SessionID: sessionID, CallID: call.ID, Name: call.Name, Arguments: call.Arguments,
		Result: out.Result, Status: out.Status, Duration: out.Duration,
	}
	p.Bus.ToolCallDone(ev)
	out.Result, out.TransformedBy = p.Bus.TransformToolResult(ctx, ev)
	if len(out.TransformedBy) > 0 {
		out.Result = out.Result.AsJSON()
	}
	return out
}

// decide runs the part of the pipeline that produces the result; call's
// arguments are updated by any modify.
func (p *Pipeline) decide(ctx context.Context, sessionID string, call *hooks.ToolCall) Outcome {
	args, err := normalizeArgs(call.Arguments)
	if err != nil {
		return Outcome{}.rejected(fmt.Sprintf("tool %q: arguments are not a valid JSON object: %v", call.Name, err))
	}
	call.Arguments = args

	req := hooks.ToolCallRequest{SessionID: sessionID, CallID: call.ID, Name: call.Name, Arguments: args}
	pre := p.Bus.PreToolCall(ctx, req)
	out := Outcome{ModifiedBy: pre.ModifiedBy}
	call.Arguments = pre.Arguments
	req.Arguments = pre.Arguments
	if pre.Blocked {
		out.Path, out.AnsweredBy, out.Status = PathBlocked, pre.BlockedBy, hooks.StatusBlocked
		out.Result = errorResult(pre.Message)
		return out
	}

	// Past this point the call does work; a turn cancelled while the guards
	// were asked must not run it unapproved.
	if ctx.Err() != nil {
		return out.rejected(fmt.Sprintf("tool %q not run: the turn was cancelled", call.Name))
	}
	if r := p.Bus.ProvideResult(ctx, req); r != nil {
		out.Path, out.AnsweredBy, out.Status = PathProvided, r.Plugin, hooks.ProvidedBy(r.Plugin)
		out.Result = r.ToolResult
		return out
	}

	tool, ok := p.Registry.Lookup(call.Name)
	if !ok {
		msg := fmt.Sprintf("unknown tool %q", call.Name)
		if owner, isPlugin := p.Bus.ToolOwner(call.Name); isPlugin {
			msg = fmt.Sprintf("tool %q is served by plugin %q, which gave no result (the plugin may be down or may not serve this tool)", call.Name, owner)
		}
		return out.rejected(msg)
	}
	if err := schema.Validate(tool.Spec.InputSchema, call.Arguments); err != nil {
		return out.rejected(fmt.Sprintf("tool %q: %v", call.Name, err))
	}
	out.Path = PathNative
	out.Result, out.Status = runNative(ctx, tool, call.Arguments)
	return out
}

// runNative calls a native tool, turning an error or a panic into an error
// result so one broken tool cannot end a conversation.
func runNative(ctx context.Context, tool Tool, args json.RawMessage) (res hooks.ToolResult, status hooks.CallStatus) {
	defer func() {
		if v := recover(); v != nil {
			res, status = errorResult(fmt.Sprintf("tool %q crashed: %v", tool.Spec.Name, v)), hooks.StatusError
		}
	}()
	v, err := tool.Run(ctx, args)
	if err != nil {
		// The model knows which tool it called; the bare message reads best.
		return errorResult(err.Error()), hooks.StatusError
	}
	content, err := json.Marshal(v)
	if err != nil {
		return errorResult(fmt.Sprintf("tool %q returned a value that is not JSON: %v", tool.Spec.Name, err)), hooks.StatusError
	}
	return hooks.ToolResult{Content: string(content)}, hooks.StatusOK
}

// rejected marks a call that never ran, keeping what hooks did before.
func (o Outcome) rejected(msg string) Outcome {
	o.Path, o.Status, o.Result = PathRejected, hooks.StatusError, errorResult(msg)
	return o
}

// errorResult is the shape of every error the model sees from a tool:
// {"error": "..."}, which models read reliably across providers.
func errorResult(msg string) hooks.ToolResult {
	b, _ := json.Marshal(map[string]string{"error": msg})
	return hooks.ToolResult{Content: string(b), IsError: true}
}

// normalizeArgs accepts what models actually send: an object, or nothing at
// all for a tool without parameters.
func normalizeArgs(raw json.RawMessage) (json.RawMessage, error) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 {
		return json.RawMessage("{}"), nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(trimmed, &obj); err != nil {
		return nil, err
	}
	if obj == nil {
		return nil, fmt.Errorf("got null")
	}
	return trimmed, nil
}
