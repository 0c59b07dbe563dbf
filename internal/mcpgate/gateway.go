package mcpgate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hookhost/hookhost/dispatch"
	"github.com/hookhost/hookhost/hookbus"
	"github.com/hookhost/hookhost/hooks"
)

// progressTimeout bounds relaying one progress notification to a client
// that does not read.
const progressTimeout = 5 * time.Second

// GatewayOptions configure a Gateway.
type GatewayOptions struct {
	// Bus runs the tool hooks on every call; nil runs none.
	Bus *hookbus.Bus
	// Native are native tools to offer beside the upstreams' (the
	// config's mcp.expose_native).
	Native []dispatch.Tool
	// Logger receives the gateway's logs; nil discards them.
	Logger hclog.Logger
	// Version is hookhost's, sent as the server's version.
	Version string
}

// Gateway is an MCP server in front of upstream MCP servers, plugin tools
// and native tools, running every call through the tool pipeline.
type Gateway struct {
	opts      GatewayOptions
	log       hclog.Logger
	server    *mcp.Server
	upstreams []*Upstream
	// sessionID is the hooks' session id for a client whose transport has
	// none (stdio: one client per process).
	sessionID string

	mu     sync.Mutex // serialises rebuilds
	snap   atomic.Pointer[snapshot]
	closed atomic.Bool
}

// snapshot is the tool set at one time: what is offered and the pipeline
// that runs it.
type snapshot struct {
	pipeline *dispatch.Pipeline
	tools    []*mcp.Tool
}

// callState carries one call's MCP side through the pipeline, whose hooks
// see only JSON text: the upstream's result as it came, to hand on whole
// when no hook changed it, and where progress goes.
type callState struct {
	upstream *mcp.CallToolResult
	progress func(*mcp.ProgressNotificationParams)
}

type callKey struct{}

// NewGateway builds the MCP server over upstreams (started or not: a
// server's tools join when it connects, and follow its changes). A tool
// name offered twice (a native or plugin tool and a server's) is refused
// with an error naming both; once running, such a tool is left out and
// logged.
func NewGateway(upstreams []*Upstream, opts GatewayOptions) (*Gateway, error) {
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	g := &Gateway{
		opts:      opts,
		log:       opts.Logger.Named("mcp.gateway"),
		upstreams: upstreams,
		sessionID: hooks.NewSessionID(),
	}
	g.server = mcp.NewServer(&mcp.Implementation{Name: "hookhost", Version: opts.Version}, &mcp.ServerOptions{
		// Tools may all join later; the client must know to ask.
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}},
	})
	g.server.AddReceivingMiddleware(g.filterList)
	if err := g.rebuild(true); err != nil {
		return nil, err
	}
	for _, u := range upstreams {
		u.onToolsChanged(func() {
			if g.closed.Load() {
				return
			}
			if err := g.rebuild(false); err != nil {
				g.log.Error("tool set not updated", "error", err)
			}
		})
	}
	return g, nil
}

// Server is the MCP server, for transports this package does not serve.
func (g *Gateway) Server() *mcp.Server { return g.server }

// Close stops following the upstreams' tool changes. It closes neither
// them nor any session.
func (g *Gateway) Close() { g.closed.Store(true) }

// ServeStdio serves one client over in and out (hookhost's stdin and
// stdout) until it disconnects or ctx ends.
func (g *Gateway) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	err := g.server.Run(ctx, &mcp.IOTransport{Reader: io.NopCloser(in), Writer: nopWriteCloser{out}})
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// HTTPHandler serves the gateway over Streamable HTTP, one session per
// client; request bodies are bounded by the SDK's default.
func (g *Gateway) HTTPHandler() http.Handler {
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return g.server }, nil)
}

// Tools returns the tools offered now, before any plugin filters them.
func (g *Gateway) Tools() []*mcp.Tool {
	return append([]*mcp.Tool(nil), g.snap.Load().tools...)
}

