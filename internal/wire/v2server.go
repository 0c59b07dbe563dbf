package wire

import (
	"context"
	"errors"
	"fmt"
	"net"
	"runtime/debug"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/gopool"
	"github.com/hookhost/hookhost/internal/hookstretch"
	pluginv1 "github.com/hookhost/hookhost/plugins/proto/v1"
	pluginv2 "github.com/hookhost/hookhost/plugins/proto/v2"
)

// maxInFlight bounds the hook calls one stream runs at once. Handlers that
// ignore their context keep running after the host gave up on them; past
// this many the plugin answers new calls with a failure rather than
// holding ever more goroutines. A variable for tests.
var maxInFlight = 4096

// runStretch answers a stretch; a variable so that tests can make it
// misbehave.
var runStretch = hookstretch.Run

// runModelStage answers a model-side stage; a variable for tests too.
var runModelStage = hookstretch.RunModelStage

// errHostCancelled is the cause of a call's context the host cancelled: no
// one waits for its answer any more.
var errHostCancelled = errors.New("the host cancelled the call")

// RegisterV2 serves protocol version 2 for p on s, and on the lane the host
// handed the process, if it handed one (see LaneFDEnv).
func RegisterV2(s grpc.ServiceRegistrar, p hooks.Plugin, configure ConfigureFunc) {
	lane, err := takeLane()
	if err != nil {
		hclog.Default().Warn("the plugin cannot serve the host's lane; its hook calls come on the Hooks stream", "error", err.Error())
	}
	registerV2(s, p, configure, lane)
}

// registerV2 is RegisterV2 with the lane given, nil for none.
func registerV2(s grpc.ServiceRegistrar, p hooks.Plugin, configure ConfigureFunc, lane net.Conn) {
	// The test seams are read once here, not by each stream's goroutines,
	// which may outlive the server a test started them on.
	v := &v2Server{s: &server{p: p, configure: configure},
		maxInFlight: maxInFlight, runStretch: runStretch, runModelStage: runModelStage}
	pluginv2.RegisterPluginServer(s, v)
	if lane != nil {
		v.lane = true
		go v.serveLane(lane)
	}
}

// serveLane serves the hook stream on the lane until the host closes it or
// sends what is not the protocol.
func (v *v2Server) serveLane(conn net.Conn) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	defer conn.Close()
	_ = v.Hooks(newLaneServerStream(ctx, conn))
}

type v2Server struct {
	pluginv2.UnimplementedPluginServer
	lane        bool // the lane is served
	s           *server
	maxInFlight int
	runStretch  func(context.Context, hooks.Plugin, hookstretch.Request, func(any, error))
	// runModelStage is runStretch's counterpart for model stages.
	runModelStage func(context.Context, hooks.Plugin, hookstretch.ModelStageRequest, func(any, error))
}

func (v *v2Server) Describe(ctx context.Context, _ *pluginv1.DescribeRequest) (*pluginv1.Manifest, error) {
	out, f := v.s.describe(ctx)
	if f != nil {
		return nil, f.status()
	}
	// This server answers observer batches (v2batch.go).
	out.ObserverBatches = true
	// This server answers a model-side stage in one exchange, whatever
	// the plugin (modelStage).
	out.ModelStages = true
	out.Lane = v.lane
	return out, nil
}

func (v *v2Server) Configure(ctx context.Context, req *pluginv1.ConfigureRequest) (*pluginv1.ConfigureResponse, error) {
	if f := v.s.configureWith(ctx, req); f != nil {
		return nil, f.status()
	}
	return v.s.configured(), nil
}

// Hooks serves one stream: every call runs on its own goroutine under its
// own context, so a slow handler, or one that ignores its context, holds up
// no other call.
func (v *v2Server) Hooks(stream grpc.BidiStreamingServer[pluginv2.HostMessage, pluginv2.PluginMessage]) error {
	h := &hookStream{s: v.s, stream: stream, calls: map[uint64]*inFlight{},
		maxInFlight: v.maxInFlight, runStretch: v.runStretch, runModelStage: v.runModelStage}
	defer h.end()
	for {
		m, err := stream.Recv()
		if err != nil {
			// The host closed the stream or went away: every call's context
			// derives from the stream's and ends with it.
			return nil
		}
		switch k := m.GetKind().(type) {
		case *pluginv2.HostMessage_Call:
			h.start(k.Call)
		case *pluginv2.HostMessage_Cancel:
			h.cancel(k.Cancel.GetId())
		}
	}
}

