package hooks

import (
	"context"
	"fmt"
	"reflect"
)

// Name identifies a hook in the catalogue.
type Name string

// The hook catalogue. The comment on each says when it fires; the table
// below gives each its payload and answer types (through its Funcs field),
// and hookbus/bus_hooks.go its combine rule.
const (
	OnSessionStart               Name = "on_session_start"                  // a session begins (observe)
	OnSessionEnd                 Name = "on_session_end"                    // each run ends (observe)
	OnUserMessage                Name = "on_user_message"                   // a new user message, before the turn's first model call
	PreToolListFinalized         Name = "pre_tool_list_finalized"           // before each model call
	PreAPIRequestMutable         Name = "pre_api_request_mutable"           // before each model call
	PreLLMCallCanProvideResponse Name = "pre_llm_call_can_provide_response" // before each model call, with the final request
	PostLLMCallCanReissue        Name = "post_llm_call_can_reissue"         // after each model response
	PostLLMCall                  Name = "post_llm_call"                     // after every model call, reissues too (observe)
	TransformLLMOutput           Name = "transform_llm_output"              // on the final answer text
	PreToolCall                  Name = "pre_tool_call"                     // before each tool call
	PreToolCallCanProvideResult  Name = "pre_tool_call_can_provide_result"  // after pre_tool_call, before native dispatch
	PostToolCall                 Name = "post_tool_call"                    // after every tool call (observe)
	TransformToolResult          Name = "transform_tool_result"             // before a result joins the conversation
	PostToolCallCanAddContext    Name = "post_tool_call_can_add_context"    // after transform_tool_result, on the final result
)

// The catalogue as a table: one row per hook, in the firing order of a
// typical turn. It is the one statement of the catalogue's facts: a hook's
// name, whether it observes, whether it is tool-scoped, its place in a
// stretch, its payload and answer types (through its Funcs field) and the
// texts of the README's catalogue table. Funcs, the SDK's adapter, the Bus
// and the wire are driven by it, and `make generate` writes the Python and
// TypeScript SDKs' tables and the README's table from it (see "Adding a
// hook" in doc.go).
var catalogue = []hookSpec{
	{name: OnSessionStart, observer: true,
		fires: "a session begins", returns: "nothing", combine: "observe (async)",
		funcs: func(f *Funcs) bound { return observing(f.OnSessionStartFunc) }},
	{name: OnUserMessage,
		fires: "on each new user message, before the turn's first model call", returns: "block with a message, or additional context",
		combine: "any block wins (the first blocker's message is the turn's answer, no model call); contexts concatenate in priority order",
		funcs:   func(f *Funcs) bound { return answering(f.OnUserMessageFunc) }},
	{name: PreToolListFinalized, modelStage: PreCallStage,
		fires: "before each model call", returns: "a replacement tool list", combine: "first non-nil wins, for that call only",
		funcs: func(f *Funcs) bound { return answering(f.PreToolListFinalizedFunc) }},
	{name: PreAPIRequestMutable, modelStage: PreCallStage,
		fires: "before each model call", returns: "a patch of request fields",
		combine: "merged in priority order; first write per field wins: a lower-priority plugin sees, and may patch, only fields nobody above it set",
		funcs:   func(f *Funcs) bound { return answering(f.PreAPIRequestMutableFunc) }},
	{name: PreLLMCallCanProvideResponse, modelStage: PreCallStage,
		fires: "before each model call, with the final request", returns: "a model response", combine: "first non-nil wins and the model is not called",
		funcs: func(f *Funcs) bound { return answering(f.PreLLMCallCanProvideResponseFunc) }},
	{name: PostLLMCallCanReissue, modelStage: PostCallStage,
		fires: "after each model response", returns: "a request patch + reason",
		combine: "first non-nil wins; at most one reissue per iteration, not counted against the budget",
		funcs:   func(f *Funcs) bound { return answering(f.PostLLMCallCanReissueFunc) }},
	{name: PostLLMCall, observer: true,
		fires: "after every model call, reissues included", returns: "nothing", combine: "observe (async)",
		funcs: func(f *Funcs) bound { return observing(f.PostLLMCallFunc) }},
	{name: PreToolCall, toolScoped: true, stretchStage: 1,
		fires: "before each tool call", returns: "block with a message, ask with a reason, or modified arguments", combine: "any block wins; else any ask holds the call for a person's approval (every asker's reason, joined); modifies apply in order, each plugin seeing the arguments so far",
		funcs: func(f *Funcs) bound { return answering(f.PreToolCallFunc) }},
	{name: PreToolCallCanProvideResult, toolScoped: true, stretchStage: 2,
		fires: "before native dispatch", returns: "a tool result", combine: "first non-nil wins and skips native dispatch",
		funcs: func(f *Funcs) bound { return answering(f.PreToolCallCanProvideResultFunc) }},
	{name: PostToolCall, toolScoped: true, observer: true,
		fires: "after every tool call", returns: "nothing", combine: "observe (async)",
		funcs: func(f *Funcs) bound { return observing(f.PostToolCallFunc) }},
	{name: TransformToolResult, toolScoped: true, stretchStage: 3,
		fires: "before a result joins the conversation", returns: "a replacement result", combine: "chain in priority order",
		funcs: func(f *Funcs) bound { return answering(f.TransformToolResultFunc) }},
	{name: PostToolCallCanAddContext, toolScoped: true,
		fires: "after transform_tool_result, on the final result", returns: "additional context",
		combine: "contexts concatenate in priority order, appended to the result the model sees",
		funcs:   func(f *Funcs) bound { return answering(f.PostToolCallCanAddContextFunc) }},
	{name: TransformLLMOutput, modelStage: PostCallStage,
		fires: "on the final answer", returns: "replacement text", combine: "chain in priority order",
		funcs: func(f *Funcs) bound { return answering(f.TransformLLMOutputFunc) }},
	{name: OnSessionEnd, observer: true,
		fires: "each run of a session ends", returns: "nothing", combine: "observe (async)",
		funcs: func(f *Funcs) bound { return observing(f.OnSessionEndFunc) }},
}

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
	// UnservedFunc, when set, is the plugin's Unserved (see Unserving).
	UnservedFunc func() []Name
	// HookOptions are the manifest's per-hook options (see HookOptions).
	HookOptions map[Name]HookOptions

	OnSessionStartFunc               func(context.Context, SessionStart) error
	OnSessionEndFunc                 func(context.Context, SessionEnd) error
	OnUserMessageFunc                func(context.Context, UserMessage) (*UserMessageDecision, error)
	PreToolListFinalizedFunc         func(context.Context, ToolListRequest) (*ToolListOverride, error)
	PreAPIRequestMutableFunc         func(context.Context, APIRequest) (*RequestPatch, error)
	PreLLMCallCanProvideResponseFunc func(context.Context, LLMRequest) (*ModelResponse, error)
	PostLLMCallCanReissueFunc        func(context.Context, LLMCall) (*Reissue, error)
	PostLLMCallFunc                  func(context.Context, Inference) error
	TransformLLMOutputFunc           func(context.Context, LLMOutput) (*TextReplacement, error)
	PreToolCallFunc                  func(context.Context, ToolCallRequest) (*PreToolCallDecision, error)
	PreToolCallCanProvideResultFunc  func(context.Context, ToolCallRequest) (*ToolResult, error)
	PostToolCallFunc                 func(context.Context, ToolCallOutcome) error
	TransformToolResultFunc          func(context.Context, ToolCallOutcome) (*ToolResult, error)
	PostToolCallCanAddContextFunc    func(context.Context, ToolCallOutcome) (*AddedContext, error)
}

