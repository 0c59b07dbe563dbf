package wire

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/hookhost/hookhost/hooks"
	pluginv1 "github.com/hookhost/hookhost/plugins/proto/v1"
	pluginv2 "github.com/hookhost/hookhost/plugins/proto/v2"
)

// V2Client speaks protocol version 2: one long-lived stream per plugin
// process carries every hook call, multiplexed by call id, any number of
// them at once.
//
// The stream is opened by the first call and reopened by the call after it
// ended. Two goroutines serve it: a sender fed by a bounded queue, so that a
// plugin that stops reading its stream makes calls to that plugin time out
// and holds up nothing else, and a reader that hands each answer to the call
// waiting for it. A caller sends its call itself, sparing the hand-off to
// the sender, when nothing is queued and the send cannot block: when the
// bytes sent that the plugin has not yet been seen to read are fewer than
// gRPC lets a stream schedule before it blocks (see sendBudget). A call
// whose context ends first returns the context's
// error: if it was still queued it is never sent, otherwise the plugin is
// sent a Cancel for it, and its answer, if it still comes, is dropped and
// counted (LateAnswers).
//
// A broken stream fails the calls in flight: as unavailable, or as
// malformed when the plugin sent a message over the host's
// max_result_size, since the stream cannot tell which call it was for.
type V2Client struct {
	rules
	unary grpc.ClientConnInterface // Describe and Configure, through the boundary
	rpc   pluginv2.PluginClient    // the Hooks stream
	ids   atomic.Uint64
	late  atomic.Uint64
	// batches is the manifest's observer_batches: the plugin takes
	// observer batches (ObserveBatch).
	batches atomic.Bool
	// modelStages is the manifest's model_stages: the plugin answers a
	// model-side stage in one exchange (ModelStage).
	modelStages atomic.Bool

	mu     sync.Mutex
	lane   *laneClient          // offered and not yet taken by a stream
	onLane atomic.Bool          // a stream runs on the lane
	cur    *stream              // where new calls go
	live   map[*stream]struct{} // cur and streams retired with calls in flight
	closed bool
	wg     sync.WaitGroup // the streams' goroutines
}

// NewV2Client returns a V2Client for the plugin behind cc. The stream is
// opened by the first call and reopened after it ends.
func NewV2Client(cc grpc.ClientConnInterface) *V2Client {
	c := &V2Client{live: map[*stream]struct{}{}}
	c.unary = boundary{cc: cc, r: &c.rules}
	c.rpc = pluginv2.NewPluginClient(cc)
	return c
}

// Version is 2.
func (c *V2Client) Version() int { return 2 }

// Describe asks the plugin for its manifest.
func (c *V2Client) Describe(ctx context.Context) (hooks.Manifest, error) {
	return describe(ctx, &c.rules, func(ctx context.Context) (*pluginv1.Manifest, error) {
		m, err := pluginv2.NewPluginClient(c.unary).Describe(ctx, &pluginv1.DescribeRequest{})
		c.batches.Store(m.GetObserverBatches())
		c.modelStages.Store(m.GetModelStages())
		if err == nil && !m.GetLane() {
			c.dropLane()
		}
		return m, err
	})
}

// Configure hands the plugin its config table as a JSON object and
// returns the hooks it does not serve as configured.
func (c *V2Client) Configure(ctx context.Context, configJSON []byte) ([]hooks.Name, error) {
	r, err := pluginv2.NewPluginClient(c.unary).Configure(ctx, &pluginv1.ConfigureRequest{ConfigJson: configJSON})
	if err != nil {
		return nil, c.callError(ctx, "configure", err)
	}
	return unservedFromPB(r), nil
}

// OfferLane gives the client the host's end of the plugin's lane (see
// LaneFDEnv). Describe keeps it when the plugin serves it and closes it
// otherwise; from then on new streams run on it until it breaks. Call it
// before Describe.
func (c *V2Client) OfferLane(conn net.Conn) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || c.lane != nil {
		_ = conn.Close()
		return
	}
	c.lane = newLaneClient(conn)
}