// hookStream is the plugin's side of one Hooks stream.
type hookStream struct {
	s           *server
	stream      grpc.BidiStreamingServer[pluginv2.HostMessage, pluginv2.PluginMessage]
	maxInFlight int
	runStretch  func(context.Context, hooks.Plugin, hookstretch.Request, func(any, error))
	// runModelStage answers model stages (hookstretch.RunModelStage).
	runModelStage func(context.Context, hooks.Plugin, hookstretch.ModelStageRequest, func(any, error))

	mu    sync.Mutex
	calls map[uint64]*inFlight // running calls, by id

	sendMu sync.Mutex
	ended  bool // Hooks returned: sending is no longer allowed
}

func (h *hookStream) end() {
	h.sendMu.Lock()
	h.ended = true
	h.sendMu.Unlock()
}

// send serializes the answers of concurrent calls. The host always reads
// its stream, so holding the lock through Send is short.
func (h *hookStream) send(m *pluginv2.PluginMessage) {
	h.sendMu.Lock()
	defer h.sendMu.Unlock()
	if h.ended {
		return
	}
	// A failed Send means the stream is gone; Recv in Hooks sees it too.
	if hs, ok := h.stream.(heldSender); ok && h.othersRunning() {
		_ = hs.SendHeld(m)
		return
	}
	_ = h.stream.Send(m)
}

// heldSender is a stream that can hold an answer for a write shared with
// other calls' answers: the lane.
type heldSender interface {
	SendHeld(*pluginv2.PluginMessage) error
}

// othersRunning reports whether calls other than one are running, whose
// answers may join a held one's write.
func (h *hookStream) othersRunning() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.calls) > 1
}

func (h *hookStream) fail(id uint64, stage int, f *failure) {
	h.send(&pluginv2.PluginMessage{Id: id, Stage: uint32(stage), Failure: f.pb(), Last: true})
}

// answer sends one stage's result: out when f is nil.
func (h *hookStream) answer(id uint64, stage int, out proto.Message, f *failure, last bool) {
	m := &pluginv2.PluginMessage{Id: id, Stage: uint32(stage), Last: last}
	if f == nil {
		b, err := proto.Marshal(out)
		if err != nil {
			f = &failure{pluginv2.Failure_ERROR, fmt.Sprintf("the plugin could not encode its answer: %v", err)}
		}
		m.Answer = b
	}
	if f != nil {
		m.Answer, m.Failure, m.Last = nil, f.pb(), true
	}
	h.send(m)
}

func (h *hookStream) start(call *pluginv2.HookCall) {
	id := call.GetId()
	if len(call.GetStages()) == 0 {
		h.fail(id, 0, &failure{pluginv2.Failure_BAD_REQUEST, "a hook call with no stages"})
		return
	}
	h.mu.Lock()
	if _, dup := h.calls[id]; dup {
		h.mu.Unlock()
		h.fail(id, 0, &failure{pluginv2.Failure_BAD_REQUEST, fmt.Sprintf("call id %d is already in flight", id)})
		return
	}
	if len(h.calls) >= h.maxInFlight {
		h.mu.Unlock()
		h.fail(id, 0, &failure{pluginv2.Failure_ERROR, fmt.Sprintf("the plugin is already running %d hook calls; it answers no more until some finish", h.maxInFlight)})
		return
	}
	ctx, cancel := context.WithCancelCause(h.stream.Context())
	running := &inFlight{cancel: cancel}
	h.calls[id] = running
	h.mu.Unlock()
	// release frees the call's slot. A plain call frees it before its
	// answer goes out: the host may send its next call the moment it reads
	// the answer, and must find the slot free. A stretch keeps it until
	// every handler it started has returned, which can be after its last
	// answer.
	release := func() {
		h.mu.Lock()
		if h.calls[id] == running {
			delete(h.calls, id)
		}
		h.mu.Unlock()
	}
	gopool.Go(func() {
		defer func() {
			release()
			cancel(nil)
		}()
		switch {
		case len(call.GetPayloads()) > 0:
			h.batch(ctx, id, call)
		case len(call.GetStages()) == 1:
			h.one(ctx, id, call.GetStages()[0], call.GetPayload(), release)
		case hooks.Name(call.GetStages()[0].GetHook()).ModelStage() != 0:
			h.modelStage(ctx, id, call.GetStages(), call.GetPayload())
		default:
			h.stretch(ctx, id, call.GetStages(), call.GetPayload())
		}
	})
}