var _ Plugin = (*Funcs)(nil)

// Manifest lists the hooks whose functions are set, in catalogue order.
func (f *Funcs) Manifest() Manifest {
	m := Manifest{Name: f.Name, Version: f.Version, Matchers: f.Matchers, HookMatchers: f.HookMatchers, Tools: f.Tools, Config: f.Config, HookOptions: f.HookOptions}
	for _, s := range catalogue {
		if s.funcs(f).handle != nil {
			m.Hooks = append(m.Hooks, s.name)
		}
	}
	return m
}

// Unserved is what UnservedFunc says, nil when it is not set.
func (f *Funcs) Unserved() []Name {
	if f.UnservedFunc == nil {
		return nil
	}
	return f.UnservedFunc()
}

// Handle calls the function set for hook; a hook without one answers nil.
func (f *Funcs) Handle(ctx context.Context, hook Name, req any) (any, error) {
	s, ok := specOf(hook)
	if !ok {
		return nil, fmt.Errorf("host: unknown hook %q", hook)
	}
	h := s.funcs(f).handle
	if h == nil {
		return nil, nil
	}
	return h(ctx, req)
}

// Catalogue lists every hook in firing order of a typical turn.
var Catalogue = func() []Name {
	names := make([]Name, len(catalogue))
	for i, s := range catalogue {
		names[i] = s.name
	}
	return names
}()

// Facts is what the catalogue states about one hook, for the tools that
// write it into other languages and documents.
type Facts struct {
	Name Name
	// Observer: delivered asynchronously, answers nothing.
	Observer bool
	// ToolScoped: fires per tool call; matchers decide who is asked.
	ToolScoped bool
	// StretchStage is the hook's place (1, 2, …) in the tool pipeline a
	// stretch runs, 0 for a hook no stretch holds.
	StretchStage int
	// ModelStage is the model-side stage that holds the hook: PreCallStage
	// or PostCallStage, 0 for none. Within a stage, hooks keep catalogue
	// order.
	ModelStage int
	// Fires, Returns and Combine are one line each: when the hook fires,
	// what a plugin returns, and how answers combine.
	Fires, Returns, Combine string
	// Payload is the type of the hook's payload (ToolCallRequest, …) and
	// Answer that of its answer (ToolResult, …; nil for an observer), read
	// from the hook's Funcs field, so that the generators name the types
	// each language declares under the same names.
	Payload, Answer reflect.Type
}

