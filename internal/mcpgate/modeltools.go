package mcpgate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hookhost/hookhost/dispatch"
	"github.com/hookhost/hookhost/hooks"
)

// ModelTools are the tools of the servers with offer_to_model, offered to
// the model beside the host's own and run by hookhost in the tool
// pipeline's native step (a dispatch.ToolSet). The set follows each
// server: read when it connects, again when it says its tools changed
// (notifications/tools/list_changed) and after every reconnection. While
// a server is down its tools stay offered, and a call to one gets at once
// an error result naming the server and why it is down.
type ModelTools struct {
	upstreams []*Upstream
	taken     func(name string) string
	log       hclog.Logger

	mu   sync.Mutex // serialises rebuilds
	snap atomic.Pointer[modelSnapshot]
}

// ModelToolsOptions configure ModelTools.
type ModelToolsOptions struct {
	// Taken says who already offers a tool name to the model ("the native
	// tools", `plugin "x"`), or "" when nobody does: a server's tool of
	// that name is left out and logged, since a call to it could not be
	// told apart.
	Taken func(name string) string
	// Logger receives what was left out; nil discards it.
	Logger hclog.Logger
}

type modelSnapshot struct {
	specs  []hooks.ToolSpec
	byName map[string]dispatch.Tool
}

var _ dispatch.ToolSet = (*ModelTools)(nil)

// NewModelTools offers the tools of those upstreams whose spec has
// OfferToModel; it returns nil when none has.
func NewModelTools(upstreams []*Upstream, opts ModelToolsOptions) *ModelTools {
	m := &ModelTools{taken: opts.Taken, log: opts.Logger}
	if m.taken == nil {
		m.taken = func(string) string { return "" }
	}
	if m.log == nil {
		m.log = hclog.NewNullLogger()
	}
	m.log = m.log.Named("mcp.offer")
	for _, u := range upstreams {
		if u.Spec().OfferToModel {
			m.upstreams = append(m.upstreams, u)
		}
	}
	if len(m.upstreams) == 0 {
		return nil
	}
	for _, u := range m.upstreams {
		u.onToolsChanged(m.rebuild)
	}
	m.rebuild()
	return m
}

// Specs returns the tools offered now, server by server in the config's
// order, each server's in its own order. The slice is shared: callers
// must not change it.
func (m *ModelTools) Specs() []hooks.ToolSpec {
	if m == nil {
		return nil
	}
	s := m.snap.Load().specs
	return s[:len(s):len(s)]
}

// Lookup finds a tool offered now.
func (m *ModelTools) Lookup(name string) (dispatch.Tool, bool) {
	if m == nil {
		return dispatch.Tool{}, false
	}
	t, ok := m.snap.Load().byName[name]
	return t, ok
}

func (m *ModelTools) rebuild() {
	m.mu.Lock()
	defer m.mu.Unlock()
	next := &modelSnapshot{byName: map[string]dispatch.Tool{}}
	for _, u := range m.upstreams {
		for _, t := range u.Tools() {
			if who := m.taken(t.Name); who != "" {
				m.log.Warn("mcp tool not offered to the model: the name is taken (rename the tool on the server, or leave it out with mcp.servers.NAME.tools)",
					"tool", t.Name, "server", u.Name(), "taken_by", who)
				continue
			}
			schema, err := json.Marshal(t.MCP.InputSchema)
			if err != nil {
				m.log.Warn("mcp tool not offered to the model: its input schema cannot be encoded", "tool", t.Name, "server", u.Name(), "error", err)
				continue
			}
			desc := t.MCP.Description
			if desc == "" {
				desc = t.MCP.Title
			}
			tool := dispatch.Tool{
				Spec:   hooks.ToolSpec{Name: t.Name, Description: desc, InputSchema: schema},
				Run:    modelToolRun(u, t.Original),
				Origin: hooks.OriginMCP(u.Name()),
			}
			next.byName[t.Name] = tool
			next.specs = append(next.specs, tool.Spec)
		}
	}
	m.snap.Store(next)
}

// modelToolRun calls tool on u and gives the model the result's text; a
// result the server marked isError is the tool's error, and a failed call
// one that names the server.
func modelToolRun(u *Upstream, tool string) dispatch.ToolFunc {
	return func(ctx context.Context, args json.RawMessage) (any, error) {
		res, err := u.CallTool(ctx, tool, args, nil)
		if err != nil {
			return nil, err
		}
		text := ModelText(res)
		if res.IsError {
			if strings.TrimSpace(text) == "" {
				text = fmt.Sprintf("mcp server %q: tool %q failed and said nothing more", u.Name(), tool)
			}
			return nil, errors.New(text)
		}
		if t := strings.TrimSpace(text); (strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[")) && json.Valid([]byte(t)) {
			// JSON text is handed on as JSON, not quoted into a string.
			return json.RawMessage(t), nil
		}
		return text, nil
	}
}

// ModelText is what a model is shown of a tool result: its text contents
// and the text of its embedded resources, one per line; a note for what a
// model cannot read as text (an image, audio, a link to a resource); the
// structured content as JSON when there is nothing else.
func ModelText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			parts = append(parts, c.Text)
		case *mcp.EmbeddedResource:
			if c.Resource != nil && c.Resource.Text != "" {
				parts = append(parts, c.Resource.Text)
			} else if c.Resource != nil {
				parts = append(parts, fmt.Sprintf("[resource %s, %s]", c.Resource.URI, c.Resource.MIMEType))
			}
		case *mcp.ResourceLink:
			parts = append(parts, fmt.Sprintf("[resource %s]", c.URI))
		case *mcp.ImageContent:
			parts = append(parts, fmt.Sprintf("[image, %s, %d bytes]", c.MIMEType, len(c.Data)))
		case *mcp.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio, %s, %d bytes]", c.MIMEType, len(c.Data)))
		}
	}
	if len(parts) == 0 && res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			return string(b)
		}
	}
	return strings.Join(parts, "\n")
}
