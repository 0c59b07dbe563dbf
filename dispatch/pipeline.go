package dispatch

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/hookhost/hookhost/dispatch/schema"
	"github.com/hookhost/hookhost/hookbus"
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
	Origin        hooks.Origin   // where the call went, as tool hooks were told
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
// Set its fields before the first Run and do not copy it afterwards; Run
// may be called from several goroutines.
type Pipeline struct {
	Registry *Registry
	Bus      *hookbus.Bus
	// Hosted are tools beyond the Registry that hookhost runs in its
	// native step, looked up on every call (the MCP servers' tools offered
	// to the model). Their arguments are not checked here: the tool checks
	// its own, against a schema this host need not understand. A Registry
	// tool of the same name wins.
	Hosted ToolSet

	// The input schemas of the Bus's plugin tools, compiled on the first
	// Run: a plugin's tools are fixed when its Bus is built.
	pluginOnce    sync.Once
	pluginSchemas map[string]pluginSchema
}

// pluginSchema is one plugin tool's compiled input schema, or why the host
// cannot use the schema its owner declared.
type pluginSchema struct {
	owner  string
	schema *schema.Schema
	err    error
}

// Run executes one tool call. It always returns a result for the model,
// and its content is always JSON: a plugin's plain-text answer, provided or
// transformed, is carried as a JSON string (hooks.ToolResult.AsJSON).
func (p *Pipeline) Run(ctx context.Context, sessionID string, call hooks.ToolCall) Outcome {
	start := time.Now()
	req := hooks.ToolCallRequest{SessionID: sessionID, CallID: call.ID, Name: call.Name, Arguments: call.Arguments, Origin: p.origin(call.Name)}
	out, run := p.decide(ctx, &req)
	defer run.Close()
	out.Call = hooks.ToolCall{ID: call.ID, Name: call.Name, Arguments: req.Arguments}
	out.Origin = req.Origin
	out.Result = out.Result.AsJSON()
	out.Duration = time.Since(start)

	ev := hooks.ToolCallOutcome{
		SessionID: sessionID, CallID: call.ID, Name: call.Name, Arguments: req.Arguments,
		Result: out.Result, Status: out.Status, Duration: out.Duration, Origin: req.Origin,
	}
	run.Done(ev)
	out.Result, out.TransformedBy = run.Transform(ctx, ev)
	if len(out.TransformedBy) > 0 {
		out.Result = out.Result.AsJSON()
	}
	return out
}

// decide runs the part of the pipeline that produces the result; req's
// arguments are updated by any modify. It returns the ToolRun that carries
// the call's remaining hooks.
//
// A plugin tool's arguments are checked against the schema its owner
// declared after every modify and before any plugin is asked for a result,
// so that a provider never sees arguments its tool does not accept, just
// as a native tool never runs on them. That is why, for a plugin tool,
// pre_tool_call is fired on its own and the ToolRun starts after it: a
// ToolRun may ask one plugin pre_tool_call and
// pre_tool_call_can_provide_result in one exchange, which would send the
// provide stage before the host saw the final arguments. Native tools keep
// the catalogue's order in one ToolRun: their arguments are checked right
// before the tool runs, after plugins had their chance to provide.
func (p *Pipeline) decide(ctx context.Context, req *hooks.ToolCallRequest) (Outcome, *hookbus.ToolRun) {
	args, err := normalizeArgs(req.Arguments)
	if err != nil {
		return Outcome{}.rejected(fmt.Sprintf("tool %q: arguments are not a valid JSON object: %v", req.Name, err)), p.Bus.StartToolCall(*req)
	}
	req.Arguments = args

	plugin, isPluginTool := p.pluginSchema(req.Name)
	var run *hookbus.ToolRun
	var pre hookbus.PreToolCallOutcome
	if isPluginTool {
		pre = p.Bus.PreToolCall(ctx, *req)
		req.Arguments = pre.Arguments
		run = p.Bus.StartToolCall(*req)
	} else {
		run = p.Bus.StartToolCall(*req)
		pre = run.PreToolCall(ctx)
		req.Arguments = pre.Arguments
	}
	out := Outcome{ModifiedBy: pre.ModifiedBy}
	if pre.Blocked {
		out.Path, out.AnsweredBy, out.Status = PathBlocked, pre.BlockedBy, hooks.StatusBlocked
		out.Result = ErrorResult(pre.Message)
		return out, run
	}

	// Past this point the call does work; a turn cancelled while the guards
	// were asked must not run it unapproved.
	if ctx.Err() != nil {
		return out.rejected(fmt.Sprintf("tool %q not run: the turn was cancelled", req.Name)), run
	}
	if isPluginTool {
		if plugin.err != nil {
			return out.rejected(fmt.Sprintf("tool %q cannot be called: plugin %q declared it with an %v; the plugin must fix the schema in its manifest",
				req.Name, plugin.owner, plugin.err)), run
		}
		if err := plugin.schema.Validate(req.Arguments); err != nil {
			return out.rejected(fmt.Sprintf("tool %q: %v", req.Name, err)), run
		}
	}
	if r := run.ProvideResult(ctx); r != nil {
		out.Path, out.AnsweredBy, out.Status = PathProvided, r.Plugin, hooks.ProvidedBy(r.Plugin)
		out.Result = r.ToolResult
		return out, run
	}

	tool, ok := p.Registry.Lookup(req.Name)
	if ok {
		if err := p.Registry.schemaOf(req.Name).Validate(req.Arguments); err != nil {
			return out.rejected(fmt.Sprintf("tool %q: %v", req.Name, err)), run
		}
	} else if p.Hosted != nil && !isPluginTool {
		tool, ok = p.Hosted.Lookup(req.Name)
	}
	if !ok {
		msg := fmt.Sprintf("unknown tool %q", req.Name)
		if isPluginTool {
			msg = fmt.Sprintf("tool %q is served by plugin %q, which gave no result (the plugin may be down or may not serve this tool)", req.Name, plugin.owner)
		}
		return out.rejected(msg), run
	}
	out.Path = PathNative
	out.Result, out.Status = runNative(ctx, tool, req.Arguments)
	return out, run
}