// OnLane tells whether the hook stream runs on the lane.
func (c *V2Client) OnLane() bool { return c.onLane.Load() }

func (c *V2Client) dropLane() {
	c.mu.Lock()
	l := c.lane
	c.lane = nil
	c.mu.Unlock()
	if l != nil {
		_ = l.conn.Close()
	}
}

// LateAnswers counts the answers that came for calls no one waited for any
// more, and were dropped.
func (c *V2Client) LateAnswers() uint64 { return c.late.Load() }

// Close ends the stream and its goroutines; calls in flight fail as
// unavailable, and so does every call made after.
func (c *V2Client) Close() {
	c.mu.Lock()
	c.closed = true
	c.cur = nil
	live := make([]*stream, 0, len(c.live))
	for st := range c.live {
		live = append(live, st)
	}
	lane := c.lane
	c.lane = nil
	c.mu.Unlock()
	if lane != nil {
		_ = lane.conn.Close()
	}
	for _, st := range live {
		st.broke(errClientClosed)
	}
	c.wg.Wait()
}

var errClientClosed = errors.New("the host closed its connection to the plugin")

// Handle makes one hook call.
func (c *V2Client) Handle(ctx context.Context, hook hooks.Name, req any) (any, error) {
	row, ok := rowOf(hook)
	if !ok {
		return nil, fmt.Errorf("host: unknown hook %q", hook)
	}
	in, err := row.request(req)
	if err != nil {
		return nil, err
	}
	payload, err := c.encode(string(hook), in)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, c.ctxError(string(hook), err)
	}
	var timeout time.Duration
	if d, ok := ctx.Deadline(); ok {
		timeout = max(time.Until(d), 1)
	}
	stages := []*pluginv2.Stage{{Hook: string(hook), TimeoutNs: int64(timeout)}}
	st, p, err := c.open(ctx, string(hook), &pluginv2.HookCall{Stages: stages, Payload: payload}, 0)
	if err != nil {
		return nil, err
	}
	m, err := st.await(ctx, p)
	if err != nil {
		return nil, c.waitError(ctx, string(hook), err)
	}
	return c.settle(row, 0, m)
}

// encode makes the request message's bytes: repaired when its text is not
// valid UTF-8, refused when it is over the plugin's max_request_size.
func (c *V2Client) encode(hook string, m proto.Message) ([]byte, error) {
	s := c.current()
	refuse := func(size int) error {
		e := s.tooLarge(size)
		e.Plugin, e.Hook = s.Plugin, hook
		return e
	}
	if size := proto.Size(m); size > s.MaxRequestSize {
		return nil, refuse(size)
	}
	b, err := proto.Marshal(m)
	if err != nil {
		// Marshal refuses a string field that is not valid UTF-8; repairing
		// only then keeps the walk over every field off the path of valid
		// requests.
		if s.repaired(hook, m) > 0 {
			b, err = proto.Marshal(m)
		}
		if err != nil {
			return nil, &CallError{Plugin: s.Plugin, Hook: hook, Kind: hooks.ErrRefused, Msg: fmt.Sprintf("the host could not encode the request: %v", err)}
		}
	}
	if len(b) > s.MaxRequestSize {
		return nil, refuse(len(b))
	}
	return b, nil
}

// open sends a call of want's stages and payload or payloads, with an id
// of its own, on the current stream, opening one if needed. A call that
// waits for room on the stream waits no longer than bound, when bound is
// set, and then fails with errSendBound.
func (c *V2Client) open(ctx context.Context, hook string, want *pluginv2.HookCall, bound time.Duration) (*stream, *pending, error) {
	for retried := false; ; retried = true {
		st, err := c.stream()
		if err != nil {
			return nil, nil, c.streamError(hook, err)
		}
		call := &pluginv2.HookCall{Id: c.ids.Add(1), Stages: want.Stages, Payload: want.Payload, Payloads: want.Payloads}
		p, err := st.begin(ctx, call, bound)
		switch {
		case err == nil:
			return st, p, nil
		case errors.Is(err, errStreamGone) && !retried:
			// It broke between being picked and being used: once more on
			// a fresh one.
			continue
		case errors.Is(err, errSendBound):
			return nil, nil, err
		default:
			return nil, nil, c.waitError(ctx, hook, err)
		}
	}
}

