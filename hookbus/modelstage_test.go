package hookbus_test

import (
	"context"
	"errors"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/hookhost/hookhost/hookbus"
	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/hookstretch"
)

// The model-side stages ask plugin by plugin (Bus.PreCall's comment): these
// tests hold each way a host can hold a plugin, and over protocol v2 the
// stages go in one exchange per plugin.

var modelReq = hooks.LLMRequest{SessionID: "s1", Iteration: 1, Route: hooks.RouteGateway,
	Request: hooks.ModelRequest{Model: "m", System: "sys", Tools: []hooks.ToolSpec{{Name: "t1"}},
		Messages: []hooks.Message{{Role: hooks.RoleUser, Content: "hi"}}}}

// journal records who was asked what, in order, across plugins.
type journal struct {
	mu    sync.Mutex
	asked []string
}

func (j *journal) add(plugin string, hook hooks.Name) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.asked = append(j.asked, plugin+":"+string(hook))
}

func (j *journal) all() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]string(nil), j.asked...)
}

// stageCounted counts the exchanges with a plugin: plain calls of hooks
// that answer, and model stages.
type stageCounted struct {
	hooks.Plugin
	plain, stages atomic.Int64
}

var _ hookstretch.ModelStager = (*stageCounted)(nil)

func (c *stageCounted) Handle(ctx context.Context, hook hooks.Name, req any) (any, error) {
	if !hook.Observer() {
		c.plain.Add(1)
	}
	return c.Plugin.Handle(ctx, hook, req)
}

func (c *stageCounted) ModelStage(ctx context.Context, req hookstretch.ModelStageRequest) (hookstretch.Stretch, error) {
	ms, ok := c.Plugin.(hookstretch.ModelStager)
	if !ok {
		return nil, hookstretch.ErrNoStretch
	}
	st, err := ms.ModelStage(ctx, req)
	if err == nil {
		c.stages.Add(1)
	}
	return st, err
}

func (c *stageCounted) HonoursContext() bool { return honours(c.Plugin) }

// v2 reports whether r holds plugins over protocol v2, which answers model
// stages in one exchange.
func (r rig) v2() bool { return r.way.Version == 2 }

