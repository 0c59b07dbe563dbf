package relay

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/dialect"
	"github.com/hookhost/hookhost/internal/upstream"
	"github.com/hookhost/hookhost/llm"
)

func TestPluginToolInterceptedAcrossTwoRounds(t *testing.T) {
	for _, stream := range []bool{false, true} {
		name := "whole"
		if stream {
			name = "stream"
		}
		t.Run(name, func(t *testing.T) {
			rec := &recorder{}
			bus := newBus(t, kora(`{"usd":3}`), rec.observer())
			up := &scripted{steps: []step{
				{resp: calls("", 10, 2, tc("k1", "kora__burn", `{}`)).resp, chunks: []string{"Check", "ing. "}},
				{resp: text("", 20, 5).resp, chunks: []string{"Burn ", "is $3."}},
			}}
			r := New(Config{Provider: up, Bus: bus, Store: NewStore(time.Minute, 10), Observe: rec})
			call := userCall("what is my burn", readFile)
			call.Stream = stream
			sink := &recSink{}
			var s dialect.Sink
			if stream {
				s = sink
			}
			res := runOK(t, r, testFront{llm.ProtocolChat}, call, s)

			if want := []string{"Checking. ", "Burn is $3."}; !reflect.DeepEqual(res.Text, want) {
				t.Errorf("Text = %q, want %q", res.Text, want)
			}
			if res.Stop != hooks.StopEndTurn || len(res.ToolCalls) != 0 {
				t.Errorf("Stop = %s, ToolCalls = %v; want end_turn and none", res.Stop, res.ToolCalls)
			}
			if want := (hooks.Usage{InputTokens: 30, OutputTokens: 7}); res.Usage != want {
				t.Errorf("Usage = %+v, want %+v", res.Usage, want)
			}
			if res.Wire != nil || res.WholeWire {
				t.Errorf("translate mode reported a wire form: %+v", res)
			}
			got := up.calls()
			if len(got) != 2 {
				t.Fatalf("upstream called %d times, want 2", len(got))
			}
			wantHow := "complete"
			if stream {
				wantHow = "stream"
			}
			if got[0].how != wantHow {
				t.Errorf("upstream called with %s, want %s", got[0].how, wantHow)
			}
			names := []string{}
			for _, tl := range got[0].req.Tools {
				names = append(names, tl.Name)
			}
			if !reflect.DeepEqual(names, []string{"read_file", "kora__burn"}) {
				t.Errorf("tools offered = %v, want the client's then the plugin's", names)
			}
			msgs := got[1].req.Messages
			if len(msgs) != 3 || msgs[1].Role != hooks.RoleAssistant || len(msgs[1].ToolCalls) != 1 ||
				msgs[2].Role != hooks.RoleTool || msgs[2].ToolCallID != "k1" || msgs[2].Content != `{"usd":3}` {
				t.Fatalf("second round's history = %+v", msgs)
			}
			if stream {
				want := []string{"text:Check", "text:ing. ", "end", "text:Burn ", "text:is $3.", "finish:end_turn:30/7"}
				if ev := sink.list(); !reflect.DeepEqual(ev, want) {
					t.Errorf("stream = %q, want %q", ev, want)
				}
			}
			flush(t, bus)
			rec.mu.Lock()
			defer rec.mu.Unlock()
			if len(rec.starts) != 1 || len(rec.ends) != 1 || rec.ends[0].Reason != hooks.EndCompleted || rec.ends[0].Iterations != 2 {
				t.Errorf("session hooks: starts %v, ends %+v", rec.starts, rec.ends)
			}
			if len(rec.outcomes) != 1 || rec.outcomes[0].Status != hooks.ProvidedBy("kora") {
				t.Errorf("post_tool_call = %+v, want one provided_by:kora", rec.outcomes)
			}
			if rec.rounds != 2 || !reflect.DeepEqual(rec.tools, []string{"plugin"}) {
				t.Errorf("observer: %d rounds, tools %v", rec.rounds, rec.tools)
			}
			if len(rec.infs) != 2 {
				t.Errorf("post_llm_call fired %d times, want 2", len(rec.infs))
			}
		})
	}
}

