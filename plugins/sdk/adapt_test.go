package sdk_test

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/hookhost/hookhost/plugins/handshake"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/wire"
	"github.com/hookhost/hookhost/plugins/sdk"
)

// guardian implements exactly two hooks and no Base.
type guardian struct {
	infoCalls int
	seen      []string
}

var (
	_ sdk.ToolCallGuard    = (*guardian)(nil)
	_ sdk.ToolCallObserver = (*guardian)(nil)
)

func (g *guardian) Info() sdk.Info {
	g.infoCalls++
	return sdk.Info{
		Name: "guardian", Version: "2.0.0", Matchers: []string{"shell", "fs_*"},
		Tools: []hooks.ToolSpec{{Name: "guardian__policy", Description: "shows the policy"}},
	}
}

func (g *guardian) PreToolCall(_ context.Context, ev hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
	g.seen = append(g.seen, "pre "+ev.Name)
	return &hooks.PreToolCallDecision{Block: &hooks.Block{Message: "no"}}, nil
}

func (g *guardian) PostToolCall(_ context.Context, ev hooks.ToolCallOutcome) error {
	g.seen = append(g.seen, "post "+ev.Name)
	return nil
}

func TestAdaptDerivesHooksFromInterfaces(t *testing.T) {
	g := &guardian{}
	p := sdk.Adapt(g)
	want := hooks.Manifest{
		Name: "guardian", Version: "2.0.0", Matchers: []string{"shell", "fs_*"},
		Hooks: []hooks.Name{hooks.PreToolCall, hooks.PostToolCall},
		Tools: []hooks.ToolSpec{{Name: "guardian__policy", Description: "shows the policy"}},
		// No Configure, so it takes no config.
		Config: &hooks.ConfigKeys{},
	}
	if got := p.Manifest(); !reflect.DeepEqual(got, want) {
		t.Fatalf("manifest\n got  %+v\n want %+v", got, want)
	}
	p.Manifest()
	if g.infoCalls != 1 {
		t.Fatalf("Info called %d times, want once", g.infoCalls)
	}

	ctx := context.Background()
	if d, err := hooks.Ask[*hooks.PreToolCallDecision](ctx, p, hooks.PreToolCall, hooks.ToolCallRequest{Name: "shell"}); err != nil || d == nil || d.Block.Message != "no" {
		t.Fatalf("pre_tool_call: %+v %v", d, err)
	}
	if err := handleErr(ctx, p, hooks.PostToolCall, hooks.ToolCallOutcome{Name: "shell"}); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(g.seen, []string{"pre shell", "post shell"}) {
		t.Fatalf("handlers saw %q", g.seen)
	}
	// Every other hook is "no opinion" without touching the plugin.
	if r, err := hooks.Ask[*hooks.ToolResult](ctx, p, hooks.PreToolCallCanProvideResult, hooks.ToolCallRequest{Name: "shell"}); r != nil || err != nil {
		t.Fatalf("provide: %+v %v", r, err)
	}
	if r, err := hooks.Ask[*hooks.TextReplacement](ctx, p, hooks.TransformLLMOutput, hooks.LLMOutput{Text: "x"}); r != nil || err != nil {
		t.Fatalf("transform output: %+v %v", r, err)
	}
	if err := handleErr(ctx, p, hooks.OnSessionStart, hooks.SessionStart{}); err != nil {
		t.Fatal(err)
	}
	if len(g.seen) != 2 {
		t.Fatalf("unsubscribed hooks reached the plugin: %q", g.seen)
	}
	if err := hooks.ValidateManifest(p.Manifest(), false); err != nil {
		t.Fatal(err)
	}
}

// everyHook implements all of them, some with value receivers.
type everyHook struct{ sdk.Base }

