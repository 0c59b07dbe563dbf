package hookbus_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/hookhost/hookhost/hookbus"
	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/hookstretch"
	"github.com/hookhost/hookhost/internal/wiretest"
)

// The tool pipeline's rules, over every path a call can take: the Bus's
// methods and a ToolRun, with plugins in-process, over protocol v1, over
// protocol v2 with stretches and with stretches hidden, and in-process
// answering stretches through RunStretch. Every path must give exactly the
// outcome a scenario wants, down to the Stats per hook: a stretch is an
// optimisation, never a different rule.

// path is one way the pipeline's hooks are fired for one call.
type path struct {
	name string
	// host returns p as this path's host holds it.
	host func(t *testing.T, p hooks.Plugin) hooks.Plugin
	// run fires through a ToolRun, else through the Bus's methods (the
	// callers that hold no ToolRun: they never stretch).
	run bool
	// preOutside fires pre_tool_call on the Bus and the rest through a
	// ToolRun started after it, as a caller does that checks the final
	// arguments before any plugin is asked for a result.
	preOutside bool
	// stretches says whether this path's plugins answer stretches.
	stretches bool
}

func over(w wiretest.Way) func(t *testing.T, p hooks.Plugin) hooks.Plugin {
	return func(t *testing.T, p hooks.Plugin) hooks.Plugin { return wiretest.Over(t, w, p) }
}

var (
	inProcessWay = wiretest.Ways[0]
	v1Way        = wiretest.Ways[1]
	v2Way        = wiretest.Ways[2]
)

var paths = []path{
	{name: "inprocess/bus", host: over(inProcessWay)},
	{name: "inprocess/run", host: over(inProcessWay), run: true},
	{name: "inprocess-stretched/run", run: true, stretches: true,
		host: func(t *testing.T, p hooks.Plugin) hooks.Plugin { return &counted{Plugin: stretching{p}} }},
	{name: "v1/run", host: over(v1Way), run: true},
	{name: "v2/run", run: true, stretches: true,
		host: func(t *testing.T, p hooks.Plugin) hooks.Plugin { return &counted{Plugin: wiretest.Over(t, v2Way, p)} }},
	{name: "v2-nostretch/run", run: true,
		host: func(t *testing.T, p hooks.Plugin) hooks.Plugin { return noStretch{wiretest.Over(t, v2Way, p)} }},
	{name: "v2/bus", host: over(v2Way)},
	{name: "inprocess-stretched/pre-outside", run: true, preOutside: true, stretches: true,
		host: func(t *testing.T, p hooks.Plugin) hooks.Plugin { return &counted{Plugin: stretching{p}} }},
	{name: "v2/pre-outside", run: true, preOutside: true, stretches: true,
		host: func(t *testing.T, p hooks.Plugin) hooks.Plugin { return &counted{Plugin: wiretest.Over(t, v2Way, p)} }},
}

// outcome is everything a tool call's hooks decided, as compared across
// paths.
type outcome struct {
	Blocked       bool
	BlockedBy     string
	Message       string
	Arguments     string
	ModifiedBy    []string
	ProvidedBy    string // "" when native dispatch ran (or nothing did)
	Native        bool
	Content       string // the result the model would see
	IsError       bool
	TransformedBy []string
	Stats         []string // plugin hook calls=N kind=N..., sorted
}

// nativeResult is what the native tool answers in these tests.
const nativeResult = `{"native":true}`

// fire runs one tool call through the hooks the way package dispatch does:
// pre_tool_call; unless blocked or cancelled, provide; else native
// dispatch; post_tool_call; transform_tool_result.
func fire(ctx context.Context, b *hookbus.Bus, run bool, req hooks.ToolCallRequest) outcome {
	return fireOn(ctx, b, path{run: run}, req)
}

