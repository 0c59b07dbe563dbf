package hooks

import "context"

// Funcs adapts plain functions to a Plugin, for plugins that live in the
// host's process (tests, embedded extensions). Set only the hooks you want:
// the manifest's hook list is derived from the non-nil fields, so it cannot
// disagree with what the value implements.
type Funcs struct {
	Name     string
	Version  string
	Matchers []string
	Tools    []ToolSpec

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

// Manifest lists the hooks whose functions are set.
func (f *Funcs) Manifest() Manifest {
	m := Manifest{Name: f.Name, Version: f.Version, Matchers: f.Matchers, Tools: f.Tools}
	set := map[Name]bool{
		OnSessionStart:              f.OnSessionStartFunc != nil,
		OnSessionEnd:                f.OnSessionEndFunc != nil,
		PreToolListFinalized:        f.PreToolListFinalizedFunc != nil,
		PreAPIRequestMutable:        f.PreAPIRequestMutableFunc != nil,
		PostLLMCallCanReissue:       f.PostLLMCallCanReissueFunc != nil,
		PostLLMCall:                 f.PostLLMCallFunc != nil,
		TransformLLMOutput:          f.TransformLLMOutputFunc != nil,
		PreToolCall:                 f.PreToolCallFunc != nil,
		PreToolCallCanProvideResult: f.PreToolCallCanProvideResultFunc != nil,
		PostToolCall:                f.PostToolCallFunc != nil,
		TransformToolResult:         f.TransformToolResultFunc != nil,
	}
	for _, h := range Catalogue {
		if set[h] {
			m.Hooks = append(m.Hooks, h)
		}
	}
	return m
}

func (f *Funcs) OnSessionStart(ctx context.Context, ev SessionStart) error {
	if f.OnSessionStartFunc == nil {
		return nil
	}
	return f.OnSessionStartFunc(ctx, ev)
}

func (f *Funcs) OnSessionEnd(ctx context.Context, ev SessionEnd) error {
	if f.OnSessionEndFunc == nil {
		return nil
	}
	return f.OnSessionEndFunc(ctx, ev)
}

func (f *Funcs) PreToolListFinalized(ctx context.Context, ev ToolListRequest) (*ToolListOverride, error) {
	if f.PreToolListFinalizedFunc == nil {
		return nil, nil
	}
	return f.PreToolListFinalizedFunc(ctx, ev)
}

func (f *Funcs) PreAPIRequestMutable(ctx context.Context, ev APIRequest) (*RequestPatch, error) {
	if f.PreAPIRequestMutableFunc == nil {
		return nil, nil
	}
	return f.PreAPIRequestMutableFunc(ctx, ev)
}

func (f *Funcs) PostLLMCallCanReissue(ctx context.Context, ev LLMCall) (*Reissue, error) {
	if f.PostLLMCallCanReissueFunc == nil {
		return nil, nil
	}
	return f.PostLLMCallCanReissueFunc(ctx, ev)
}

func (f *Funcs) PostLLMCall(ctx context.Context, ev Inference) error {
	if f.PostLLMCallFunc == nil {
		return nil
	}
	return f.PostLLMCallFunc(ctx, ev)
}

func (f *Funcs) TransformLLMOutput(ctx context.Context, ev LLMOutput) (*TextReplacement, error) {
	if f.TransformLLMOutputFunc == nil {
		return nil, nil
	}
	return f.TransformLLMOutputFunc(ctx, ev)
}

func (f *Funcs) PreToolCall(ctx context.Context, ev ToolCallRequest) (*PreToolCallDecision, error) {
	if f.PreToolCallFunc == nil {
		return nil, nil
	}
	return f.PreToolCallFunc(ctx, ev)
}

func (f *Funcs) PreToolCallCanProvideResult(ctx context.Context, ev ToolCallRequest) (*ToolResult, error) {
	if f.PreToolCallCanProvideResultFunc == nil {
		return nil, nil
	}
	return f.PreToolCallCanProvideResultFunc(ctx, ev)
}

func (f *Funcs) PostToolCall(ctx context.Context, ev ToolCallOutcome) error {
	if f.PostToolCallFunc == nil {
		return nil
	}
	return f.PostToolCallFunc(ctx, ev)
}

func (f *Funcs) TransformToolResult(ctx context.Context, ev ToolCallOutcome) (*ToolResult, error) {
	if f.TransformToolResultFunc == nil {
		return nil, nil
	}
	return f.TransformToolResultFunc(ctx, ev)
}
