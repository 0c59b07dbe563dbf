package relay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookhost/hookhost/hookbus"
	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/bustest"
	"github.com/hookhost/hookhost/internal/dialect"
	"github.com/hookhost/hookhost/internal/upstream"
	"github.com/hookhost/hookhost/llm"
)

// step is one scripted upstream answer.
type step struct {
	resp   hooks.ModelResponse
	wire   *upstream.WireResponse
	chunks []string // streamed text, in order; joined it is the content
	err    error
	// wait makes the call block until its context ends; entered, when
	// set, is closed as it starts waiting.
	wait    bool
	entered chan struct{}
}

// seen is one request the fake upstream received.
type seen struct {
	req    hooks.ModelRequest
	how    string              // complete, stream or forward
	wires  [][]json.RawMessage // per message, the wire form Forward would send (nil: encoded afresh)
	fields map[string]json.RawMessage
}

// scripted is a fake upstream that answers from a script, one step per
// call, and records what it was sent.
type scripted struct {
	mu    sync.Mutex
	steps []step
	got   []seen
}

var (
	_ llm.Provider       = (*scripted)(nil)
	_ llm.Streamer       = (*scripted)(nil)
	_ upstream.Forwarder = (*forwarding)(nil)
)

func (s *scripted) Name() string { return "fake" }

func (s *scripted) next(sn seen) (step, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.got = append(s.got, sn)
	if len(s.steps) == 0 {
		return step{}, fmt.Errorf("fake upstream: no step scripted for call %d", len(s.got))
	}
	st := s.steps[0]
	s.steps = s.steps[1:]
	return st, nil
}

func (s *scripted) calls() []seen {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]seen(nil), s.got...)
}

func (s *scripted) answer(ctx context.Context, st step, onText func(string)) (hooks.ModelResponse, error) {
	if st.wait {
		if st.entered != nil {
			close(st.entered)
		}
		<-ctx.Done()
		return hooks.ModelResponse{}, ctx.Err()
	}
	if st.err != nil {
		return st.resp, st.err
	}
	resp := st.resp
	if onText != nil {
		for _, c := range st.chunks {
			onText(c)
		}
	}
	if resp.Message.Content == "" {
		resp.Message.Content = strings.Join(st.chunks, "")
	}
	resp.Message.Role = hooks.RoleAssistant
	return resp, nil
}

func (s *scripted) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	st, err := s.next(seen{req: req, how: "complete"})
	if err != nil {
		return llm.Response{}, err
	}
	return s.answer(ctx, st, nil)
}

func (s *scripted) Stream(ctx context.Context, req llm.Request, onText func(string)) (llm.Response, error) {
	st, err := s.next(seen{req: req, how: "stream"})
	if err != nil {
		return llm.Response{}, err
	}
	return s.answer(ctx, st, onText)
}

// forwarding is the fake upstream speaking a wire protocol.
type forwarding struct {
	scripted
	proto llm.Protocol
}

func (f *forwarding) Protocol() llm.Protocol { return f.proto }

func (f *forwarding) Forward(ctx context.Context, req llm.Request, pass *upstream.Passthrough, onText func(string)) (llm.Response, *upstream.WireResponse, error) {
	sn := seen{req: req, how: "forward"}
	take := pass.Messages()
	for _, m := range req.Messages {
		w, _ := take.Take(m)
		sn.wires = append(sn.wires, w)
	}
	if pass != nil {
		sn.fields = pass.Fields
	}
	st, err := f.next(sn)
	if err != nil {
		return llm.Response{}, nil, err
	}
	resp, err := f.answer(ctx, st, onText)
	if err != nil {
		return resp, nil, err
	}
	return resp, st.wire, nil
}

// testFront is a client protocol that writes nothing itself: the tests
// look at the Result and the recorded stream.
type testFront struct{ proto llm.Protocol }

var _ dialect.Front = testFront{}

func (f testFront) Protocol() llm.Protocol  { return f.proto }
func (f testFront) Path() string            { return "/test" }
func (f testFront) Fields() []dialect.Field { return nil }
func (f testFront) Decode([]byte) (*dialect.Call, error) {
	return nil, errors.New("testFront does not decode")
}
func (f testFront) Encode(_ *dialect.Call, res *dialect.Result) ([]byte, error) {
	return json.Marshal(res)
}
func (f testFront) NewStream(http.ResponseWriter, *dialect.Call, dialect.Meta) dialect.Sink {
	return &recSink{}
}
func (f testFront) ErrorBody(e *dialect.Error) []byte { return []byte(e.Message) }

// recSink records a stream as readable events.
type recSink struct {
	mu      sync.Mutex
	events  []string
	pinged  chan struct{} // closed at the first ping, when set
	pingSet bool
	failAt  int // fail the nth event (1-based) when > 0
}

var _ dialect.Sink = (*recSink)(nil)

func (s *recSink) add(ev string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events = append(s.events, ev)
	if s.failAt > 0 && len(s.events) >= s.failAt {
		return errors.New("broken pipe")
	}
	return nil
}