func fireOn(ctx context.Context, b *hookbus.Bus, pa path, req hooks.ToolCallRequest) outcome {
	run := pa.run
	var (
		pre      func() hookbus.PreToolCallOutcome
		provide  func(hooks.ToolCallRequest) *hookbus.ProvidedResult
		done     func(hooks.ToolCallOutcome)
		trans    func(hooks.ToolCallOutcome) (hooks.ToolResult, []string)
		closeRun = func() {}
	)
	switch {
	case pa.preOutside:
		var r *hookbus.ToolRun
		pre = func() hookbus.PreToolCallOutcome { return b.PreToolCall(ctx, req) }
		provide = func(req hooks.ToolCallRequest) *hookbus.ProvidedResult {
			r = b.StartToolCall(req)
			return r.ProvideResult(ctx)
		}
		done = func(ev hooks.ToolCallOutcome) {
			if r == nil {
				r = b.StartToolCall(req)
			}
			r.Done(ev)
		}
		trans = func(ev hooks.ToolCallOutcome) (hooks.ToolResult, []string) { return r.Transform(ctx, ev) }
		closeRun = func() { r.Close() }
	case run:
		r := b.StartToolCall(req)
		pre = func() hookbus.PreToolCallOutcome { return r.PreToolCall(ctx) }
		provide = func(hooks.ToolCallRequest) *hookbus.ProvidedResult { return r.ProvideResult(ctx) }
		done = r.Done
		trans = func(ev hooks.ToolCallOutcome) (hooks.ToolResult, []string) { return r.Transform(ctx, ev) }
		closeRun = r.Close
	default:
		pre = func() hookbus.PreToolCallOutcome { return b.PreToolCall(ctx, req) }
		provide = func(req hooks.ToolCallRequest) *hookbus.ProvidedResult {
			return b.PreToolCallCanProvideResult(ctx, req)
		}
		done = b.PostToolCall
		trans = func(ev hooks.ToolCallOutcome) (hooks.ToolResult, []string) { return b.TransformToolResult(ctx, ev) }
	}
	defer closeRun()

	var out outcome
	p := pre()
	out.Blocked, out.BlockedBy, out.Message = p.Blocked, p.BlockedBy, p.Message
	out.Arguments, out.ModifiedBy = string(p.Arguments), p.ModifiedBy
	req.Arguments = p.Arguments
	var res hooks.ToolResult
	var status hooks.CallStatus
	switch {
	case p.Blocked:
		res, status = errorResult(p.Message), hooks.StatusBlocked
	case ctx.Err() != nil:
		res, status = errorResult("not run: the turn was cancelled"), hooks.StatusError
	default:
		if r := provide(req); r != nil {
			out.ProvidedBy = r.Plugin
			res, status = r.ToolResult, hooks.ProvidedBy(r.Plugin)
		} else {
			out.Native = true
			res, status = hooks.ToolResult{Content: nativeResult}, hooks.StatusOK
		}
	}
	res = res.AsJSON()
	ev := hooks.ToolCallOutcome{SessionID: req.SessionID, CallID: req.CallID, Name: req.Name, Arguments: req.Arguments,
		Result: res, Status: status, Duration: time.Millisecond}
	done(ev)
	res, out.TransformedBy = trans(ev)
	if len(out.TransformedBy) > 0 {
		res = res.AsJSON()
	}
	out.Content, out.IsError = res.Content, res.IsError
	out.Stats = statLines(b.Stats())
	return out
}

func errorResult(msg string) hooks.ToolResult {
	b, _ := json.Marshal(map[string]string{"error": msg})
	return hooks.ToolResult{Content: string(b), IsError: true}
}

// statLines renders the synchronous hooks' Stats compactly: one line per
// plugin and hook that was called, e.g. "P pre_tool_call calls=1 error=1".
func statLines(st hookbus.Stats) []string {
	var lines []string
	for _, h := range st.Hooks {
		if h.Calls == 0 || h.Observer {
			continue
		}
		line := fmt.Sprintf("%s %s calls=%d", h.Plugin, h.Hook, h.Calls)
		var kinds []string
		for k, n := range h.Failures {
			kinds = append(kinds, fmt.Sprintf("%s=%d", k, n))
		}
		sort.Strings(kinds)
		if len(kinds) > 0 {
			line += " " + strings.Join(kinds, " ")
		}
		lines = append(lines, line)
	}
	sort.Strings(lines)
	return lines
}