func TestPreCallAsksPluginByPlugin(t *testing.T) {
	eachWay(t, func(t *testing.T, r rig) {
		j := &journal{}
		var bSaw hooks.APIRequest
		var cSaw []hooks.ModelRequest
		a := &hooks.Funcs{Name: "a",
			PreToolListFinalizedFunc: func(_ context.Context, req hooks.ToolListRequest) (*hooks.ToolListOverride, error) {
				j.add("a", hooks.PreToolListFinalized)
				return nil, nil
			},
			PreAPIRequestMutableFunc: func(context.Context, hooks.APIRequest) (*hooks.RequestPatch, error) {
				j.add("a", hooks.PreAPIRequestMutable)
				return &hooks.RequestPatch{System: str("from a")}, nil
			},
		}
		b := &hooks.Funcs{Name: "b",
			PreToolListFinalizedFunc: func(_ context.Context, req hooks.ToolListRequest) (*hooks.ToolListOverride, error) {
				j.add("b", hooks.PreToolListFinalized)
				return &hooks.ToolListOverride{Tools: []hooks.ToolSpec{{Name: "t2"}}}, nil
			},
			PreAPIRequestMutableFunc: func(_ context.Context, req hooks.APIRequest) (*hooks.RequestPatch, error) {
				j.add("b", hooks.PreAPIRequestMutable)
				bSaw = req
				n := 5
				// system was set above: ignored, not malformed.
				return &hooks.RequestPatch{System: str("from b"), MaxTokens: &n}, nil
			},
		}
		c := &hooks.Funcs{Name: "c",
			PreToolListFinalizedFunc: func(context.Context, hooks.ToolListRequest) (*hooks.ToolListOverride, error) {
				j.add("c", hooks.PreToolListFinalized)
				return &hooks.ToolListOverride{Tools: []hooks.ToolSpec{{Name: "t3"}}}, nil
			},
			PreAPIRequestMutableFunc: func(_ context.Context, req hooks.APIRequest) (*hooks.RequestPatch, error) {
				j.add("c", hooks.PreAPIRequestMutable)
				return nil, nil
			},
			PreLLMCallCanProvideResponseFunc: func(_ context.Context, req hooks.LLMRequest) (*hooks.ModelResponse, error) {
				j.add("c", hooks.PreLLMCallCanProvideResponse)
				cSaw = append(cSaw, req.Request)
				return &hooks.ModelResponse{Message: hooks.Message{Content: "provided"}}, nil
			},
		}
		d := &hooks.Funcs{Name: "d",
			PreAPIRequestMutableFunc: func(context.Context, hooks.APIRequest) (*hooks.RequestPatch, error) {
				j.add("d", hooks.PreAPIRequestMutable)
				return nil, nil
			},
		}
		counts := []*stageCounted{{Plugin: r.plugin(a)}, {Plugin: r.plugin(b)}, {Plugin: r.plugin(c)}, {Plugin: r.plugin(d)}}
		var members []hookbus.Member
		for _, p := range counts {
			members = append(members, hookbus.Member{Plugin: p})
		}
		bus := newBus(t, members...)
		out := bus.PreCall(context.Background(), modelReq)

		want := []string{"a:pre_tool_list_finalized", "a:pre_api_request_mutable", "b:pre_tool_list_finalized", "b:pre_api_request_mutable",
			"c:pre_api_request_mutable", "c:pre_llm_call_can_provide_response"}
		if got := j.all(); !reflect.DeepEqual(got, want) {
			t.Errorf("asked %v, want %v (plugin by plugin; c not asked the tool list b replaced; d not asked after c provided)", got, want)
		}
		if bSaw.Request.System != "from a" || len(bSaw.Request.Tools) != 1 || bSaw.Request.Tools[0].Name != "t2" {
			t.Errorf("b's patch saw %+v, want a's system and b's own tool list", bSaw.Request)
		}
		if len(cSaw) != 1 || cSaw[0].System != "from a" || cSaw[0].MaxTokens != 5 || cSaw[0].Tools[0].Name != "t2" {
			t.Errorf("c's provide saw %+v, want the request as a and b left it", cSaw)
		}
		if out.ToolList == nil || out.ToolList.Plugin != "b" {
			t.Errorf("tool list change %+v, want b's", out.ToolList)
		}
		wantChanges := []hookbus.RequestChange{{Plugin: "a", Fields: []string{"system"}}, {Plugin: "b", Fields: []string{"max_tokens"}}}
		if !reflect.DeepEqual(out.Changes, wantChanges) {
			t.Errorf("changes %+v, want %+v", out.Changes, wantChanges)
		}
		if out.Provided == nil || out.Provided.Plugin != "c" || out.Provided.Response.Message.Content != "provided" || out.Provided.Response.Model != "m" {
			t.Errorf("provided %+v, want c's response completed for the request", out.Provided)
		}
		if out.Request.System != "from a" || out.Request.MaxTokens != 5 || out.Request.Tools[0].Name != "t2" {
			t.Errorf("request %+v", out.Request)
		}
		// One exchange per plugin per stage over v2; hook by hook otherwise.
		wantStages, wantPlain := []int64{1, 1, 1, 0}, []int64{0, 0, 0, 0}
		if !r.v2() {
			wantStages, wantPlain = []int64{0, 0, 0, 0}, []int64{2, 2, 2, 0}
		}
		for i, p := range counts {
			if got := p.stages.Load(); got != wantStages[i] {
				t.Errorf("plugin %d was sent %d model stages, want %d", i, got, wantStages[i])
			}
			if got := p.plain.Load(); got != wantPlain[i] {
				t.Errorf("plugin %d was asked %d plain calls, want %d", i, got, wantPlain[i])
			}
		}
		if st := bus.Stats(); st.SyncCalls() != 6 {
			t.Errorf("%d hook calls counted, want 6 (one per hook asked, whatever the exchange)", st.SyncCalls())
		}
	})
}

