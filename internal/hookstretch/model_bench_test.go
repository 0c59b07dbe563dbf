package hookstretch_test

import (
	"context"
	"testing"
	"time"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/hookstretch"
)

// BenchmarkRunModelStage is the plugin's side of the pre-call stage, its
// three hooks answered at once with no opinion: what a stage costs a
// plugin beyond its handlers.
func BenchmarkRunModelStage(b *testing.B) {
	p := &hooks.Funcs{Name: "p",
		PreToolListFinalizedFunc: func(context.Context, hooks.ToolListRequest) (*hooks.ToolListOverride, error) {
			return nil, nil
		},
		PreAPIRequestMutableFunc: func(context.Context, hooks.APIRequest) (*hooks.RequestPatch, error) {
			return nil, nil
		},
		PreLLMCallCanProvideResponseFunc: func(context.Context, hooks.LLMRequest) (*hooks.ModelResponse, error) {
			return nil, nil
		},
	}
	req := hookstretch.ModelStageRequest{Call: llmCall}
	for _, h := range []hooks.Name{hooks.PreToolListFinalized, hooks.PreAPIRequestMutable, hooks.PreLLMCallCanProvideResponse} {
		req.Stages = append(req.Stages, hookstretch.Stage{Hook: h, Timeout: 5 * time.Second})
	}
	// A call's context, as the plugin's stream gives each call one.
	parent, cancel := context.WithCancel(context.Background())
	defer cancel()
	b.ReportAllocs()
	for b.Loop() {
		ctx, cancel := context.WithCancel(parent)
		n := 0
		hookstretch.RunModelStage(ctx, p, req, func(_ any, err error) {
			if err != nil {
				b.Fatal(err)
			}
			n++
		})
		cancel()
		if n != 3 {
			b.Fatalf("%d answers, want 3", n)
		}
	}
}
