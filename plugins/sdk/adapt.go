package sdk

import (
	"context"
	"encoding/json"
	"os"

	"github.com/hashicorp/go-hclog"

	"github.com/hookhost/hookhost/hooks"
)

// Adapt turns an SDK plugin into a hooks.Plugin. The manifest's hook list is
// derived from the per-hook interfaces p implements, in catalogue order;
// Info is called once, here. Serve and package plugintest both use it, so a
// plugin behaves the same in-process as in its own process.
//
// If p is a pointer to a type embedding Base, Adapt gives it a logger named
// after the plugin, writing text to stderr; Serve replaces it with one the
// host can parse.
func Adapt(p Plugin) hooks.Plugin {
	return adapt(p, func(name string) hclog.Logger {
		return hclog.New(&hclog.LoggerOptions{Name: name, Output: os.Stderr, Level: hclog.Info})
	})
}

func adapt(p Plugin, newLogger func(name string) hclog.Logger) *hooks.Funcs {
	if p == nil {
		panic("sdk: Adapt called with a nil Plugin")
	}
	info := p.Info()
	if s, ok := p.(loggerSetter); ok {
		s.setLogger(newLogger(info.Name))
	}
	f := &hooks.Funcs{
		Name:         info.Name,
		Version:      info.Version,
		Matchers:     info.Matchers,
		HookMatchers: info.HookMatchers,
		Tools:        info.Tools,
	}
	// One line per per-hook interface: the Funcs field it fills. The
	// manifest's hook list follows from the fields set.
	if h, ok := p.(SessionStarter); ok {
		f.OnSessionStartFunc = h.OnSessionStart
	}
	if h, ok := p.(SessionEnder); ok {
		f.OnSessionEndFunc = h.OnSessionEnd
	}
	if h, ok := p.(ToolListFinalizer); ok {
		f.PreToolListFinalizedFunc = h.PreToolListFinalized
	}
	if h, ok := p.(RequestMutator); ok {
		f.PreAPIRequestMutableFunc = h.PreAPIRequestMutable
	}
	if h, ok := p.(Reissuer); ok {
		f.PostLLMCallCanReissueFunc = h.PostLLMCallCanReissue
	}
	if h, ok := p.(LLMCallObserver); ok {
		f.PostLLMCallFunc = h.PostLLMCall
	}
	if h, ok := p.(OutputTransformer); ok {
		f.TransformLLMOutputFunc = h.TransformLLMOutput
	}
	if h, ok := p.(ToolCallGuard); ok {
		f.PreToolCallFunc = h.PreToolCall
	}
	if h, ok := p.(ResultProvider); ok {
		f.PreToolCallCanProvideResultFunc = h.PreToolCallCanProvideResult
	}
	if h, ok := p.(ToolCallObserver); ok {
		f.PostToolCallFunc = h.PostToolCall
	}
	if h, ok := p.(ResultTransformer); ok {
		f.TransformToolResultFunc = h.TransformToolResult
	}
	return f
}

// configureOf returns p's Configure, or nil when p takes no config.
func configureOf(p Plugin) func(context.Context, json.RawMessage) error {
	if c, ok := p.(Configurer); ok {
		return c.Configure
	}
	return nil
}

