package wire_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/hookstretch"
	"github.com/hookhost/hookhost/internal/wire"
	pluginv1 "github.com/hookhost/hookhost/plugins/proto/v1"
	pluginv2 "github.com/hookhost/hookhost/plugins/proto/v2"
)

// eventually waits, boundedly, for cond to hold.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// countStreams counts the Hooks streams a server accepts.
func countStreams(n *atomic.Int32) grpc.ServerOption {
	return grpc.StreamInterceptor(func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		n.Add(1)
		return handler(srv, ss)
	})
}

func serveV2(t *testing.T, p hooks.Plugin, opts ...grpc.ServerOption) *conn {
	t.Helper()
	cn := dial(t, 2, func(s *grpc.Server) { wire.RegisterV2(s, p, nil) }, opts...)
	cn.client.Apply(wire.Settings{Plugin: p.Manifest().Name})
	return cn
}

// Hundreds of calls share one stream, all in flight at once, answered in
// the reverse of the order they reached the plugin.
func TestV2ConcurrentCallsOnOneStream(t *testing.T) {
	const n = 256
	var (
		mu      sync.Mutex
		arrived []string
		release = map[string]chan struct{}{}
		all     = make(chan struct{})
	)
	p := &hooks.Funcs{
		Name: "many",
		PreToolCallFunc: func(ctx context.Context, ev hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
			ch := make(chan struct{})
			mu.Lock()
			release[ev.CallID] = ch
			arrived = append(arrived, ev.CallID)
			if len(arrived) == n {
				close(all)
			}
			mu.Unlock()
			select {
			case <-ch:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return &hooks.PreToolCallDecision{Block: &hooks.Block{Message: "for " + ev.CallID}}, nil
		},
	}
	var streams atomic.Int32
	c := serveV2(t, p, countStreams(&streams)).client

	answered := map[string]chan error{}
	for i := range n {
		id := fmt.Sprintf("call-%d", i)
		done := make(chan error, 1)
		answered[id] = done
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			v, err := c.Handle(ctx, hooks.PreToolCall, hooks.ToolCallRequest{CallID: id, Name: "t"})
			if err == nil {
				if d, _ := v.(*hooks.PreToolCallDecision); d == nil || d.Block == nil || d.Block.Message != "for "+id {
					err = fmt.Errorf("%s got the answer %#v", id, v)
				}
			}
			done <- err
		}()
	}
	select {
	case <-all:
	case <-time.After(60 * time.Second):
		t.Fatal("the calls never were all in flight at once")
	}
	// Newest first: each answer overtakes every call sent before it.
	for i := n - 1; i >= 0; i-- {
		mu.Lock()
		id := arrived[i]
		close(release[id])
		mu.Unlock()
		if err := <-answered[id]; err != nil {
			t.Fatal(err)
		}
	}
	if got := streams.Load(); got != 1 {
		t.Fatalf("%d streams opened, want 1", got)
	}
	if got := c.LateAnswers(); got != 0 {
		t.Fatalf("%d late answers", got)
	}
}

// rawV2 is a plugin written against the raw version 2 protocol: onCall
// decides what it sends for each call (by the tool name of its payload,
// which every test call carries), onCancel for each Cancel.
type rawV2 struct {
	pluginv2.UnimplementedPluginServer
	onCall   func(s pluginv2.Plugin_HooksServer, call *pluginv2.HookCall, name string) (end bool)
	onCancel func(s pluginv2.Plugin_HooksServer, id uint64)
	opens    atomic.Int32
}

func (r *rawV2) Hooks(s pluginv2.Plugin_HooksServer) error {
	r.opens.Add(1)
	for {
		m, err := s.Recv()
		if err != nil {
			return nil
		}
		if c := m.GetCall(); c != nil {
			var req pluginv1.ToolCallRequest
			if err := proto.Unmarshal(c.GetPayload(), &req); err != nil {
				return err
			}
			if r.onCall(s, c, req.GetName()) {
				return nil
			}
		} else if r.onCancel != nil {
			r.onCancel(s, m.GetCancel().GetId())
		}
	}
}

