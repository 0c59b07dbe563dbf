package offline_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/llm"
	"github.com/hookhost/hookhost/llm/offline"
)

var (
	nowTool = llm.ToolSpec{
		Name:        "now",
		Description: "Returns the current date and time (clock) in UTC or a given zone.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"timezone":{"type":"string","default":"UTC"}}}`),
	}
	calcTool = llm.ToolSpec{
		Name:        "calculate",
		Description: "Evaluates an arithmetic expression.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"expression":{"type":"string"}},"required":["expression"]}`),
	}
	burnTool = llm.ToolSpec{
		Name:        "kora__get_burn",
		Description: "Cost and tokens burned per model and route",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"window":{"type":"string","enum":["24h","7d","30d"],"default":"24h"}}}`),
	}
	readTool = llm.ToolSpec{
		Name:        "read_file",
		Description: "Reads a file from the workspace.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`),
	}
	allTools = []llm.ToolSpec{nowTool, calcTool, burnTool, readTool}
)

var hedges = []string{"I'm not sure", "not sure", "I don't know"}

func isHedge(s string) bool {
	for _, h := range hedges {
		if strings.Contains(strings.ToLower(s), strings.ToLower(h)) {
			return true
		}
	}
	return false
}

func user(text string) llm.Message { return llm.Message{Role: hooks.RoleUser, Content: text} }

func complete(t *testing.T, model string, msgs []llm.Message, tools []llm.ToolSpec) llm.Response {
	t.Helper()
	resp, err := offline.New().Complete(context.Background(), llm.Request{Model: model, Messages: msgs, Tools: tools})
	if err != nil {
		t.Fatalf("Complete: %v", err)
	}
	if resp.Model != model {
		t.Errorf("Model = %q, want %q", resp.Model, model)
	}
	if resp.Message.Role != hooks.RoleAssistant {
		t.Errorf("Role = %q, want assistant", resp.Message.Role)
	}
	if resp.Usage.InputTokens < 1 || resp.Usage.OutputTokens < 1 {
		t.Errorf("Usage = %+v, want both at least 1", resp.Usage)
	}
	return resp
}

// wantCall asserts that resp is exactly one call of tool with args.
func wantCall(t *testing.T, resp llm.Response, tool, args string) {
	t.Helper()
	if resp.StopReason != hooks.StopToolUse || len(resp.Message.ToolCalls) != 1 {
		t.Fatalf("got stop %q, calls %v, text %q; want one call of %s", resp.StopReason, resp.Message.ToolCalls, resp.Message.Content, tool)
	}
	c := resp.Message.ToolCalls[0]
	if c.Name != tool || string(c.Arguments) != args {
		t.Errorf("call = %s %s, want %s %s", c.Name, c.Arguments, tool, args)
	}
	if !json.Valid(c.Arguments) {
		t.Errorf("arguments %s are not valid JSON", c.Arguments)
	}
	if resp.Message.Content != "" {
		t.Errorf("call carries text %q", resp.Message.Content)
	}
}

// wantText asserts that resp is a final answer and returns its text.
func wantText(t *testing.T, resp llm.Response) string {
	t.Helper()
	if resp.StopReason != hooks.StopEndTurn || len(resp.Message.ToolCalls) != 0 {
		t.Fatalf("got stop %q, calls %v; want a final answer", resp.StopReason, resp.Message.ToolCalls)
	}
	return resp.Message.Content
}

func TestNameAndModels(t *testing.T) {
	p := offline.New()
	if p.Name() != "offline" {
		t.Errorf("Name = %q", p.Name())
	}
	var _ llm.Provider = p
	if offline.SmallModel != "offline-small" || offline.LargeModel != "offline-large" {
		t.Errorf("model names = %q, %q", offline.SmallModel, offline.LargeModel)
	}
}

