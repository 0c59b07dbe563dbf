package loop

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/hookhost/hookhost/hookbus"
	"github.com/hookhost/hookhost/hooks"
)

// driver is an Upstream as drivers write it: a provided response is
// delivered as it is, and only the others reach the model (fake).
type driver struct {
	model    *fake
	provided []*hookbus.ProvidedResponse
}

func (d *driver) upstream(ctx context.Context, c Call) (hooks.ModelResponse, int, error) {
	if c.Provided != nil {
		d.provided = append(d.provided, c.Provided)
		return c.Provided.Response, -1, nil
	}
	return d.model.upstream(ctx, c)
}

func provider(name string, answer func(hooks.LLMRequest) *hooks.ModelResponse, seen *[]hooks.LLMRequest) *hooks.Funcs {
	return &hooks.Funcs{Name: name, PreLLMCallCanProvideResponseFunc: func(_ context.Context, req hooks.LLMRequest) (*hooks.ModelResponse, error) {
		if seen != nil {
			*seen = append(*seen, req)
		}
		return answer(req), nil
	}}
}

// A provided response stands as the model's: the model is not called, the
// answer is completed (assistant role, the request's model, tool_use for
// calls), post_llm_call says who provided it, and post_llm_call_can_reissue
// sees it as the response.
func TestProvidedResponseStandsForTheModel(t *testing.T) {
	var seen []hooks.LLMRequest
	prov := provider("budget", func(hooks.LLMRequest) *hooks.ModelResponse {
		return &hooks.ModelResponse{Message: hooks.Message{Content: "over budget",
			ToolCalls: []hooks.ToolCall{{ID: "c1", Name: "notify"}}}, Usage: hooks.Usage{OutputTokens: 3}}
	}, &seen)
	patcher := &hooks.Funcs{Name: "patcher", PreAPIRequestMutableFunc: func(context.Context, hooks.APIRequest) (*hooks.RequestPatch, error) {
		s := "patched"
		return &hooks.RequestPatch{System: &s}, nil
	}}
	var reissueSaw []hooks.ModelResponse
	watcher := &hooks.Funcs{Name: "watcher", PostLLMCallCanReissueFunc: func(_ context.Context, c hooks.LLMCall) (*hooks.Reissue, error) {
		reissueSaw = append(reissueSaw, c.Response)
		return nil, nil
	}}
	meter := &inferences{}
	// The patcher comes first: the model-side stages ask plugin by plugin,
	// so a provider above it would answer before it patched.
	bus := newBus(t, patcher, prov, watcher, meter.plugin())
	j := &journal{}
	l := &Loop{Bus: bus, SessionID: "s1", Route: hooks.RouteGateway, Observer: j}
	d := &driver{model: answers("from the model")}

	resp, w, err := Infer(context.Background(), l, 1, userAsks(), d.upstream)
	if err != nil {
		t.Fatal(err)
	}
	want := hooks.ModelResponse{Model: "small", StopReason: hooks.StopToolUse, Usage: hooks.Usage{OutputTokens: 3},
		Message: hooks.Message{Role: hooks.RoleAssistant, Content: "over budget", ToolCalls: []hooks.ToolCall{{ID: "c1", Name: "notify", Arguments: json.RawMessage("{}")}}}}
	if !reflect.DeepEqual(resp, want) || w != -1 {
		t.Errorf("answer %+v (W %d), want the provided %+v", resp, w, want)
	}
	if len(d.model.calls) != 0 {
		t.Errorf("the model was called %d times, want none", len(d.model.calls))
	}
	if len(seen) != 1 || seen[0].Request.System != "patched" || seen[0].Route != hooks.RouteGateway || seen[0].Iteration != 1 || seen[0].SessionID != "s1" {
		t.Errorf("pre_llm_call_can_provide_response saw %+v, want the patched request of iteration 1", seen)
	}
	if len(reissueSaw) != 1 || !reflect.DeepEqual(reissueSaw[0], want) {
		t.Errorf("post_llm_call_can_reissue saw %+v, want the provided response", reissueSaw)
	}
	flush(t, bus)
	if got := meter.all(); len(got) != 1 || got[0].ProvidedBy != "budget" || got[0].Model != "small" || got[0].StopReason != hooks.StopToolUse || got[0].Usage.OutputTokens != 3 {
		t.Errorf("post_llm_call got %+v, want one inference provided by budget", got)
	}
	if len(j.called) != 1 || j.called[0].ProvidedBy != "budget" {
		t.Errorf("observer told of calls %+v", j.called)
	}
}

