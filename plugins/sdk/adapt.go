package sdk

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"path"
	"slices"

	"github.com/hashicorp/go-hclog"

	"github.com/hookhost/hookhost/hooks"
)

// Adapt turns an SDK plugin into a hooks.Plugin: a *hooks.Funcs whose
// fields are the per-hook methods p implements, so the manifest's hook list
// is derived from them, in catalogue order, and the catalogue table that
// drives hooks.Funcs drives the SDK too. Info is called once, here. Typed
// tools (Info.ToolFuncs) follow Info.Tools in the manifest and are answered
// on pre_tool_call_can_provide_result before p's own ResultProvider is
// asked, which is then asked only for other tools; see the package
// documentation for the matchers this sets. Serve and package plugintest
// both use Adapt, so a plugin behaves the same in-process as in its own
// process.
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
	log := newLogger(info.Name)
	if s, ok := p.(loggerSetter); ok {
		s.setLogger(log)
	}
	f := &hooks.Funcs{
		Name:         info.Name,
		Version:      info.Version,
		Matchers:     info.Matchers,
		HookMatchers: info.HookMatchers,
		HookOptions:  info.HookOptions,
		Tools:        info.Tools,
		Config:       configDeclaration(p, info),
	}
	// The Funcs field of each per-hook interface p implements (hooks_gen.go);
	// typed tools then answer pre_tool_call_can_provide_result for their
	// names, before the plugin's own ResultProvider.
	adaptHooks(p, f)
	addToolFuncs(f, info, log)
	if u, ok := p.(hooks.Unserving); ok {
		f.UnservedFunc = u.Unserved
	}
	return f
}

// configDeclaration is the manifest's declaration of p's config keys: the
// keys of Info.Config; none for a plugin without a Configure; nil
// (undeclared) for one whose Configure checks its config alone. An
// Info.Config that declares nothing usable is the plugin author's mistake,
// reported at once, like a nil Plugin.
func configDeclaration(p Plugin, info Info) *hooks.ConfigKeys {
	if info.Config != nil {
		keys, err := ConfigKeysOf(info.Config)
		if err != nil {
			panic(err.Error())
		}
		return &hooks.ConfigKeys{Keys: keys}
	}
	if configureOf(p) == nil {
		return &hooks.ConfigKeys{}
	}
	return nil
}

// configureOf returns p's Configure, or nil when p takes no config.
func configureOf(p Plugin) func(context.Context, json.RawMessage) error {
	if c, ok := p.(Configurer); ok {
		return c.Configure
	}
	return nil
}

// addToolFuncs makes f answer the plugin's typed tools: their specs follow
// Info.Tools in the manifest, and pre_tool_call_can_provide_result runs
// them, asking the plugin's own ResultProvider (if any) for every other
// tool.
//
// The hook's matchers are what makes a tool-owning plugin cheap: the host
// asks only for names they cover. Unless the plugin set matchers for the
// hook itself, they become exactly the typed tools' names, plus, when the
// plugin has a ResultProvider too, the plugin's Matchers (all tools when
// those are empty, as before typed tools). Matchers the plugin set are
// kept, with any typed tool they miss added: a tool the host never asks
// about would be a tool that always fails.
func addToolFuncs(f *hooks.Funcs, info Info, log hclog.Logger) {
	if len(info.ToolFuncs) == 0 {
		return
	}
	tools := make(map[string]Tool, len(info.ToolFuncs))
	names := make([]string, 0, len(info.ToolFuncs))
	f.Tools = slices.Clone(info.Tools)
	for _, t := range info.ToolFuncs {
		f.Tools = append(f.Tools, t.spec)
		if _, dup := tools[t.spec.Name]; !dup {
			names = append(names, t.spec.Name)
		}
		// A duplicate name fails manifest validation; which one would run
		// does not matter.
		tools[t.spec.Name] = t
	}

	own := f.PreToolCallCanProvideResultFunc
	f.PreToolCallCanProvideResultFunc = func(ctx context.Context, call hooks.ToolCallRequest) (*hooks.ToolResult, error) {
		if t, ok := tools[call.Name]; ok {
			r := t.call(ctx, call.Arguments, log)
			return &r, nil
		}
		if own != nil {
			return own(ctx, call)
		}
		return nil, nil
	}

	globs, set := info.HookMatchers[hooks.PreToolCallCanProvideResult]
	switch {
	case set:
		globs = slices.Clone(globs)
		if len(globs) == 0 {
			return // every tool, the typed ones included
		}
	case own != nil && len(info.Matchers) == 0:
		return // the ResultProvider is asked for every tool, as before
	case own != nil:
		globs = slices.Clone(info.Matchers)
	}
	for _, n := range names {
		if !matchesAny(globs, n) {
			globs = append(globs, n)
		}
	}
	hm := maps.Clone(info.HookMatchers)
	if hm == nil {
		hm = map[hooks.Name][]string{}
	}
	hm[hooks.PreToolCallCanProvideResult] = globs
	f.HookMatchers = hm
}

// matchesAny reports whether a glob covers name; an invalid glob covers
// nothing (manifest validation reports it).
func matchesAny(globs []string, name string) bool {
	for _, g := range globs {
		if ok, _ := path.Match(g, name); ok {
			return true
		}
	}
	return false
}
