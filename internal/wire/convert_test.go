package wire

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/hookhost/hookhost/hooks"
	pluginv1 "github.com/hookhost/hookhost/plugins/proto/v1"
)

// roundTrip sends in through the real wire format (to, Marshal, Unmarshal,
// from) and compares the result with want.
func roundTrip[T any, M proto.Message](t *testing.T, name string, in, want T, to func(T) M, from func(M) T) {
	t.Helper()
	m := to(in)
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatalf("%s: marshal: %v", name, err)
	}
	fresh := m.ProtoReflect().New().Interface().(M)
	if err := proto.Unmarshal(b, fresh); err != nil {
		t.Fatalf("%s: unmarshal: %v", name, err)
	}
	if got := from(fresh); !reflect.DeepEqual(got, want) {
		t.Errorf("%s: round trip\n got  %s\n want %s", name, show(got), show(want))
	}
}

// same is the common case of roundTrip: the value must come back unchanged.
func same[T any, M proto.Message](t *testing.T, name string, in T, to func(T) M, from func(M) T) {
	t.Helper()
	roundTrip(t, name, in, in, to, from)
}

func show(v any) string {
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Pointer && !rv.IsNil() {
		return "&" + fmt.Sprintf("%#v", rv.Elem().Interface())
	}
	return fmt.Sprintf("%#v", v)
}

func ptr[T any](v T) *T { return &v }