func TestMixedResponseThenContinuation(t *testing.T) {
	rec := &recorder{}
	bus := newBus(t, kora(`{"usd":3}`), rec.observer())
	thinking := json.RawMessage(`{"type":"thinking","thinking":"hmm","signature":"sig"}`)
	w1 := &upstream.WireResponse{Message: []json.RawMessage{
		thinking,
		json.RawMessage(`{"type":"tool_use","id":"k1","name":"kora__burn","input":{}}`),
	}}
	w2 := &upstream.WireResponse{
		Fields: map[string]json.RawMessage{"id": json.RawMessage(`"msg_2"`)},
		Message: []json.RawMessage{
			json.RawMessage(`{"type":"tool_use","id":"c1","name":"read_file","input":{"path":"a"}}`),
			json.RawMessage(`{"type":"tool_use","id":"k2","name":"kora__burn","input":{}}`),
		},
	}
	up := &forwarding{proto: llm.ProtocolMessages, scripted: scripted{steps: []step{
		{resp: calls("", 5, 1, tc("k1", "kora__burn", `{}`)).resp, wire: w1},
		{resp: calls("", 6, 2, tc("c1", "read_file", `{"path":"a"}`), tc("k2", "kora__burn", `{}`)).resp, wire: w2},
		text("The file says hi.", 7, 3),
	}}}
	r := New(Config{Provider: up, Bus: bus, Store: NewStore(time.Minute, 10)})
	front := testFront{llm.ProtocolMessages}

	call := userCall("read a", readFile)
	call.Pass = &upstream.Passthrough{Fields: map[string]json.RawMessage{"metadata": json.RawMessage(`{"user_id":"u"}`)}}
	call.Foreign = []string{"metadata"}
	res := runOK(t, r, front, call, nil)
	if len(res.ToolCalls) != 1 || res.ToolCalls[0].Name != "read_file" || !mintedID.MatchString(res.ToolCalls[0].ID) || res.Stop != hooks.StopToolUse {
		t.Fatalf("client got %+v (stop %s), want only read_file, under an id minted by hookhost", res.ToolCalls, res.Stop)
	}
	cid := res.ToolCalls[0].ID
	if res.Wire == nil || res.WholeWire || !reflect.DeepEqual(res.Wire.Fields, w2.Fields) ||
		!strings.Contains(string(res.Wire.Message[0]), `"id":"`+cid+`"`) || string(res.Wire.Message[1]) != string(w2.Message[1]) {
		t.Errorf("Wire = %+v, WholeWire = %v; want the last round's with the client's id, not whole", res.Wire, res.WholeWire)
	}
	got := up.calls()
	if len(got) != 2 || got[0].fields["metadata"] == nil {
		t.Fatalf("upstream calls %d, first without the passthrough fields", len(got))
	}
	// The first round's assistant message went back upstream in its wire
	// form, thinking block included.
	if w := got[1].wires[1]; len(w) != 1 || !strings.Contains(string(w[0]), `"signature":"sig"`) || !strings.Contains(string(w[0]), `"role":"assistant"`) {
		t.Errorf("round 2 sent the assistant message as %s, want its wire form", w)
	}

	// The client continues with what it saw: its call and its result.
	next := userCall("read a", readFile)
	next.Pass = &upstream.Passthrough{}
	next.Request.Messages = append(next.Request.Messages,
		hooks.Message{Role: hooks.RoleAssistant, ToolCalls: res.ToolCalls},
		hooks.Message{Role: hooks.RoleTool, ToolCallID: cid, Content: "hi"},
	)
	res2 := runOK(t, r, front, next, nil)
	if !reflect.DeepEqual(res2.Text, []string{"The file says hi."}) {
		t.Errorf("Text = %q", res2.Text)
	}
	got = up.calls()
	msgs := got[2].req.Messages
	var shape []string
	for _, m := range msgs {
		s := string(m.Role)
		for _, c := range m.ToolCalls {
			s += ":" + c.ID
		}
		if m.ToolCallID != "" {
			s += "<" + m.ToolCallID
		}
		shape = append(shape, s)
	}
	want := []string{"user", "assistant:k1", "tool<k1", "assistant:c1:k2", "tool<k2", "tool<c1"}
	if !reflect.DeepEqual(shape, want) {
		t.Fatalf("continuation history = %v, want %v", shape, want)
	}
	if msgs[5].Content != "hi" {
		t.Errorf("client's result reached upstream as %q", msgs[5].Content)
	}
	for _, i := range []int{1, 3} {
		if w := got[2].wires[i]; len(w) != 1 || !strings.Contains(string(w[0]), `"type":"tool_use"`) {
			t.Errorf("spliced message %d sent as %s, want its wire form", i, w)
		}
	}
	flush(t, bus)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.starts) != 1 || len(rec.ends) != 2 || rec.ends[0].SessionID != rec.ends[1].SessionID {
		t.Errorf("want one session across both requests: starts %+v ends %+v", rec.starts, rec.ends)
	}
}

