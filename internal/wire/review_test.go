package wire_test

// Review tests: each one fails on the code it was written against and
// shows one bug (see the report on branch review1).

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/wire"
	pluginv1 "github.com/hookhost/hookhost/plugins/proto/v1"
	pluginv2 "github.com/hookhost/hookhost/plugins/proto/v2"
)

// jam makes c's stream to a plugin that stopped reading hold a full send
// queue: one call larger than the stream's flow-control window sticks the
// sender in Send, and enough small calls fill the queue behind it. Every
// one of those calls times out, as it should.
func jam(t *testing.T, c wire.Conn) {
	t.Helper()
	big := hooks.ToolCallRequest{Name: "big", Arguments: json.RawMessage(`"` + strings.Repeat("a", 1<<20) + `"`)}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		_, _ = c.Handle(ctx, hooks.PreToolCall, big)
	}()
	time.Sleep(100 * time.Millisecond) // the big one is in Send
	var wg sync.WaitGroup
	for range 400 { // more than the queue holds
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			_, _ = c.Handle(ctx, hooks.PreToolCall, hooks.ToolCallRequest{Name: "small"})
		})
	}
	wg.Wait()
}

// A stretch is sent under the turn's context, which has no deadline of its
// own (hooks.ToolRun.stage passes it, and the Bus calls a
// ContextHonouring plugin without a watchdog). When the plugin stopped
// reading its stream and the send queue is full, Stretch waits for room
// until that context ends: the turn hangs on a plugin whose every stage has
// a 100ms deadline. Hook by hook, the same plugin costs the turn 100ms per
// hook (Handle's ctx carries the hook's deadline).
func TestReviewStretchSendIsNotBoundedByItsStages(t *testing.T) {
	stuck := dial(t, 2, func(s *grpc.Server) { pluginv2.RegisterPluginServer(s, &deaf{}) })
	stuck.client.Apply(wire.Settings{Plugin: "deaf"})
	jam(t, stuck.client)

	turn, cancel := context.WithTimeout(context.Background(), 8*time.Second) // "no deadline", bounded for the test
	defer cancel()
	req := hooks.StretchRequest{Call: hooks.ToolCallRequest{Name: "t"}, Stages: []hooks.StretchStage{
		{Hook: hooks.PreToolCall, Timeout: 100 * time.Millisecond},
		{Hook: hooks.PreToolCallCanProvideResult, Timeout: 100 * time.Millisecond},
	}}
	start := time.Now()
	s, err := stuck.client.Stretch(turn, req)
	took := time.Since(start)
	if s != nil {
		s.Close()
	}
	if took > 3*time.Second {
		t.Fatalf("Stretch to a plugin that stopped reading took %v (err %v), with stages of 100ms: it waited for the turn's context", took.Round(time.Millisecond), err)
	}
}

// maxInFlight bounds the handlers one stream keeps running, so that
// handlers which ignore their context cannot pile up goroutines without
// bound. A stretch escapes the bound: hooks.RunStretch runs each stage on a
// goroutine and leaves it behind at the stage's deadline, the stretch then
// returns, and the call's id leaves hookStream.calls while its handler
// still runs. Here the cap is 3 and 10 handlers end up stuck.
func TestReviewStretchEscapesMaxInFlight(t *testing.T) {
	t.Cleanup(wire.SetMaxInFlight(3))
	release := make(chan struct{})
	var running atomic.Int32
	p := &hooks.Funcs{
		Name: "ignores",
		PreToolCallFunc: func(context.Context, hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
			running.Add(1)
			defer running.Add(-1)
			<-release // never looks at its context
			return nil, nil
		},
		PreToolCallCanProvideResultFunc: func(context.Context, hooks.ToolCallRequest) (*hooks.ToolResult, error) {
			return nil, nil
		},
	}
	t.Cleanup(func() { close(release) })
	c := serveV2(t, p).client
	for range 10 {
		s, err := c.Stretch(t.Context(), hooks.StretchRequest{Call: hooks.ToolCallRequest{Name: "t"}, Stages: []hooks.StretchStage{
			{Hook: hooks.PreToolCall, Timeout: 50 * time.Millisecond},
			{Hook: hooks.PreToolCallCanProvideResult, Timeout: 50 * time.Millisecond},
		}})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		_, _ = s.Next(ctx) // the plugin reports the stage's deadline
		cancel()
		s.Close()
	}
	time.Sleep(100 * time.Millisecond)
	if n := running.Load(); n > 3 {
		t.Fatalf("%d handlers that ignore their context are running on one stream, over the cap of 3", n)
	}
}

// stale is a plugin that does not read its stream until told to, and then
// records every call and every cancel it receives.
type stale struct {
	pluginv2.UnimplementedPluginServer
	listen    chan struct{}
	mu        sync.Mutex
	calls     map[uint64]string // id → tool name
	cancelled map[uint64]bool
}