// rebuild makes the tool set from the native tools, the plugin tools and
// the upstreams' current tools, and makes the server offer it. strict
// refuses a tool name offered twice; otherwise the later is left out.
func (g *Gateway) rebuild(strict bool) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	owner := map[string]string{}
	var problems []error
	claim := func(name, who string) bool {
		if other, dup := owner[name]; dup {
			problems = append(problems, fmt.Errorf("mcp: tool %q is offered by both %s and %s (rename or leave out one of them)", name, other, who))
			return false
		}
		owner[name] = who
		return true
	}
	var native []dispatch.Tool
	var offered []*mcp.Tool
	for _, t := range g.opts.Native {
		if !claim(t.Spec.Name, "the native tools") {
			continue
		}
		schema, ok := objectSchema(t.Spec.InputSchema)
		if !ok {
			g.log.Warn("native tool not offered over MCP: its input schema is not an object schema", "tool", t.Spec.Name)
			continue
		}
		native = append(native, t)
		offered = append(offered, &mcp.Tool{Name: t.Spec.Name, Description: t.Spec.Description, InputSchema: schema})
	}
	for _, t := range g.opts.Bus.Tools() {
		plugin, _ := g.opts.Bus.ToolOwner(t.Name)
		if !claim(t.Name, fmt.Sprintf("plugin %q", plugin)) {
			continue
		}
		schema, ok := objectSchema(t.InputSchema)
		if !ok {
			g.log.Warn("plugin tool not offered over MCP: its input schema is not an object schema", "tool", t.Name, "plugin", plugin)
			continue
		}
		offered = append(offered, &mcp.Tool{Name: t.Name, Description: t.Description, InputSchema: schema})
	}
	for _, u := range g.upstreams {
		for _, t := range u.Tools() {
			if !claim(t.Name, fmt.Sprintf("mcp server %q", u.Name())) {
				continue
			}
			native = append(native, upstreamTool(u, t))
			offered = append(offered, t.MCP)
		}
	}
	if err := errors.Join(problems...); err != nil {
		if strict {
			return err
		}
		g.log.Error("tools left out", "error", err)
	}
	reg, err := dispatch.NewRegistry(native...)
	if err != nil {
		return err
	}
	next := &snapshot{pipeline: &dispatch.Pipeline{Registry: reg, Bus: g.opts.Bus}, tools: offered}
	keep := map[string]bool{}
	for _, t := range offered {
		keep[t.Name] = true
	}
	if prev := g.snap.Load(); prev != nil {
		var gone []string
		for _, t := range prev.tools {
			if !keep[t.Name] {
				gone = append(gone, t.Name)
			}
		}
		if len(gone) > 0 {
			g.server.RemoveTools(gone...)
		}
	}
	g.snap.Store(next)
	for _, t := range offered {
		g.server.AddTool(t, g.handle)
	}
	return nil
}

// objectSchema is a tool's input schema as MCP requires it, an object
// schema; an empty one takes no arguments.
func objectSchema(raw json.RawMessage) (any, bool) {
	if len(strings.TrimSpace(string(raw))) == 0 || string(raw) == "null" {
		return map[string]any{"type": "object"}, true
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, false
	}
	switch m["type"] {
	case nil:
		m["type"] = "object"
	case "object":
	default:
		return nil, false
	}
	return m, true
}

// upstreamTool is an upstream's tool as the pipeline's native step: the
// call to the server. Its schema accepts any object: the server checks
// its own arguments, with a schema this host need not understand.
func upstreamTool(u *Upstream, t Tool) dispatch.Tool {
	return dispatch.Tool{
		Spec:   hooks.ToolSpec{Name: t.Name, Description: t.MCP.Description, InputSchema: json.RawMessage(`{"type":"object"}`)},
		Origin: hooks.OriginMCP(u.Name()),
		Run: func(ctx context.Context, args json.RawMessage) (any, error) {
			st, _ := ctx.Value(callKey{}).(*callState)
			var progress func(*mcp.ProgressNotificationParams)
			if st != nil {
				progress = st.progress
			}
			res, err := u.CallTool(ctx, t.Original, args, progress)
			if err != nil {
				return nil, err
			}
			if st != nil {
				st.upstream = res
			}
			if res.IsError {
				return nil, errors.New(resultText(res))
			}
			view, err := json.Marshal(resultView{Content: res.Content, StructuredContent: res.StructuredContent})
			if err != nil {
				return nil, fmt.Errorf("mcp server %q: tool %q: result cannot be encoded: %v", u.Name(), t.Original, err)
			}
			return json.RawMessage(view), nil
		},
	}
}

// resultView is what hooks see of an upstream's result: its content and
// structured content, as MCP writes them, without the SDK's bookkeeping
// (_meta annotations, the result type), so that a hook that answers with
// the same shape gives the client a CallToolResult back.
type resultView struct {
	Content           []mcp.Content `json:"content"`
	StructuredContent any           `json:"structuredContent,omitempty"`
}

// resultText is what an error result says: its text, or its content as
// JSON when it has no text.
func resultText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	if len(parts) > 0 {
		return strings.Join(parts, "\n")
	}
	b, _ := json.Marshal(res.Content)
	return string(b)
}

// sessionOf is the hooks' session id for a client session.
func (g *Gateway) sessionOf(s mcp.Session) string {
	if s != nil {
		if id := s.ID(); id != "" {
			return id
		}
	}
	return g.sessionID
}

