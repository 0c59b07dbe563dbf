package hookstretch_test

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/hookstretch"
)

var llmCall = hooks.LLMCall{SessionID: "s1", Iteration: 2, Route: hooks.RouteGateway,
	Request: hooks.ModelRequest{Model: "m", System: "sys", Tools: []hooks.ToolSpec{{Name: "t1"}}}}

func runModelStage(t *testing.T, ctx context.Context, p hooks.Plugin, req hookstretch.ModelStageRequest, stages ...hooks.Name) []emitted {
	t.Helper()
	for _, h := range stages {
		req.Stages = append(req.Stages, hookstretch.Stage{Hook: h, Timeout: stageTimeout})
	}
	var out []emitted
	within(t, func() {
		hookstretch.RunModelStage(ctx, p, req, func(a any, err error) { out = append(out, emitted{a, err}) })
	})
	return out
}

// The plugin's own answers carry over: its tool list, then its patch
// without the fields set above, are what its later hooks see.
func TestRunModelStageCarriesThePluginsOwnAnswers(t *testing.T) {
	var tl hooks.ToolListRequest
	var api hooks.APIRequest
	var prov hooks.LLMRequest
	p := &hooks.Funcs{Name: "p",
		PreToolListFinalizedFunc: func(_ context.Context, req hooks.ToolListRequest) (*hooks.ToolListOverride, error) {
			tl = req
			return &hooks.ToolListOverride{Tools: []hooks.ToolSpec{{Name: "mine"}}}, nil
		},
		PreAPIRequestMutableFunc: func(_ context.Context, req hooks.APIRequest) (*hooks.RequestPatch, error) {
			api = req
			s, m := "patched", "other-model"
			return &hooks.RequestPatch{System: &s, Model: &m}, nil
		},
		PreLLMCallCanProvideResponseFunc: func(_ context.Context, req hooks.LLMRequest) (*hooks.ModelResponse, error) {
			prov = req
			return nil, nil
		},
	}
	out := runModelStage(t, context.Background(), p, hookstretch.ModelStageRequest{Call: llmCall, FieldsSet: []string{"model"}},
		hooks.PreToolListFinalized, hooks.PreAPIRequestMutable, hooks.PreLLMCallCanProvideResponse)
	if len(out) != 3 || out[0].err != nil || out[1].err != nil || out[2].err != nil || out[2].answer != nil {
		t.Fatalf("emitted %+v, want three answers, the last nil", out)
	}
	if tl.SessionID != "s1" || tl.Iteration != 2 || !reflect.DeepEqual(tl.Tools, llmCall.Request.Tools) {
		t.Errorf("tool list stage saw %+v", tl)
	}
	if api.Request.Tools[0].Name != "mine" || api.Iteration != 2 {
		t.Errorf("patch stage saw %+v, want the plugin's own tool list", api)
	}
	if prov.Request.System != "patched" || prov.Request.Model != "m" || prov.Request.Tools[0].Name != "mine" || prov.Route != hooks.RouteGateway {
		t.Errorf("provide stage saw %+v, want its patch applied except model, set above", prov.Request)
	}
}