// stream returns the stream new calls go to, opening one when there is
// none, the last one broke, or the settings it was opened with changed.
func (c *V2Client) stream() (*stream, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, errClientClosed
	}
	s := c.current()
	if st := c.cur; st != nil {
		// A lane stream reads each answer against the limit of the
		// moment, so new settings need no new stream; there is only one
		// lane.
		if !st.isBroken() && (st.s == s || st.lane != nil) {
			return st, nil
		}
		st.retire()
	}
	ctx, cancel := context.WithCancel(context.Background())
	st := &stream{
		c: c, s: s, ctx: ctx, cancel: cancel,
		out:   make(chan *pending, sendQueue),
		wake:  make(chan struct{}, 1),
		dead:  make(chan struct{}),
		calls: map[uint64]*pending{},
	}
	if c.lane != nil {
		st.lane, c.lane = c.lane, nil
		st.cs = st.lane
		st.turn = make(chan struct{}, 1)
		st.turn <- struct{}{}
		c.onLane.Store(true)
	}
	c.cur = st
	c.live[st] = struct{}{}
	c.wg.Add(1)
	go st.run()
	return st, nil
}

// forget drops a stream that ended.
func (c *V2Client) forget(st *stream) {
	c.mu.Lock()
	delete(c.live, st)
	if c.cur == st {
		c.cur = nil
	}
	c.mu.Unlock()
}

// sendQueue bounds the calls waiting for the sender. A caller that finds
// it full waits for room until its own context ends.
const sendQueue = 256

// stream is one Hooks stream and the calls in flight on it.
type stream struct {
	c      *V2Client
	s      *applied // the settings it was opened with: its receive limit
	ctx    context.Context
	cancel context.CancelFunc
	out    chan *pending // calls to send
	wake   chan struct{} // tells the sender there are cancels
	dead   chan struct{} // closed when it broke; err says why

	// sendMu serializes the sends on cs: the sender's, and a caller's own
	// (which only tries it, and queues its call when it is held).
	sendMu sync.Mutex

	// lane is set when the stream runs on the plugin's lane. Then no
	// goroutine of its own reads it: the callers waiting for answers read
	// it, one at a time, whoever holds turn, and hand the others theirs.
	lane *laneClient
	turn chan struct{}

	mu    sync.Mutex
	cs    hookSender // set once the stream is open
	calls map[uint64]*pending
	// sent counts the bytes handed to cs.Send, seen those the plugin has
	// been seen to read: an answer to a call shows that the plugin read
	// the call and everything sent before it. Both change under sendMu
	// and mu.
	sent, seen uint64
	// cancels are the ids of calls sent whose callers gave up. Never
	// dropped, and bounded by the calls in flight: each call sent adds at
	// most one.
	cancels []uint64
	// reading is the call whose caller reads the lane, nil when none does.
	reading *pending
	err     *CallError // template: Kind, Msg, Status
	retired bool       // no new calls; ends when the last one does
}

// pending is one call in flight: the reader puts the plugin's messages for
// it in answers, at most one per stage.
type pending struct {
	id      uint64
	call    *pluginv2.HookCall
	stages  int
	got     int    // messages delivered, under stream.mu
	sent    bool   // the sender took it, under stream.mu
	end     uint64 // stream.sent once it was sent, under stream.mu
	answers chan *pluginv2.PluginMessage
	quit    chan struct{} // closed when the caller gave up
	once    sync.Once
}

var errStreamGone = errors.New("the stream broke before the call could be sent")

// hookSender is where a stream's messages go: the Hooks stream, or the
// lane.
type hookSender interface {
	Send(*pluginv2.HostMessage) error
}