func TestStrongMatchesCallTools(t *testing.T) {
	tests := []struct {
		question, tool, args string
	}{
		{"what time is it", "now", `{}`},
		{"What's the current date?", "now", `{}`},
		{"what's my burn?", "kora__get_burn", `{}`},
		{"what's my burn over 7D?", "kora__get_burn", `{"window":"7d"}`},
		{"what is 2+3*4", "calculate", `{"expression":"2+3*4"}`},
		{"what is 2 + 3 * 4?", "calculate", `{"expression":"2 + 3 * 4"}`},
		{"please compute sqrt(16) / 2.", "calculate", `{"expression":"sqrt(16) / 2"}`},
		{"read go.mod please", "read_file", `{"path":"go.mod"}`},
		{"what's in the file /etc/hosts?", "read_file", `{"path":"/etc/hosts"}`},
	}
	for _, tt := range tests {
		for _, model := range []string{offline.SmallModel, offline.LargeModel} {
			t.Run(model+"/"+tt.question, func(t *testing.T) {
				resp := complete(t, model, []llm.Message{user(tt.question)}, allTools)
				wantCall(t, resp, tt.tool, tt.args)
				if id := resp.Message.ToolCalls[0].ID; id != "call_1_"+tt.tool {
					t.Errorf("ID = %q, want call_1_%s", id, tt.tool)
				}
			})
		}
	}
}

func TestWeakMatchSplitsTiers(t *testing.T) {
	// Only "tokens" matches, and only a description word.
	q := "show the tokens spent lately"

	small := wantText(t, complete(t, offline.SmallModel, []llm.Message{user(q)}, allTools))
	if !strings.HasPrefix(small, "I'm not sure") {
		t.Errorf("small = %q, want a hedge", small)
	}
	if want := `I'm not sure I can answer "show the tokens spent lately" — kora__get_burn only loosely fits.`; small != want {
		t.Errorf("small = %q\nwant    %q", small, want)
	}

	wantCall(t, complete(t, offline.LargeModel, []llm.Message{user(q)}, allTools), "kora__get_burn", `{}`)
}

func TestNoMatch(t *testing.T) {
	q := "tell me a   joke"
	small := wantText(t, complete(t, offline.SmallModel, []llm.Message{user(q)}, allTools))
	if want := `I'm not sure I can answer "tell me a joke" — none of my tools clearly fits.`; small != want {
		t.Errorf("small = %q\nwant    %q", small, want)
	}
	large := wantText(t, complete(t, offline.LargeModel, []llm.Message{user(q)}, allTools))
	if want := `I have no tool that answers "tell me a joke". Tools I can use: now, calculate, kora__get_burn, read_file.`; large != want {
		t.Errorf("large = %q\nwant    %q", large, want)
	}
}

func TestNoTools(t *testing.T) {
	small := wantText(t, complete(t, offline.SmallModel, []llm.Message{user("what time is it")}, nil))
	if want := `I'm not sure I can answer "what time is it" — I have no tools to use.`; small != want {
		t.Errorf("small = %q", small)
	}
	large := wantText(t, complete(t, offline.LargeModel, []llm.Message{user("what time is it")}, nil))
	if want := `I have no tools to answer "what time is it".`; large != want {
		t.Errorf("large = %q", large)
	}
}

func TestGreetingWithoutQuestion(t *testing.T) {
	for _, msgs := range [][]llm.Message{
		nil,
		{{Role: hooks.RoleSystem, Content: "be brief"}},
		{user("   ")},
		{user("A smaller model answered: I'm not sure.")},
	} {
		for _, model := range []string{offline.SmallModel, offline.LargeModel} {
			text := wantText(t, complete(t, model, msgs, allTools))
			if !strings.HasPrefix(text, "Hello!") || isHedge(text) {
				t.Errorf("%s %v: %q, want a plain greeting", model, msgs, text)
			}
		}
	}
}

// turn is a question, its call and its results, as the loop would build it.
func turn(question string, call llm.ToolCall, results ...llm.Message) []llm.Message {
	msgs := []llm.Message{user(question), {Role: hooks.RoleAssistant, ToolCalls: []llm.ToolCall{call}}}
	return append(msgs, results...)
}

