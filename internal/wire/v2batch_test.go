package wire_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/hookstretch"
	"github.com/hookhost/hookhost/internal/wire"
	pluginv1 "github.com/hookhost/hookhost/plugins/proto/v1"
	pluginv2 "github.com/hookhost/hookhost/plugins/proto/v2"
)

// outcomes are one batch's events: a post_tool_call per name, each with
// timeout.
func outcomes(timeout time.Duration, names ...string) []hookstretch.Event {
	evs := make([]hookstretch.Event, len(names))
	for i, n := range names {
		evs[i] = hookstretch.Event{Hook: hooks.PostToolCall, Payload: hooks.ToolCallOutcome{Name: n, Arguments: []byte(`{}`)}, Timeout: timeout}
	}
	return evs
}

// observeAll sends a batch and returns each event's outcome, checking that
// every event is reported once, in order.
func observeAll(t *testing.T, c wire.Conn, events []hookstretch.Event) []error {
	t.Helper()
	b, ok := c.(hookstretch.Batcher)
	if !ok {
		t.Fatalf("%T takes no observer batches", c)
	}
	var got []error
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := b.ObserveBatch(ctx, events, func(i int, err error) {
		if i != len(got) {
			t.Errorf("event %d reported after %d events", i, len(got))
		}
		got = append(got, err)
	})
	if err != nil {
		t.Fatalf("ObserveBatch: %v", err)
	}
	if len(got) != len(events) {
		t.Fatalf("%d events reported of %d", len(got), len(events))
	}
	return got
}

// kindOf names how the Bus would count err.
func kindOf(err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, hooks.ErrMalformed):
		return "malformed"
	case errors.Is(err, hooks.ErrUnavailable):
		return "unavailable"
	case errors.Is(err, hooks.ErrPanicked):
		return "panic"
	case errors.Is(err, hooks.ErrRefused):
		return "refused"
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "cancelled"
	}
	return "error"
}

func kinds(errs []error) string {
	out := make([]string, len(errs))
	for i, err := range errs {
		out[i] = kindOf(err)
	}
	return strings.Join(out, " ")
}

