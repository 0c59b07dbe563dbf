package conversation

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/hookhost/hookhost/hookbus"
	"github.com/hookhost/hookhost/hooks"
)

// Each turn's hook calls carry one request id, the turn's own, so that the
// decision log can be read turn by turn.
func TestTurnRequestIDReachesEveryHookCall(t *testing.T) {
	var mu sync.Mutex
	ids := map[hooks.Name][]string{}
	plugin := &hooks.Funcs{Name: "watch",
		PreAPIRequestMutableFunc: func(context.Context, hooks.APIRequest) (*hooks.RequestPatch, error) { return nil, nil },
		TransformLLMOutputFunc:   func(context.Context, hooks.LLMOutput) (*hooks.TextReplacement, error) { return nil, nil },
	}
	bus, err := hookbus.New([]hookbus.Member{{Plugin: plugin}}, hookbus.Config{OnCall: func(_ context.Context, c hookbus.CallRecord) {
		mu.Lock()
		defer mu.Unlock()
		ids[c.Hook] = append(ids[c.Hook], c.RequestID)
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer bus.Close(context.Background())
	p := &scripted{fn: func(int, hooks.ModelRequest) (hooks.ModelResponse, error) { return answer("hi"), nil }}
	s, err := New(Options{Provider: p, Model: "m", MaxIterations: 2, Route: hooks.RouteGateway, Bus: bus})
	if err != nil {
		t.Fatal(err)
	}
	first, err := s.Send(context.Background(), "one")
	if err != nil {
		t.Fatal(err)
	}
	second, err := s.Send(hookbus.WithRequestID(context.Background(), "req-from-caller"), "two")
	if err != nil {
		t.Fatal(err)
	}
	if want := s.ID() + ".1"; first.RequestID != want || !strings.Contains(first.RequestID, ".") {
		t.Errorf("first turn's id %q, want %q", first.RequestID, want)
	}
	if second.RequestID != "req-from-caller" {
		t.Errorf("second turn's id %q, want the caller's", second.RequestID)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, h := range []hooks.Name{hooks.PreAPIRequestMutable, hooks.TransformLLMOutput} {
		if got := ids[h]; len(got) != 2 || got[0] != first.RequestID || got[1] != "req-from-caller" {
			t.Errorf("%s calls carried %q, want [%s req-from-caller]", h, got, first.RequestID)
		}
	}
}