var (
	schema      = json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`)
	validArgs   = json.RawMessage(`{"q":"weather in Oslo"}`)
	invalidArgs = json.RawMessage(`{"q": "unterminated`)
	binaryArgs  = json.RawMessage("\xff\x00not json at all\x01")
	someTools   = []hooks.ToolSpec{
		{Name: "search", Description: "search the web", InputSchema: schema},
		{Name: "now", Description: "current time"},
	}
	someMessages = []hooks.Message{
		{Role: hooks.RoleSystem, Content: "be brief"},
		{Role: hooks.RoleUser, Content: "weather?"},
		{Role: hooks.RoleAssistant, ToolCalls: []hooks.ToolCall{
			{ID: "c1", Name: "search", Arguments: validArgs},
			{ID: "c2", Name: "search", Arguments: invalidArgs},
			{ID: "c3", Name: "now"},
		}},
		{Role: hooks.RoleTool, ToolCallID: "c1", ToolName: "search", Content: `{"t":12}`},
		{Role: hooks.RoleTool, ToolCallID: "c2", ToolName: "search", Content: "bad args", IsError: true},
	}
	someRequest = hooks.ModelRequest{
		Model:       "offline-small",
		System:      "be brief",
		Messages:    someMessages,
		Tools:       someTools,
		MaxTokens:   512,
		Temperature: ptr(0.7),
	}
	someResponse = hooks.ModelResponse{
		Model:      "offline-small",
		Message:    hooks.Message{Role: hooks.RoleAssistant, Content: "12 degrees"},
		Usage:      hooks.Usage{InputTokens: 100, OutputTokens: 7},
		StopReason: hooks.StopEndTurn,
	}
)

func TestRoundTripSessionEvents(t *testing.T) {
	same(t, "session start", hooks.SessionStart{SessionID: "s1", Model: "m", Route: hooks.RouteGateway}, sessionStartToPB, sessionStartFromPB)
	same(t, "session start zero", hooks.SessionStart{}, sessionStartToPB, sessionStartFromPB)
	same(t, "session end", hooks.SessionEnd{
		SessionID: "s1", Model: "m", Route: hooks.RouteBypass, Reason: hooks.EndError,
		Iterations: 8, Usage: hooks.Usage{InputTokens: 1 << 40, OutputTokens: 3}, Error: "provider: 503",
	}, sessionEndToPB, sessionEndFromPB)
	same(t, "session end zero", hooks.SessionEnd{}, sessionEndToPB, sessionEndFromPB)
}

func TestRoundTripToolList(t *testing.T) {
	same(t, "request", hooks.ToolListRequest{SessionID: "s", Iteration: 3, Tools: someTools}, toolListRequestToPB, toolListRequestFromPB)
	same(t, "request without tools", hooks.ToolListRequest{SessionID: "s"}, toolListRequestToPB, toolListRequestFromPB)

	same(t, "nil override", (*hooks.ToolListOverride)(nil), overrideToPB, overrideFromPB)
	same(t, "override", &hooks.ToolListOverride{Tools: someTools}, overrideToPB, overrideFromPB)
	same(t, "override to no tools", &hooks.ToolListOverride{Tools: []hooks.ToolSpec{}}, overrideToPB, overrideFromPB)
	// The wire cannot tell a nil list from an empty one; an override is
	// always a list, so it arrives as the empty one.
	roundTrip(t, "override with nil tools", &hooks.ToolListOverride{}, &hooks.ToolListOverride{Tools: []hooks.ToolSpec{}}, overrideToPB, overrideFromPB)
}

func TestRoundTripAPIRequest(t *testing.T) {
	same(t, "request", hooks.APIRequest{SessionID: "s", Iteration: 2, Request: someRequest}, apiRequestToPB, apiRequestFromPB)
	noTemp := someRequest
	noTemp.Temperature = nil
	same(t, "no temperature", hooks.APIRequest{Request: noTemp}, apiRequestToPB, apiRequestFromPB)
	zeroTemp := someRequest
	zeroTemp.Temperature = ptr(0.0)
	same(t, "temperature set to zero", hooks.APIRequest{Request: zeroTemp}, apiRequestToPB, apiRequestFromPB)
	same(t, "zero", hooks.APIRequest{}, apiRequestToPB, apiRequestFromPB)
}

func TestRoundTripRequestPatch(t *testing.T) {
	cases := map[string]*hooks.RequestPatch{
		"nil":                   nil,
		"empty":                 {},
		"model":                 {Model: ptr("offline-large")},
		"model set to empty":    {Model: ptr("")},
		"system":                {System: ptr("be thorough")},
		"system set to empty":   {System: ptr("")},
		"messages":              {Messages: someMessages},
		"messages set to empty": {Messages: []hooks.Message{}},
		"tools":                 {Tools: someTools},
		"tools set to empty":    {Tools: []hooks.ToolSpec{}},
		"max tokens":            {MaxTokens: ptr(4096)},
		"max tokens zero":       {MaxTokens: ptr(0)},
		"temperature":           {Temperature: ptr(1.25)},
		"temperature zero":      {Temperature: ptr(0.0)},
		"everything": {
			Model: ptr("m"), System: ptr("s"), Messages: someMessages, Tools: someTools,
			MaxTokens: ptr(1), Temperature: ptr(2.0),
		},
	}
	for name, p := range cases {
		same(t, "patch "+name, p, patchResponseToPB, patchResponseFromPB)
	}
}

func TestRoundTripLLMCallAndReissue(t *testing.T) {
	same(t, "llm call", hooks.LLMCall{SessionID: "s", Iteration: 1, Route: hooks.RouteGateway, Request: someRequest, Response: someResponse}, llmCallToPB, llmCallFromPB)
	withCalls := someResponse
	withCalls.Message.ToolCalls = []hooks.ToolCall{{ID: "x", Name: "search", Arguments: binaryArgs}}
	withCalls.StopReason = hooks.StopToolUse
	same(t, "llm call with tool calls", hooks.LLMCall{Response: withCalls}, llmCallToPB, llmCallFromPB)
	same(t, "llm call zero", hooks.LLMCall{}, llmCallToPB, llmCallFromPB)
	same(t, "llm call on an opening", hooks.LLMCall{SessionID: "s", Iteration: 1, Response: someResponse, Partial: true}, llmCallToPB, llmCallFromPB)

	same(t, "nil reissue", (*hooks.Reissue)(nil), reissueToPB, reissueFromPB)
	same(t, "reissue", &hooks.Reissue{Patch: hooks.RequestPatch{Model: ptr("offline-large"), Messages: someMessages}, Reason: "low confidence"}, reissueToPB, reissueFromPB)
	same(t, "reissue with empty patch", &hooks.Reissue{Reason: "again"}, reissueToPB, reissueFromPB)
	same(t, "reissue zero", &hooks.Reissue{}, reissueToPB, reissueFromPB)
}

func TestRoundTripInference(t *testing.T) {
	same(t, "inference", hooks.Inference{
		SessionID: "s", Iteration: 4, Route: hooks.RouteGateway, Model: "offline-large",
		Usage: hooks.Usage{InputTokens: 10, OutputTokens: 20}, StopReason: hooks.StopMaxTokens,
		Escalated: true, Reason: "hedged", Duration: 1500*time.Millisecond + 7*time.Nanosecond, Error: "",
	}, inferenceToPB, inferenceFromPB)
	same(t, "failed inference", hooks.Inference{Error: "timeout", Duration: 30 * time.Second}, inferenceToPB, inferenceFromPB)
	same(t, "negative duration", hooks.Inference{Duration: -time.Nanosecond}, inferenceToPB, inferenceFromPB)
}

func TestRoundTripLLMOutput(t *testing.T) {
	same(t, "output", hooks.LLMOutput{SessionID: "s", Text: "the answer is 42"}, llmOutputToPB, llmOutputFromPB)
	same(t, "nil replacement", (*hooks.TextReplacement)(nil), textToPB, textFromPB)
	same(t, "replacement", &hooks.TextReplacement{Text: "[redacted]"}, textToPB, textFromPB)
	// An empty replacement is an opinion (erase the text), not silence.
	same(t, "empty replacement", &hooks.TextReplacement{}, textToPB, textFromPB)
	same(t, "window", hooks.LLMOutput{SessionID: "s", Text: "ndow text", Windowed: true, Offset: 4096, Overlap: 256, Last: true}, llmOutputToPB, llmOutputFromPB)
	same(t, "stop", &hooks.TextReplacement{Stop: &hooks.OutputStop{Message: "withheld"}}, textToPB, textFromPB)
	same(t, "stop with no message", &hooks.TextReplacement{Stop: &hooks.OutputStop{}}, textToPB, textFromPB)
	// Both set is kept as sent, for the answer's check to call malformed.
	both := textFromPB(&pluginv1.TextResponse{Text: ptr("x"), Stop: &pluginv1.OutputStop{Message: "m"}})
	if both == nil || both.Text != "x" || both.Stop == nil || hooks.CheckAnswer("g", hooks.TransformLLMOutput, both, 1<<20, 2) == nil {
		t.Errorf("text and stop together: %+v, want both kept and refused by the answer's check", both)
	}
}

func TestRoundTripHookOptions(t *testing.T) {
	same(t, "manifest with hook options", hooks.Manifest{Name: "g", Hooks: []hooks.Name{hooks.PostLLMCallCanReissue, hooks.TransformLLMOutput},
		HookOptions: map[hooks.Name]hooks.HookOptions{
			hooks.TransformLLMOutput:    {WindowBytes: 4096, OverlapBytes: 256},
			hooks.PostLLMCallCanReissue: {DecideAfterBytes: 512},
		}}, manifestToPB, manifestFromPB)
	for _, c := range []struct {
		m    *pluginv1.Manifest
		want string
	}{
		{&pluginv1.Manifest{Name: "g", HookOptions: []*pluginv1.HookOptions{{Hook: "pre_everything"}}}, `unknown hook "pre_everything" in the manifest's hook_options`},
		{&pluginv1.Manifest{Name: "g", HookOptions: []*pluginv1.HookOptions{{Hook: "transform_llm_output"}, {Hook: "transform_llm_output"}}}, "two entries in the manifest's hook_options"},
	} {
		if err := checkManifest(c.m); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("checkManifest: %v, want %q", err, c.want)
		}
	}
}