// plugin is one plugin of a scenario with its options; unavailable puts
// it on the Bus as an adapter whose process is down.
type plugin struct {
	f           *hooks.Funcs
	opts        hookbus.Options
	unavailable bool
}

type scenario struct {
	name string
	// plugins builds the scenario's plugins, afresh for each path.
	plugins func(t *testing.T) []plugin
	// cancelled fires the call with a context already cancelled.
	cancelled bool
	want      outcome
	// stretch is the stretch a path whose plugins answer stretches must
	// send (its stages), nil when it must send none.
	stretch []hooks.Name
}

// Shorthands for scenario plugins.

func echoArgs(name string) func(context.Context, hooks.ToolCallRequest) (*hooks.ToolResult, error) {
	return func(_ context.Context, req hooks.ToolCallRequest) (*hooks.ToolResult, error) {
		return &hooks.ToolResult{Content: fmt.Sprintf(`{"by":%q,"args":%s}`, name, req.Arguments)}, nil
	}
}

func wrapResult(name string) func(context.Context, hooks.ToolCallOutcome) (*hooks.ToolResult, error) {
	return func(_ context.Context, ev hooks.ToolCallOutcome) (*hooks.ToolResult, error) {
		return &hooks.ToolResult{Content: fmt.Sprintf(`[%q,%q,%s]`, name, ev.Status, ev.Result.Content), IsError: ev.Result.IsError}, nil
	}
}

func noDecision(context.Context, hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
	return nil, nil
}

func noResult(context.Context, hooks.ToolCallRequest) (*hooks.ToolResult, error) { return nil, nil }

// full is a plugin in the three answering stages of the pipeline: it adds
// its name to the arguments, provides a result echoing them, and wraps the
// result it is shown.
func full(name string) *hooks.Funcs {
	return &hooks.Funcs{
		Name:                            name,
		PreToolCallFunc:                 modify(name),
		PreToolCallCanProvideResultFunc: echoArgs(name),
		TransformToolResultFunc:         wrapResult(name),
	}
}

var (
	preProvideTransformStages = []hooks.Name{hooks.PreToolCall, hooks.PreToolCallCanProvideResult, hooks.TransformToolResult}
	preProvideStages          = []hooks.Name{hooks.PreToolCall, hooks.PreToolCallCanProvideResult}
	provideTransformStages    = []hooks.Name{hooks.PreToolCallCanProvideResult, hooks.TransformToolResult}
)

// preStageTimeout bounds a hanging pre stage; the plugin's transform has
// the same deadline and must meet it, so it is not cut too fine for a busy
// machine.
const preStageTimeout = 500 * time.Millisecond