// inFlight is a running call: its own value, so that a call's release
// never frees a later call that reuses its id.
type inFlight struct {
	cancel context.CancelCauseFunc
}

func (h *hookStream) cancel(id uint64) {
	h.mu.Lock()
	c := h.calls[id]
	h.mu.Unlock()
	if c != nil {
		c.cancel(errHostCancelled)
	}
}

// one answers a plain hook call.
func (h *hookStream) one(ctx context.Context, id uint64, stage *pluginv2.Stage, payload []byte, release func()) {
	row, ok := rowOf(hooks.Name(stage.GetHook()))
	if !ok {
		release()
		h.fail(id, 0, &failure{pluginv2.Failure_UNKNOWN_HOOK, fmt.Sprintf("the plugin does not know hook %q", stage.GetHook())})
		return
	}
	in := row.newRequest()
	if err := proto.Unmarshal(payload, in); err != nil {
		release()
		h.fail(id, 0, &failure{pluginv2.Failure_BAD_REQUEST, fmt.Sprintf("undecodable %s request: %v", row.name, err)})
		return
	}
	// A host with no deadline of its own sends none (0).
	if t := stage.GetTimeoutNs(); t > 0 {
		var cancel context.CancelFunc
		ctx, cancel = hookstretch.WithTimeout(ctx, time.Duration(t))
		defer cancel()
	}
	out, f := h.s.call(ctx, row, in)
	if context.Cause(ctx) == errHostCancelled {
		return // no one waits for it
	}
	release()
	h.answer(id, 0, out, f, true)
}

// stretch answers several stages of the tool pipeline, each as soon as it
// is known. hookstretch.Run decides which stages run; the last message is
// marked as such where the catalogue's rules say the stretch stops, and
// when it stopped anyway (an answer that breaks the rules, which the host
// refuses as malformed) a final ERROR failure for the next stage says no
// more will come.
func (h *hookStream) stretch(ctx context.Context, id uint64, stages []*pluginv2.Stage, payload []byte) {
	rows, runStages, ok := h.stageRows(id, stages)
	if !ok {
		return
	}
	req := hookstretch.Request{Stages: runStages}
	var call pluginv1.ToolCallRequest
	if err := proto.Unmarshal(payload, &call); err != nil {
		h.fail(id, 0, &failure{pluginv2.Failure_BAD_REQUEST, fmt.Sprintf("undecodable stretch request: %v", err)})
		return
	}
	req.Call = toolCallRequestFromPB(&call)
	h.runStages(ctx, id, rows, func(p hooks.Plugin, emit func(any, error)) { h.runStretch(ctx, p, req, emit) })
}

// stageRows reads a multi-stage call's stages: each hook's row and the
// stage as the runner takes it. A hook the plugin does not know fails the
// call, answered as stage 0 since no stage has run.
func (h *hookStream) stageRows(id uint64, stages []*pluginv2.Stage) ([]*hookRow, []hookstretch.Stage, bool) {
	rows := make([]*hookRow, len(stages))
	out := make([]hookstretch.Stage, len(stages))
	for i, st := range stages {
		row, ok := rowOf(hooks.Name(st.GetHook()))
		if !ok {
			h.fail(id, 0, &failure{pluginv2.Failure_UNKNOWN_HOOK, fmt.Sprintf("the plugin does not know hook %q (stage %d of the call)", st.GetHook(), i)})
			return nil, nil, false
		}
		rows[i] = row
		out[i] = hookstretch.Stage{Hook: row.name, Timeout: time.Duration(st.GetTimeoutNs())}
	}
	return rows, out, true
}