// origin says where a call to name goes, as the native step will find it:
// a plugin's tool, a Registry tool, a hosted tool, in that order. A name
// nobody offers is the host's to answer.
func (p *Pipeline) origin(name string) hooks.Origin {
	if _, ok := p.pluginSchema(name); ok {
		return hooks.OriginPlugin
	}
	tool, ok := p.Registry.Lookup(name)
	if !ok && p.Hosted != nil {
		tool, ok = p.Hosted.Lookup(name)
	}
	if ok && tool.Origin != "" {
		return tool.Origin
	}
	return hooks.OriginNative
}

// pluginSchema returns the compiled input schema of a plugin's tool, and
// whether name is a plugin's tool at all.
func (p *Pipeline) pluginSchema(name string) (pluginSchema, bool) {
	p.pluginOnce.Do(func() {
		p.pluginSchemas = map[string]pluginSchema{}
		for _, t := range p.Bus.Tools() {
			owner, _ := p.Bus.ToolOwner(t.Name)
			sch, err := schema.Compile(t.InputSchema)
			p.pluginSchemas[t.Name] = pluginSchema{owner: owner, schema: sch, err: err}
		}
	})
	ps, ok := p.pluginSchemas[name]
	return ps, ok
}

// runNative calls a native tool, turning an error or a panic into an error
// result so one broken tool cannot end a conversation.
func runNative(ctx context.Context, tool Tool, args json.RawMessage) (res hooks.ToolResult, status hooks.CallStatus) {
	defer func() {
		if v := recover(); v != nil {
			res, status = ErrorResult(fmt.Sprintf("tool %q crashed: %v", tool.Spec.Name, v)), hooks.StatusError
		}
	}()
	v, err := tool.Run(ctx, args)
	if err != nil {
		// The model knows which tool it called; the bare message reads best.
		return ErrorResult(err.Error()), hooks.StatusError
	}
	content, err := json.Marshal(v)
	if err != nil {
		return ErrorResult(fmt.Sprintf("tool %q returned a value that is not JSON: %v", tool.Spec.Name, err)), hooks.StatusError
	}
	return hooks.ToolResult{Content: string(content)}, hooks.StatusOK
}

// rejected marks a call that never ran, keeping what hooks did before.
func (o Outcome) rejected(msg string) Outcome {
	o.Path, o.Status, o.Result = PathRejected, hooks.StatusError, ErrorResult(msg)
	return o
}

// ErrorResult is the shape of every error the model sees from a tool:
// {"error": "..."}, which models read reliably across providers.
func ErrorResult(msg string) hooks.ToolResult {
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
