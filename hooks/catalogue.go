package hooks

import (
	"context"
	"fmt"
)

// The catalogue as a table: one row per hook, in the firing order of a
// typical turn. It is the one place that ties a hook's name to its payload
// and answer types and to its Funcs field; Funcs, the SDK's adapter (which
// builds a Funcs) and the Bus are all driven by it, so adding a hook means
// a row here, its constant, its types, its combine rule and its wire
// conversion.
var catalogue = []hookSpec{
	{name: OnSessionStart, observer: true, funcs: func(f *Funcs) handler { return observing(f.OnSessionStartFunc) }},
	{name: PreToolListFinalized, funcs: func(f *Funcs) handler { return answering(f.PreToolListFinalizedFunc) }},
	{name: PreAPIRequestMutable, funcs: func(f *Funcs) handler { return answering(f.PreAPIRequestMutableFunc) }},
	{name: PostLLMCallCanReissue, funcs: func(f *Funcs) handler { return answering(f.PostLLMCallCanReissueFunc) }},
	{name: PostLLMCall, observer: true, funcs: func(f *Funcs) handler { return observing(f.PostLLMCallFunc) }},
	{name: PreToolCall, toolScoped: true, funcs: func(f *Funcs) handler { return answering(f.PreToolCallFunc) }},
	{name: PreToolCallCanProvideResult, toolScoped: true, funcs: func(f *Funcs) handler { return answering(f.PreToolCallCanProvideResultFunc) }},
	{name: PostToolCall, toolScoped: true, observer: true, funcs: func(f *Funcs) handler { return observing(f.PostToolCallFunc) }},
	{name: TransformToolResult, toolScoped: true, funcs: func(f *Funcs) handler { return answering(f.TransformToolResultFunc) }},
	{name: TransformLLMOutput, funcs: func(f *Funcs) handler { return answering(f.TransformLLMOutputFunc) }},
	{name: OnSessionEnd, observer: true, funcs: func(f *Funcs) handler { return observing(f.OnSessionEndFunc) }},
}

// Catalogue lists every hook in firing order of a typical turn.
var Catalogue = func() []Name {
	names := make([]Name, len(catalogue))
	for i, s := range catalogue {
		names[i] = s.name
	}
	return names
}()

// hookSpec is one row of the catalogue.
type hookSpec struct {
	name Name
	// toolScoped hooks fire per tool call; matchers decide who is asked.
	toolScoped bool
	// observer hooks are delivered asynchronously and answer nothing.
	observer bool
	// funcs returns the Funcs field serving this hook, nil when unset.
	funcs func(*Funcs) handler
}

// handler is one hook's function with its types erased.
type handler func(ctx context.Context, req any) (any, error)

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

// Observer reports whether the hook only observes: it is delivered
// asynchronously and its result is ignored.
func (n Name) Observer() bool {
	s, ok := specOf(n)
	return ok && s.observer
}

// answering erases the types of a hook function that answers. A payload of
// another type is the caller's mistake, reported as an error.
func answering[Req, Res any](f func(context.Context, Req) (Res, error)) handler {
	if f == nil {
		return nil
	}
	return func(ctx context.Context, req any) (any, error) {
		r, ok := req.(Req)
		if !ok {
			return nil, fmt.Errorf("host: hook payload is %T, want %T", req, r)
		}
		return f(ctx, r)
	}
}

// observing erases the types of an observer function; it answers nil.
func observing[Req any](f func(context.Context, Req) error) handler {
	if f == nil {
		return nil
	}
	return func(ctx context.Context, req any) (any, error) {
		r, ok := req.(Req)
		if !ok {
			return nil, fmt.Errorf("host: hook payload is %T, want %T", req, r)
		}
		return nil, f(ctx, r)
	}
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