func answerOf(t testing.TB, m proto.Message) []byte {
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func dialRaw(t *testing.T, r *rawV2) wire.Conn {
	cn := dial(t, 2, func(s *grpc.Server) { pluginv2.RegisterPluginServer(s, r) })
	cn.client.Apply(wire.Settings{Plugin: "raw", MaxResultSize: 64 << 10})
	return cn.client
}

// Whatever a plugin sends on its stream gets the call a clear error, never
// a hang or a panic, and the next call is answered.
func TestV2GarbageFromPlugin(t *testing.T) {
	var r *rawV2
	r = &rawV2{onCall: func(s pluginv2.Plugin_HooksServer, c *pluginv2.HookCall, name string) bool {
		block := answerOf(t, &pluginv1.PreToolCallResponse{Block: &pluginv1.Block{Message: "no"}})
		m := &pluginv2.PluginMessage{Id: c.GetId(), Answer: block, Last: true}
		switch name {
		case "ok":
		case "wrong stage":
			m.Stage = 3
		case "undecodable":
			m.Answer = []byte{0xff, 0xff, 0xff}
		case "both":
			m.Failure = &pluginv2.Failure{Kind: pluginv2.Failure_ERROR, Message: "and yet"}
		case "unknown kind":
			m.Answer, m.Failure = nil, &pluginv2.Failure{Kind: 99, Message: "?"}
		case "unknown hook":
			m.Answer, m.Failure = nil, &pluginv2.Failure{Kind: pluginv2.Failure_UNKNOWN_HOOK, Message: "what is that"}
		case "bad request":
			m.Answer, m.Failure = nil, &pluginv2.Failure{Kind: pluginv2.Failure_BAD_REQUEST, Message: "cannot read it"}
		case "unknown id":
			m.Id += 1000
		case "oversized":
			m.Answer = answerOf(t, &pluginv1.PreToolCallResponse{Block: &pluginv1.Block{Message: strings.Repeat("x", 100<<10)}})
		case "end":
			return true
		}
		if err := s.Send(m); err != nil {
			t.Errorf("send: %v", err)
		}
		return false
	}}
	c := dialRaw(t, r)
	call := func(name string, timeout time.Duration) error {
		ctx, cancel := context.WithTimeout(t.Context(), timeout)
		defer cancel()
		v, err := c.Handle(ctx, hooks.PreToolCall, hooks.ToolCallRequest{Name: name})
		if err == nil {
			if d, _ := v.(*hooks.PreToolCallDecision); d == nil || d.Block == nil || d.Block.Message != "no" {
				return fmt.Errorf("answer %#v", v)
			}
		}
		return err
	}
	if err := call("ok", 10*time.Second); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		want string
	}{
		{"wrong stage", "answered stage 3 of the call, want stage 0"},
		{"undecodable", "undecodable answer"},
		{"both", "both an answer and a failure"},
		{"unknown kind", "failure 99: ?"},
		{"unknown hook", "failure UNKNOWN_HOOK: what is that"},
		{"bad request", "failure BAD_REQUEST: cannot read it"},
		{"oversized", "max_result_size is 65536 bytes; raise plugins.entries.raw.max_result_size"},
	} {
		err := call(c.name, 10*time.Second)
		if !errors.Is(err, wire.ErrMalformed) || !strings.HasPrefix(err.Error(), `plugin "raw": pre_tool_call: plugin sent a malformed response: `) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want malformed: %s", c.name, err, c.want)
		}
		if err := call("ok", 10*time.Second); err != nil {
			t.Fatalf("after %s: %v", c.name, err)
		}
	}
	if got := r.opens.Load(); got != 2 {
		t.Errorf("%d streams opened, want 2: one more after the oversized answer broke the first", got)
	}

	// An answer to no call in flight is dropped and counted; the call
	// waiting for its own answer misses its deadline.
	if err := call("unknown id", 200*time.Millisecond); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("unknown id: got %v, want a deadline", err)
	}
	eventually(t, "the stray answer to be counted", func() bool { return c.LateAnswers() == 1 })

	// A plugin that ends its stream fails the call in flight as
	// unavailable; the next call opens a new stream.
	if err := call("end", 10*time.Second); !errors.Is(err, hooks.ErrUnavailable) || !strings.Contains(err.Error(), "the plugin ended its hook stream") {
		t.Errorf("end: got %v, want unavailable", err)
	}
	if err := call("ok", 10*time.Second); err != nil {
		t.Fatalf("after end: %v", err)
	}
	if got := r.opens.Load(); got != 3 {
		t.Errorf("%d streams opened, want 3", got)
	}
}