// It stops after a failure, a provided response and a reissue; a stop in
// transform_llm_output is the last stage anyway.
func TestRunModelStageStops(t *testing.T) {
	r := &recorder{}
	p := &hooks.Funcs{Name: "p",
		PreAPIRequestMutableFunc: func(context.Context, hooks.APIRequest) (*hooks.RequestPatch, error) {
			r.saw(hooks.PreAPIRequestMutable)
			return nil, errors.New("no")
		},
		PreLLMCallCanProvideResponseFunc: func(context.Context, hooks.LLMRequest) (*hooks.ModelResponse, error) {
			r.saw(hooks.PreLLMCallCanProvideResponse)
			return nil, nil
		},
		PostLLMCallCanReissueFunc: func(context.Context, hooks.LLMCall) (*hooks.Reissue, error) {
			r.saw(hooks.PostLLMCallCanReissue)
			return &hooks.Reissue{Reason: "again"}, nil
		},
		TransformLLMOutputFunc: func(_ context.Context, o hooks.LLMOutput) (*hooks.TextReplacement, error) {
			r.saw(hooks.TransformLLMOutput)
			return &hooks.TextReplacement{Text: o.Text + "!"}, nil
		},
	}
	out := runModelStage(t, context.Background(), p, hookstretch.ModelStageRequest{Call: llmCall},
		hooks.PreAPIRequestMutable, hooks.PreLLMCallCanProvideResponse)
	if len(out) != 1 || out[0].err == nil || r.count(hooks.PreLLMCallCanProvideResponse) != 0 {
		t.Errorf("emitted %+v, want the failure only, provide not asked", out)
	}
	out = runModelStage(t, context.Background(), p, hookstretch.ModelStageRequest{Call: llmCall, Text: "text"},
		hooks.PostLLMCallCanReissue, hooks.TransformLLMOutput)
	if len(out) != 1 || out[0].err != nil || out[0].answer.(*hooks.Reissue).Reason != "again" || r.count(hooks.TransformLLMOutput) != 0 {
		t.Errorf("emitted %+v, want the reissue only, transform not asked", out)
	}

	provider := &hooks.Funcs{Name: "q",
		PreLLMCallCanProvideResponseFunc: func(context.Context, hooks.LLMRequest) (*hooks.ModelResponse, error) {
			return &hooks.ModelResponse{Message: hooks.Message{Content: "mine"}}, nil
		},
		PostLLMCallCanReissueFunc: func(context.Context, hooks.LLMCall) (*hooks.Reissue, error) { return nil, nil },
		TransformLLMOutputFunc: func(_ context.Context, o hooks.LLMOutput) (*hooks.TextReplacement, error) {
			return &hooks.TextReplacement{Text: o.Text + "!"}, nil
		},
		PreToolListFinalizedFunc: func(context.Context, hooks.ToolListRequest) (*hooks.ToolListOverride, error) { return nil, nil },
	}
	out = runModelStage(t, context.Background(), provider, hookstretch.ModelStageRequest{Call: llmCall},
		hooks.PreToolListFinalized, hooks.PreLLMCallCanProvideResponse)
	if len(out) != 2 || out[0].answer != nil || out[1].answer.(*hooks.ModelResponse).Message.Content != "mine" {
		t.Errorf("emitted %+v, want no tool list then the provided response", out)
	}
	out = runModelStage(t, context.Background(), provider, hookstretch.ModelStageRequest{Call: llmCall, Text: "as left above"},
		hooks.PostLLMCallCanReissue, hooks.TransformLLMOutput)
	if len(out) != 2 || out[0].answer != nil || out[1].answer.(*hooks.TextReplacement).Text != "as left above!" {
		t.Errorf("emitted %+v, want no reissue then the text as left above transformed", out)
	}
}