func TestBlockedClientToolIsAnsweredByHookhost(t *testing.T) {
	guard := &hooks.Funcs{Name: "guard", PreToolCallFunc: func(_ context.Context, req hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
		if req.Name == "rm" {
			return &hooks.PreToolCallDecision{Block: &hooks.Block{Message: "rm is not allowed here"}}, nil
		}
		return nil, nil
	}}
	rec := &recorder{}
	bus := newBus(t, guard, rec.observer())
	up := &scripted{steps: []step{
		calls("", 1, 1, tc("c1", "rm", `{"path":"/"}`)),
		text("I may not delete that.", 1, 1),
	}}
	r := New(Config{Provider: up, Bus: bus, Observe: rec})
	sink := &recSink{}
	call := userCall("delete everything", hooks.ToolSpec{Name: "rm"})
	call.Stream = true
	res := runOK(t, r, testFront{llm.ProtocolChat}, call, sink)
	if len(res.ToolCalls) != 0 || sink.count("call:") != 0 {
		t.Fatalf("the client saw the blocked call: %+v %v", res.ToolCalls, sink.list())
	}
	got := up.calls()
	if len(got) != 2 {
		t.Fatalf("upstream called %d times", len(got))
	}
	last := got[1].req.Messages[2]
	if last.Role != hooks.RoleTool || !last.IsError || !strings.Contains(last.Content, "rm is not allowed here") {
		t.Errorf("blocked call's result = %+v", last)
	}
	flush(t, bus)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.outcomes) != 1 || rec.outcomes[0].Status != hooks.StatusBlocked {
		t.Errorf("post_tool_call = %+v, want one blocked", rec.outcomes)
	}
	if !reflect.DeepEqual(rec.tools, []string{"blocked"}) {
		t.Errorf("observer tools = %v", rec.tools)
	}
}

