// Package hookstretch is the plumbing of stretches: the exchange in which
// one plugin answers consecutive hooks of the tool pipeline for one call
// (hookbus.ToolRun's comment is the design). Stretcher is what a remote
// plugin's adapter implements (package host, internal/wire), Run is the
// plugin's side, and Legal reads the legal stretches from the catalogue.
// It also holds the guarded call both sides make of a plugin handler.
package hookstretch

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/hookhost/hookhost/hooks"
)

// A stretch is consecutive hooks of the tool pipeline, for one tool call,
// asked of one plugin in one exchange. The full design, and why it keeps
// the catalogue's rules, is written down on hookbus.ToolRun.

// Stage is one hook of a stretch with its own deadline, counted from
// the moment the stage starts.
type Stage struct {
	Hook    hooks.Name
	Timeout time.Duration
}

// Request asks one plugin for consecutive stages of the tool
// pipeline for one call: pre_tool_call, pre_tool_call_can_provide_result
// and transform_tool_result, in that order, two or three of them.
type Request struct {
	Call   hooks.ToolCallRequest
	Stages []Stage
}

// Stretcher is implemented by plugins that can answer a stretch in one
// exchange (remote plugins speaking protocol v2). Stretch answers
// ErrNoStretch when it cannot at the moment, and the Bus then asks hook by
// hook. Stretch must return within the first stage's timeout, whatever
// ctx's deadline: any other error is the first stage's failure, as a plain
// call's error would be.
type Stretcher interface {
	Stretch(ctx context.Context, req Request) (Stretch, error)
}

// Stretch is one stretch under way.
type Stretch interface {
	// Next waits for the next stage's answer, of the hook's answer type
	// (nil for no opinion), or its failure, until ctx ends. It must return
	// soon after ctx ends.
	Next(ctx context.Context) (any, error)
	// Close ends the exchange; the plugin is told to cancel the stages not
	// answered yet. Safe to call more than once, and while a Next waits
	// (which then returns).
	Close()
}

// Ready is a Stretch that can give an answer it has already received
// without waiting: a plugin answers a stage's hooks together, and the
// answers after the first are usually there by the time they are asked
// for.
type Ready interface {
	// TryNext is Next for an answer already received. When the next
	// answer has not come, got is false and nothing changed: Next waits
	// for it.
	TryNext() (v any, got bool, err error)
}

// ErrNoStretch is what Stretcher.Stretch returns when the plugin cannot
// answer a stretch now (its process speaks protocol v1).
var ErrNoStretch = errors.New("plugin cannot answer several hooks in one exchange")

// ErrBadStretch is what Run reports for a request that is not a
// legal stretch: stages other than one of Legal, or a stage
// without a positive timeout. It is the host's mistake, not the plugin's.
var ErrBadStretch = errors.New("not a legal stretch")

// legalStretches are the runs of the tool pipeline one plugin may be asked
// for in one exchange, read from the catalogue.
var legalStretches = Legal()

// Legal lists the runs of hooks one plugin may be asked in one
// exchange: every run of two or more consecutive stretch stages
// (hooks.Facts.StretchStage). Each stage but the last can let
// the call go on to the next, so any such run has the same outcome as
// asking hook by hook.
func Legal() [][]hooks.Name {
	var stages []hooks.Name
	for n := 1; ; n++ {
		found := false
		for _, f := range hooks.CatalogueFacts() {
			if f.StretchStage == n {
				stages = append(stages, f.Name)
				found = true
			}
		}
		if !found {
			break
		}
	}
	var out [][]hooks.Name
	for i := range stages {
		for j := i + 2; j <= len(stages); j++ {
			out = append(out, stages[i:j:j])
		}
	}
	return out
}

// checkStretch reports whether req is a legal stretch (see ErrBadStretch).
func checkStretch(req Request) error {
	legal := false
	for _, l := range legalStretches {
		if slices.EqualFunc(l, req.Stages, func(h hooks.Name, s Stage) bool { return h == s.Hook }) {
			legal = true
			break
		}
	}
	if !legal {
		hooks := make([]string, len(req.Stages))
		for i, s := range req.Stages {
			hooks[i] = string(s.Hook)
		}
		return fmt.Errorf("%w: stages [%s]", ErrBadStretch, strings.Join(hooks, ", "))
	}
	for _, s := range req.Stages {
		if s.Timeout <= 0 {
			return fmt.Errorf("%w: stage %s has timeout %v, want a positive one", ErrBadStretch, s.Hook, s.Timeout)
		}
	}
	return nil
}

