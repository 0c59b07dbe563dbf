package hooks

import (
	"context"
	"fmt"
)

// Funcs adapts plain functions to a Plugin, for plugins that live in the
// host's process (tests, embedded extensions) and for SDK plugins, which the
// SDK adapts to a Funcs. Set only the hooks you want: the manifest's hook
// list is derived from the non-nil fields, so it cannot disagree with what
// the value implements.
type Funcs struct {
	Name    string
	Version string
	// Matchers and HookMatchers are the manifest's tool globs (see
	// Manifest).
	Matchers     []string
	HookMatchers map[Name][]string
	Tools        []ToolSpec
	// Config declares the plugin's config keys (see Manifest); nil leaves
	// them undeclared.
	Config *ConfigKeys

	OnSessionStartFunc              func(context.Context, SessionStart) error
	OnSessionEndFunc                func(context.Context, SessionEnd) error
	PreToolListFinalizedFunc        func(context.Context, ToolListRequest) (*ToolListOverride, error)
	PreAPIRequestMutableFunc        func(context.Context, APIRequest) (*RequestPatch, error)
	PostLLMCallCanReissueFunc       func(context.Context, LLMCall) (*Reissue, error)
	PostLLMCallFunc                 func(context.Context, Inference) error
	TransformLLMOutputFunc          func(context.Context, LLMOutput) (*TextReplacement, error)
	PreToolCallFunc                 func(context.Context, ToolCallRequest) (*PreToolCallDecision, error)
	PreToolCallCanProvideResultFunc func(context.Context, ToolCallRequest) (*ToolResult, error)
	PostToolCallFunc                func(context.Context, ToolCallOutcome) error
	TransformToolResultFunc         func(context.Context, ToolCallOutcome) (*ToolResult, error)
}

var _ Plugin = (*Funcs)(nil)

// Manifest lists the hooks whose functions are set, in catalogue order.
func (f *Funcs) Manifest() Manifest {
	m := Manifest{Name: f.Name, Version: f.Version, Matchers: f.Matchers, HookMatchers: f.HookMatchers, Tools: f.Tools, Config: f.Config}
	for _, s := range catalogue {
		if s.funcs(f) != nil {
			m.Hooks = append(m.Hooks, s.name)
		}
	}
	return m
}

// Handle calls the function set for hook; a hook without one answers nil.
func (f *Funcs) Handle(ctx context.Context, hook Name, req any) (any, error) {
	s, ok := specOf(hook)
	if !ok {
		return nil, fmt.Errorf("host: unknown hook %q", hook)
	}
	h := s.funcs(f)
	if h == nil {
		return nil, nil
	}
	return h(ctx, req)
}