func (s *stale) Hooks(hs pluginv2.Plugin_HooksServer) error {
	select {
	case <-s.listen:
	case <-hs.Context().Done():
		return nil
	}
	for {
		m, err := hs.Recv()
		if err != nil {
			return nil
		}
		s.mu.Lock()
		if c := m.GetCall(); c != nil {
			s.calls[c.GetId()] = "?"
		} else if id := m.GetCancel().GetId(); id != 0 {
			s.cancelled[id] = true
		}
		s.mu.Unlock()
	}
}

// A plugin that stops reading for a while (a GC pause, a breakpoint under
// delve, a burst) is then sent every call that waited in the host's send
// queue, though each caller gave up on it long before, and for those whose
// Cancel found the queue full (giveUp drops it), no Cancel ever follows:
// the plugin runs them with a fresh deadline (counted from when it starts
// them), a provide stage included, i.e. a tool the host has already
// dispatched natively or reported as timed out. A call no one waits for any
// more should not leave the host.
func TestReviewCallsNoOneWaitsForAreStillSent(t *testing.T) {
	srv := &stale{listen: make(chan struct{}), calls: map[uint64]string{}, cancelled: map[uint64]bool{}}
	cn := dial(t, 2, func(s *grpc.Server) { pluginv2.RegisterPluginServer(s, srv) })
	cn.client.Apply(wire.Settings{Plugin: "stale"})
	jam(t, cn.client) // every caller has given up
	close(srv.listen)
	time.Sleep(2 * time.Second)
	srv.mu.Lock()
	defer srv.mu.Unlock()
	uncancelled := 0
	for id := range srv.calls {
		if !srv.cancelled[id] {
			uncancelled++
		}
	}
	if uncancelled > 0 {
		t.Fatalf("the plugin received %d calls (of %d) whose callers had given up, with no Cancel for them", uncancelled, len(srv.calls))
	}
}

// A stretch may end only where the catalogue's rules end it (a failure, a
// block, a provide that gave nothing): the proto says the plugin "stops
// after a failed stage, a block, a provide that gave nothing, or a Cancel".
// A plugin that marks a plain "no opinion" pre stage, or a provided result
// followed by a transform stage, as its last message breaks the protocol,
// and the host should say so (malformed). Instead the host's next Next
// fails with its own "Next called on a stretch that has no more stages",
// a plain error the Bus counts as the plugin's KindError.
func TestReviewStretchEndedWhereRulesDoNotEndItIsMalformed(t *testing.T) {
	r := &rawV2{onCall: func(s pluginv2.Plugin_HooksServer, c *pluginv2.HookCall, name string) bool {
		empty := answerOf(t, &pluginv1.PreToolCallResponse{})
		_ = s.Send(&pluginv2.PluginMessage{Id: c.GetId(), Stage: 0, Answer: empty, Last: true})
		return false
	}}
	c := dialRaw(t, r)
	s, err := c.Stretch(t.Context(), hooks.StretchRequest{
		Call:   hooks.ToolCallRequest{Name: "early"},
		Stages: stages(hooks.PreToolCall, hooks.PreToolCallCanProvideResult),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if v, err := s.Next(t.Context()); err != nil || v != nil {
		t.Fatalf("first stage (%v, %v)", v, err)
	}
	_, err = s.Next(t.Context())
	if !errors.Is(err, wire.ErrMalformed) {
		t.Fatalf("the provide stage of a stretch the plugin ended after a no-opinion pre stage: got %v, want malformed", err)
	}
}

// endingCtx is a context that ends while Stretch runs: Done is closed from
// the start, and Err reports it from its second call on, as a turn
// cancelled between Stretch's own ctx.Err check and the end of Stretch
// would.
type endingCtx struct {
	context.Context
	done chan struct{}
	errs atomic.Int32
}

func (c *endingCtx) Done() <-chan struct{} { return c.done }
func (c *endingCtx) Err() error {
	if c.errs.Add(1) == 1 {
		return nil
	}
	return context.Canceled
}

// V2Client.Stretch registers x.Close with context.AfterFunc and only then
// stores the stop function AfterFunc returned in x.stop, which x.Close
// calls. When the context has ended by then (a turn cancelled while the
// stretch was being sent), AfterFunc starts x.Close on its own goroutine at
// once, racing the assignment: a data race, and a call of a nil func, which
// crashes the host, when the goroutine wins.
func TestReviewStretchCancelledWhileSentRacesItsStop(t *testing.T) {
	c := serveV2(t, toolPlugin(nil, nil)).client
	got := 0
	for range 200 {
		ctx := &endingCtx{Context: context.Background(), done: make(chan struct{})}
		close(ctx.done)
		s, err := c.Stretch(ctx, hooks.StretchRequest{
			Call:   hooks.ToolCallRequest{Name: "x"},
			Stages: stages(hooks.PreToolCall, hooks.PreToolCallCanProvideResult),
		})
		if err == nil {
			got++
			s.Close()
		}
	}
	if got == 0 {
		t.Skip("no stretch was sent; the race was not reached")
	}
	time.Sleep(100 * time.Millisecond)
}