func TestPreCallToolsPatchSettlesTheToolList(t *testing.T) {
	eachWay(t, func(t *testing.T, r rig) {
		j := &journal{}
		a := &hooks.Funcs{Name: "a",
			PreAPIRequestMutableFunc: func(context.Context, hooks.APIRequest) (*hooks.RequestPatch, error) {
				return &hooks.RequestPatch{Tools: []hooks.ToolSpec{{Name: "patched"}}}, nil
			},
		}
		b := &hooks.Funcs{Name: "b",
			PreToolListFinalizedFunc: func(context.Context, hooks.ToolListRequest) (*hooks.ToolListOverride, error) {
				j.add("b", hooks.PreToolListFinalized)
				return &hooks.ToolListOverride{Tools: []hooks.ToolSpec{{Name: "b"}}}, nil
			},
			PreAPIRequestMutableFunc: func(context.Context, hooks.APIRequest) (*hooks.RequestPatch, error) {
				j.add("b", hooks.PreAPIRequestMutable)
				return &hooks.RequestPatch{Tools: []hooks.ToolSpec{{Name: "b2"}}}, nil
			},
		}
		out := newBus(t, r.in(a), r.in(b)).PreCall(context.Background(), modelReq)
		if got := j.all(); !reflect.DeepEqual(got, []string{"b:pre_api_request_mutable"}) {
			t.Errorf("b was asked %v, want its patch only: a patch above set the tools", got)
		}
		if out.ToolList != nil || len(out.Request.Tools) != 1 || out.Request.Tools[0].Name != "patched" {
			t.Errorf("tool list %+v, tools %+v; want a's patched tools and no tool-list change", out.ToolList, out.Request.Tools)
		}

		// A tools patch below a tool-list replacement overrides it.
		c := &hooks.Funcs{Name: "c",
			PreToolListFinalizedFunc: func(context.Context, hooks.ToolListRequest) (*hooks.ToolListOverride, error) {
				return &hooks.ToolListOverride{Tools: []hooks.ToolSpec{{Name: "c"}}}, nil
			},
		}
		out = newBus(t, r.in(c), r.in(a)).PreCall(context.Background(), modelReq)
		if out.ToolList == nil || out.ToolList.Plugin != "c" || out.Request.Tools[0].Name != "patched" {
			t.Errorf("tool list %+v, tools %+v; want c's replacement overridden by a's patch", out.ToolList, out.Request.Tools)
		}
	})
}

func TestPostCallAsksPluginByPlugin(t *testing.T) {
	resp := hooks.ModelResponse{Model: "m", Message: hooks.Message{Role: hooks.RoleAssistant, Content: "answer"}}
	ev := hooks.LLMCall{SessionID: "s1", Iteration: 1, Route: hooks.RouteGateway, Request: modelReq.Request, Response: resp}
	eachWay(t, func(t *testing.T, r rig) {
		j := &journal{}
		var bSaw []string
		transformer := func(name string, f func(string) *hooks.TextReplacement, saw *[]string) *hooks.Funcs {
			return &hooks.Funcs{Name: name,
				PostLLMCallCanReissueFunc: func(context.Context, hooks.LLMCall) (*hooks.Reissue, error) {
					j.add(name, hooks.PostLLMCallCanReissue)
					return nil, nil
				},
				TransformLLMOutputFunc: func(_ context.Context, o hooks.LLMOutput) (*hooks.TextReplacement, error) {
					j.add(name, hooks.TransformLLMOutput)
					if saw != nil {
						*saw = append(*saw, o.Text)
					}
					return f(o.Text), nil
				},
			}
		}
		a := transformer("a", func(s string) *hooks.TextReplacement { return &hooks.TextReplacement{Text: s + "+a"} }, nil)
		b := transformer("b", func(s string) *hooks.TextReplacement {
			return &hooks.TextReplacement{Stop: &hooks.OutputStop{Message: "stopped"}}
		}, &bSaw)
		c := transformer("c", func(s string) *hooks.TextReplacement { return &hooks.TextReplacement{Text: "never"} }, nil)
		counts := []*stageCounted{{Plugin: r.plugin(a)}, {Plugin: r.plugin(b)}, {Plugin: r.plugin(c)}}
		bus := newBus(t, hookbus.Member{Plugin: counts[0]}, hookbus.Member{Plugin: counts[1]}, hookbus.Member{Plugin: counts[2]})
		out := bus.PostCall(context.Background(), hookbus.PostCallRequest{Call: ev, Reissue: true, Transform: true})
		want := []string{"a:post_llm_call_can_reissue", "a:transform_llm_output", "b:post_llm_call_can_reissue", "b:transform_llm_output",
			"c:post_llm_call_can_reissue"}
		if got := j.all(); !reflect.DeepEqual(got, want) {
			t.Errorf("asked %v, want %v (after b's stop, c is asked reissue only)", got, want)
		}
		if !reflect.DeepEqual(bSaw, []string{"answer+a"}) {
			t.Errorf("b transformed %q, want the text as a left it", bSaw)
		}
		if out.Reissue != nil || out.Output == nil || out.Output.Stop == nil || out.Output.Stop.Plugin != "b" ||
			!reflect.DeepEqual(out.Output.By, []string{"a"}) {
			t.Errorf("outcome %+v (output %+v), want b's stop after a's replacement", out, out.Output)
		}
		wantStages, wantPlain := []int64{1, 1, 0}, []int64{0, 0, 1}
		if !r.v2() {
			wantStages, wantPlain = []int64{0, 0, 0}, []int64{2, 2, 1}
		}
		for i, p := range counts {
			if p.stages.Load() != wantStages[i] || p.plain.Load() != wantPlain[i] {
				t.Errorf("plugin %d: %d stages and %d plain calls, want %d and %d", i, p.stages.Load(), p.plain.Load(), wantStages[i], wantPlain[i])
			}
		}

		// A reissue ends the stage and discards the transforms given.
		j.asked = nil
		d := &hooks.Funcs{Name: "d", PostLLMCallCanReissueFunc: func(context.Context, hooks.LLMCall) (*hooks.Reissue, error) {
			j.add("d", hooks.PostLLMCallCanReissue)
			return &hooks.Reissue{Reason: "again"}, nil
		}}
		out = newBus(t, r.in(a), r.in(d), r.in(c)).PostCall(context.Background(), hookbus.PostCallRequest{Call: ev, Reissue: true, Transform: true})
		want = []string{"a:post_llm_call_can_reissue", "a:transform_llm_output", "d:post_llm_call_can_reissue"}
		if got := j.all(); !reflect.DeepEqual(got, want) {
			t.Errorf("asked %v, want %v", got, want)
		}
		if out.Reissue == nil || out.Reissue.Plugin != "d" || out.Output != nil {
			t.Errorf("outcome %+v, want d's reissue and no output", out)
		}
	})
}