func TestAnswerFromResults(t *testing.T) {
	nowCall := llm.ToolCall{ID: "c1", Name: "now", Arguments: json.RawMessage(`{}`)}
	burnCall := llm.ToolCall{ID: "c2", Name: "kora__get_burn", Arguments: json.RawMessage(`{}`)}
	tests := []struct {
		name         string
		msgs         []llm.Message
		small, large string
	}{
		{
			name: "json object, name from call id",
			msgs: turn("what time is it", nowCall,
				llm.Message{Role: hooks.RoleTool, ToolCallID: "c1", Content: `{"timezone":"UTC","time":"2026-01-02T03:04:05Z"}`}),
			small: "From now: time: 2026-01-02T03:04:05Z; timezone: UTC.",
			large: "From now: time: 2026-01-02T03:04:05Z; timezone: UTC.",
		},
		{
			name: "nested json",
			msgs: turn("what's my burn", burnCall,
				llm.Message{Role: hooks.RoleTool, ToolCallID: "c2", ToolName: "kora__get_burn", Content: `{"by_model":{"offline-small":{"cost":0.5}},"total":1.25,"routes":["bypass"],"ok":true}`}),
			small: `From kora__get_burn: by_model: {"offline-small":{"cost":0.5}}; ok: true; routes: ["bypass"]; total: 1.25.`,
			large: `From kora__get_burn: by_model: {"offline-small":{"cost":0.5}}; ok: true; routes: ["bypass"]; total: 1.25.`,
		},
		{
			name: "plain text",
			msgs: turn("read go.mod", llm.ToolCall{ID: "c3", Name: "read_file"},
				llm.Message{Role: hooks.RoleTool, ToolCallID: "c3", Content: "module example.com/x\n"}),
			small: "From read_file: module example.com/x.",
			large: "From read_file: module example.com/x.",
		},
		{
			name: "json error",
			msgs: turn("what's my burn", burnCall,
				llm.Message{Role: hooks.RoleTool, ToolCallID: "c2", Content: `{"error": "kora_tool_dispatch_error: io: ledger missing"}`}),
			small: "I'm not sure — the tool kora__get_burn failed: kora_tool_dispatch_error: io: ledger missing.",
			large: "The tool kora__get_burn failed: kora_tool_dispatch_error: io: ledger missing.",
		},
		{
			name: "is_error text",
			msgs: turn("what time is it", nowCall,
				llm.Message{Role: hooks.RoleTool, ToolCallID: "c1", IsError: true, Content: "blocked by policy."}),
			small: "I'm not sure — the tool now failed: blocked by policy.",
			large: "The tool now failed: blocked by policy.",
		},
		{
			name: "one error among results does not hedge",
			msgs: []llm.Message{
				user("time and burn"),
				{Role: hooks.RoleAssistant, ToolCalls: []llm.ToolCall{nowCall, burnCall}},
				{Role: hooks.RoleTool, ToolCallID: "c1", Content: `"12:00"`},
				{Role: hooks.RoleTool, ToolCallID: "c2", IsError: true, Content: ""},
			},
			small: "From now: 12:00. The tool kora__get_burn failed: unknown error.",
			large: "From now: 12:00. The tool kora__get_burn failed: unknown error.",
		},
		{
			name: "empty object and unknown call",
			msgs: turn("x", llm.ToolCall{ID: "c9", Name: "noop"},
				llm.Message{Role: hooks.RoleTool, ToolCallID: "other", Content: `{}`}),
			small: "From tool: (no data).",
			large: "From tool: (no data).",
		},
		{
			name: "hedging phrases in a result are not a hedge",
			msgs: turn("what time is it", nowCall,
				llm.Message{Role: hooks.RoleTool, ToolCallID: "c1", Content: "I'm NOT sure, I don't know"}),
			small: "From now: I'm unsure, I do not know.",
			large: "From now: I'm unsure, I do not know.",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := wantText(t, complete(t, offline.SmallModel, tt.msgs, allTools)); got != tt.small {
				t.Errorf("small = %q\nwant    %q", got, tt.small)
			}
			if got := wantText(t, complete(t, offline.LargeModel, tt.msgs, allTools)); got != tt.large {
				t.Errorf("large = %q\nwant    %q", got, tt.large)
			}
		})
	}
}