// runStages runs the stages of one call (a stretch or a model stage)
// through run, sending each answer as run emits it. The last message is
// marked as such where the catalogue's rules say the call stops, and when
// it stopped anyway (an answer that breaks the rules, which the host
// refuses as malformed) a final ERROR failure for the next stage says no
// more will come.
func (h *hookStream) runStages(ctx context.Context, id uint64, rows []*hookRow, run func(hooks.Plugin, func(any, error))) {
	// A runner leaves a handler that ignores its stage's deadline
	// running. Answers still go out as they come, but the call stays
	// counted against maxInFlight until every handler it started returned.
	p := &stageHandlers{Plugin: h.s.p}
	defer p.wait()

	var mu sync.Mutex
	next, over := 0, false
	defer func() {
		// The runner guards the handlers; this guards the runner, so that
		// one bad call never takes the plugin process down.
		if v := recover(); v != nil {
			hclog.Default().Debug("recovered a panic answering a stretch", "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			mu.Lock()
			defer mu.Unlock()
			if !over && context.Cause(ctx) != errHostCancelled {
				over = true
				h.fail(id, next, &failure{pluginv2.Failure_PANIC, fmt.Sprintf("panic answering a stretch: %v", v)})
			}
		}
	}()
	run(p, func(v any, err error) {
		mu.Lock()
		defer mu.Unlock()
		if over || next >= len(rows) {
			return
		}
		i, row := next, rows[next]
		next++
		var out proto.Message
		var f *failure
		if err == nil {
			out, err = row.response(v)
		}
		if err != nil {
			f = stageFailure(err)
		} else {
			out = answer(h.s, row.name, out)
		}
		over = f != nil || i == len(rows)-1 || stops(row.name, v)
		if context.Cause(ctx) != errHostCancelled {
			h.answer(id, i, out, f, over)
		}
	})
	mu.Lock()
	defer mu.Unlock()
	if !over && context.Cause(ctx) != errHostCancelled {
		over = true
		h.fail(id, next, &failure{pluginv2.Failure_ERROR, fmt.Sprintf("the plugin ended the stretch before stage %d", next)})
	}
}

// stops reports whether the catalogue's rules end a stretch or a model
// stage after hook answered v: a block, an ask, a provide stage that gave
// nothing, a provided response or a reissue.
func stops(hook hooks.Name, v any) bool {
	switch hook {
	case hooks.PreToolCall:
		d, _ := v.(*hooks.PreToolCallDecision)
		return d != nil && (d.Block != nil || d.Ask != nil)
	case hooks.PreToolCallCanProvideResult:
		r, _ := v.(*hooks.ToolResult)
		return r == nil
	case hooks.PreLLMCallCanProvideResponse:
		r, _ := v.(*hooks.ModelResponse)
		return r != nil
	case hooks.PostLLMCallCanReissue:
		r, _ := v.(*hooks.Reissue)
		return r != nil
	}
	return false
}

// stageFailure classifies the failure of one stage of a stretch.
func stageFailure(err error) *failure {
	switch {
	case errors.Is(err, hooks.ErrPanicked):
		return &failure{pluginv2.Failure_PANIC, err.Error()}
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		// A stage whose context ended, as RunStretch reports it.
		return contextFailure(err, err.Error())
	}
	return &failure{pluginv2.Failure_ERROR, err.Error()}
}

// stageHandlers is the plugin as a stretch's stages call it: it knows which
// of its handlers still run, so that the stretch's call ends only when the
// last one has returned.
type stageHandlers struct {
	hooks.Plugin
	mu      sync.Mutex
	running sync.WaitGroup
	over    bool // the stretch returned: start no handler
}

func (p *stageHandlers) Handle(ctx context.Context, hook hooks.Name, req any) (any, error) {
	p.mu.Lock()
	if p.over {
		// A stage abandoned before its goroutine got here: no one will
		// read its answer.
		p.mu.Unlock()
		return nil, fmt.Errorf("%s: the stretch is over", hook)
	}
	p.running.Add(1)
	p.mu.Unlock()
	defer p.running.Done()
	return p.Plugin.Handle(ctx, hook, req)
}

// wait starts no more handlers and waits for those running.
func (p *stageHandlers) wait() {
	p.mu.Lock()
	p.over = true
	p.mu.Unlock()
	p.running.Wait()
}