func scenarios() []scenario {
	ss := []scenario{
		{
			name:    "one plugin in all three stages",
			plugins: func(*testing.T) []plugin { return []plugin{{f: full("P")}} },
			want: outcome{
				Arguments: `{"P":0}`, ModifiedBy: []string{"P"}, ProvidedBy: "P",
				Content: `["P","provided_by:P",{"by":"P","args":{"P":0}}]`, TransformedBy: []string{"P"},
				Stats: []string{"P pre_tool_call calls=1", "P pre_tool_call_can_provide_result calls=1", "P transform_tool_result calls=1"},
			},
			stretch: preProvideTransformStages,
		},
		{
			name: "a modify above the stretch reaches it",
			plugins: func(*testing.T) []plugin {
				return []plugin{{f: modifier("A", "A")}, {f: full("P")}}
			},
			want: outcome{
				Arguments: `{"A":0,"P":1}`, ModifiedBy: []string{"A", "P"}, ProvidedBy: "P",
				Content: `["P","provided_by:P",{"by":"P","args":{"A":0,"P":1}}]`, TransformedBy: []string{"P"},
				Stats: []string{"A pre_tool_call calls=1", "P pre_tool_call calls=1", "P pre_tool_call_can_provide_result calls=1", "P transform_tool_result calls=1"},
			},
			stretch: preProvideTransformStages,
		},
		{
			name: "a block above the stretch: it is never sent and nothing is provided",
			plugins: func(*testing.T) []plugin {
				return []plugin{{f: blocker("A", "no")}, {f: full("P")}}
			},
			want: outcome{
				Blocked: true, BlockedBy: "A", Message: "no", Arguments: `{}`,
				Content: `["P","blocked",{"error":"no"}]`, IsError: true, TransformedBy: []string{"P"},
				Stats: []string{"A pre_tool_call calls=1", "P transform_tool_result calls=1"},
			},
		},
		{
			name: "the stretch's plugin blocks: nothing is provided, it transforms the block plainly",
			plugins: func(*testing.T) []plugin {
				p := full("P")
				p.PreToolCallFunc = block("P says no")
				return []plugin{{f: p}}
			},
			want: outcome{
				Blocked: true, BlockedBy: "P", Message: "P says no", Arguments: `{}`,
				Content: `["P","blocked",{"error":"P says no"}]`, IsError: true, TransformedBy: []string{"P"},
				Stats: []string{"P pre_tool_call calls=1", "P transform_tool_result calls=1"},
			},
			stretch: preProvideTransformStages,
		},
		{
			name: "the stretch provides nothing: the next provider does, and the stretch's plugin transforms that plainly",
			plugins: func(*testing.T) []plugin {
				p := full("P")
				p.PreToolCallFunc = noDecision
				p.PreToolCallCanProvideResultFunc = noResult
				return []plugin{{f: p}, {f: provider("B", "from B")}}
			},
			want: outcome{
				Arguments: `{}`, ProvidedBy: "B",
				Content: `["P","provided_by:B","from B"]`, TransformedBy: []string{"P"},
				Stats: []string{"B pre_tool_call_can_provide_result calls=1", "P pre_tool_call calls=1", "P pre_tool_call_can_provide_result calls=1", "P transform_tool_result calls=1"},
			},
			stretch: preProvideTransformStages,
		},
		{
			name: "an answer over max_result_size is malformed and falls through",
			plugins: func(*testing.T) []plugin {
				return []plugin{{f: full("P"), opts: hookbus.Options{MaxResultSize: 16}}, {f: provider("B", `"B"`)}}
			},
			want: outcome{
				Arguments: `{"P":0}`, ModifiedBy: []string{"P"}, ProvidedBy: "B", Content: `"B"`,
				Stats: []string{"B pre_tool_call_can_provide_result calls=1", "P pre_tool_call calls=1", "P pre_tool_call_can_provide_result calls=1 malformed=1", "P transform_tool_result calls=1 malformed=1"},
			},
			stretch: preProvideTransformStages,
		},
		{
			name: "provide and transform when another plugin is the last guard",
			plugins: func(*testing.T) []plugin {
				p := full("P")
				p.PreToolCallFunc = nil
				return []plugin{{f: p}, {f: modifier("G", "G")}, {f: &hooks.Funcs{Name: "B", TransformToolResultFunc: wrapResult("B")}}}
			},
			want: outcome{
				Arguments: `{"G":0}`, ModifiedBy: []string{"G"}, ProvidedBy: "P",
				Content:       `["B","provided_by:P",["P","provided_by:P",{"by":"P","args":{"G":0}}]]`,
				TransformedBy: []string{"P", "B"},
				Stats:         []string{"B transform_tool_result calls=1", "G pre_tool_call calls=1", "P pre_tool_call_can_provide_result calls=1", "P transform_tool_result calls=1"},
			},
			stretch: provideTransformStages,
		},
		{
			name: "no stretch when a later plugin guards after the provider's own guard",
			plugins: func(*testing.T) []plugin {
				p := full("P")
				p.TransformToolResultFunc = nil
				return []plugin{{f: p}, {f: modifier("G", "G")}}
			},
			want: outcome{
				Arguments: `{"G":1,"P":0}`, ModifiedBy: []string{"P", "G"}, ProvidedBy: "P",
				Content: `{"by":"P","args":{"G":1,"P":0}}`,
				Stats:   []string{"G pre_tool_call calls=1", "P pre_tool_call calls=1", "P pre_tool_call_can_provide_result calls=1"},
			},
		},
		{
			name: "no stretch when another plugin provides first",
			plugins: func(*testing.T) []plugin {
				return []plugin{{f: provider("B", `"B"`)}, {f: full("P")}}
			},
			want: outcome{
				Arguments: `{"P":0}`, ModifiedBy: []string{"P"}, ProvidedBy: "B",
				Content: `["P","provided_by:B","B"]`, TransformedBy: []string{"P"},
				Stats: []string{"B pre_tool_call_can_provide_result calls=1", "P pre_tool_call calls=1", "P transform_tool_result calls=1"},
			},
		},
		{
			name: "pre and provide only, the transform is another plugin's",
			plugins: func(*testing.T) []plugin {
				p := full("P")
				p.TransformToolResultFunc = nil
				return []plugin{{f: &hooks.Funcs{Name: "B", TransformToolResultFunc: wrapResult("B")}}, {f: p}}
			},
			want: outcome{
				Arguments: `{"P":0}`, ModifiedBy: []string{"P"}, ProvidedBy: "P",
				Content: `["B","provided_by:P",{"by":"P","args":{"P":0}}]`, TransformedBy: []string{"B"},
				Stats: []string{"B transform_tool_result calls=1", "P pre_tool_call calls=1", "P pre_tool_call_can_provide_result calls=1"},
			},
			stretch: preProvideStages,
		},
		{
			name: "per-hook matchers: a provider not matching the tool is neither asked nor stretched",
			plugins: func(*testing.T) []plugin {
				p := full("P")
				p.HookMatchers = map[hooks.Name][]string{hooks.PreToolCallCanProvideResult: {"kora__*"}}
				return []plugin{{f: p}}
			},
			want: outcome{
				Arguments: `{"P":0}`, ModifiedBy: []string{"P"}, Native: true,
				Content: `["P","ok",{"native":true}]`, TransformedBy: []string{"P"},
				Stats: []string{"P pre_tool_call calls=1", "P transform_tool_result calls=1"},
			},
		},
		{
			name: "the transform stage fails: the provided result stands",
			plugins: func(*testing.T) []plugin {
				p := full("P")
				p.TransformToolResultFunc = func(context.Context, hooks.ToolCallOutcome) (*hooks.ToolResult, error) {
					return &hooks.ToolResult{Content: `"ignored"`}, errors.New("transform broke")
				}
				return []plugin{{f: p}}
			},
			want: outcome{
				Arguments: `{"P":0}`, ModifiedBy: []string{"P"}, ProvidedBy: "P",
				Content: `{"by":"P","args":{"P":0}}`,
				Stats:   []string{"P pre_tool_call calls=1", "P pre_tool_call_can_provide_result calls=1", "P transform_tool_result calls=1 error=1"},
			},
			stretch: preProvideTransformStages,
		},
		{
			name: "the provide stage times out: native dispatch",
			plugins: func(t *testing.T) []plugin {
				wait := hang(t)
				p := full("P")
				p.PreToolCallCanProvideResultFunc = func(context.Context, hooks.ToolCallRequest) (*hooks.ToolResult, error) {
					wait()
					return &hooks.ToolResult{Content: `"late"`}, nil
				}
				return []plugin{{f: p, opts: hookbus.Options{ToolTimeout: short.ToolTimeout}}}
			},
			want: outcome{
				Arguments: `{"P":0}`, ModifiedBy: []string{"P"}, Native: true,
				Content: `["P","ok",{"native":true}]`, TransformedBy: []string{"P"},
				Stats: []string{"P pre_tool_call calls=1", "P pre_tool_call_can_provide_result calls=1 timeout=1", "P transform_tool_result calls=1"},
			},
			stretch: preProvideTransformStages,
		},
		{
			name: "an unavailable plugin is asked nothing it can answer",
			plugins: func(*testing.T) []plugin {
				return []plugin{{f: full("P"), unavailable: true}}
			},
			want: outcome{
				Arguments: `{}`, Native: true, Content: nativeResult,
				Stats: []string{"P pre_tool_call calls=1 unavailable=1", "P pre_tool_call_can_provide_result calls=1 unavailable=1", "P transform_tool_result calls=1 unavailable=1"},
			},
		},
		{
			name:      "a cancelled turn provides nothing and runs no tool",
			cancelled: true,
			plugins: func(*testing.T) []plugin {
				p := full("P")
				p.PreToolCallFunc = noDecision
				return []plugin{{f: p}}
			},
			want: outcome{
				Arguments: `{}`, Content: `{"error":"not run: the turn was cancelled"}`, IsError: true,
				Stats: []string{"P pre_tool_call calls=1 cancelled=1", "P transform_tool_result calls=1 cancelled=1"},
			},
			stretch: preProvideTransformStages,
		},
		{
			name:      "a cancelled turn: a fail_closed guard that did not answer blocks",
			cancelled: true,
			plugins: func(*testing.T) []plugin {
				p := full("P")
				p.PreToolCallFunc = noDecision
				p.TransformToolResultFunc = nil
				return []plugin{{f: p, opts: hookbus.Options{FailClosed: true}}}
			},
			want: outcome{
				Blocked: true, BlockedBy: "P", Arguments: `{}`,
				Message: `tool call blocked: guard plugin "P" failed (cancelled) and is configured fail_closed`,
				Content: `{"error":"tool call blocked: guard plugin \"P\" failed (cancelled) and is configured fail_closed"}`, IsError: true,
				Stats: []string{"P pre_tool_call calls=1 cancelled=1"},
			},
			stretch: preProvideStages,
		},
	}
	// The stretch's pre stage failing each way: for a plugin that is not
	// fail_closed the call goes on hook by hook, and the plugin is asked to
	// provide by a plain call; a fail_closed one blocks.
	for _, kind := range []hookbus.FailureKind{hookbus.KindError, hookbus.KindPanic, hookbus.KindTimeout, hookbus.KindMalformed} {
		build := func(t *testing.T) *hooks.Funcs {
			p := full("P")
			if kind == hookbus.KindMalformed {
				p.PreToolCallFunc = func(context.Context, hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
					return &hooks.PreToolCallDecision{Block: &hooks.Block{Message: "x"}, ModifiedArgs: json.RawMessage(`{"x":1}`)}, nil
				}
			} else {
				f := fail(t, kind)
				p.PreToolCallFunc = func(context.Context, hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
					return &hooks.PreToolCallDecision{Block: &hooks.Block{Message: "said with the failure"}}, f()
				}
			}
			return p
		}
		ss = append(ss, scenario{
			name: "the stretch's pre stage fails (" + kind.String() + "): provide is asked plainly",
			plugins: func(t *testing.T) []plugin {
				return []plugin{{f: build(t), opts: hookbus.Options{Timeout: preStageTimeout}}}
			},
			want: outcome{
				Arguments: `{}`, ProvidedBy: "P",
				Content: `["P","provided_by:P",{"by":"P","args":{}}]`, TransformedBy: []string{"P"},
				Stats: []string{"P pre_tool_call calls=1 " + kind.String() + "=1", "P pre_tool_call_can_provide_result calls=1", "P transform_tool_result calls=1"},
			},
			stretch: preProvideTransformStages,
		}, scenario{
			name: "the stretch's pre stage fails (" + kind.String() + ") under fail_closed: blocked, nothing provided",
			plugins: func(t *testing.T) []plugin {
				return []plugin{{f: build(t), opts: hookbus.Options{Timeout: preStageTimeout, FailClosed: true}}}
			},
			want: outcome{
				Blocked: true, BlockedBy: "P", Arguments: `{}`,
				Message: fmt.Sprintf(`tool call blocked: guard plugin "P" failed (%s) and is configured fail_closed`, kind),
				Content: fmt.Sprintf(`["P","blocked",{"error":"tool call blocked: guard plugin \"P\" failed (%s) and is configured fail_closed"}]`, kind), IsError: true,
				TransformedBy: []string{"P"},
				Stats:         []string{"P pre_tool_call calls=1 " + kind.String() + "=1", "P transform_tool_result calls=1"},
			},
			stretch: preProvideTransformStages,
		})
	}
	return ss
}