func TestModifiedClientArgumentsReachTheClient(t *testing.T) {
	fix := &hooks.Funcs{Name: "fix", PreToolCallFunc: func(context.Context, hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
		return &hooks.PreToolCallDecision{ModifiedArgs: json.RawMessage(`{"path":"safe"}`)}, nil
	}}
	bus := newBus(t, fix)
	up := &forwarding{proto: llm.ProtocolChat, scripted: scripted{steps: []step{
		{resp: calls("", 1, 1, tc("c1", "read_file", `{"path":"/etc/shadow"}`)).resp, wire: &upstream.WireResponse{Message: []json.RawMessage{json.RawMessage(`{}`)}}},
	}}}
	r := New(Config{Provider: up, Bus: bus})
	sink := &recSink{}
	call := userCall("read", readFile)
	call.Stream = true
	res := runOK(t, r, testFront{llm.ProtocolChat}, call, sink)
	if len(res.ToolCalls) != 1 || string(res.ToolCalls[0].Arguments) != `{"path":"safe"}` {
		t.Fatalf("client got %+v", res.ToolCalls)
	}
	want := []string{`call:` + res.ToolCalls[0].ID + `:read_file({"path":"safe"})`, "finish:tool_use:1/1"}
	if ev := sink.list(); !reflect.DeepEqual(ev, want) {
		t.Errorf("stream = %q, want %q", ev, want)
	}
	if res.WholeWire {
		t.Error("WholeWire with modified arguments: the client would see the original ones")
	}
}

func TestProvidedClientResultContinuesUpstream(t *testing.T) {
	cache := &hooks.Funcs{Name: "cache", Matchers: []string{"weather"},
		PreToolCallCanProvideResultFunc: func(context.Context, hooks.ToolCallRequest) (*hooks.ToolResult, error) {
			return &hooks.ToolResult{Content: "sunny"}, nil
		}}
	rec := &recorder{}
	bus := newBus(t, cache, rec.observer())
	up := &scripted{steps: []step{
		calls("", 1, 1, tc("c1", "weather", `{}`), tc("c2", "read_file", `{}`)),
	}}
	r := New(Config{Provider: up, Bus: bus, Store: NewStore(time.Minute, 10)})
	res := runOK(t, r, testFront{llm.ProtocolChat}, userCall("weather and file", readFile, hooks.ToolSpec{Name: "weather"}), nil)
	if len(res.ToolCalls) != 1 || res.ToolCalls[0].Name != "read_file" {
		t.Fatalf("client got %+v, want only read_file", res.ToolCalls)
	}
	// The continuation carries the provided result that the client never saw.
	up.steps = []step{text("Sunny, and the file is empty.", 1, 1)}
	next := userCall("weather and file", readFile, hooks.ToolSpec{Name: "weather"})
	next.Request.Messages = append(next.Request.Messages,
		hooks.Message{Role: hooks.RoleAssistant, ToolCalls: res.ToolCalls},
		hooks.Message{Role: hooks.RoleTool, ToolCallID: res.ToolCalls[0].ID, Content: "{}"})
	runOK(t, r, testFront{llm.ProtocolChat}, next, nil)
	msgs := up.calls()[1].req.Messages
	if len(msgs) != 4 || msgs[2].ToolCallID != "c1" || msgs[2].Content != `"sunny"` || msgs[3].ToolCallID != "c2" {
		t.Fatalf("continuation = %+v", msgs)
	}
	flush(t, bus)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	var statuses []hooks.CallStatus
	for _, o := range rec.outcomes {
		statuses = append(statuses, o.Status)
	}
	if !reflect.DeepEqual(statuses, []hooks.CallStatus{hooks.ProvidedBy("cache"), hooks.StatusOK}) {
		t.Errorf("post_tool_call statuses = %v", statuses)
	}
}

