// Command cache is an example hookhost plugin that answers repeated calls of
// read-only tools from memory. It remembers each successful native result
// it sees on post_tool_call, and serves it again on
// pre_tool_call_can_provide_result to a call of the same tool with the same
// arguments, until the entry is older than its ttl. See README.md.
package main

import (
	"context"
	"encoding/json"
	"path"
	"sync/atomic"
	"time"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/plugins/sdk"
)

type cache struct {
	sdk.Base
	// live is set by Configure; hooks run concurrently with each other,
	// and on other goroutines than Configure.
	live atomic.Pointer[live]
}

// live is the configured cache: what to cache, and the entries.
type live struct {
	tools []string
	store *store
}

var (
	_ sdk.Configurer       = (*cache)(nil)
	_ sdk.ResultProvider   = (*cache)(nil)
	_ sdk.ToolCallObserver = (*cache)(nil)
)

// Info declares no matchers although only the configured tools are
// cached: the host reads the manifest before it hands the plugin its
// config, so the configured list is applied by live.cacheable instead.
func (*cache) Info() sdk.Info { return sdk.Info{Name: "cache", Version: "1.0.0", Config: config{}} }

func (c *cache) Configure(_ context.Context, raw json.RawMessage) error {
	conf, err := parseConfig(raw)
	if err != nil {
		return err
	}
	c.live.Store(&live{tools: conf.Tools, store: newStore(conf.MaxEntries, conf.ttl, time.Now)})
	return nil
}

// PostToolCall remembers results that a native tool produced without
// error. Results served by a plugin (this one included) are not
// remembered: were the cache to store its own answers again, an entry
// that is asked for often would never expire.
func (c *cache) PostToolCall(_ context.Context, ev hooks.ToolCallOutcome) error {
	l := c.live.Load()
	if ev.Status != hooks.StatusOK || ev.Result.IsError || !l.cacheable(ev.Name) {
		return nil
	}
	l.store.put(key(ev.Name, ev.Arguments), ev.Result)
	return nil
}

func (c *cache) PreToolCallCanProvideResult(_ context.Context, call hooks.ToolCallRequest) (*hooks.ToolResult, error) {
	l := c.live.Load()
	if !l.cacheable(call.Name) {
		return nil, nil
	}
	r, ok := l.store.get(key(call.Name, call.Arguments))
	if !ok {
		return nil, nil
	}
	c.Logger().Debug("served from the cache", "tool", call.Name, "call", call.CallID)
	return &r, nil
}

// cacheable reports whether tool is one of the configured tools. Before
// Configure no tool is.
func (l *live) cacheable(tool string) bool {
	if l == nil {
		return false
	}
	for _, g := range l.tools {
		if ok, _ := path.Match(g, tool); ok {
			return true
		}
	}
	return false
}

func main() { sdk.Serve(&cache{}) }