// Run answers a stretch on the plugin's side, calling p for each
// stage in order under the stage's own deadline and handing each answer (or
// failure) to emit as soon as it is known: emit is called once per stage
// answered, in stage order, never by two goroutines at once, and never
// after Run returns. It stops after a stage that failed, a block, an ask, a
// decision that breaks the rules, a provide that gave nothing, and when ctx
// ends; a stage that was not started because ctx ended is emitted as a
// failure wrapping ctx's error, so that the exchange always ends with a
// message. A provide stage is never started once ctx has ended: a
// cancelled turn must not run a tool.
//
// A handler panic is a failure wrapping ErrPanicked; a handler still
// running when its stage's deadline passes is a failure wrapping
// context.DeadlineExceeded (context.Canceled when ctx ended first), and is
// left to finish on its own; an answer of the wrong type wraps
// ErrMalformed. Arguments modified by the pre_tool_call stage are what the
// later stages see. The transform stage sees the call as the host would
// show it: arguments after the modify, the provided result as JSON
// (AsJSON), status provided_by:<p's name>, and the time the stretch took so
// far. A request that is not a legal stretch is answered with one failure
// wrapping ErrBadStretch.
func Run(ctx context.Context, p hooks.Plugin, req Request, emit func(answer any, err error)) {
	if err := checkStretch(req); err != nil {
		emit(nil, err)
		return
	}
	supervise(ctx, shortest(req.Stages), emit, func(run *stageRun) { runStretch(run, p, req) })
}

// runStretch is Run's stages, on the goroutine supervise gives them.
func runStretch(run *stageRun, p hooks.Plugin, req Request) {
	start := time.Now()
	call := req.Call
	var provided *hooks.ToolResult
	for _, st := range req.Stages {
		switch st.Hook {
		case hooks.PreToolCall:
			d, err := runStage[*hooks.PreToolCallDecision](run, p, st, call)
			if err != nil {
				run.emit(nil, err)
				return
			}
			run.emit(answerOf(d), nil)
			if d == nil {
				continue
			}
			if d.Block != nil || d.Ask != nil || hooks.CheckAnswer(p.Manifest().Name, hooks.PreToolCall, d, math.MaxInt, 0) != nil {
				return
			}
			if d.ModifiedArgs != nil {
				call.Arguments = d.ModifiedArgs
			}
		case hooks.PreToolCallCanProvideResult:
			r, err := runStage[*hooks.ToolResult](run, p, st, call)
			if err != nil {
				run.emit(nil, err)
				return
			}
			run.emit(answerOf(r), nil)
			if r == nil {
				return
			}
			provided = r
		case hooks.TransformToolResult:
			ev := hooks.ToolCallOutcome{
				SessionID: call.SessionID, CallID: call.CallID, Name: call.Name, Arguments: call.Arguments,
				Result: provided.AsJSON(), Status: hooks.ProvidedBy(p.Manifest().Name), Duration: time.Since(start), Origin: call.Origin,
			}
			r, err := runStage[*hooks.ToolResult](run, p, st, ev)
			run.emit(answerOf(r), err)
		}
	}
}

// answerOf turns a nil answer of a stage's answer type into a plain nil,
// so that whoever receives it can test for "no opinion" with == nil.
func answerOf(v any) any {
	switch v := v.(type) {
	case *hooks.PreToolCallDecision:
		if v == nil {
			return nil
		}
	case *hooks.ToolResult:
		if v == nil {
			return nil
		}
	case *hooks.ToolListOverride:
		if v == nil {
			return nil
		}
	case *hooks.RequestPatch:
		if v == nil {
			return nil
		}
	case *hooks.ModelResponse:
		if v == nil {
			return nil
		}
	case *hooks.Reissue:
		if v == nil {
			return nil
		}
	case *hooks.TextReplacement:
		if v == nil {
			return nil
		}
	}
	return v
}