// CatalogueFacts returns the facts of every hook, in catalogue order.
func CatalogueFacts() []Facts {
	out := make([]Facts, len(catalogue))
	for i, s := range catalogue {
		b := s.funcs(&Funcs{})
		out[i] = Facts{Name: s.name, Observer: s.observer, ToolScoped: s.toolScoped, StretchStage: s.stretchStage, ModelStage: s.modelStage,
			Fires: s.fires, Returns: s.returns, Combine: s.combine, Payload: b.payload, Answer: b.answer}
	}
	return out
}

// The model-side stages (Facts.ModelStage): the hooks one plugin answers
// before a model call, and after it, in one exchange when it can
// (hookbus.Bus.PreCall and PostCall).
const (
	PreCallStage  = 1
	PostCallStage = 2
)

// hookSpec is one row of the catalogue.
type hookSpec struct {
	name Name
	// toolScoped hooks fire per tool call; matchers decide who is asked.
	toolScoped bool
	// observer hooks are delivered asynchronously and answer nothing.
	observer bool
	// stretchStage is the place in a stretch, 0 for none (see Facts.StretchStage).
	stretchStage int
	// modelStage is the model-side stage holding the hook, 0 for none (see Facts.ModelStage).
	modelStage int
	// fires, returns and combine are the README table's texts.
	fires, returns, combine string
	// funcs returns the Funcs field serving this hook (its handle nil
	// when unset) with the field's payload and answer types.
	funcs func(*Funcs) bound
}

// handler is one hook's function with its types erased.
type handler func(ctx context.Context, req any) (any, error)

// bound is one Funcs field: its function with the types erased (nil when
// the field is unset) and the types it takes and answers.
type bound struct {
	handle          handler
	payload, answer reflect.Type
}

func specOf(n Name) (*hookSpec, bool) {
	for i := range catalogue {
		if catalogue[i].name == n {
			return &catalogue[i], true
		}
	}
	return nil, false
}

// Known reports whether n is a hook of the catalogue.
func (n Name) Known() bool {
	_, ok := specOf(n)
	return ok
}

// ToolScoped reports whether the hook fires per tool call, so that a
// plugin's tool matchers decide whether it is asked.
func (n Name) ToolScoped() bool {
	s, ok := specOf(n)
	return ok && s.toolScoped
}

// ModelStage is the model-side stage holding the hook (PreCallStage,
// PostCallStage), 0 for a hook no model stage holds.
func (n Name) ModelStage() int {
	s, ok := specOf(n)
	if !ok {
		return 0
	}
	return s.modelStage
}

// Observer reports whether the hook only observes: it is delivered
// asynchronously and its result is ignored.
func (n Name) Observer() bool {
	s, ok := specOf(n)
	return ok && s.observer
}

// answering erases the types of a hook function that answers. A payload of
// another type is the caller's mistake, reported as an error. An answer is
// a pointer; its type is the type pointed to.
func answering[Req, Res any](f func(context.Context, Req) (Res, error)) bound {
	b := bound{payload: reflect.TypeFor[Req](), answer: reflect.TypeFor[Res]().Elem()}
	if f == nil {
		return b
	}
	b.handle = func(ctx context.Context, req any) (any, error) {
		r, ok := req.(Req)
		if !ok {
			return nil, fmt.Errorf("host: hook payload is %T, want %T", req, r)
		}
		return f(ctx, r)
	}
	return b
}

// observing erases the types of an observer function; it answers nil.
func observing[Req any](f func(context.Context, Req) error) bound {
	b := bound{payload: reflect.TypeFor[Req]()}
	if f == nil {
		return b
	}
	b.handle = func(ctx context.Context, req any) (any, error) {
		r, ok := req.(Req)
		if !ok {
			return nil, fmt.Errorf("host: hook payload is %T, want %T", req, r)
		}
		return nil, f(ctx, r)
	}
	return b
}

// Ask calls hook on p with req and returns the answer as the hook's answer
// type T (the zero T for no opinion), for callers outside the Bus that hold
// one plugin: tests, and the plugin side of the wire. An answer of another
// type is ErrMalformed. It applies none of the Bus's rules.
func Ask[T any](ctx context.Context, p Plugin, hook Name, req any) (T, error) {
	var zero T
	v, err := p.Handle(ctx, hook, req)
	if err != nil || v == nil {
		return zero, err
	}
	t, ok := v.(T)
	if !ok {
		return zero, fmt.Errorf("%w: %s answered with a %T, want %T", ErrMalformed, hook, v, zero)
	}
	return t, nil
}