// A plugin whose stage fails mid-way is asked its remaining hooks by plain
// calls, with the request as combined so far; the failure is that hook's.
func TestModelStageFailureFallsBackToPlainCalls(t *testing.T) {
	eachWay(t, func(t *testing.T, r rig) {
		var provideSaw []hooks.ModelRequest
		var provides atomic.Int64
		p := &hooks.Funcs{Name: "p",
			PreToolListFinalizedFunc: func(context.Context, hooks.ToolListRequest) (*hooks.ToolListOverride, error) {
				return &hooks.ToolListOverride{Tools: []hooks.ToolSpec{{Name: "mine"}}}, nil
			},
			PreAPIRequestMutableFunc: func(context.Context, hooks.APIRequest) (*hooks.RequestPatch, error) {
				return nil, errors.New("patch failed")
			},
			PreLLMCallCanProvideResponseFunc: func(_ context.Context, req hooks.LLMRequest) (*hooks.ModelResponse, error) {
				provides.Add(1)
				provideSaw = append(provideSaw, req.Request)
				return nil, nil
			},
		}
		c := &stageCounted{Plugin: r.plugin(p)}
		bus := newBus(t, hookbus.Member{Plugin: c, Options: short})
		out := bus.PreCall(context.Background(), modelReq)
		if out.ToolList == nil || out.Request.Tools[0].Name != "mine" || out.Provided != nil {
			t.Errorf("outcome %+v, want the tool list replaced and nothing provided", out)
		}
		if got := bus.Stats().Failures("p", hooks.PreAPIRequestMutable, hookbus.KindError); got != 1 {
			t.Errorf("%d errors counted for pre_api_request_mutable, want 1", got)
		}
		if provides.Load() != 1 || provideSaw[0].Tools[0].Name != "mine" {
			t.Errorf("provide asked %d times, saw %+v; want once, with the replaced tools", provides.Load(), provideSaw)
		}
		if r.v2() && (c.stages.Load() != 1 || c.plain.Load() != 1) {
			t.Errorf("%d stages and %d plain calls, want the stage then provide by a plain call", c.stages.Load(), c.plain.Load())
		}
	})
}

// A stage whose hook hangs costs that hook's deadline, as a plain call
// would, and the hooks after it are still asked.
func TestModelStageDeadlineIsTheHooks(t *testing.T) {
	eachWay(t, func(t *testing.T, r rig) {
		release := hang(t)
		var provides atomic.Int64
		p := &hooks.Funcs{Name: "p",
			PreAPIRequestMutableFunc: func(ctx context.Context, _ hooks.APIRequest) (*hooks.RequestPatch, error) {
				release()
				return nil, nil
			},
			PreLLMCallCanProvideResponseFunc: func(context.Context, hooks.LLMRequest) (*hooks.ModelResponse, error) {
				provides.Add(1)
				return &hooks.ModelResponse{Message: hooks.Message{Content: "late but here"}}, nil
			},
		}
		bus := newBus(t, r.quick(p))
		var out hookbus.PreCallOutcome
		within(t, func() { out = bus.PreCall(context.Background(), modelReq) })
		if got := bus.Stats().Failures("p", hooks.PreAPIRequestMutable, hookbus.KindTimeout); got != 1 {
			t.Errorf("%d timeouts counted for pre_api_request_mutable, want 1", got)
		}
		if out.Provided == nil || provides.Load() != 1 {
			t.Errorf("provided %+v after %d asks; want the provide answered after the hung patch", out.Provided, provides.Load())
		}
	})
}
