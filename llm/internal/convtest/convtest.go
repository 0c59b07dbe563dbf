// Package convtest runs one conversation through the real loop, with hooks,
// against any provider, so each adapter's tests can check the same story
// end to end: the small model calls three tools at once (a plugin's tool
// that an in-process plugin answers, a native tool, and the native tool
// again with arguments that are not JSON), then hedges; a router plugin
// reissues that answer to the strong model, whose answer is final. The
// adapter's own test scripts the fake server's replies and checks what the
// server received.
package convtest

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/hookhost/hookhost/conversation"
	"github.com/hookhost/hookhost/dispatch"
	"github.com/hookhost/hookhost/hookbus"
	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/llm"
)

// The story's fixed parts.
const (
	System       = "be brief"
	Question     = "what is the burn?"
	SmallModel   = "small"
	StrongModel  = "strong"
	LookupResult = `{"burn_usd":42}`
	EchoResult   = `{"said":"hi"}`
	Hedge        = "I'm not sure what the burn is."
	StrongAnswer = "The burn is 42 USD."
	// The three calls the small model makes, in order.
	LookupArgs = `{"q":"burn"}`
	EchoArgs   = `{"say":"hi"}`
	BadArgs    = `{"say": `
)

// Usage the fake replies report, per call, and what the turn must sum.
var (
	Usages = []hooks.Usage{{InputTokens: 100, OutputTokens: 30}, {InputTokens: 200, OutputTokens: 8}, {InputTokens: 210, OutputTokens: 6}}
)

// EchoSpec is the native tool.
var EchoSpec = hooks.ToolSpec{
	Name: "echo", Description: "Echoes what it is told",
	InputSchema: json.RawMessage(`{"type":"object","properties":{"say":{"type":"string"}},"required":["say"]}`),
}

// LookupSpec is the plugin's tool.
var LookupSpec = hooks.ToolSpec{
	Name: "kora__lookup", Description: "Looks up operational figures",
	InputSchema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`),
}

// Log records what the in-process plugins did.
type Log struct {
	mu       sync.Mutex
	Provided []string
	Reissued []string
}

// Run sends Question through a gateway session with the two plugins and
// returns the turn. onText, when set, makes the session stream.
func Run(t testing.TB, p llm.Provider, onText func(string)) (*conversation.Turn, *Log) {
	t.Helper()
	log := &Log{}
	kora := &hooks.Funcs{
		Name: "kora", Matchers: []string{"kora__*"}, Tools: []hooks.ToolSpec{LookupSpec},
		PreToolCallCanProvideResultFunc: func(_ context.Context, req hooks.ToolCallRequest) (*hooks.ToolResult, error) {
			log.mu.Lock()
			log.Provided = append(log.Provided, req.Name+" "+string(req.Arguments))
			log.mu.Unlock()
			return &hooks.ToolResult{Content: LookupResult}, nil
		},
	}
	router := &hooks.Funcs{
		Name: "router",
		PostLLMCallCanReissueFunc: func(_ context.Context, c hooks.LLMCall) (*hooks.Reissue, error) {
			if c.Request.Model != SmallModel || !strings.Contains(c.Response.Message.Content, "not sure") {
				return nil, nil
			}
			log.mu.Lock()
			log.Reissued = append(log.Reissued, c.Response.Message.Content)
			log.mu.Unlock()
			strong := StrongModel
			return &hooks.Reissue{Patch: hooks.RequestPatch{Model: &strong}, Reason: "small model hedged"}, nil
		},
	}
	bus, err := hookbus.New([]hookbus.Member{{Plugin: kora}, {Plugin: router}}, hookbus.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bus.Close(context.Background()) })
	reg, err := dispatch.NewRegistry(dispatch.Tool{Spec: EchoSpec, Run: func(_ context.Context, args json.RawMessage) (any, error) {
		var a struct{ Say string }
		if err := json.Unmarshal(args, &a); err != nil {
			return nil, err
		}
		return map[string]string{"said": a.Say}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	sess, err := conversation.New(conversation.Options{
		Provider: p, Model: SmallModel, System: System, Route: hooks.RouteGateway,
		Bus: bus, Tools: reg, OnText: onText,
	})
	if err != nil {
		t.Fatal(err)
	}
	turn, err := sess.Send(context.Background(), Question)
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	return turn, log
}

// Check verifies what the loop made of the story.
func Check(t testing.TB, turn *conversation.Turn, log *Log) {
	t.Helper()
	if turn.Answer != StrongAnswer || turn.EndReason != hooks.EndCompleted || turn.Iterations != 2 {
		t.Errorf("turn = %q, %s after %d iterations", turn.Answer, turn.EndReason, turn.Iterations)
	}
	if len(turn.Inferences) != 3 || turn.Inferences[0].Model != SmallModel || turn.Inferences[1].Model != SmallModel ||
		turn.Inferences[2].Model != StrongModel || !turn.Inferences[2].Escalated {
		t.Errorf("inferences = %+v, want small, small, strong (escalated)", turn.Inferences)
	}
	var sum hooks.Usage
	for _, u := range Usages {
		sum = sum.Add(u)
	}
	if turn.Usage != sum {
		t.Errorf("usage = %+v, want %+v, the sum of the three calls", turn.Usage, sum)
	}
	if len(turn.ToolCalls) != 3 {
		t.Fatalf("%d tool calls, want 3", len(turn.ToolCalls))
	}
	if oc := turn.ToolCalls[0]; oc.Path != dispatch.PathProvided || oc.AnsweredBy != "kora" || oc.Result.Content != LookupResult {
		t.Errorf("lookup = %+v, want provided by kora", oc)
	}
	if oc := turn.ToolCalls[1]; oc.Path != dispatch.PathNative || oc.Result.Content != EchoResult {
		t.Errorf("echo = %+v, want the native result", oc)
	}
	if oc := turn.ToolCalls[2]; oc.Path != dispatch.PathRejected || !oc.Result.IsError || !strings.Contains(oc.Result.Content, "not a valid JSON object") {
		t.Errorf("echo with bad arguments = %+v, want an error result", oc)
	}
	log.mu.Lock()
	defer log.mu.Unlock()
	if len(log.Provided) != 1 || log.Provided[0] != "kora__lookup "+LookupArgs || len(log.Reissued) != 1 || log.Reissued[0] != Hedge {
		t.Errorf("hooks: provided %q, reissued %q", log.Provided, log.Reissued)
	}
}

// BadArgsResult is the error result the bad call got, as sent back to the
// model.
func BadArgsResult(turn *conversation.Turn) string { return turn.ToolCalls[2].Result.Content }