func TestToolPipelineRulesOnEveryPath(t *testing.T) {
	for _, sc := range scenarios() {
		t.Run(sc.name, func(t *testing.T) {
			for _, pa := range paths {
				t.Run(pa.name, func(t *testing.T) {
					var members []hookbus.Member
					var stretchers []*counted
					for _, pl := range sc.plugins(t) {
						p := pa.host(t, pl.f)
						if c, ok := p.(*counted); ok {
							stretchers = append(stretchers, c)
						}
						if pl.unavailable {
							p = down{p}
						}
						members = append(members, hookbus.Member{Plugin: p, Options: pl.opts})
					}
					b := newBus(t, members...)
					ctx, cancel := context.WithCancel(context.Background())
					defer cancel()
					if sc.cancelled {
						cancel()
					}
					var got outcome
					within(t, func() { got = fireOn(ctx, b, pa, call) })
					if !reflect.DeepEqual(got, sc.want) {
						t.Errorf("outcome\n got %+v\nwant %+v", got, sc.want)
					}
					if !pa.stretches {
						return
					}
					var sent [][]hooks.Name
					for _, c := range stretchers {
						sent = append(sent, c.asked()...)
					}
					wantSent := sc.stretch
					if pa.preOutside {
						wantSent = stretchWithPreOutside(sc)
					}
					switch {
					case wantSent == nil && len(sent) > 0:
						t.Errorf("sent stretches %v, want none", sent)
					case wantSent != nil && (len(sent) != 1 || !slices.Equal(sent[0], wantSent)):
						t.Errorf("sent stretches %v, want one of %v", sent, wantSent)
					}
				})
			}
		})
	}
}

