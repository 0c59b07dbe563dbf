package relay

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/syncbuf"
	"github.com/hookhost/hookhost/llm"
)

// A streamed mixed response: the plugin's round continues the same message,
// then the client's call arrives whole and the message ends once.
func TestMixedResponseStreamed(t *testing.T) {
	bus := newBus(t, kora(`{"usd":3}`))
	up := &scripted{steps: []step{
		{resp: calls("", 2, 1, tc("k1", "kora__burn", `{}`)).resp, chunks: []string{"Looking. "}},
		{resp: calls("", 3, 1, tc("c1", "read_file", `{"path":"a"}`), tc("k2", "kora__burn", `{}`)).resp, chunks: []string{"Now the file."}},
	}}
	r := New(Config{Provider: up, Bus: bus, Store: NewStore(time.Minute, 10)})
	sink := &recSink{}
	call := userCall("burn and file", readFile)
	call.Stream = true
	res := runOK(t, r, testFront{llm.ProtocolMessages}, call, sink)
	if len(res.ToolCalls) != 1 || res.Stop != hooks.StopToolUse {
		t.Fatalf("result = %+v", res)
	}
	id := res.ToolCalls[0].ID
	want := []string{"text:Looking. ", "end", "text:Now the file.", `call:` + id + `:read_file({"path":"a"})`, "finish:tool_use:5/2"}
	if ev := sink.list(); !reflect.DeepEqual(ev, want) {
		t.Errorf("stream = %q, want %q", ev, want)
	}
	if !mintedID.MatchString(id) {
		t.Errorf("the client's call id %q is the upstream's, not one minted by hookhost", id)
	}
}

// A continuation whose tool calls the store does not know (expired, or kept
// by another replica) goes upstream as the client holds it, with a warning.
func TestUnknownContinuationWarnsAndPassesThrough(t *testing.T) {
	logs := &syncbuf.Buffer{}
	logger := hclog.New(&hclog.LoggerOptions{Output: logs, Level: hclog.Warn})
	bus := newBus(t, kora("{}"))
	up := &scripted{steps: []step{text("fine", 1, 1)}}
	r := New(Config{Provider: up, Bus: bus, Store: NewStore(time.Minute, 10), Logger: logger})
	call := userCall("q", readFile)
	call.Request.Messages = append(call.Request.Messages,
		hooks.Message{Role: hooks.RoleAssistant, Content: "text it wrote", ToolCalls: []hooks.ToolCall{tc("c9", "read_file", `{}`)}},
		hooks.Message{Role: hooks.RoleTool, ToolCallID: "c9", Content: "data"})
	runOK(t, r, testFront{llm.ProtocolChat}, call, nil)
	if got := up.calls()[0].req.Messages; !reflect.DeepEqual(got, call.Request.Messages) {
		t.Errorf("history changed: %+v", got)
	}
	if !strings.Contains(logs.String(), "not in the hidden-round store") {
		t.Errorf("no warning logged: %q", logs.String())
	}
}