// A Go plugin over protocol v2 says it takes batches, and answers each
// event of one in order, a failed event not ending the batch; an event the
// host cannot send fails on its own, in its place.
func TestV2ObserverBatchAnswered(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	p := &hooks.Funcs{
		Name: "ledger",
		PostToolCallFunc: func(_ context.Context, ev hooks.ToolCallOutcome) error {
			switch ev.Name {
			case "fail":
				return errors.New("the ledger is full")
			case "panic":
				panic("ledger bug")
			}
			mu.Lock()
			seen = append(seen, ev.Name)
			mu.Unlock()
			return nil
		},
		PostLLMCallFunc: func(_ context.Context, ev hooks.Inference) error {
			mu.Lock()
			seen = append(seen, "llm:"+ev.Model)
			mu.Unlock()
			return nil
		},
	}
	cn := serveV2(t, p)
	raw, err := pluginv2.NewPluginClient(cn.cc).Describe(context.Background(), &pluginv1.DescribeRequest{})
	if err != nil || !raw.GetObserverBatches() {
		t.Fatalf("Describe: %v, observer_batches %t; want the Go server to take batches", err, raw.GetObserverBatches())
	}
	// The host learns it from Describe, not before.
	if err := cn.client.(hookstretch.Batcher).ObserveBatch(context.Background(), outcomes(time.Second, "a"), nil); !errors.Is(err, hookstretch.ErrNoBatch) {
		t.Fatalf("a batch before Describe: %v, want ErrNoBatch", err)
	}
	if _, err := cn.client.Describe(context.Background()); err != nil {
		t.Fatal(err)
	}
	events := outcomes(time.Minute, "a", "fail", "b", "panic", "wrongtype", "c")
	events[4].Payload = hooks.Inference{Model: "not a tool outcome"}
	events = append(events, hookstretch.Event{Hook: hooks.PostLLMCall, Payload: hooks.Inference{Model: "m"}, Timeout: time.Minute})
	got := observeAll(t, cn.client, events)
	if k := kinds(got); k != "ok error ok panic error ok ok" {
		t.Fatalf("outcomes %s (%v)", k, got)
	}
	if !strings.Contains(got[1].Error(), "the ledger is full") || !strings.Contains(got[4].Error(), "payload is") {
		t.Fatalf("errors do not say what failed: %v", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(seen, " ") != "a b c llm:m" {
		t.Fatalf("the plugin handled %v", seen)
	}
	if n := cn.client.LateAnswers(); n != 0 {
		t.Fatalf("%d late answers", n)
	}
}

// A protocol v1 connection takes no batches.
func TestV1TakesNoObserverBatches(t *testing.T) {
	cn := connect(t, 1, &hooks.Funcs{Name: "old", PostToolCallFunc: func(context.Context, hooks.ToolCallOutcome) error { return nil }}, nil)
	if b, ok := cn.client.(hookstretch.Batcher); ok {
		err := b.ObserveBatch(context.Background(), outcomes(time.Second, "a"), func(int, error) { t.Error("an event reported") })
		if !errors.Is(err, hookstretch.ErrNoBatch) {
			t.Fatalf("v1 batch: %v, want ErrNoBatch", err)
		}
	}
}

// rawBatcher is a plugin written against the raw protocol that says it
// takes batches; answer decides what it sends for each batch, and cancels
// counts the Cancels it receives.
type rawBatcher struct {
	pluginv2.UnimplementedPluginServer
	answer  func(s pluginv2.Plugin_HooksServer, call *pluginv2.HookCall) (end bool)
	cancels atomic.Int32
}

func (r *rawBatcher) Describe(context.Context, *pluginv1.DescribeRequest) (*pluginv1.Manifest, error) {
	return &pluginv1.Manifest{Name: "raw", Version: "1", Hooks: []string{"post_tool_call"}, ObserverBatches: true}, nil
}

func (r *rawBatcher) Hooks(s pluginv2.Plugin_HooksServer) error {
	for {
		m, err := s.Recv()
		if err != nil {
			return nil
		}
		if c := m.GetCall(); c != nil {
			if r.answer(s, c) {
				return nil
			}
		} else {
			r.cancels.Add(1)
		}
	}
}

func ok(id uint64, stage uint32, last bool) *pluginv2.PluginMessage {
	return &pluginv2.PluginMessage{Id: id, Stage: stage, Answer: []byte{}, Last: last}
}

// A batch that stops being answered, or answered out of step, ends: the
// event the host waited for fails as what went wrong, each later one fails
// the same way without having been delivered, and the plugin is told to
// cancel (unless it ended the call itself). A failure the plugin reports
// for one event does not end the batch.
func TestV2ObserverBatchAnsweredBadly(t *testing.T) {
	cases := []struct {
		name    string
		send    func(s pluginv2.Plugin_HooksServer, id uint64) (end bool)
		want    string
		says    string // in the error of the event that ended the batch
		cancels int32
		timeout time.Duration // of each event; 0: a minute
	}{
		{"hung after stage 0", func(s pluginv2.Plugin_HooksServer, id uint64) bool {
			_ = s.Send(ok(id, 0, false))
			return false
		}, "ok timeout timeout timeout", "no answer to stage 1", 1, time.Second},
		{"stage out of range", func(s pluginv2.Plugin_HooksServer, id uint64) bool {
			_ = s.Send(ok(id, 0, false))
			_ = s.Send(ok(id, 9, false))
			return false
		}, "ok malformed malformed malformed", "answered stage 9 of the call, want stage 1", 1, 0},
		{"stage repeated", func(s pluginv2.Plugin_HooksServer, id uint64) bool {
			_ = s.Send(ok(id, 0, false))
			_ = s.Send(ok(id, 0, false))
			return false
		}, "ok malformed malformed malformed", "answered stage 0 of the call, want stage 1", 1, 0},
		{"garbage answer", func(s pluginv2.Plugin_HooksServer, id uint64) bool {
			_ = s.Send(&pluginv2.PluginMessage{Id: id, Stage: 0, Answer: []byte{0xff, 0xff, 0xff}})
			return false
		}, "malformed malformed malformed malformed", "undecodable answer", 1, 0},
		{"answer and failure", func(s pluginv2.Plugin_HooksServer, id uint64) bool {
			_ = s.Send(&pluginv2.PluginMessage{Id: id, Stage: 0, Answer: []byte{0x08, 0x01}, Failure: &pluginv2.Failure{Kind: pluginv2.Failure_ERROR}})
			return false
		}, "malformed malformed malformed malformed", "both an answer and a failure", 1, 0},
		{"last too early", func(s pluginv2.Plugin_HooksServer, id uint64) bool {
			_ = s.Send(ok(id, 0, false))
			_ = s.Send(ok(id, 1, true))
			return false
		}, "ok ok malformed malformed", "ended the batch after stage 1 of 4", 0, 0},
		{"failures go on", func(s pluginv2.Plugin_HooksServer, id uint64) bool {
			_ = s.Send(&pluginv2.PluginMessage{Id: id, Stage: 0, Failure: &pluginv2.Failure{Kind: pluginv2.Failure_ERROR, Message: "no"}})
			_ = s.Send(&pluginv2.PluginMessage{Id: id, Stage: 1, Failure: &pluginv2.Failure{Kind: pluginv2.Failure_DEADLINE_EXCEEDED, Message: "slow"}})
			_ = s.Send(&pluginv2.PluginMessage{Id: id, Stage: 2, Failure: &pluginv2.Failure{Kind: pluginv2.Failure_BAD_REQUEST, Message: "bad"}})
			_ = s.Send(ok(id, 3, true))
			return false
		}, "error timeout malformed ok", "", 0, 0},
		{"last missing at the end", func(s pluginv2.Plugin_HooksServer, id uint64) bool {
			for i := range uint32(4) {
				_ = s.Send(ok(id, i, false))
			}
			return false
		}, "ok ok ok ok", "", 0, 0},
		{"stream ends", func(s pluginv2.Plugin_HooksServer, id uint64) bool {
			_ = s.Send(ok(id, 0, false))
			return true
		}, "ok unavailable unavailable unavailable", "", 0, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := &rawBatcher{}
			r.answer = func(s pluginv2.Plugin_HooksServer, call *pluginv2.HookCall) bool {
				if len(call.GetPayloads()) != 4 || len(call.GetPayload()) != 0 || len(call.GetStages()) != 4 {
					t.Errorf("batch sent as %d stages, %d payloads, payload of %d bytes", len(call.GetStages()), len(call.GetPayloads()), len(call.GetPayload()))
				}
				return tc.send(s, call.GetId())
			}
			cn := dial(t, 2, func(s *grpc.Server) { pluginv2.RegisterPluginServer(s, r) })
			cn.client.Apply(wire.Settings{Plugin: "raw", MaxResultSize: 64 << 10})
			if _, err := cn.client.Describe(context.Background()); err != nil {
				t.Fatal(err)
			}
			timeout := tc.timeout
			if timeout == 0 {
				timeout = time.Minute
			}
			got := observeAll(t, cn.client, outcomes(timeout, "a", "b", "c", "d"))
			if k := kinds(got); k != tc.want {
				t.Fatalf("outcomes %s, want %s (%v)", k, tc.want, got)
			}
			for i, err := range got {
				if err == nil {
					continue
				}
				if !strings.Contains(err.Error(), `plugin "raw": post_tool_call`) {
					t.Errorf("event %d: %v does not say which plugin and hook", i, err)
				}
			}
			if tc.says != "" {
				ended := -1
				for i, err := range got {
					if err != nil && ended < 0 && !strings.Contains(err.Error(), "not delivered") {
						ended = i
					}
				}
				if ended < 0 || !strings.Contains(got[ended].Error(), tc.says) {
					t.Errorf("the event that ended the batch: %v; want it to say %q", got, tc.says)
				}
				for _, err := range got[ended+1:] {
					if err == nil || !strings.Contains(err.Error(), "not delivered: the observer batch ended at stage") {
						t.Errorf("an event after the end: %v, want it not delivered", err)
					}
				}
			}
			eventually(t, fmt.Sprintf("%d cancels", tc.cancels), func() bool { return r.cancels.Load() == tc.cancels })
			time.Sleep(50 * time.Millisecond) // no further cancel comes
			if n := r.cancels.Load(); n != tc.cancels {
				t.Fatalf("%d cancels, want %d", n, tc.cancels)
			}
		})
	}
}

// hooksStream opens a raw Hooks stream to the Go server for p.
func hooksStream(t *testing.T, p hooks.Plugin) pluginv2.Plugin_HooksClient {
	t.Helper()
	cn := serveV2(t, p)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	s, err := pluginv2.NewPluginClient(cn.cc).Hooks(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func sendBatch(t *testing.T, s pluginv2.Plugin_HooksClient, id uint64, timeout time.Duration, hooksAndNames ...string) {
	t.Helper()
	call := &pluginv2.HookCall{Id: id}
	for i := 0; i < len(hooksAndNames); i += 2 {
		call.Stages = append(call.Stages, &pluginv2.Stage{Hook: hooksAndNames[i], TimeoutNs: int64(timeout)})
		call.Payloads = append(call.Payloads, answerOf(t, &pluginv1.ToolCallOutcome{Name: hooksAndNames[i+1], Arguments: []byte("{}")}))
	}
	if err := s.Send(&pluginv2.HostMessage{Kind: &pluginv2.HostMessage_Call{Call: call}}); err != nil {
		t.Fatal(err)
	}
}

// describeMsg renders a plugin message for comparison.
func describeMsg(m *pluginv2.PluginMessage) string {
	what := "ok"
	if f := m.GetFailure(); f != nil {
		what = f.GetKind().String()
	}
	return fmt.Sprintf("%d/%d:%s:%t", m.GetId(), m.GetStage(), what, m.GetLast())
}

func recvN(t *testing.T, s pluginv2.Plugin_HooksClient, n int) []string {
	t.Helper()
	var out []string
	for range n {
		m, err := s.Recv()
		if err != nil {
			t.Fatalf("after %v: %v", out, err)
		}
		out = append(out, describeMsg(m))
	}
	return out
}

// The plugin's side: every event answered in order with its stage index,
// a failed, unknown or undecodable one included, only the final one
// marked last; a handler that outlives its deadline answered
// DEADLINE_EXCEEDED while the batch goes on; a malformed batch refused as
// a whole.
func TestV2ObserverBatchServed(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	var mu sync.Mutex
	var seen []string
	p := &hooks.Funcs{Name: "ledger", PostToolCallFunc: func(ctx context.Context, ev hooks.ToolCallOutcome) error {
		switch ev.Name {
		case "fail":
			return errors.New("no")
		case "deaf":
			<-release // ignores its deadline
		}
		mu.Lock()
		seen = append(seen, ev.Name)
		mu.Unlock()
		return nil
	}}
	s := hooksStream(t, p)

	sendBatch(t, s, 1, time.Minute, "post_tool_call", "a", "post_tool_call", "fail", "no_such_hook", "x", "pre_tool_call", "y", "post_tool_call", "b")
	if got := strings.Join(recvN(t, s, 5), " "); got != "1/0:ok:false 1/1:ERROR:false 1/2:UNKNOWN_HOOK:false 1/3:UNKNOWN_HOOK:false 1/4:ok:true" {
		t.Fatalf("answers %s", got)
	}

	bad := &pluginv2.HookCall{Id: 2, Stages: []*pluginv2.Stage{{Hook: "post_tool_call"}, {Hook: "post_tool_call"}}, Payloads: [][]byte{{}}}
	if err := s.Send(&pluginv2.HostMessage{Kind: &pluginv2.HostMessage_Call{Call: bad}}); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(recvN(t, s, 1), " "); got != "2/0:BAD_REQUEST:true" {
		t.Fatalf("a batch with fewer payloads than stages: %s", got)
	}

	garbage := &pluginv2.HookCall{Id: 3, Stages: []*pluginv2.Stage{{Hook: "post_tool_call"}, {Hook: "post_tool_call"}},
		Payloads: [][]byte{{0xff, 0xff}, answerOf(t, &pluginv1.ToolCallOutcome{Name: "c"})}}
	if err := s.Send(&pluginv2.HostMessage{Kind: &pluginv2.HostMessage_Call{Call: garbage}}); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(recvN(t, s, 2), " "); got != "3/0:BAD_REQUEST:false 3/1:ok:true" {
		t.Fatalf("a batch with an undecodable payload: %s", got)
	}

	sendBatch(t, s, 4, 200*time.Millisecond, "post_tool_call", "deaf", "post_tool_call", "d")
	if got := strings.Join(recvN(t, s, 2), " "); got != "4/0:DEADLINE_EXCEEDED:false 4/1:ok:true" {
		t.Fatalf("a handler past its deadline: %s", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(seen, " ") != "a b c d" {
		t.Fatalf("handled %v", seen)
	}
}

// Cancelled mid-batch, the plugin starts no further event and sends
// nothing more for the batch.
func TestV2ObserverBatchCancelledMidway(t *testing.T) {
	entered := make(chan struct{}, 1)
	var mu sync.Mutex
	var seen []string
	p := &hooks.Funcs{Name: "ledger", PostToolCallFunc: func(ctx context.Context, ev hooks.ToolCallOutcome) error {
		mu.Lock()
		seen = append(seen, ev.Name)
		mu.Unlock()
		if ev.Name == "wait" {
			entered <- struct{}{}
			<-ctx.Done()
			return ctx.Err()
		}
		return nil
	}}
	s := hooksStream(t, p)
	sendBatch(t, s, 1, time.Minute, "post_tool_call", "a", "post_tool_call", "wait", "post_tool_call", "never")
	if got := strings.Join(recvN(t, s, 1), " "); got != "1/0:ok:false" {
		t.Fatalf("first answer %s", got)
	}
	<-entered
	if err := s.Send(&pluginv2.HostMessage{Kind: &pluginv2.HostMessage_Cancel{Cancel: &pluginv2.Cancel{Id: 1}}}); err != nil {
		t.Fatal(err)
	}
	// The next message on the stream is the next call's: nothing more came
	// for the cancelled batch.
	sendBatch(t, s, 2, time.Minute, "post_tool_call", "after")
	if got := strings.Join(recvN(t, s, 1), " "); got != "2/0:ok:true" {
		t.Fatalf("after the cancel: %s", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(seen, " ") != "a wait after" {
		t.Fatalf("handled %v, want the event after the cancelled one never started", seen)
	}
}