func (everyHook) Info() sdk.Info                                           { return sdk.Info{Name: "every"} }
func (everyHook) OnSessionStart(context.Context, hooks.SessionStart) error { return nil }
func (everyHook) OnSessionEnd(context.Context, hooks.SessionEnd) error     { return nil }
func (*everyHook) PreToolListFinalized(context.Context, hooks.ToolListRequest) (*hooks.ToolListOverride, error) {
	return nil, nil
}
func (*everyHook) PreAPIRequestMutable(context.Context, hooks.APIRequest) (*hooks.RequestPatch, error) {
	return nil, nil
}
func (*everyHook) PreLLMCallCanProvideResponse(context.Context, hooks.LLMRequest) (*hooks.ModelResponse, error) {
	return nil, nil
}
func (*everyHook) PostLLMCallCanReissue(context.Context, hooks.LLMCall) (*hooks.Reissue, error) {
	return nil, nil
}
func (*everyHook) PostLLMCall(context.Context, hooks.Inference) error { return nil }
func (*everyHook) TransformLLMOutput(context.Context, hooks.LLMOutput) (*hooks.TextReplacement, error) {
	return nil, nil
}
func (*everyHook) PreToolCall(context.Context, hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
	return nil, nil
}
func (*everyHook) PreToolCallCanProvideResult(context.Context, hooks.ToolCallRequest) (*hooks.ToolResult, error) {
	return nil, nil
}
func (*everyHook) PostToolCall(context.Context, hooks.ToolCallOutcome) error { return nil }
func (*everyHook) TransformToolResult(context.Context, hooks.ToolCallOutcome) (*hooks.ToolResult, error) {
	return nil, nil
}
func (*everyHook) OnUserMessage(context.Context, hooks.UserMessage) (*hooks.UserMessageDecision, error) {
	return nil, nil
}
func (*everyHook) PostToolCallCanAddContext(context.Context, hooks.ToolCallOutcome) (*hooks.AddedContext, error) {
	return nil, nil
}

// baseOnly embeds Base and implements no hook.
type baseOnly struct{ sdk.Base }

func (baseOnly) Info() sdk.Info { return sdk.Info{Name: "idle", Version: "0"} }

func TestAdaptHookSets(t *testing.T) {
	if got := sdk.Adapt(&everyHook{}).Manifest().Hooks; !reflect.DeepEqual(got, hooks.Catalogue) {
		t.Fatalf("every hook: %v", got)
	}
	// By value, only the value-receiver methods are in the method set.
	if got := sdk.Adapt(everyHook{}).Manifest().Hooks; !reflect.DeepEqual(got, []hooks.Name{hooks.OnSessionStart, hooks.OnSessionEnd}) {
		t.Fatalf("every hook by value: %v", got)
	}
	// Base contributes Configure and Logger, never a hook.
	if got := sdk.Adapt(&baseOnly{}).Manifest(); got.Hooks != nil || got.Name != "idle" {
		t.Fatalf("base only: %+v", got)
	}
}

func TestAdaptGivesBaseALogger(t *testing.T) {
	b := &baseOnly{}
	sdk.Adapt(b)
	if name := b.Logger().Name(); name != "idle" {
		t.Fatalf("logger named %q, want the plugin's name", name)
	}
	// A Base that was never adapted still logs, through hclog's default.
	var fresh baseOnly
	if fresh.Logger() == nil {
		t.Fatal("nil logger")
	}
	if err := fresh.Configure(context.Background(), json.RawMessage(`{}`)); err != nil {
		t.Fatalf("Base.Configure: %v", err)
	}
}

func TestAdaptNilPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("Adapt(nil) did not panic")
		}
	}()
	sdk.Adapt(nil)
}

// A plugin built with the SDK serves every protocol version: go-plugin
// then picks the highest one its host speaks.
func TestVersionedPlugins(t *testing.T) {
	impl := sdk.Adapt(&guardian{})
	set := handshake.VersionedPlugins(impl, nil)
	if len(set) != len(handshake.Protocols) {
		t.Fatalf("plugin set %v, want versions %v", set, handshake.Protocols)
	}
	for _, v := range handshake.Protocols {
		gp, ok := set[v][handshake.PluginKey].(*handshake.GRPCPlugin)
		if len(set[v]) != 1 || !ok || gp.Impl != impl || gp.Version != v {
			t.Fatalf("version %d: plugin set %#v", v, set[v])
		}
		raw, err := gp.GRPCClient(context.Background(), nil, nil)
		if c, ok := raw.(wire.Conn); err != nil || !ok || c.Version() != v {
			t.Fatalf("version %d: GRPCClient returned %T, %v", v, raw, err)
		}
	}
	if err := (&handshake.GRPCPlugin{}).GRPCServer(nil, nil); err == nil {
		t.Fatal("serving a nil Impl must fail")
	}
}

// handleErr makes one observer call and returns its error.
func handleErr(ctx context.Context, p hooks.Plugin, hook hooks.Name, ev any) error {
	_, err := p.Handle(ctx, hook, ev)
	return err
}