func TestClientResultTransformedOnceAcrossRequests(t *testing.T) {
	rec := &recorder{}
	transforms := 0
	redact := &hooks.Funcs{Name: "redact", TransformToolResultFunc: func(_ context.Context, ev hooks.ToolCallOutcome) (*hooks.ToolResult, error) {
		transforms++ // only ever called from the Run goroutine's hooks, one Run at a time
		return &hooks.ToolResult{Content: strings.ReplaceAll(ev.Result.Content, "secret", "[redacted]")}, nil
	}}
	bus := newBus(t, redact, rec.observer())
	up := &scripted{steps: []step{calls("", 1, 1, tc("c1", "read_file", `{"path":"a"}`))}}
	r := New(Config{Provider: up, Bus: bus, Store: NewStore(time.Minute, 10)})
	front := testFront{llm.ProtocolChat}
	res := runOK(t, r, front, userCall("read a", readFile), nil)

	history := []hooks.Message{
		{Role: hooks.RoleUser, Content: "read a"},
		{Role: hooks.RoleAssistant, ToolCalls: res.ToolCalls},
		{Role: hooks.RoleTool, ToolCallID: res.ToolCalls[0].ID, Content: "the secret is 42"},
	}
	up.steps = []step{text("It says 42.", 1, 1), text("You're welcome.", 1, 1)}
	second := userCall("")
	second.Request.Messages = append([]hooks.Message(nil), history...)
	runOK(t, r, front, second, nil)

	third := userCall("")
	third.Request.Messages = append(append([]hooks.Message(nil), history...),
		hooks.Message{Role: hooks.RoleAssistant, Content: "It says 42."},
		hooks.Message{Role: hooks.RoleUser, Content: "thanks"})
	runOK(t, r, front, third, nil)

	got := up.calls()
	for _, i := range []int{1, 2} {
		m := got[i].req.Messages[2]
		// Plain text from the client reaches the model as plain text,
		// even though plugins saw it as a JSON string.
		if m.Content != `the [redacted] is 42` {
			t.Errorf("request %d sent the client's result as %q", i+1, m.Content)
		}
	}
	if transforms != 1 {
		t.Errorf("transform_tool_result fired %d times, want 1", transforms)
	}
	flush(t, bus)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.outcomes) != 1 || rec.outcomes[0].CallID != "c1" || rec.outcomes[0].Name != "read_file" ||
		string(rec.outcomes[0].Arguments) != `{"path":"a"}` || rec.outcomes[0].Status != hooks.StatusOK {
		t.Errorf("post_tool_call = %+v, want one for c1", rec.outcomes)
	}
}

func TestReissueHoldsTheFirstText(t *testing.T) {
	router := &hooks.Funcs{Name: "router", PostLLMCallCanReissueFunc: func(_ context.Context, ev hooks.LLMCall) (*hooks.Reissue, error) {
		if strings.Contains(ev.Response.Message.Content, "not sure") {
			big := "big"
			return &hooks.Reissue{Patch: hooks.RequestPatch{Model: &big}, Reason: "hedged"}, nil
		}
		return nil, nil
	}}
	bus := newBus(t, router)
	up := &scripted{steps: []step{
		{resp: text("", 3, 4).resp, chunks: []string{"I'm ", "not sure"}},
		{resp: text("", 5, 6).resp, chunks: []string{"It is ", "42."}},
	}}
	r := New(Config{Provider: up, Bus: bus})
	sink := &recSink{}
	call := userCall("answer")
	call.Stream = true
	res := runOK(t, r, testFront{llm.ProtocolResponses}, call, sink)
	want := []string{"text:It is 42.", "finish:end_turn:8/10"}
	if ev := sink.list(); !reflect.DeepEqual(ev, want) {
		t.Errorf("stream = %q, want %q", ev, want)
	}
	if !reflect.DeepEqual(res.Text, []string{"It is 42."}) {
		t.Errorf("Text = %q", res.Text)
	}
	if got := up.calls(); len(got) != 2 || got[1].req.Model != "big" {
		t.Errorf("reissue not made to the patched model: %+v", got)
	}
}

func TestReissueFailureKeepsTheFirstAnswer(t *testing.T) {
	router := &hooks.Funcs{Name: "router", PostLLMCallCanReissueFunc: func(_ context.Context, ev hooks.LLMCall) (*hooks.Reissue, error) {
		return &hooks.Reissue{Reason: "always"}, nil
	}}
	bus := newBus(t, router)
	up := &scripted{steps: []step{
		text("first", 1, 1),
		{err: &llm.ProviderError{Provider: "fake", StatusCode: 500, Message: "boom"}},
	}}
	r := New(Config{Provider: up, Bus: bus})
	res := runOK(t, r, testFront{llm.ProtocolChat}, userCall("q"), nil)
	if !reflect.DeepEqual(res.Text, []string{"first"}) {
		t.Errorf("Text = %q, want the first answer", res.Text)
	}
}