// stretchWithPreOutside is the stretch a scenario sends when pre_tool_call
// is fired outside the run: none if the call never reaches provide,
// otherwise its stretch without the pre stage, if two stages remain.
func stretchWithPreOutside(sc scenario) []hooks.Name {
	if sc.want.Blocked || sc.cancelled || sc.stretch == nil {
		return nil
	}
	rest := slices.DeleteFunc(slices.Clone(sc.stretch), func(h hooks.Name) bool { return h == hooks.PreToolCall })
	if len(rest) < 2 {
		return nil
	}
	return rest
}

// A run that ends before its stretch does (the turn gave up after
// pre_tool_call) cancels the stages the plugin is still working on.
func TestClosingARunCancelsItsStretch(t *testing.T) {
	for _, pa := range paths {
		if !pa.stretches || pa.preOutside {
			continue
		}
		t.Run(pa.name, func(t *testing.T) {
			started, cancelled := make(chan struct{}), make(chan struct{})
			p := &hooks.Funcs{
				Name:            "P",
				PreToolCallFunc: noDecision,
				PreToolCallCanProvideResultFunc: func(ctx context.Context, _ hooks.ToolCallRequest) (*hooks.ToolResult, error) {
					close(started)
					<-ctx.Done()
					close(cancelled)
					return nil, ctx.Err()
				},
			}
			c := pa.host(t, p).(*counted)
			b := newBus(t, hookbus.Member{Plugin: c, Options: hookbus.Options{ToolTimeout: time.Hour}})
			run := b.StartToolCall(call)
			if out := run.PreToolCall(context.Background()); out.Blocked {
				t.Fatalf("blocked: %+v", out)
			}
			within(t, func() { <-started })
			run.Close()
			within(t, func() { <-cancelled })
			if sent := c.asked(); len(sent) != 1 || !slices.Equal(sent[0], preProvideStages) {
				t.Fatalf("sent stretches %v, want one of %v", sent, preProvideStages)
			}
		})
	}
}