func TestOnlyLatestRoundIsAnswered(t *testing.T) {
	msgs := turn("what time is it", llm.ToolCall{ID: "a", Name: "now"},
		llm.Message{Role: hooks.RoleTool, ToolCallID: "a", Content: `"old"`})
	msgs = append(msgs,
		llm.Message{Role: hooks.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "b", Name: "now"}}},
		llm.Message{Role: hooks.RoleTool, ToolCallID: "b", Content: `"new"`})
	if got := wantText(t, complete(t, offline.LargeModel, msgs, allTools)); got != "From now: new." {
		t.Errorf("got %q", got)
	}
}

func TestNewQuestionAfterAnswerScoresAgain(t *testing.T) {
	msgs := turn("what time is it", llm.ToolCall{ID: "a", Name: "now"},
		llm.Message{Role: hooks.RoleTool, ToolCallID: "a", Content: `"noon"`})
	msgs = append(msgs, llm.Message{Role: hooks.RoleAssistant, Content: "From now: noon."}, user("what's my burn?"))
	wantCall(t, complete(t, offline.SmallModel, msgs, allTools), "kora__get_burn", `{}`)
}

// TestLoopTerminates runs the loop the host runs and checks that every
// question ends in at most two model calls.
func TestLoopTerminates(t *testing.T) {
	questions := []string{
		"what time is it", "what's my burn?", "what is 2+3*4", "read go.mod",
		"show the tokens spent lately", "tell me a joke", "", "time time time now clock",
	}
	for _, model := range []string{offline.SmallModel, offline.LargeModel} {
		for _, q := range questions {
			msgs := []llm.Message{{Role: hooks.RoleSystem, Content: "sys"}, user(q)}
			calls := 0
			for {
				calls++
				if calls > 2 {
					t.Fatalf("%s %q: more than two model calls", model, q)
				}
				resp := complete(t, model, msgs, allTools)
				msgs = append(msgs, resp.Message)
				if resp.StopReason == hooks.StopEndTurn {
					break
				}
				for _, c := range resp.Message.ToolCalls {
					msgs = append(msgs, llm.Message{Role: hooks.RoleTool, ToolCallID: c.ID, Content: `{"ok":true}`})
				}
			}
		}
	}
}

// TestReissueWithContext mirrors a router that reissues a hedged small
// answer to the large model with that answer added as context.
func TestReissueWithContext(t *testing.T) {
	q := "show the tokens spent lately"
	msgs := []llm.Message{user(q)}
	small := wantText(t, complete(t, offline.SmallModel, msgs, allTools))
	if !isHedge(small) {
		t.Fatalf("small = %q, want a hedge", small)
	}
	for _, note := range []llm.Message{
		{Role: hooks.RoleUser, Content: "A smaller model answered: " + small + " Answer the question again."},
		{Role: hooks.RoleSystem, Content: "Earlier answer: " + small},
	} {
		reissued := append(append([]llm.Message{}, msgs...), note)
		wantCall(t, complete(t, offline.LargeModel, reissued, allTools), "kora__get_burn", `{}`)
	}

	// After results the note is skipped too, so the large model answers.
	msgs = turn(q, llm.ToolCall{ID: "c", Name: "kora__get_burn"},
		llm.Message{Role: hooks.RoleTool, ToolCallID: "c", Content: `{"total":2}`},
		llm.Message{Role: hooks.RoleUser, Content: "A smaller model answered: I'm not sure."})
	if got := wantText(t, complete(t, offline.LargeModel, msgs, allTools)); got != "From kora__get_burn: total: 2." {
		t.Errorf("got %q", got)
	}
}