func TestTransformLLMOutputRewritesTheStreamedAnswer(t *testing.T) {
	upper := &hooks.Funcs{Name: "upper", TransformLLMOutputFunc: func(_ context.Context, ev hooks.LLMOutput) (*hooks.TextReplacement, error) {
		return &hooks.TextReplacement{Text: strings.ToUpper(ev.Text)}, nil
	}}
	bus := newBus(t, upper, kora("{}"))
	up := &forwarding{proto: llm.ProtocolChat, scripted: scripted{steps: []step{
		{resp: calls("", 1, 1, tc("k1", "kora__burn", `{}`)).resp, chunks: []string{"let me see. "}},
		{resp: text("", 1, 1).resp, chunks: []string{"done ", "here"}, wire: &upstream.WireResponse{Message: []json.RawMessage{json.RawMessage(`{}`)}}},
	}}}
	r := New(Config{Provider: up, Bus: bus})
	sink := &recSink{}
	call := userCall("q")
	call.Stream = true
	res := runOK(t, r, testFront{llm.ProtocolChat}, call, sink)
	want := []string{"text:let me see. ", "end", "text:DONE HERE", "finish:end_turn:2/2"}
	if ev := sink.list(); !reflect.DeepEqual(ev, want) {
		t.Errorf("stream = %q, want %q", ev, want)
	}
	if !reflect.DeepEqual(res.Text, []string{"let me see. ", "DONE HERE"}) || res.WholeWire {
		t.Errorf("Text = %q WholeWire = %v", res.Text, res.WholeWire)
	}
}

func TestWholeWireForAnUntouchedSingleRound(t *testing.T) {
	w := &upstream.WireResponse{Message: []json.RawMessage{json.RawMessage(`{"role":"assistant","content":"hi","refusal":null}`)}}
	up := &forwarding{proto: llm.ProtocolChat, scripted: scripted{steps: []step{{resp: text("hi", 1, 1).resp, wire: w}}}}
	r := New(Config{Provider: up, Bus: newBus(t, kora("{}"))})
	res := runOK(t, r, testFront{llm.ProtocolChat}, userCall("hello"), nil)
	if res.Wire != w || !res.WholeWire {
		t.Errorf("Wire = %v WholeWire = %v, want the upstream's message whole", res.Wire, res.WholeWire)
	}
}

func TestMaxIterationsEndsWithAnExplanation(t *testing.T) {
	rec := &recorder{}
	bus := newBus(t, kora("{}"), rec.observer())
	up := &scripted{steps: []step{
		calls("", 1, 1, tc("k1", "kora__burn", `{}`)),
		calls("", 1, 1, tc("k2", "kora__burn", `{}`)),
		text("never reached", 1, 1),
	}}
	r := New(Config{Provider: up, Bus: bus, MaxIterations: 2})
	sink := &recSink{}
	call := userCall("loop")
	call.Stream = true
	res := runOK(t, r, testFront{llm.ProtocolMessages}, call, sink)
	if res.Stop != hooks.StopOther || len(res.Text) != 1 || !strings.Contains(res.Text[0], "stopped after 2 upstream rounds") ||
		!strings.Contains(res.Text[0], "conversation.max_iterations") {
		t.Fatalf("result = %+v", res)
	}
	if n := len(up.calls()); n != 2 {
		t.Errorf("upstream called %d times, want 2", n)
	}
	want := []string{"end", "end", "text:" + res.Text[0], "finish:other:2/2"}
	if ev := sink.list(); !reflect.DeepEqual(ev, want) {
		t.Errorf("stream = %q, want %q", ev, want)
	}
	rec.wantEnd(t, bus, hooks.EndMaxIterations)
}