// allowed runs pre_tool_list_finalized over the whole tool set and returns
// the names a plugin left in, or nil when none filters.
func (g *Gateway) allowed(ctx context.Context, sessionID string, snap *snapshot) map[string]bool {
	if !g.opts.Bus.Subscribed(hooks.PreToolListFinalized, "") {
		return nil
	}
	specs := make([]hooks.ToolSpec, len(snap.tools))
	for i, t := range snap.tools {
		schema, _ := json.Marshal(t.InputSchema)
		specs[i] = hooks.ToolSpec{Name: t.Name, Description: t.Description, InputSchema: schema}
	}
	change := g.opts.Bus.PreToolListFinalized(ctx, hooks.ToolListRequest{SessionID: sessionID, Tools: specs})
	if change == nil {
		return nil
	}
	keep := make(map[string]bool, len(change.Tools))
	for _, t := range change.Tools {
		keep[t.Name] = true
	}
	return keep
}

// filterList runs tools/list answers through pre_tool_list_finalized. A
// plugin may leave tools out; tools it adds or rewrites are not taken, since
// nothing could run them.
func (g *Gateway) filterList(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if method != "tools/list" || err != nil {
			return res, err
		}
		list, ok := res.(*mcp.ListToolsResult)
		if !ok {
			return res, err
		}
		keep := g.allowed(ctx, g.sessionOf(req.GetSession()), g.snap.Load())
		if keep == nil {
			return res, err
		}
		filtered := *list
		filtered.Tools = []*mcp.Tool{}
		for _, t := range list.Tools {
			if keep[t.Name] {
				filtered.Tools = append(filtered.Tools, t)
			}
		}
		return &filtered, nil
	}
}

// handle answers tools/call through the pipeline.
func (g *Gateway) handle(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	snap := g.snap.Load()
	name := req.Params.Name
	sid := g.sessionOf(req.Session)
	if keep := g.allowed(ctx, sid, snap); keep != nil && !keep[name] {
		return textResult(fmt.Sprintf("tool %q is not offered to this client", name), true), nil
	}
	st := &callState{}
	if tok := req.Params.GetProgressToken(); tok != nil && req.Session != nil {
		ss := req.Session
		st.progress = func(p *mcp.ProgressNotificationParams) {
			pctx, cancel := context.WithTimeout(ctx, progressTimeout)
			defer cancel()
			_ = ss.NotifyProgress(pctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: p.Progress, Total: p.Total, Message: p.Message})
		}
	}
	ctx = context.WithValue(ctx, callKey{}, st)
	if req.Session != nil {
		ctx = withElicitor(ctx, req.Session)
	}
	out := snap.pipeline.Run(ctx, sid, hooks.ToolCall{ID: "mcp_" + hooks.NewSessionID(), Name: name, Arguments: req.Params.Arguments})
	return callResult(out, st.upstream), nil
}

// callResult is the MCP result of a call: the upstream's own when it ran
// and no hook changed its result, else what the pipeline produced.
func callResult(out dispatch.Outcome, upstream *mcp.CallToolResult) *mcp.CallToolResult {
	if upstream != nil && out.Path == dispatch.PathNative && len(out.TransformedBy) == 0 {
		return upstream
	}
	return decodeResult(out.Result)
}

// resultKeys are the keys of a CallToolResult a hook may write.
var resultKeys = map[string]bool{"content": true, "structuredContent": true, "isError": true, "_meta": true, "resultType": true}

// decodeResult reads a hook's result (JSON text) as MCP: a CallToolResult
// when it has that shape, so that a plugin can answer with images or
// structured content; otherwise one text content, a JSON string's text or
// an {"error": ...}'s message read out.
func decodeResult(r hooks.ToolResult) *mcp.CallToolResult {
	content := strings.TrimSpace(r.Content)
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(content), &obj) == nil && obj != nil {
		if c, ok := obj["content"]; ok && strings.HasPrefix(strings.TrimSpace(string(c)), "[") && onlyKeys(obj, resultKeys) {
			var res mcp.CallToolResult
			if err := json.Unmarshal([]byte(content), &res); err == nil {
				res.IsError = res.IsError || r.IsError
				return &res
			}
		}
		if msg, ok := obj["error"]; ok && r.IsError && len(obj) == 1 {
			var s string
			if json.Unmarshal(msg, &s) == nil {
				return textResult(s, true)
			}
		}
	}
	var s string
	if json.Unmarshal([]byte(content), &s) == nil {
		return textResult(s, r.IsError)
	}
	return textResult(content, r.IsError)
}

func onlyKeys(obj map[string]json.RawMessage, allowed map[string]bool) bool {
	for k := range obj {
		if !allowed[k] {
			return false
		}
	}
	return true
}

func textResult(text string, isError bool) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, IsError: isError}
}
