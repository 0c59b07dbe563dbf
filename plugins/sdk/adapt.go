package sdk

import (
	"context"
	"encoding/json"
	"os"

	"github.com/hashicorp/go-hclog"

	"github.com/hookhost/hookhost/hooks"
)

// adapter is an SDK plugin seen as a hooks.Plugin. The type assertions run
// once, in Adapt; a nil field means the plugin does not implement that hook.
type adapter struct {
	manifest hooks.Manifest

	sessionStart   SessionStarter
	sessionEnd     SessionEnder
	toolList       ToolListFinalizer
	mutateRequest  RequestMutator
	reissue        Reissuer
	llmCall        LLMCallObserver
	transformOut   OutputTransformer
	guard          ToolCallGuard
	provide        ResultProvider
	toolCall       ToolCallObserver
	transformTools ResultTransformer
}

var _ hooks.Plugin = (*adapter)(nil)

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

func adapt(p Plugin, newLogger func(name string) hclog.Logger) *adapter {
	if p == nil {
		panic("sdk: Adapt called with a nil Plugin")
	}
	info := p.Info()
	if s, ok := p.(loggerSetter); ok {
		s.setLogger(newLogger(info.Name))
	}
	a := &adapter{manifest: hooks.Manifest{
		Name:     info.Name,
		Version:  info.Version,
		Matchers: info.Matchers,
		Tools:    info.Tools,
	}}
	a.sessionStart, _ = p.(SessionStarter)
	a.sessionEnd, _ = p.(SessionEnder)
	a.toolList, _ = p.(ToolListFinalizer)
	a.mutateRequest, _ = p.(RequestMutator)
	a.reissue, _ = p.(Reissuer)
	a.llmCall, _ = p.(LLMCallObserver)
	a.transformOut, _ = p.(OutputTransformer)
	a.guard, _ = p.(ToolCallGuard)
	a.provide, _ = p.(ResultProvider)
	a.toolCall, _ = p.(ToolCallObserver)
	a.transformTools, _ = p.(ResultTransformer)

	implemented := map[hooks.Name]bool{
		hooks.OnSessionStart:              a.sessionStart != nil,
		hooks.OnSessionEnd:                a.sessionEnd != nil,
		hooks.PreToolListFinalized:        a.toolList != nil,
		hooks.PreAPIRequestMutable:        a.mutateRequest != nil,
		hooks.PostLLMCallCanReissue:       a.reissue != nil,
		hooks.PostLLMCall:                 a.llmCall != nil,
		hooks.TransformLLMOutput:          a.transformOut != nil,
		hooks.PreToolCall:                 a.guard != nil,
		hooks.PreToolCallCanProvideResult: a.provide != nil,
		hooks.PostToolCall:                a.toolCall != nil,
		hooks.TransformToolResult:         a.transformTools != nil,
	}
	for _, h := range hooks.Catalogue {
		if implemented[h] {
			a.manifest.Hooks = append(a.manifest.Hooks, h)
		}
	}
	return a
}

// configureOf returns p's Configure, or nil when p takes no config.
func configureOf(p Plugin) func(context.Context, json.RawMessage) error {
	if c, ok := p.(Configurer); ok {
		return c.Configure
	}
	return nil
}

func (a *adapter) Manifest() hooks.Manifest { return a.manifest }

func (a *adapter) OnSessionStart(ctx context.Context, ev hooks.SessionStart) error {
	if a.sessionStart == nil {
		return nil
	}
	return a.sessionStart.OnSessionStart(ctx, ev)
}

func (a *adapter) OnSessionEnd(ctx context.Context, ev hooks.SessionEnd) error {
	if a.sessionEnd == nil {
		return nil
	}
	return a.sessionEnd.OnSessionEnd(ctx, ev)
}

func (a *adapter) PreToolListFinalized(ctx context.Context, ev hooks.ToolListRequest) (*hooks.ToolListOverride, error) {
	if a.toolList == nil {
		return nil, nil
	}
	return a.toolList.PreToolListFinalized(ctx, ev)
}

func (a *adapter) PreAPIRequestMutable(ctx context.Context, ev hooks.APIRequest) (*hooks.RequestPatch, error) {
	if a.mutateRequest == nil {
		return nil, nil
	}
	return a.mutateRequest.PreAPIRequestMutable(ctx, ev)
}

func (a *adapter) PostLLMCallCanReissue(ctx context.Context, ev hooks.LLMCall) (*hooks.Reissue, error) {
	if a.reissue == nil {
		return nil, nil
	}
	return a.reissue.PostLLMCallCanReissue(ctx, ev)
}

func (a *adapter) PostLLMCall(ctx context.Context, ev hooks.Inference) error {
	if a.llmCall == nil {
		return nil
	}
	return a.llmCall.PostLLMCall(ctx, ev)
}

func (a *adapter) TransformLLMOutput(ctx context.Context, ev hooks.LLMOutput) (*hooks.TextReplacement, error) {
	if a.transformOut == nil {
		return nil, nil
	}
	return a.transformOut.TransformLLMOutput(ctx, ev)
}

func (a *adapter) PreToolCall(ctx context.Context, ev hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
	if a.guard == nil {
		return nil, nil
	}
	return a.guard.PreToolCall(ctx, ev)
}

func (a *adapter) PreToolCallCanProvideResult(ctx context.Context, ev hooks.ToolCallRequest) (*hooks.ToolResult, error) {
	if a.provide == nil {
		return nil, nil
	}
	return a.provide.PreToolCallCanProvideResult(ctx, ev)
}

func (a *adapter) PostToolCall(ctx context.Context, ev hooks.ToolCallOutcome) error {
	if a.toolCall == nil {
		return nil
	}
	return a.toolCall.PostToolCall(ctx, ev)
}

func (a *adapter) TransformToolResult(ctx context.Context, ev hooks.ToolCallOutcome) (*hooks.ToolResult, error) {
	if a.transformTools == nil {
		return nil, nil
	}
	return a.transformTools.TransformToolResult(ctx, ev)
}