func TestLargeNeverHedges(t *testing.T) {
	questions := []string{
		"I'm not sure what to ask", "I don't know", "tell me a joke", "", "what time is it",
		"show the tokens spent lately", "are you NOT   sure?",
	}
	for _, q := range questions {
		for _, tools := range [][]llm.ToolSpec{nil, allTools} {
			resp := complete(t, offline.LargeModel, []llm.Message{user(q)}, tools)
			if isHedge(resp.Message.Content) {
				t.Errorf("large on %q: %q hedges", q, resp.Message.Content)
			}
		}
	}
}

func TestSmallStrongNeverHedges(t *testing.T) {
	for _, q := range []string{"what time is it", "what's my burn?", "what is 2+3*4", "I'm not sure: burn?"} {
		resp := complete(t, offline.SmallModel, []llm.Message{user(q)}, allTools)
		if resp.StopReason != hooks.StopToolUse || isHedge(resp.Message.Content) {
			t.Errorf("small on %q: stop %q, text %q", q, resp.StopReason, resp.Message.Content)
		}
	}
}

func TestTiesGoToFirstTool(t *testing.T) {
	a := llm.ToolSpec{Name: "alpha", Description: "weather report"}
	b := llm.ToolSpec{Name: "beta", Description: "weather report"}
	wantCall(t, complete(t, offline.SmallModel, []llm.Message{user("weather")}, []llm.ToolSpec{a, b}), "alpha", `{}`)
	wantCall(t, complete(t, offline.SmallModel, []llm.Message{user("weather")}, []llm.ToolSpec{b, a}), "beta", `{}`)
}

func TestArgumentsFromSchema(t *testing.T) {
	tool := llm.ToolSpec{
		Name: "search_logs",
		InputSchema: json.RawMessage(`{"type":"object","required":["query","limit","offset","page","verbose","level","filter","tags","formula","config_file","untyped"],
			"properties":{
				"query":{"type":"string"},
				"limit":{"type":"integer","default":20,"minimum":1},
				"offset":{"type":"integer","minimum":0},
				"page":{"type":["number","null"]},
				"verbose":{"type":"boolean"},
				"level":{"type":"string","enum":["info","warn","error"]},
				"filter":{"type":"object"},
				"tags":{"type":"array"},
				"formula":{"type":"string","description":"A spreadsheet formula"},
				"config_file":{"type":"string"},
				"window":{"type":"string","enum":["1h","24h"],"default":"1h"},
				"sort":{"type":"string","enum":["asc","desc"]},
				"color":{"type":"string","default":"red"}
			}}`),
	}
	q := "search logs for error in app.toml over 24h desc"
	resp := complete(t, offline.LargeModel, []llm.Message{user(q)}, []llm.ToolSpec{tool})
	var got map[string]any
	if err := json.Unmarshal(resp.Message.ToolCalls[0].Arguments, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"query": q, "limit": 20.0, "offset": 0.0, "page": 1.0, "verbose": false,
		"level": "error", "filter": map[string]any{}, "tags": []any{},
		"formula": q, "config_file": "app.toml", "untyped": q, "window": "24h",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("arguments = %v\nwant        %v", got, want)
	}
}

func TestArgumentsFallbacks(t *testing.T) {
	tool := llm.ToolSpec{
		Name:        "lookup",
		InputSchema: json.RawMessage(`{"type":"object","required":["mode","path"],"properties":{"mode":{"enum":["fast","slow"]},"path":{"type":"string"}}}`),
	}
	resp := complete(t, offline.LargeModel, []llm.Message{user("lookup something")}, []llm.ToolSpec{tool})
	wantCall(t, resp, "lookup", `{"mode":"fast","path":"lookup something"}`)

	bad := llm.ToolSpec{Name: "lookup", InputSchema: json.RawMessage(`not json`)}
	wantCall(t, complete(t, offline.LargeModel, []llm.Message{user("lookup")}, []llm.ToolSpec{bad}), "lookup", `{}`)
}

