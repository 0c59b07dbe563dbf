package relay

import (
	"bytes"
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
	want := []string{"text:Looking. ", "end", "text:Now the file.", `call:c1:read_file({"path":"a"})`, "finish:tool_use:5/2"}
	if ev := sink.list(); !reflect.DeepEqual(ev, want) {
		t.Errorf("stream = %q, want %q", ev, want)
	}
	if len(res.ToolCalls) != 1 || res.Stop != hooks.StopToolUse {
		t.Errorf("result = %+v", res)
	}
}

// syncBuffer is a log destination safe to read while a logger writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// A continuation whose tool calls the store does not know (expired, or kept
// by another replica) goes upstream as the client holds it, with a warning.
func TestUnknownContinuationWarnsAndPassesThrough(t *testing.T) {
	logs := &syncBuffer{}
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
				hooks.Message{Role: hooks.RoleTool, ToolCallID: id, Content: "x"})
			res, err = r.Run(ctx, testFront{llm.ProtocolChat}, next, nil)
			if err != nil {
				errs <- err
				return
			}
			msgs := up.calls()[1].req.Messages
			if len(msgs) != 4 || msgs[2].ToolCallID != "k"+id || res.Text[0] != "done "+id {
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
	flush(t, bus)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.ends) != 1 || rec.ends[0].Reason != hooks.EndCancelled {
		t.Errorf("on_session_end = %+v", rec.ends)
	}
}