func TestRunModelStageEnforcesEachStagesDeadlineAndCancel(t *testing.T) {
	release := hang(t)
	p := &hooks.Funcs{Name: "p",
		PreAPIRequestMutableFunc: func(context.Context, hooks.APIRequest) (*hooks.RequestPatch, error) {
			release()
			return nil, nil
		},
		PreLLMCallCanProvideResponseFunc: func(context.Context, hooks.LLMRequest) (*hooks.ModelResponse, error) { return nil, nil },
	}
	out := runModelStage(t, context.Background(), p, hookstretch.ModelStageRequest{Call: llmCall},
		hooks.PreAPIRequestMutable, hooks.PreLLMCallCanProvideResponse)
	if len(out) != 1 || !errors.Is(out[0].err, context.DeadlineExceeded) {
		t.Errorf("emitted %+v, want the patch's deadline, and nothing after", out)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	out = runModelStage(t, ctx, p, hookstretch.ModelStageRequest{Call: llmCall},
		hooks.PreAPIRequestMutable, hooks.PreLLMCallCanProvideResponse)
	if len(out) != 1 || !errors.Is(out[0].err, context.Canceled) {
		t.Errorf("emitted %+v after cancel, want one failure saying so", out)
	}
}

func TestRunModelStageRefusesIllegalStages(t *testing.T) {
	p := &hooks.Funcs{Name: "p"}
	for _, stages := range [][]hooks.Name{
		{hooks.PreAPIRequestMutable},
		{hooks.PreAPIRequestMutable, hooks.PreToolListFinalized},
		{hooks.PreLLMCallCanProvideResponse, hooks.PostLLMCallCanReissue},
		{hooks.PreToolCall, hooks.PreToolCallCanProvideResult},
	} {
		out := runModelStage(t, context.Background(), p, hookstretch.ModelStageRequest{Call: llmCall}, stages...)
		if len(out) != 1 || !errors.Is(out[0].err, hookstretch.ErrBadStretch) {
			t.Errorf("%v: emitted %+v, want ErrBadStretch", stages, out)
		}
	}
	legal := hookstretch.LegalModelStages()
	for _, want := range [][]hooks.Name{
		{hooks.PreToolListFinalized, hooks.PreLLMCallCanProvideResponse},
		{hooks.PreToolListFinalized, hooks.PreAPIRequestMutable, hooks.PreLLMCallCanProvideResponse},
		{hooks.PostLLMCallCanReissue, hooks.TransformLLMOutput},
	} {
		if !slices.ContainsFunc(legal, func(l []hooks.Name) bool { return slices.Equal(l, want) }) {
			t.Errorf("%v is not among the legal model stages %v", want, legal)
		}
	}
	if len(legal) != 5 {
		t.Errorf("%d legal model stages, want 5 (four in the pre-call stage, one after)", len(legal))
	}
}

// A later stage is held to its own deadline, counted from its start, not
// the first stage's; and ctx ending while it hangs ends the exchange too.
// Either way nothing is emitted once RunModelStage has returned.
func TestRunModelStageWatchesTheStageUnderWay(t *testing.T) {
	release := hang(t)
	var mu sync.Mutex
	var started time.Time
	p := &hooks.Funcs{Name: "p",
		PreToolListFinalizedFunc: func(context.Context, hooks.ToolListRequest) (*hooks.ToolListOverride, error) {
			return nil, nil
		},
		PreAPIRequestMutableFunc: func(ctx context.Context, _ hooks.APIRequest) (*hooks.RequestPatch, error) {
			mu.Lock()
			started = time.Now()
			mu.Unlock()
			release()
			return nil, nil
		},
	}
	const first, second = 10 * time.Millisecond, 300 * time.Millisecond
	stages := []hookstretch.Stage{{Hook: hooks.PreToolListFinalized, Timeout: first}, {Hook: hooks.PreAPIRequestMutable, Timeout: second}}

	var out []emitted
	var failedAt time.Time
	returned := false
	emit := func(a any, err error) {
		mu.Lock()
		defer mu.Unlock()
		if returned {
			t.Errorf("emitted %v, %v after RunModelStage returned", a, err)
		}
		if err != nil {
			failedAt = time.Now()
		}
		out = append(out, emitted{a, err})
	}
	within(t, func() {
		hookstretch.RunModelStage(context.Background(), p, hookstretch.ModelStageRequest{Call: llmCall, Stages: stages}, emit)
	})
	mu.Lock()
	returned = true
	if len(out) != 2 || out[0].err != nil || !errors.Is(out[1].err, context.DeadlineExceeded) {
		t.Fatalf("emitted %+v, want the tool list's answer, then the patch's deadline", out)
	}
	if !strings.Contains(out[1].err.Error(), string(hooks.PreAPIRequestMutable)) {
		t.Errorf("the failure %q does not name the stage that timed out", out[1].err)
	}
	if failedAt.Sub(started) < second {
		t.Errorf("the patch stage was abandoned %v after it started, before its own deadline of %v", failedAt.Sub(started), second)
	}
	out, returned = nil, false
	mu.Unlock()

	ctx, cancel := context.WithCancel(context.Background())
	stages[1].Timeout = time.Hour
	p.PreAPIRequestMutableFunc = func(context.Context, hooks.APIRequest) (*hooks.RequestPatch, error) {
		cancel()
		release()
		return nil, nil
	}
	within(t, func() {
		hookstretch.RunModelStage(ctx, p, hookstretch.ModelStageRequest{Call: llmCall, Stages: stages}, emit)
	})
	mu.Lock()
	defer mu.Unlock()
	returned = true
	if len(out) != 2 || out[0].err != nil || !errors.Is(out[1].err, context.Canceled) {
		t.Fatalf("emitted %+v, want the tool list's answer, then the patch cancelled", out)
	}
}