func TestForeignFieldsRefusedInTranslateModeBeforeAnyHook(t *testing.T) {
	rec := &recorder{}
	mutated := false
	mut := &hooks.Funcs{Name: "mut", PreAPIRequestMutableFunc: func(context.Context, hooks.APIRequest) (*hooks.RequestPatch, error) {
		mutated = true
		return nil, nil
	}}
	bus := newBus(t, mut, rec.observer())
	// A forwarder of another protocol is translated to as well.
	up := &forwarding{proto: llm.ProtocolChat, scripted: scripted{steps: []step{text("x", 1, 1)}}}
	r := New(Config{Provider: up, Bus: bus})
	call := userCall("q")
	call.Foreign = []string{"metadata", "messages[0].content[1] (image)"}
	_, err := r.Run(context.Background(), testFront{llm.ProtocolMessages}, call, nil)
	var re *Error
	var de *dialect.Error
	if !errors.As(err, &re) || !errors.As(err, &de) {
		t.Fatalf("err = %v, want a *relay.Error wrapping a *dialect.Error", err)
	}
	if de.Status != 400 || de.Param != "metadata" || !strings.Contains(de.Message, "messages[0].content[1] (image)") ||
		!strings.Contains(de.Message, string(llm.ProtocolMessages)) {
		t.Errorf("error = %+v", de)
	}
	if len(up.calls()) != 0 || mutated {
		t.Error("upstream or a hook was reached")
	}
	flush(t, bus)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.starts)+len(rec.ends) != 0 {
		t.Error("session hooks fired for a refused request")
	}
}

func TestClientToolNamedLikeAPluginToolIsRefused(t *testing.T) {
	up := &scripted{}
	r := New(Config{Provider: up, Bus: newBus(t, kora("{}"))})
	_, err := r.Run(context.Background(), testFront{llm.ProtocolChat}, userCall("q", readFile, hooks.ToolSpec{Name: "kora__burn"}), nil)
	var de *dialect.Error
	if !errors.As(err, &de) || de.Status != 400 || de.Param != "tools" || !strings.Contains(de.Message, `plugin "kora"`) {
		t.Fatalf("err = %v, want a 400 naming the plugin", err)
	}
	if len(up.calls()) != 0 {
		t.Error("upstream was called")
	}
}

func TestUpstreamErrorAfterAPluginToolSaysToolsRan(t *testing.T) {
	rec := &recorder{}
	bus := newBus(t, kora("{}"), rec.observer())
	perr := &llm.ProviderError{Provider: "fake", StatusCode: 429, Type: "rate_limit_error", Message: "slow down"}
	up := &scripted{steps: []step{calls("", 1, 1, tc("k1", "kora__burn", `{}`)), {err: perr}}}
	r := New(Config{Provider: up, Bus: bus})
	_, err := r.Run(context.Background(), testFront{llm.ProtocolChat}, userCall("q"), nil)
	var re *Error
	var pe *llm.ProviderError
	if !errors.As(err, &re) || !re.ToolsRan || !errors.As(err, &pe) || pe.StatusCode != 429 {
		t.Fatalf("err = %#v, want a relay.Error with ToolsRan wrapping the 429", err)
	}
	if end := rec.wantEnd(t, bus, hooks.EndError); end.Reason == hooks.EndError && end.Error == "" {
		t.Errorf("on_session_end = %+v, want its error", end)
	}

	// Before any tool, ToolsRan is false.
	up2 := &scripted{steps: []step{{err: perr}}}
	_, err = New(Config{Provider: up2, Bus: bus}).Run(context.Background(), testFront{llm.ProtocolChat}, userCall("q"), nil)
	if !errors.As(err, &re) || re.ToolsRan {
		t.Errorf("err = %v, want ToolsRan false", err)
	}
}