// hostile answers every stage of a stretch with what it was given, of
// whatever type, and records whether it was closed.
type hostile struct {
	hooks.Plugin
	answer any
	closed chan struct{}
}

func (h *hostile) Stretch(context.Context, hookstretch.Request) (hookstretch.Stretch, error) {
	return h, nil
}

func (h *hostile) Next(context.Context) (any, error) { return h.answer, nil }

func (h *hostile) Close() {
	select {
	case <-h.closed:
	default:
		close(h.closed)
	}
}

// A stage answer that is not of the hook's answer type, or breaks its
// rules, is malformed like a plain call's: counted, the stretch closed, and
// the call goes on hook by hook.
func TestAHostileStageAnswerIsMalformed(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer any
	}{
		{"wrong type", &hooks.ToolResult{Content: `"not a decision"`}},
		{"breaks the rules", &hooks.PreToolCallDecision{Block: &hooks.Block{}, ModifiedArgs: json.RawMessage(`{}`)}},
		{"not even a hook answer", "text"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := full("P")
			h := &hostile{Plugin: p, answer: tc.answer, closed: make(chan struct{})}
			b := newBus(t, hookbus.Member{Plugin: h})
			got := fire(context.Background(), b, true, call)
			want := outcome{
				Arguments: `{}`, ProvidedBy: "P",
				Content: `["P","provided_by:P",{"by":"P","args":{}}]`, TransformedBy: []string{"P"},
				Stats: []string{"P pre_tool_call calls=1 malformed=1", "P pre_tool_call_can_provide_result calls=1", "P transform_tool_result calls=1"},
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("outcome\n got %+v\nwant %+v", got, want)
			}
			select {
			case <-h.closed:
			default:
				t.Fatal("the stretch was not closed after its malformed stage")
			}
		})
	}
}

// stuck is a plugin process that stopped reading what the host sends: a
// stretch cannot be sent until its context ends. Its plain calls are
// answered (they would fail the same way; here they show that the run goes
// on hook by hook).
type stuck struct{ hooks.Plugin }

func (stuck) Stretch(ctx context.Context, _ hookstretch.Request) (hookstretch.Stretch, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

func (stuck) HonoursContext() bool { return true }

// A stretch the plugin does not take holds the run no longer than its
// first stage's deadline, and counts as that stage's timeout.
func TestAStretchThatCannotBeSentIsItsFirstStagesTimeout(t *testing.T) {
	b := newBus(t, hookbus.Member{Plugin: stuck{full("P")}, Options: hookbus.Options{Timeout: preStageTimeout}})
	var got outcome
	within(t, func() { got = fire(context.Background(), b, true, call) })
	want := outcome{
		Arguments: `{}`, ProvidedBy: "P",
		Content: `["P","provided_by:P",{"by":"P","args":{}}]`, TransformedBy: []string{"P"},
		Stats: []string{"P pre_tool_call calls=1 timeout=1", "P pre_tool_call_can_provide_result calls=1", "P transform_tool_result calls=1"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("outcome\n got %+v\nwant %+v", got, want)
	}
}