// An answer that comes after the host stopped waiting is dropped and
// counted, and the host told the plugin to stop.
func TestV2LateAnswer(t *testing.T) {
	waiting := map[uint64]bool{}
	var mu sync.Mutex
	r := &rawV2{
		onCall: func(s pluginv2.Plugin_HooksServer, c *pluginv2.HookCall, name string) bool {
			if name == "late" {
				mu.Lock()
				waiting[c.GetId()] = true
				mu.Unlock()
				return false
			}
			_ = s.Send(&pluginv2.PluginMessage{Id: c.GetId(), Last: true})
			return false
		},
		// Answers only once told to cancel.
		onCancel: func(s pluginv2.Plugin_HooksServer, id uint64) {
			mu.Lock()
			defer mu.Unlock()
			if waiting[id] {
				_ = s.Send(&pluginv2.PluginMessage{Id: id, Last: true})
			}
		},
	}
	c := dialRaw(t, r)
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	if _, err := c.Handle(ctx, hooks.PreToolCall, hooks.ToolCallRequest{Name: "late"}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want a deadline", err)
	}
	eventually(t, "the late answer to be counted", func() bool { return c.LateAnswers() == 1 })
	if v, err := c.Handle(t.Context(), hooks.PreToolCall, hooks.ToolCallRequest{Name: "ok"}); err != nil || v != nil {
		t.Fatalf("next call: (%v, %v)", v, err)
	}
}

// A plugin that stops reading its stream makes calls to it time out, and
// holds up nothing else: not the calls to another plugin, not Close.
func TestV2PluginThatStopsReading(t *testing.T) {
	stuckSrv := &deaf{}
	stuck := dial(t, 2, func(s *grpc.Server) { pluginv2.RegisterPluginServer(s, stuckSrv) })
	var rec recorder
	other := serveV2(t, everything(&rec)).client

	big := hooks.ToolCallRequest{Name: "now", Arguments: json.RawMessage(`"` + strings.Repeat("a", 1<<20) + `"`)}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
			defer cancel()
			_, err := stuck.client.Handle(ctx, hooks.PreToolCall, big)
			errs <- err
		}()
	}
	// The other plugin answers while those calls hang.
	for range 20 {
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		v, err := other.Handle(ctx, hooks.PreToolCall, evCall)
		cancel()
		if err != nil || v == nil {
			t.Fatalf("the other plugin: (%v, %v)", v, err)
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("a call to the plugin that stopped reading: got %v, want a deadline", err)
		}
	}
	if stuckSrv.calls.Load() != 1 {
		t.Errorf("the deaf server saw %d streams, want 1", stuckSrv.calls.Load())
	}
	// Close returns though the stream's sender is stuck in a Send.
	stuck.client.Close()
}

// deaf accepts the stream and never reads it.
type deaf struct {
	pluginv2.UnimplementedPluginServer
	calls atomic.Int32
}

func (d *deaf) Hooks(s pluginv2.Plugin_HooksServer) error {
	d.calls.Add(1)
	<-s.Context().Done()
	return nil
}