// sendBudget bounds the bytes sent and not yet seen read under which a
// caller sends its call itself. gRPC's Send blocks only when a stream has
// 64 KiB (its fixed write quota) handed to it and not yet written to the
// connection; bytes not yet written are never more than those not seen
// read, so under this budget a Send cannot block, whatever the plugin
// does. Past it, calls go through the sender, whose Send may block. On a
// lane the call must also fit, with them, in the room its socket buffers
// (laneClient.room): a write past it would wait for the plugin to read.
const sendBudget = 32 << 10

// frameHeader is gRPC's length prefix of each message, counted against
// its write quota.
const frameHeader = 5

// run opens the stream and sends what the callers queue: a call only while
// its caller still waits for it, and a Cancel only for a call sent. Cancels
// go first, each one sparing the plugin work no one waits for.
func (st *stream) run() {
	defer st.c.wg.Done()
	var cs hookSender = st.lane
	if st.lane != nil {
		// Ending the stream closes the lane: a send blocked on it, and
		// the caller reading it, return.
		lane := st.lane
		context.AfterFunc(st.ctx, func() { _ = lane.conn.Close() })
	} else {
		hs, err := st.c.rpc.Hooks(st.ctx, st.s.recvLimit)
		if err != nil {
			st.broke(err)
			return
		}
		st.mu.Lock()
		st.cs = hs
		st.mu.Unlock()
		st.c.wg.Add(1)
		go st.read(hs)
		cs = hs
	}
	for {
		if !st.sendCancels(cs) {
			// The stream is over; Recv says why.
			return
		}
		select {
		case <-st.wake:
		case p := <-st.out:
			if !st.sendQueued(cs, p) {
				return
			}
		case <-st.ctx.Done():
			return
		}
	}
}

// sendCancels sends the cancels waiting to be sent; false when the stream
// is over.
func (st *stream) sendCancels(cs hookSender) bool {
	st.sendMu.Lock()
	defer st.sendMu.Unlock()
	st.mu.Lock()
	ids := st.cancels
	st.cancels = nil
	st.mu.Unlock()
	for _, id := range ids {
		m := &pluginv2.HostMessage{Kind: &pluginv2.HostMessage_Cancel{Cancel: &pluginv2.Cancel{Id: id}}}
		size := uint64(proto.Size(m))
		st.c.sent.Add(size)
		st.mu.Lock()
		st.sent += size + frameHeader
		st.mu.Unlock()
		if err := cs.Send(m); err != nil {
			return false
		}
	}
	return true
}

// sendQueued sends a queued call if its caller still waits for it, marking
// it sent: from then on giving up on it sends a Cancel. False when the
// stream is over.
func (st *stream) sendQueued(cs hookSender, p *pending) bool {
	st.sendMu.Lock()
	defer st.sendMu.Unlock()
	m := &pluginv2.HostMessage{Kind: &pluginv2.HostMessage_Call{Call: p.call}}
	st.mu.Lock()
	if st.calls[p.id] != p {
		st.mu.Unlock()
		return true
	}
	st.markSentLocked(p, uint64(proto.Size(m)))
	st.mu.Unlock()
	p.call = nil // its payload is not held while the call runs
	return cs.Send(m) == nil
}

// markSentLocked counts p's call, a message of size bytes, as sent.
func (st *stream) markSentLocked(p *pending, size uint64) {
	p.sent = true
	st.c.sent.Add(size)
	st.sent += size + frameHeader
	p.end = st.sent
}

// read hands each answer to the call waiting for it.
func (st *stream) read(cs grpc.BidiStreamingClient[pluginv2.HostMessage, pluginv2.PluginMessage]) {
	defer st.c.wg.Done()
	for {
		m, err := cs.Recv()
		if err != nil {
			st.broke(err)
			return
		}
		st.c.received.Add(uint64(proto.Size(m)))
		st.deliver(m)
	}
}