// Runs on one relay share its store and bus but nothing else.
func TestConcurrentRuns(t *testing.T) {
	bus := newBus(t, kora(`{"usd":1}`))
	store := NewStore(time.Minute, 100)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			id := fmt.Sprintf("c%d", i)
			up := &scripted{steps: []step{
				calls("", 1, 1, tc("k"+id, "kora__burn", `{}`), tc(id, "read_file", `{}`)),
				text("done "+id, 1, 1),
			}}
			r := New(Config{Provider: up, Bus: bus, Store: store})
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			call := userCall("q", readFile)
			call.Stream = true
			res, err := r.Run(ctx, testFront{llm.ProtocolChat}, call, &recSink{})
			if err != nil {
				errs <- err
				return
			}
			next := userCall("q", readFile)
			next.Request.Messages = append(next.Request.Messages,
				hooks.Message{Role: hooks.RoleAssistant, ToolCalls: res.ToolCalls},
				hooks.Message{Role: hooks.RoleTool, ToolCallID: res.ToolCalls[0].ID, Content: "x"})
			res, err = r.Run(ctx, testFront{llm.ProtocolChat}, next, nil)
			if err != nil {
				errs <- err
				return
			}
			msgs := up.calls()[1].req.Messages
			if len(msgs) != 4 || msgs[2].ToolCallID != "k"+id || msgs[3].ToolCallID != id || res.Text[0] != "done "+id {
				errs <- fmt.Errorf("run %d: continuation %+v", i, msgs)
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// A client that goes away while upstream is answering stops the run at
// once, reported as the cancellation it is.
func TestCancelledDuringUpstreamCall(t *testing.T) {
	rec := &recorder{}
	bus := newBus(t, rec.observer())
	entered := make(chan struct{})
	up := &scripted{steps: []step{{wait: true, entered: entered}}}
	r := New(Config{Provider: up, Bus: bus})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	call := userCall("q")
	call.Stream = true
	sink := &recSink{}
	go func() {
		_, err := r.Run(ctx, testFront{llm.ProtocolChat}, call, sink)
		errc <- err
	}()
	waitFor(t, entered, "the upstream call")
	cancel()
	select {
	case err := <-errc:
		var re *Error
		if !errors.As(err, &re) || !errors.Is(err, context.Canceled) || re.ToolsRan {
			t.Errorf("err = %v, want a cancellation with no tool run", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return after cancellation")
	}
	if ev := sink.list(); len(ev) != 0 {
		t.Errorf("stream written after cancellation: %q", ev)
	}
	rec.wantEnd(t, bus, hooks.EndCancelled)
}

// Upstreams may number their calls (the offline model does): two
// conversations given the same call ids get different ones, and never see
// each other's rounds.
func TestReusedCallIDsStayInTheirConversation(t *testing.T) {
	bus := newBus(t, kora(`{"usd":"alice"}`))
	up := &scripted{steps: []step{
		calls("", 1, 1, tc("call_1", "kora__burn", `{}`), tc("call_2", "read_file", `{}`)),
		calls("", 1, 1, tc("call_2", "read_file", `{}`)),
		text("bob's answer", 1, 1),
	}}
	r := New(Config{Provider: up, Bus: bus, Store: NewStore(time.Minute, 10)})
	front := testFront{llm.ProtocolChat}
	alice := runOK(t, r, front, userCall("alice asks", readFile), nil)
	bob := runOK(t, r, front, userCall("bob asks", readFile), nil)
	if len(alice.ToolCalls) != 1 || len(bob.ToolCalls) != 1 || alice.ToolCalls[0].ID == bob.ToolCalls[0].ID {
		t.Fatalf("two conversations got the same call ids: %+v %+v", alice.ToolCalls, bob.ToolCalls)
	}
	next := userCall("bob asks", readFile)
	next.Request.Messages = append(next.Request.Messages,
		hooks.Message{Role: hooks.RoleAssistant, ToolCalls: bob.ToolCalls},
		hooks.Message{Role: hooks.RoleTool, ToolCallID: bob.ToolCalls[0].ID, Content: "bob's file"})
	runOK(t, r, front, next, nil)
	for _, m := range up.calls()[2].req.Messages {
		if strings.Contains(m.Content, "alice") || len(m.ToolCalls) > 1 {
			t.Fatalf("bob's continuation carries alice's rounds: %+v", up.calls()[2].req.Messages)
		}
	}
	if msgs := up.calls()[2].req.Messages; len(msgs) != 3 || msgs[1].ToolCalls[0].ID != "call_2" || msgs[2].ToolCallID != "call_2" {
		t.Errorf("bob's continuation = %+v, want 3 messages with the upstream's id call_2", msgs)
	}
}

// A final answer that took plugin rounds: the client's next turn gets them
// back, behind the text the client was shown.
func TestNextTurnAfterPluginRoundsGetsThemBack(t *testing.T) {
	rec := &recorder{}
	upper := &hooks.Funcs{Name: "upper", TransformLLMOutputFunc: func(_ context.Context, ev hooks.LLMOutput) (*hooks.TextReplacement, error) {
		return &hooks.TextReplacement{Text: strings.ToUpper(ev.Text)}, nil
	}}
	bus := newBus(t, kora(`{"usd":3}`), upper, rec.observer())
	up := &scripted{steps: []step{
		calls("Checking. ", 1, 1, tc("k1", "kora__burn", `{}`)),
		text("Burn is $3.", 1, 1),
		text("You're welcome.", 1, 1),
	}}
	r := New(Config{Provider: up, Bus: bus, Store: NewStore(time.Minute, 10)})
	front := testFront{llm.ProtocolChat}
	res := runOK(t, r, front, userCall("burn?"), nil)
	if got := strings.Join(res.Text, ""); got != "Checking. BURN IS $3." {
		t.Fatalf("answer = %q", got)
	}
	next := userCall("burn?")
	next.Request.Messages = append(next.Request.Messages,
		hooks.Message{Role: hooks.RoleAssistant, Content: strings.Join(res.Text, "")},
		hooks.Message{Role: hooks.RoleUser, Content: "thanks"})
	runOK(t, r, front, next, nil)
	var shape []string
	for _, m := range up.calls()[2].req.Messages {
		shape = append(shape, string(m.Role)+":"+m.Content)
	}
	want := []string{"user:burn?", "assistant:Checking. ", `tool:{"usd":3}`, "assistant:Burn is $3.", "user:thanks"}
	if !reflect.DeepEqual(shape, want) {
		t.Errorf("next turn's history = %q, want %q", shape, want)
	}

	// A client that rewrote the answer keeps its own version.
	edited := userCall("burn?")
	edited.Request.Messages = append(edited.Request.Messages,
		hooks.Message{Role: hooks.RoleAssistant, Content: "something else"},
		hooks.Message{Role: hooks.RoleUser, Content: "thanks"})
	up.steps = []step{text("ok", 1, 1)}
	runOK(t, r, front, edited, nil)
	if got := up.calls()[3].req.Messages; !reflect.DeepEqual(got, edited.Request.Messages) {
		t.Errorf("edited history changed: %+v", got)
	}
	flush(t, bus)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.starts) != 2 || rec.ends[0].SessionID != rec.ends[1].SessionID {
		t.Errorf("the next turn should continue the session: starts %+v ends %+v", rec.starts, rec.ends)
	}
}