func (s *recSink) Text(d string) error { return s.add("text:" + d) }
func (s *recSink) EndRound() error     { return s.add("end") }
func (s *recSink) ToolCall(c hooks.ToolCall) error {
	return s.add(fmt.Sprintf("call:%s:%s(%s)", c.ID, c.Name, c.Arguments))
}
func (s *recSink) Ping() error {
	s.mu.Lock()
	if s.pinged != nil && !s.pingSet {
		s.pingSet = true
		close(s.pinged)
	}
	s.mu.Unlock()
	return s.add("ping")
}
func (s *recSink) Finish(stop hooks.StopReason, u hooks.Usage) error {
	return s.add(fmt.Sprintf("finish:%s:%d/%d", stop, u.InputTokens, u.OutputTokens))
}
func (s *recSink) Fail(e *dialect.Error) error { return s.add("fail:" + e.Message) }
func (s *recSink) Started() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.events) > 0
}

// list returns the events without pings (whose number depends on timing).
func (s *recSink) list() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, e := range s.events {
		if e != "ping" {
			out = append(out, e)
		}
	}
	return out
}

func (s *recSink) count(prefix string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, e := range s.events {
		if strings.HasPrefix(e, prefix) {
			n++
		}
	}
	return n
}

func newBus(t *testing.T, plugins ...hooks.Plugin) *hookbus.Bus { return bustest.New(t, plugins...) }

func flush(t *testing.T, b *hookbus.Bus) { bustest.Flush(t, b) }

// recorder collects what observer hooks and the Observer were told.
type recorder struct {
	mu       sync.Mutex
	starts   []hooks.SessionStart
	ends     []hooks.SessionEnd
	outcomes []hooks.ToolCallOutcome
	infs     []hooks.Inference
	rounds   int
	tools    []string
	evicted  int
}

func (r *recorder) Round(llm.Protocol) { r.mu.Lock(); r.rounds++; r.mu.Unlock() }
func (r *recorder) ToolCall(how string) {
	r.mu.Lock()
	r.tools = append(r.tools, how)
	r.mu.Unlock()
}
func (r *recorder) StoreEvicted(n int) { r.mu.Lock(); r.evicted += n; r.mu.Unlock() }

var (
	_ Observer      = (*recorder)(nil)
	_ StoreObserver = (*recorder)(nil)
)

// observer returns a plugin that records every observer hook into r.
func (r *recorder) observer() *hooks.Funcs {
	return &hooks.Funcs{
		Name:               "watch",
		OnSessionStartFunc: keep(r, &r.starts),
		OnSessionEndFunc:   keep(r, &r.ends),
		PostToolCallFunc:   keep(r, &r.outcomes),
		PostLLMCallFunc:    keep(r, &r.infs),
	}
}

// keep is an observer hook that appends each event to *list, under r's
// lock.
func keep[E any](r *recorder, list *[]E) func(context.Context, E) error {
	return func(_ context.Context, ev E) error {
		r.mu.Lock()
		defer r.mu.Unlock()
		*list = append(*list, ev)
		return nil
	}
}

// wantEnd flushes bus and checks that r saw exactly one on_session_end,
// for reason; it returns that one (the zero value when there was not one).
func (r *recorder) wantEnd(t *testing.T, bus *hookbus.Bus, reason hooks.EndReason) hooks.SessionEnd {
	t.Helper()
	flush(t, bus)
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.ends) != 1 || r.ends[0].Reason != reason {
		t.Errorf("on_session_end = %+v, want one for %s", r.ends, reason)
		return hooks.SessionEnd{}
	}
	return r.ends[0]
}

// kora is a plugin owning one tool, kora__burn, whose result it provides.
func kora(result string) *hooks.Funcs {
	return koraAnswering(func(json.RawMessage) string { return result })
}

// koraAnswering is kora providing as result what answer makes of the
// call's arguments.
func koraAnswering(answer func(args json.RawMessage) string) *hooks.Funcs {
	return &hooks.Funcs{
		Name:  "kora",
		Tools: []hooks.ToolSpec{{Name: "kora__burn", Description: "cost burn per model", InputSchema: json.RawMessage(`{"type":"object"}`)}},
		PreToolCallCanProvideResultFunc: func(_ context.Context, req hooks.ToolCallRequest) (*hooks.ToolResult, error) {
			if req.Name != "kora__burn" {
				return nil, nil
			}
			return &hooks.ToolResult{Content: answer(req.Arguments)}, nil
		},
	}
}

func text(s string, in, out int) step {
	return step{resp: hooks.ModelResponse{Message: hooks.Message{Content: s}, StopReason: hooks.StopEndTurn, Usage: hooks.Usage{InputTokens: in, OutputTokens: out}}}
}

func calls(content string, in, out int, cs ...hooks.ToolCall) step {
	return step{resp: hooks.ModelResponse{
		Message:    hooks.Message{Content: content, ToolCalls: cs},
		StopReason: hooks.StopToolUse, Usage: hooks.Usage{InputTokens: in, OutputTokens: out},
	}}
}

func tc(id, name, args string) hooks.ToolCall {
	return hooks.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(args)}
}

func userCall(msg string, tools ...hooks.ToolSpec) *dialect.Call {
	return &dialect.Call{Request: hooks.ModelRequest{
		Model: "m", Messages: []hooks.Message{{Role: hooks.RoleUser, Content: msg}}, Tools: tools,
	}}
}

var readFile = hooks.ToolSpec{Name: "read_file", Description: "read a file", InputSchema: json.RawMessage(`{"type":"object"}`)}

func runOK(t *testing.T, r *Relay, front dialect.Front, call *dialect.Call, sink dialect.Sink) *dialect.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := r.Run(ctx, front, call, sink)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return res
}