func TestRoundTripToolCallRequest(t *testing.T) {
	for name, args := range map[string]json.RawMessage{
		"valid JSON":   validArgs,
		"invalid JSON": invalidArgs,
		"binary":       binaryArgs,
		"absent":       nil,
	} {
		same(t, "tool call "+name, hooks.ToolCallRequest{SessionID: "s", CallID: "c", Name: "search", Arguments: args}, toolCallRequestToPB, toolCallRequestFromPB)
	}
	// Empty and absent are the same thing on the wire.
	roundTrip(t, "tool call empty args", hooks.ToolCallRequest{Arguments: json.RawMessage{}}, hooks.ToolCallRequest{}, toolCallRequestToPB, toolCallRequestFromPB)
}

func TestRoundTripPreToolCallDecision(t *testing.T) {
	same(t, "nil", (*hooks.PreToolCallDecision)(nil), decisionToPB, decisionFromPB)
	same(t, "block", &hooks.PreToolCallDecision{Block: &hooks.Block{Message: "not on Sundays"}}, decisionToPB, decisionFromPB)
	same(t, "block without message", &hooks.PreToolCallDecision{Block: &hooks.Block{}}, decisionToPB, decisionFromPB)
	same(t, "modify", &hooks.PreToolCallDecision{ModifiedArgs: validArgs}, decisionToPB, decisionFromPB)
	same(t, "modify to invalid JSON", &hooks.PreToolCallDecision{ModifiedArgs: invalidArgs}, decisionToPB, decisionFromPB)
	// Present but empty stays present, so the Bus can reject it.
	same(t, "modify to empty", &hooks.PreToolCallDecision{ModifiedArgs: json.RawMessage{}}, decisionToPB, decisionFromPB)
	// Both set is malformed, but it is the Bus's call: the wire keeps it.
	same(t, "block and modify", &hooks.PreToolCallDecision{Block: &hooks.Block{Message: "no"}, ModifiedArgs: validArgs}, decisionToPB, decisionFromPB)
	// Neither block nor modify changes nothing: it travels as no opinion.
	roundTrip(t, "neither", &hooks.PreToolCallDecision{}, nil, decisionToPB, decisionFromPB)
}