// First non-nil wins; a malformed answer, or a failed plugin, is no
// opinion; with no answer the model is called.
func TestProvidedResponseFirstLegalWins(t *testing.T) {
	malformed := provider("malformed", func(hooks.LLMRequest) *hooks.ModelResponse {
		return &hooks.ModelResponse{Message: hooks.Message{Role: hooks.RoleUser, Content: "not an assistant"}}
	}, nil)
	failing := &hooks.Funcs{Name: "failing", PreLLMCallCanProvideResponseFunc: func(context.Context, hooks.LLMRequest) (*hooks.ModelResponse, error) {
		return nil, errors.New("down")
	}}
	quiet := provider("quiet", func(hooks.LLMRequest) *hooks.ModelResponse { return nil }, nil)
	second := provider("second", func(r hooks.LLMRequest) *hooks.ModelResponse {
		if r.Iteration == 2 {
			return nil
		}
		return &hooks.ModelResponse{Message: hooks.Message{Content: "second's"}, Model: "own"}
	}, nil)
	third := provider("third", func(hooks.LLMRequest) *hooks.ModelResponse {
		return &hooks.ModelResponse{Message: hooks.Message{Content: "third's"}}
	}, nil)
	bus := newBus(t, malformed, failing, quiet, second, third)
	l := &Loop{Bus: bus, SessionID: "s1", Route: hooks.RouteGateway}
	d := &driver{model: answers("from the model")}
	resp, _, err := Infer(context.Background(), l, 1, userAsks(), d.upstream)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Content != "second's" || resp.Model != "own" || resp.StopReason != hooks.StopEndTurn || len(d.provided) != 1 || d.provided[0].Plugin != "second" {
		t.Errorf("answer %+v provided by %+v, want second's, with its own model", resp, d.provided)
	}

	bus2 := newBus(t, quiet)
	d2 := &driver{model: answers("from the model")}
	resp, _, err = Infer(context.Background(), &Loop{Bus: bus2, SessionID: "s1", Route: hooks.RouteGateway}, 1, userAsks(), d2.upstream)
	if err != nil || resp.Message.Content != "from the model" || len(d2.model.calls) != 1 || len(d2.provided) != 0 {
		t.Errorf("with no answer: %+v, %v, %d model calls; want the model's", resp, err, len(d2.model.calls))
	}
}

// A reissue asked of a provided response goes to the model.
func TestReissueOfProvidedResponseCallsTheModel(t *testing.T) {
	prov := provider("cache", func(hooks.LLMRequest) *hooks.ModelResponse {
		return &hooks.ModelResponse{Message: hooks.Message{Content: "cached"}}
	}, nil)
	bus := newBus(t, prov, escalate("large", "stale"))
	l := &Loop{Bus: bus, SessionID: "s1", Route: hooks.RouteGateway}
	d := &driver{model: answers("fresh")}
	resp, _, err := Infer(context.Background(), l, 1, userAsks(), d.upstream)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Content != "fresh" || len(d.model.calls) != 1 || d.model.calls[0].Request.Model != "large" || d.model.calls[0].Provided != nil {
		t.Errorf("answer %q after %d model calls (%+v), want the reissue's from the model", resp.Message.Content, len(d.model.calls), d.model.calls)
	}
}