// A handler that ignores its context holds up no other call on the stream,
// and past the cap on calls in flight the plugin says so rather than
// queueing without bound.
func TestV2HandlerThatIgnoresItsContext(t *testing.T) {
	t.Cleanup(wire.SetMaxInFlight(3)) // after the server stopped: cleanups run last first
	release := make(chan struct{})
	entered := make(chan struct{}, 8)
	p := &hooks.Funcs{
		Name: "deaf",
		PreToolCallFunc: func(_ context.Context, ev hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
			if ev.Name == "ignore" {
				entered <- struct{}{}
				<-release // its context is not looked at
			}
			return &hooks.PreToolCallDecision{Block: &hooks.Block{Message: ev.Name}}, nil
		},
	}
	c := serveV2(t, p).client
	for range 2 {
		ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
		_, err := c.Handle(ctx, hooks.PreToolCall, hooks.ToolCallRequest{Name: "ignore"})
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("got %v, want a deadline", err)
		}
		<-entered
	}
	// Two handlers are stuck; the stream serves a third call.
	if v, err := c.Handle(t.Context(), hooks.PreToolCall, hooks.ToolCallRequest{Name: "fine"}); err != nil || v.(*hooks.PreToolCallDecision).Block.Message != "fine" {
		t.Fatalf("while others hang: (%v, %v)", v, err)
	}
	// A third stuck one reaches the cap of 3: the next call is refused.
	// The "fine" call's slot was freed before its answer went out, so this
	// call finds room.
	failed := make(chan error, 1)
	go func() {
		_, err := c.Handle(context.Background(), hooks.PreToolCall, hooks.ToolCallRequest{Name: "ignore"})
		failed <- err
	}()
	select {
	case <-entered:
	case err := <-failed:
		t.Fatalf("the third stuck call did not reach its handler: %v", err)
	case <-time.After(time.Minute):
		t.Fatal("the third stuck call neither reached its handler nor failed within a minute")
	}
	_, err := c.Handle(t.Context(), hooks.PreToolCall, hooks.ToolCallRequest{Name: "fine"})
	var ce *wire.CallError
	if !errors.As(err, &ce) || ce.Kind != nil || !strings.Contains(err.Error(), "already running 3 hook calls") {
		t.Fatalf("over the cap: got %v", err)
	}
	close(release)
	eventually(t, "the stuck handlers to finish and free the stream", func() bool {
		v, err := c.Handle(t.Context(), hooks.PreToolCall, hooks.ToolCallRequest{Name: "fine"})
		return err == nil && v != nil
	})
}

// A plain call's slot is free by the time the host reads its answer: a
// host that sends its next call at once, on a stream capped at one call in
// flight, is never refused.
func TestV2SlotIsFreeWhenTheAnswerArrives(t *testing.T) {
	t.Cleanup(wire.SetMaxInFlight(1))
	p := &hooks.Funcs{
		Name: "quick",
		PreToolCallFunc: func(_ context.Context, ev hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
			return &hooks.PreToolCallDecision{Block: &hooks.Block{Message: ev.Name}}, nil
		},
	}
	c := serveV2(t, p).client
	for i := range 500 {
		name := fmt.Sprintf("call%d", i)
		v, err := c.Handle(t.Context(), hooks.PreToolCall, hooks.ToolCallRequest{Name: name})
		if err != nil {
			t.Fatalf("call %d, sent as soon as call %d was answered: %v", i, i-1, err)
		}
		if got := v.(*hooks.PreToolCallDecision).Block.Message; got != name {
			t.Fatalf("call %d answered %q", i, got)
		}
	}
}

