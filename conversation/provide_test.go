package conversation

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/hookhost/hookhost/hooks"
)

// A plugin answers the first model call of a turn with a tool call: the
// model is not asked for it, the tool runs natively as it would for the
// model's call, the next call (which the plugin leaves alone) goes to the
// model, and the trace and the turn say who answered.
func TestProvidedResponseInAChatTurn(t *testing.T) {
	b := bus(t, &hooks.Funcs{Name: "shortcut", PreLLMCallCanProvideResponseFunc: func(_ context.Context, req hooks.LLMRequest) (*hooks.ModelResponse, error) {
		if req.Iteration != 1 {
			return nil, nil
		}
		return &hooks.ModelResponse{Message: hooks.Message{ToolCalls: []hooks.ToolCall{{ID: "call_s", Name: "echo", Arguments: json.RawMessage(`{"say":"from the plugin"}`)}}}}, nil
	}})
	p := callsThenAnswers("echo", `{"say":"from the model"}`)
	var trace []string
	s, err := New(Options{Provider: p, Model: "small", Route: hooks.RouteGateway, Bus: b, Tools: registry(t),
		Trace: func(e Event) { trace = append(trace, e.Text) }})
	if err != nil {
		t.Fatal(err)
	}
	turn, err := s.Send(context.Background(), "hi")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.reqs) != 1 {
		t.Fatalf("the model was called %d times, want once (the second iteration)", len(p.reqs))
	}
	if len(turn.ToolCalls) != 1 || turn.ToolCalls[0].Call.ID != "call_s" || !strings.Contains(turn.Answer, "from the plugin") {
		t.Errorf("turn %+v, want the plugin's call run and the model's answer about its result", turn)
	}
	if len(turn.Inferences) != 2 || turn.Inferences[0].ProvidedBy != "shortcut" || turn.Inferences[1].ProvidedBy != "" {
		t.Errorf("inferences %+v, want the first provided by shortcut, the second the model's", turn.Inferences)
	}
	all := strings.Join(trace, "\n")
	if !strings.Contains(all, "pre_llm_call_can_provide_response: shortcut answered instead of the model") || !strings.Contains(all, "(provided by shortcut)") {
		t.Errorf("the trace does not say who answered:\n%s", all)
	}
}