func (st *stream) deliver(m *pluginv2.PluginMessage) {
	st.mu.Lock()
	p := st.calls[m.GetId()]
	if p == nil {
		st.mu.Unlock()
		st.c.late.Add(1)
		return
	}
	p.got++
	if p.end > st.seen {
		st.seen = p.end
	}
	if m.GetLast() || p.got >= p.stages {
		// Nothing more is taken for this call: whatever else comes for
		// its id is late.
		st.removeLocked(p)
	}
	st.mu.Unlock()
	// Never blocks: answers has room for one message per stage, and no
	// more are delivered.
	p.answers <- m
}

// errSendBound is why a call was not sent: it waited for room on the
// stream for as long as open's bound allowed.
var errSendBound = errors.New("the call waited for room on the stream past its bound")

// begin registers a call and sends it, or queues it for the sender, for
// no longer than bound when bound is set (see open).
func (st *stream) begin(ctx context.Context, call *pluginv2.HookCall, bound time.Duration) (*pending, error) {
	p := &pending{
		id:      call.GetId(),
		call:    call,
		stages:  len(call.GetStages()),
		answers: make(chan *pluginv2.PluginMessage, len(call.GetStages())),
		quit:    make(chan struct{}),
	}
	// Sending it here needs the send lock free (the sender is not in a
	// Send, which may block) and no call queued before it.
	own := len(st.out) == 0 && st.sendMu.TryLock()
	st.mu.Lock()
	if st.err != nil {
		st.mu.Unlock()
		if own {
			st.sendMu.Unlock()
		}
		return nil, fmt.Errorf("%w: %w", errStreamGone, st.err)
	}
	st.calls[p.id] = p
	if own && st.cs != nil && st.sent-st.seen < sendBudget {
		cs := st.cs
		m := &pluginv2.HostMessage{Kind: &pluginv2.HostMessage_Call{Call: call}}
		if size := uint64(proto.Size(m)); st.lane == nil || st.sent-st.seen+size+laneHeader <= uint64(st.lane.room) {
			st.markSentLocked(p, size)
			busy := len(st.calls) > 1
			st.mu.Unlock()
			p.call = nil
			// A failed Send means the stream is over: the reader says
			// why, and the call fails with it. With other calls in
			// flight on a lane, the call is held for a write it may
			// share with theirs (frameWriter.hold): a busy lane then
			// costs fewer writes, and wakes the plugin fewer times,
			// than it carries calls.
			if st.lane != nil && busy {
				_ = st.lane.out.hold(m)
			} else {
				_ = cs.Send(m)
			}
			st.sendMu.Unlock()
			return p, nil
		}
	}
	st.mu.Unlock()
	if own {
		st.sendMu.Unlock()
	}
	// The bound's timer is made only here: a call sent at once, as most
	// are, costs none.
	wait := ctx
	if bound > 0 {
		var cancel context.CancelFunc
		wait, cancel = context.WithTimeoutCause(ctx, bound, errSendBound)
		defer cancel()
	}
	select {
	case st.out <- p:
		return p, nil
	case <-wait.Done():
		// Never sent, so there is nothing to cancel.
		st.mu.Lock()
		st.removeLocked(p)
		st.mu.Unlock()
		if ctx.Err() == nil {
			return nil, errSendBound
		}
		return nil, ctx.Err()
	case <-st.dead:
		return nil, fmt.Errorf("%w: %w", errStreamGone, st.err)
	}
}

// await waits for the call's next message. On a lane it takes its turn at
// reading when no one else reads.
func (st *stream) await(ctx context.Context, p *pending) (*pluginv2.PluginMessage, error) {
	for {
		select {
		case m := <-p.answers:
			return m, nil
		case <-ctx.Done():
			st.giveUp(p)
			return nil, ctx.Err()
		case <-p.quit:
			return nil, errStretchClosed
		case <-st.dead:
			// An answer delivered just before the stream broke still
			// counts.
			select {
			case m := <-p.answers:
				return m, nil
			default:
			}
			return nil, st.err
		case <-st.turn: // nil, never ready, off the lane
			st.readFor(ctx, p)
			st.turn <- struct{}{}
		}
	}
}