func TestCancelledWhilePluginToolsRun(t *testing.T) {
	started := make(chan struct{})
	returned := make(chan struct{})
	slow := &hooks.Funcs{
		Name:  "slow",
		Tools: []hooks.ToolSpec{{Name: "slow__wait"}},
		PreToolCallCanProvideResultFunc: func(ctx context.Context, _ hooks.ToolCallRequest) (*hooks.ToolResult, error) {
			close(started)
			defer close(returned)
			<-ctx.Done()
			return nil, ctx.Err()
		},
	}
	rec := &recorder{}
	bus := newBus(t, slow, rec.observer())
	up := &scripted{steps: []step{calls("", 1, 1, tc("s1", "slow__wait", `{}`))}}
	r := New(Config{Provider: up, Bus: bus, Keepalive: time.Millisecond})
	sink := &recSink{pinged: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	call := userCall("q")
	call.Stream = true
	go func() {
		_, err := r.Run(ctx, testFront{llm.ProtocolChat}, call, sink)
		errc <- err
	}()
	waitFor(t, started, "the plugin tool to start")
	waitFor(t, sink.pinged, "a keepalive while the tool runs")
	cancel()
	select {
	case err := <-errc:
		var re *Error
		if !errors.As(err, &re) || !errors.Is(err, context.Canceled) || !re.ToolsRan {
			t.Errorf("err = %v, want a cancellation after a plugin tool", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return after cancellation")
	}
	waitFor(t, returned, "the plugin handler to see the cancellation")
	if sink.count("finish") != 0 || sink.count("fail") != 0 {
		t.Errorf("the relay wrote an ending to the stream: %v", sink.list())
	}
	rec.wantEnd(t, bus, hooks.EndCancelled)
}

func TestBrokenStreamStopsTheRun(t *testing.T) {
	bus := newBus(t, kora("{}"))
	up := &scripted{steps: []step{
		{resp: calls("", 1, 1, tc("k1", "kora__burn", `{}`)).resp, chunks: []string{"a"}},
		text("b", 1, 1),
	}}
	r := New(Config{Provider: up, Bus: bus})
	sink := &recSink{failAt: 1}
	call := userCall("q")
	call.Stream = true
	_, err := r.Run(context.Background(), testFront{llm.ProtocolChat}, call, sink)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want a cancellation", err)
	}
	if n := len(sink.list()); n != 1 {
		t.Errorf("sink called %d times after failing: %v", n, sink.list())
	}
	if n := len(up.calls()); n != 1 {
		t.Errorf("upstream called %d times after the client left", n)
	}
}

func waitFor(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(30 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}

// transform_tool_result sees a client's plain-text result as a JSON
// string; what it returns reaches the model as plain text again, while a
// client's JSON result stays JSON.
func TestTransformedPlainClientResultStaysPlain(t *testing.T) {
	upper := &hooks.Funcs{Name: "upper", TransformToolResultFunc: func(_ context.Context, ev hooks.ToolCallOutcome) (*hooks.ToolResult, error) {
		return &hooks.ToolResult{Content: strings.ToUpper(ev.Result.Content)}, nil
	}}
	for client, want := range map[string]string{
		"hi":         "HI",
		`{"a":"b"}`:  `{"A":"B"}`,
		`"quoted"`:   `"QUOTED"`,
		"say \"x\"!": `SAY "X"!`,
	} {
		up := &scripted{steps: []step{calls("", 1, 1, tc("c1", "read_file", `{}`)), text("ok", 1, 1)}}
		r := New(Config{Provider: up, Bus: newBus(t, upper), Store: NewStore(time.Minute, 10)})
		front := testFront{llm.ProtocolChat}
		res := runOK(t, r, front, userCall("read", readFile), nil)
		runOK(t, r, front, continued(userCall("read", readFile), res.ToolCalls, client), nil)
		if got := up.calls()[1].req.Messages[2].Content; got != want {
			t.Errorf("client result %q reached the model as %q, want %q", client, got, want)
		}
	}
}