func TestRoundTripToolResults(t *testing.T) {
	same(t, "nil result", (*hooks.ToolResult)(nil), toolResultResponseToPB, toolResultResponseFromPB)
	same(t, "result", &hooks.ToolResult{Content: `{"temp":12}`}, toolResultResponseToPB, toolResultResponseFromPB)
	same(t, "error result", &hooks.ToolResult{Content: "boom", IsError: true}, toolResultResponseToPB, toolResultResponseFromPB)
	same(t, "empty result", &hooks.ToolResult{}, toolResultResponseToPB, toolResultResponseFromPB)

	for name, args := range map[string]json.RawMessage{"valid": validArgs, "invalid": invalidArgs, "absent": nil} {
		same(t, "outcome "+name, hooks.ToolCallOutcome{
			SessionID: "s", CallID: "c", Name: "kora__get_burn", Arguments: args,
			Result: hooks.ToolResult{Content: "x", IsError: true}, Status: hooks.ProvidedBy("kora"),
			Duration: 42 * time.Microsecond,
		}, toolCallOutcomeToPB, toolCallOutcomeFromPB)
	}
	same(t, "outcome zero", hooks.ToolCallOutcome{}, toolCallOutcomeToPB, toolCallOutcomeFromPB)
}

func TestRoundTripManifest(t *testing.T) {
	same(t, "manifest", hooks.Manifest{
		Name: "kora", Version: "1.2.3",
		Hooks:    []hooks.Name{hooks.PreToolCall, hooks.PostToolCall, hooks.PostLLMCallCanReissue},
		Matchers: []string{"kora__*"},
		Tools:    []hooks.ToolSpec{{Name: "kora__get_burn", Description: "cost", InputSchema: schema}},
	}, manifestToPB, manifestFromPB)
	same(t, "manifest with every hook", hooks.Manifest{Name: "all", Hooks: hooks.Catalogue}, manifestToPB, manifestFromPB)
	same(t, "manifest zero", hooks.Manifest{}, manifestToPB, manifestFromPB)
	roundTrip(t, "manifest empty lists", hooks.Manifest{Name: "x", Hooks: []hooks.Name{}, Matchers: []string{}}, hooks.Manifest{Name: "x"}, manifestToPB, manifestFromPB)
	// A config declaration survives, with no keys too: that is not the
	// same as none.
	same(t, "manifest declaring config keys", hooks.Manifest{Name: "x", Config: &hooks.ConfigKeys{Keys: []string{"deny", "message"}}}, manifestToPB, manifestFromPB)
	same(t, "manifest taking no config", hooks.Manifest{Name: "x", Config: &hooks.ConfigKeys{}}, manifestToPB, manifestFromPB)
	roundTrip(t, "manifest declaring an empty key list", hooks.Manifest{Name: "x", Config: &hooks.ConfigKeys{Keys: []string{}}}, hooks.Manifest{Name: "x", Config: &hooks.ConfigKeys{}}, manifestToPB, manifestFromPB)
}