// readFor reads the lane, handing each answer to the call it is for, until
// p has one, p's caller gives up, or the lane breaks. The read is
// interrupted when ctx ends, and when p is given up from elsewhere (a
// stretch closed under its Next); what was read of a frame stays for the
// next reader.
func (st *stream) readFor(ctx context.Context, p *pending) {
	l := st.lane
	st.mu.Lock()
	st.reading = p
	// With other calls waiting there is other work to do, and polling
	// would take the processor from it.
	l.polling(len(st.calls) <= 1)
	st.mu.Unlock()
	defer func() {
		st.mu.Lock()
		st.reading = nil
		st.mu.Unlock()
	}()
	_ = l.conn.SetReadDeadline(time.Time{})
	stop := context.AfterFunc(ctx, l.interrupt)
	defer stop()
	for len(p.answers) == 0 && ctx.Err() == nil {
		select {
		case <-p.quit:
			return
		case <-st.dead:
			return
		default:
		}
		m, size, err := l.recv(st.c.current().MaxResultSize)
		if errors.Is(err, os.ErrDeadlineExceeded) {
			// ctx ended, or a caller gave up: the loop's conditions say
			// whether that concerns p, and the read goes on if not.
			_ = l.conn.SetReadDeadline(time.Time{})
			continue
		}
		if err != nil {
			st.broke(err)
			return
		}
		st.c.received.Add(uint64(size))
		st.deliver(m)
	}
}

// giveUp ends a call the caller no longer waits for. A call still queued
// is not sent at all; the plugin is told to cancel one it was sent, unless
// it already said it was done.
func (st *stream) giveUp(p *pending) {
	p.once.Do(func() { close(p.quit) })
	st.mu.Lock()
	cancel := st.calls[p.id] == p && p.sent
	if st.calls[p.id] == p {
		st.removeLocked(p)
	}
	if cancel {
		st.cancels = append(st.cancels, p.id)
	}
	reading := st.reading == p
	st.mu.Unlock()
	if reading {
		// The call's caller reads the lane; it looks again.
		st.lane.interrupt()
	}
	if cancel {
		select {
		case st.wake <- struct{}{}:
		default: // the sender has been told already
		}
	}
}

// removeLocked forgets a call; a retired stream ends with its last call.
func (st *stream) removeLocked(p *pending) {
	delete(st.calls, p.id)
	if st.retired && len(st.calls) == 0 {
		st.cancel()
	}
}

// retire takes no new calls; the stream ends when its last call does.
func (st *stream) retire() {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.retired = true
	if len(st.calls) == 0 {
		st.cancel()
	}
}

func (st *stream) isBroken() bool {
	select {
	case <-st.dead:
		return true
	default:
		return false
	}
}

// broke records why the stream ended, fails the calls in flight and stops
// its goroutines. The first cause wins.
func (st *stream) broke(err error) {
	st.mu.Lock()
	if st.err != nil {
		st.mu.Unlock()
		return
	}
	st.err = st.classify(err)
	st.calls = map[uint64]*pending{}
	close(st.dead)
	st.mu.Unlock()
	if st.lane != nil {
		// There is one lane: no stream runs on it from now on.
		st.c.onLane.Store(false)
	}
	st.cancel()
	st.c.forget(st)
}

// classify says what a stream's end means for the calls it carried.
func (st *stream) classify(err error) *CallError {
	if errors.Is(err, errClientClosed) {
		return &CallError{Kind: hooks.ErrUnavailable, Msg: err.Error()}
	}
	if err == io.EOF {
		return &CallError{Kind: hooks.ErrUnavailable, Msg: "the plugin ended its hook stream"}
	}
	s := status.Convert(err)
	e := &CallError{Kind: hooks.ErrUnavailable, Msg: s.Message(), Status: s}
	switch {
	case s.Code() == codes.ResourceExhausted:
		// An answer over the receive limit, rejected from its length
		// prefix. It ended the stream, and with it every call in flight.
		e.Kind = ErrMalformed
		e.Msg = fmt.Sprintf("%s; it ended the plugin's hook stream and every call in flight on it (this plugin's max_result_size is %d bytes; raise plugins.entries.%s.max_result_size if such answers are legitimate)",
			s.Message(), st.s.MaxResultSize, st.s.configName())
	case s.Code() == codes.Canceled && st.ctx.Err() != nil:
		e.Msg = "the hook stream was closed"
	}
	return e
}