// Whatever a host sends on the stream, the plugin answers with a failure
// saying what was wrong, and serves the next call.
func TestV2GarbageFromHost(t *testing.T) {
	var rec recorder
	cn := dial(t, 2, func(s *grpc.Server) { wire.RegisterV2(s, everything(&rec), nil) })
	hs, err := pluginv2.NewPluginClient(cn.cc).Hooks(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	payload := answerOf(t, &pluginv1.ToolCallRequest{Name: "now"})
	stage := func(h string) []*pluginv2.Stage {
		return []*pluginv2.Stage{{Hook: h, TimeoutNs: int64(10 * time.Second)}}
	}
	send := func(m *pluginv2.HostMessage) {
		t.Helper()
		if err := hs.Send(m); err != nil {
			t.Fatal(err)
		}
	}
	call := func(c *pluginv2.HookCall) { send(&pluginv2.HostMessage{Kind: &pluginv2.HostMessage_Call{Call: c}}) }

	send(&pluginv2.HostMessage{})                                                                     // neither a call nor a cancel
	send(&pluginv2.HostMessage{Kind: &pluginv2.HostMessage_Cancel{Cancel: &pluginv2.Cancel{Id: 77}}}) // no such call
	call(&pluginv2.HookCall{Id: 1})
	call(&pluginv2.HookCall{Id: 2, Stages: stage("pre_coffee"), Payload: payload})
	call(&pluginv2.HookCall{Id: 3, Stages: stage("pre_tool_call"), Payload: []byte{0xff, 0xff}})
	call(&pluginv2.HookCall{Id: 4, Stages: []*pluginv2.Stage{{Hook: "pre_tool_call"}, {Hook: "pre_coffee"}}, Payload: payload})
	call(&pluginv2.HookCall{Id: 5, Stages: stage("pre_tool_call"), Payload: payload})
	want := map[uint64]pluginv2.Failure_Kind{
		1: pluginv2.Failure_BAD_REQUEST, 2: pluginv2.Failure_UNKNOWN_HOOK, 3: pluginv2.Failure_BAD_REQUEST, 4: pluginv2.Failure_UNKNOWN_HOOK,
	}
	for range 5 {
		m, err := hs.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if !m.GetLast() {
			t.Errorf("call %d: not marked last", m.GetId())
		}
		if m.GetId() == 5 {
			var d pluginv1.PreToolCallResponse
			if m.GetFailure() != nil || proto.Unmarshal(m.GetAnswer(), &d) != nil || string(d.GetModifiedArgs()) != `{"tz":"UTC"}` {
				t.Errorf("the valid call: %v", m)
			}
			continue
		}
		if got := m.GetFailure().GetKind(); got != want[m.GetId()] || m.GetFailure().GetMessage() == "" {
			t.Errorf("call %d: failure %v, want %v", m.GetId(), m.GetFailure(), want[m.GetId()])
		}
		if m.GetStage() != 0 {
			// Call 4's unknown hook is its second stage, but no stage ran.
			t.Errorf("call %d: failure at stage %d, want 0", m.GetId(), m.GetStage())
		}
		delete(want, m.GetId())
	}
	if len(want) != 0 {
		t.Errorf("no answer for %v", want)
	}
}

// New settings take a new stream (its receive limit is fixed when it
// opens); calls in flight on the old one are answered there, and it ends
// after them.
func TestV2ApplyRetiresTheStream(t *testing.T) {
	release, entered := make(chan struct{}), make(chan struct{}, 1)
	p := &hooks.Funcs{
		Name: "slow",
		PreToolCallFunc: func(_ context.Context, ev hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
			if ev.Name == "wait" {
				entered <- struct{}{}
				<-release
			}
			return &hooks.PreToolCallDecision{Block: &hooks.Block{Message: ev.Name}}, nil
		},
	}
	var streams atomic.Int32
	c := serveV2(t, p, countStreams(&streams)).client
	done := make(chan error, 1)
	go func() {
		v, err := c.Handle(t.Context(), hooks.PreToolCall, hooks.ToolCallRequest{Name: "wait"})
		if err == nil && v.(*hooks.PreToolCallDecision).Block.Message != "wait" {
			err = fmt.Errorf("answer %v", v)
		}
		done <- err
	}()
	<-entered
	c.Apply(wire.Settings{Plugin: "slow", MaxResultSize: 1 << 20})
	if v, err := c.Handle(t.Context(), hooks.PreToolCall, hooks.ToolCallRequest{Name: "now"}); err != nil || v.(*hooks.PreToolCallDecision).Block.Message != "now" {
		t.Fatalf("on the new stream: (%v, %v)", v, err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatalf("the call in flight on the old stream: %v", err)
	}
	if n := streams.Load(); n != 2 {
		t.Fatalf("%d streams, want 2", n)
	}
}

// jam makes c's stream to a plugin that stopped reading hold a full send
// queue: one call larger than the stream's flow-control window uses up
// what gRPC lets the stream schedule, so that the next call sticks the
// sender in Send, and enough small calls fill the queue behind it. Every
// one of those calls times out, as it should.
func jam(t *testing.T, c wire.Conn) {
	t.Helper()
	big := hooks.ToolCallRequest{Name: "big", Arguments: json.RawMessage(`"` + strings.Repeat("a", 1<<20) + `"`)}
	// The big call is waited for until every small one has given up, so
	// that on a loaded machine the sender cannot find it abandoned and skip
	// it: it must be the send that blocks.
	bigCtx, giveUp := context.WithCancel(context.Background())
	defer giveUp()
	go func() { _, _ = c.Handle(bigCtx, hooks.PreToolCall, big) }()
	// Once the big one is sent, the plugin is not seen to read anything
	// more: every later call goes through the sender, which blocks.
	eventually(t, "the big call to be sent", func() bool { return c.Traffic().Sent > 1<<20 })
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

// A stretch is sent under the turn's context, which may have no deadline of
// its own. When the plugin stopped reading its stream and the send queue is
// full, Stretch waits for room no longer than its first stage's deadline,
// as a plain call of that hook would, and says why it failed.
func TestV2StretchSendIsBoundedByItsFirstStage(t *testing.T) {
	stuck := dial(t, 2, func(s *grpc.Server) { pluginv2.RegisterPluginServer(s, &deaf{}) })
	stuck.client.Apply(wire.Settings{Plugin: "deaf"})
	jam(t, stuck.client)

	// The turn has no deadline; a watchdog cancels it (Canceled, not
	// DeadlineExceeded) so that a Stretch waiting on the turn instead of
	// its first stage fails the test rather than hanging it.
	turn, cancel := context.WithCancel(context.Background())
	defer cancel()
	watchdog := time.AfterFunc(2*time.Minute, cancel)
	defer watchdog.Stop()
	req := hookstretch.Request{Call: hooks.ToolCallRequest{Name: "t"}, Stages: []hookstretch.Stage{
		{Hook: hooks.PreToolCall, Timeout: 100 * time.Millisecond},
		{Hook: hooks.PreToolCallCanProvideResult, Timeout: 100 * time.Millisecond},
	}}
	s, err := stuck.client.Stretch(turn, req)
	if s != nil {
		s.Close()
	}
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "not reading its hook stream") {
		t.Fatalf("Stretch to a plugin that stopped reading: got %v, want the first stage's timeout saying why", err)
	}
}

// maxInFlight bounds the handlers one stream keeps running, so that
// handlers which ignore their context cannot pile up goroutines without
// bound. hookstretch.Run leaves a stage's handler behind at its deadline;
// the stretch's call still counts until that handler returns, so with a cap
// of 3, at most 3 such handlers run however many stretches are asked.
func TestV2StretchHandlersCountAgainstMaxInFlightUntilTheyReturn(t *testing.T) {
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
		s, err := c.Stretch(t.Context(), hookstretch.Request{Call: hooks.ToolCallRequest{Name: "t"}, Stages: []hookstretch.Stage{
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
	// A stage's handler not started by the time its stretch ended never
	// starts: the count cannot grow.
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
			var req pluginv1.ToolCallRequest
			_ = proto.Unmarshal(c.GetPayload(), &req)
			s.calls[c.GetId()] = req.GetName()
		} else if id := m.GetCancel().GetId(); id != 0 {
			s.cancelled[id] = true
		}
		s.mu.Unlock()
	}
}

// A plugin that stops reading for a while (a GC pause, a breakpoint under
// delve, a burst) must not then be sent the calls that waited in the host's
// send queue after their callers gave up: it would run them with a fresh
// deadline, a provide stage included, i.e. a tool the host has already
// dispatched natively or reported as timed out. A call that was sent (the
// one stuck in Send) is followed by its Cancel, however full the queue was.
func TestV2CallsNoOneWaitsForAreNotSent(t *testing.T) {
	srv := &stale{listen: make(chan struct{}), calls: map[uint64]string{}, cancelled: map[uint64]bool{}}
	cn := dial(t, 2, func(s *grpc.Server) { pluginv2.RegisterPluginServer(s, srv) })
	cn.client.Apply(wire.Settings{Plugin: "stale"})
	jam(t, cn.client) // every caller has given up
	close(srv.listen)
	// The calls the sender took before the queue filled arrive, each
	// followed by its Cancel; a fresh call and its Cancel after them show
	// the sender has moved past every queued call.
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	_, _ = cn.client.Handle(ctx, hooks.PreToolCall, hooks.ToolCallRequest{Name: "marker"})
	eventually(t, "the marker call and its Cancel", func() bool {
		srv.mu.Lock()
		defer srv.mu.Unlock()
		for id, name := range srv.calls {
			if name == "marker" && srv.cancelled[id] {
				return true
			}
		}
		return false
	})
	srv.mu.Lock()
	defer srv.mu.Unlock()
	uncancelled := 0
	for id := range srv.calls {
		if !srv.cancelled[id] {
			uncancelled++
		}
	}
	if uncancelled > 0 {
		t.Fatalf("the plugin received %d calls, %d of them with no Cancel", len(srv.calls), uncancelled)
	}
}

// A stretch may end only where the catalogue's rules end it (a failure, a
// block, a provide that gave nothing). A plugin that marks a plain "no
// opinion" pre stage, or a provided result followed by a transform stage,
// as its last message breaks the protocol: the next stage is malformed, not
// an error of the host's own.
func TestV2StretchEndedWhereRulesDoNotEndItIsMalformed(t *testing.T) {
	r := &rawV2{onCall: func(s pluginv2.Plugin_HooksServer, c *pluginv2.HookCall, name string) bool {
		empty := answerOf(t, &pluginv1.PreToolCallResponse{})
		_ = s.Send(&pluginv2.PluginMessage{Id: c.GetId(), Stage: 0, Answer: empty, Last: true})
		return false
	}}
	c := dialRaw(t, r)
	s, err := c.Stretch(t.Context(), hookstretch.Request{
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

// A turn cancelled while its stretch was being sent makes AfterFunc run
// the stretch's cancel at once, on its own goroutine, while Stretch is
// still storing what AfterFunc returned: the cancel must not depend on it
// (under -race, a data race; without, a nil func call that crashes the host).
func TestV2StretchCancelledWhileSentDoesNotRaceItsStop(t *testing.T) {
	c := serveV2(t, toolPlugin(nil, nil)).client
	got := 0
	for range 200 {
		ctx := &endingCtx{Context: context.Background(), done: make(chan struct{})}
		close(ctx.done)
		s, err := c.Stretch(ctx, hookstretch.Request{
			Call:   hooks.ToolCallRequest{Name: "x"},
			Stages: stages(hooks.PreToolCall, hooks.PreToolCallCanProvideResult),
		})
		if err == nil {
			got++
			s.Close()
		}
	}
	if got == 0 {
		// Sending races the ended context; of 200, some must win.
		t.Fatal("no stretch was sent; the race was not reached")
	}
}