func TestDeterminism(t *testing.T) {
	reqs := []llm.Request{
		{Model: offline.SmallModel, Messages: []llm.Message{user("what's my burn over 7d?")}, Tools: allTools},
		{Model: offline.LargeModel, Messages: []llm.Message{user("show the tokens spent lately")}, Tools: allTools},
		{Model: offline.SmallModel, Messages: turn("burn", llm.ToolCall{ID: "x", Name: "kora__get_burn"},
			llm.Message{Role: hooks.RoleTool, ToolCallID: "x", Content: `{"z":1,"a":{"q":[1,2],"b":null},"m":"s"}`}), Tools: allTools},
	}
	p := offline.New()
	for _, req := range reqs {
		first, err := p.Complete(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		for range 20 {
			again, err := p.Complete(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			a, _ := json.Marshal(first)
			b, _ := json.Marshal(again)
			if string(a) != string(b) {
				t.Fatalf("responses differ:\n%s\n%s", a, b)
			}
		}
	}
}

func TestUsage(t *testing.T) {
	req := llm.Request{
		Model:    offline.SmallModel,
		System:   "abcd",                                 // 4
		Messages: []llm.Message{user("what time is it")}, // 15
		Tools:    allTools,
	}
	resp, err := offline.New().Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if want := (llm.Usage{InputTokens: 5, OutputTokens: 1}); resp.Usage != want {
		t.Errorf("usage = %+v, want %+v", resp.Usage, want)
	}

	req.Messages = append(req.Messages, resp.Message, llm.Message{Role: hooks.RoleTool, ToolCallID: "call_1_now", Content: `"noon"`})
	resp, err = offline.New().Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	// 4 + 15 + 2 ("{}") + 6 = 27 chars; "From now: noon." is 15.
	if want := (llm.Usage{InputTokens: 7, OutputTokens: 4}); resp.Usage != want {
		t.Errorf("usage = %+v, want %+v", resp.Usage, want)
	}
}

func TestUnknownModel(t *testing.T) {
	_, err := offline.New().Complete(context.Background(), llm.Request{Model: "x", Messages: []llm.Message{user("hi")}})
	var pe *llm.ProviderError
	if !errors.As(err, &pe) {
		t.Fatalf("err = %v, want *llm.ProviderError", err)
	}
	if pe.Provider != "offline" || pe.Message != `unknown model "x" (use offline-small or offline-large)` {
		t.Errorf("err = %+v", pe)
	}
}

func TestContextDone(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := offline.New().Complete(ctx, llm.Request{Model: offline.SmallModel, Messages: []llm.Message{user("what time is it")}, Tools: allTools})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func ExampleProvider_Complete() {
	p := offline.New()
	req := llm.Request{
		Model:    offline.SmallModel,
		Messages: []llm.Message{{Role: hooks.RoleUser, Content: "What is 2 + 3 * 4?"}},
		Tools: []llm.ToolSpec{{
			Name:        "calculate",
			Description: "Evaluates an arithmetic expression.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"expression":{"type":"string"}},"required":["expression"]}`),
		}},
	}

	first, _ := p.Complete(context.Background(), req)
	call := first.Message.ToolCalls[0]
	fmt.Println(first.StopReason, call.ID, call.Name, string(call.Arguments))

	// The host runs the tool and sends its result back.
	req.Messages = append(req.Messages, first.Message,
		llm.Message{Role: hooks.RoleTool, ToolCallID: call.ID, Content: `{"value":14}`})
	second, _ := p.Complete(context.Background(), req)
	fmt.Println(second.StopReason, second.Message.Content)

	// Output:
	// tool_use call_1_calculate calculate {"expression":"2 + 3 * 4"}
	// end_turn From calculate: value: 14.
}