// errStretchClosed ends a Next whose stretch was closed under it.
var errStretchClosed = errors.New("the stretch was closed")

// waitError reports why a call got no answer.
func (c *V2Client) waitError(ctx context.Context, hook string, err error) error {
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return c.ctxError(hook, ctx.Err())
	}
	if errors.Is(err, errStretchClosed) {
		return &CallError{Plugin: c.current().Plugin, Hook: hook, Kind: context.Canceled, Msg: err.Error()}
	}
	return c.streamError(hook, err)
}

func (c *V2Client) ctxError(hook string, err error) error {
	e := &CallError{Plugin: c.current().Plugin, Hook: hook, Kind: err}
	if errors.Is(err, context.DeadlineExceeded) {
		e.Status = status.New(codes.DeadlineExceeded, err.Error())
	} else {
		e.Status = status.New(codes.Canceled, err.Error())
	}
	return e
}

// streamError makes a broken stream's cause the error of one call.
func (c *V2Client) streamError(hook string, err error) error {
	var t *CallError
	if !errors.As(err, &t) {
		t = &CallError{Kind: hooks.ErrUnavailable, Msg: err.Error()}
	}
	e := *t
	e.Plugin, e.Hook = c.current().Plugin, hook
	return &e
}

// settle turns the plugin's message for stage i, a call of row's hook,
// into the hook's answer or the failure it reports. Anything that breaks
// the protocol is malformed.
func (c *V2Client) settle(row *hookRow, i int, m *pluginv2.PluginMessage) (any, error) {
	name := c.current().Plugin
	malformed := func(format string, a ...any) error {
		return &CallError{Plugin: name, Hook: string(row.name), Kind: ErrMalformed, Msg: fmt.Sprintf(format, a...)}
	}
	if got := m.GetStage(); got != uint32(i) {
		return nil, malformed("the plugin answered stage %d of the call, want stage %d", got, i)
	}
	if f := m.GetFailure(); f != nil {
		if len(m.GetAnswer()) > 0 {
			return nil, malformed("the plugin sent both an answer and a failure")
		}
		return nil, failureError(name, string(row.name), f)
	}
	out := row.newResponse()
	if err := proto.Unmarshal(m.GetAnswer(), out); err != nil {
		return nil, malformed("undecodable answer: %v", err)
	}
	return row.answer(out), nil
}

// failureError turns a failure the plugin reported into an error the Bus
// classifies with errors.Is, with the gRPC status version 1 would have
// given.
func failureError(plugin, hook string, f *pluginv2.Failure) error {
	e := &CallError{Plugin: plugin, Hook: hook, Msg: f.GetMessage(), Status: status.New(failureCode(f.GetKind()), f.GetMessage())}
	switch f.GetKind() {
	case pluginv2.Failure_ERROR:
	case pluginv2.Failure_PANIC:
		e.Kind = hooks.ErrPanicked
	case pluginv2.Failure_DEADLINE_EXCEEDED:
		e.Kind = context.DeadlineExceeded
	case pluginv2.Failure_CANCELLED:
		e.Kind = context.Canceled
	default:
		// UNKNOWN_HOOK and BAD_REQUEST: the plugin could not take a call
		// its manifest asked for; anything else is not the protocol.
		e.Kind, e.Status = ErrMalformed, nil
		e.Msg = fmt.Sprintf("failure %s: %s", f.GetKind(), f.GetMessage())
	}
	return e
}