// The conversions must not let the receiver reach into the sender's memory
// through pointers it could later modify.
func TestConversionsDoNotAlias(t *testing.T) {
	temp := 0.5
	p := &hooks.RequestPatch{Model: ptr("a"), Temperature: &temp, MaxTokens: ptr(3)}
	got := patchResponseFromPB(patchResponseToPB(p))
	*got.Model, *got.Temperature, *got.MaxTokens = "b", 1.5, 9
	if *p.Model != "a" || temp != 0.5 || *p.MaxTokens != 3 {
		t.Fatalf("converted patch shares memory with the original: %s", show(p))
	}
}

func TestCheckManifest(t *testing.T) {
	if err := checkManifest(manifestToPB(hooks.Manifest{Name: "ok", Hooks: hooks.Catalogue,
		HookMatchers: map[hooks.Name][]string{hooks.PostToolCall: nil, hooks.PreToolCall: {"k__*"}}})); err != nil {
		t.Fatalf("catalogue hooks rejected: %v", err)
	}
	for name, c := range map[string]struct {
		m    *pluginv1.Manifest
		want string
	}{
		"unknown hook": {&pluginv1.Manifest{Name: "x", Hooks: []string{"pre_tool_call", "pre_coffee"}}, `unknown hook "pre_coffee" in the manifest`},
		"unknown hook in hook_matchers": {manifestToPB(hooks.Manifest{Name: "x", HookMatchers: map[hooks.Name][]string{"pre_coffee": {"*"}}}),
			`unknown hook "pre_coffee" in the manifest's hook_matchers`},
		"hook named twice": {&pluginv1.Manifest{Name: "x", HookMatchers: []*pluginv1.HookMatchers{{Hook: "pre_tool_call"}, {Hook: "pre_tool_call", Matchers: []string{"a"}}}},
			`hook "pre_tool_call" has two entries`},
	} {
		if err := checkManifest(c.m); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", name, err, c.want)
		}
	}
}

func TestHookMatchersRoundTrip(t *testing.T) {
	same(t, "hook matchers", hooks.Manifest{
		Name: "kora", Hooks: []hooks.Name{hooks.PreToolCallCanProvideResult, hooks.PostToolCall}, Matchers: []string{"kora__*"},
		HookMatchers: map[hooks.Name][]string{hooks.PostToolCall: nil, hooks.PreToolCallCanProvideResult: {"kora__*", "x"}},
	}, manifestToPB, manifestFromPB)
	// An entry with no globs is kept: it means every tool for that hook.
	m := manifestFromPB(manifestToPB(hooks.Manifest{HookMatchers: map[hooks.Name][]string{hooks.PostToolCall: {}}}))
	if g, ok := m.HookMatchers[hooks.PostToolCall]; !ok || len(g) != 0 {
		t.Fatalf("empty entry: got %v (present %v)", g, ok)
	}
	// Catalogue order, so the same manifest always makes the same bytes.
	pb := manifestToPB(hooks.Manifest{HookMatchers: map[hooks.Name][]string{hooks.TransformToolResult: {"a"}, hooks.PreToolCall: {"b"}, "zzz": nil, "aaa": nil}})
	var order []string
	for _, hm := range pb.GetHookMatchers() {
		order = append(order, hm.GetHook())
	}
	if want := []string{"pre_tool_call", "transform_tool_result", "aaa", "zzz"}; !reflect.DeepEqual(order, want) {
		t.Fatalf("order %v, want %v", order, want)
	}
}
