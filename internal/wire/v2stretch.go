package wire

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/hookhost/hookhost/internal/hookstretch"
	pluginv2 "github.com/hookhost/hookhost/plugins/proto/v2"
)

// Stretch asks the plugin for consecutive stages of the tool pipeline for
// one call in one exchange (see hookstretch.Stretcher): one HookCall with a stage
// per hook, each carrying its own timeout, answered stage by stage. The
// exchange ends, and the plugin is told to cancel what it has not
// answered, when ctx ends or the stretch is closed.
func (c *V2Client) Stretch(ctx context.Context, req hookstretch.Request) (hookstretch.Stretch, error) {
	if len(req.Stages) == 0 {
		return nil, errors.New("host: a stretch needs at least one stage")
	}
	rows := make([]*hookRow, len(req.Stages))
	stages := make([]*pluginv2.Stage, len(req.Stages))
	for i, s := range req.Stages {
		row, ok := rowOf(s.Hook)
		if !ok {
			return nil, fmt.Errorf("host: unknown hook %q in a stretch", s.Hook)
		}
		rows[i] = row
		stages[i] = &pluginv2.Stage{Hook: string(s.Hook), TimeoutNs: int64(s.Timeout)}
	}
	return c.exchange(ctx, rows, stages, toolCallRequestToPB(req.Call))
}

// exchange sends one HookCall of several stages, with first's request m
// as its payload, and returns it as a stretch whose answers are read stage
// by stage. Sending may take no longer than the first stage's deadline.
func (c *V2Client) exchange(ctx context.Context, rows []*hookRow, stages []*pluginv2.Stage, m proto.Message) (hookstretch.Stretch, error) {
	first := string(rows[0].name)
	payload, err := c.encode(first, m)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, c.ctxError(first, err)
	}
	// Sending may take no longer than the first stage: a plugin that stopped
	// reading its stream must cost the turn no more than a plain call of
	// that hook would.
	st, p, err := c.open(ctx, first, &pluginv2.HookCall{Stages: stages, Payload: payload}, time.Duration(stages[0].GetTimeoutNs()))
	if err != nil {
		if errors.Is(err, errSendBound) {
			return nil, &CallError{Plugin: c.current().Plugin, Hook: first, Kind: context.DeadlineExceeded,
				Status: status.New(codes.DeadlineExceeded, errNotTaken.Error()),
				Msg:    fmt.Sprintf("%v (%v): it is not reading its hook stream", errNotTaken, time.Duration(stages[0].GetTimeoutNs()))}
		}
		return nil, err
	}
	x := &stretch{c: c, st: st, p: p, rows: rows}
	// The callback must not touch x.stop: when ctx has already ended it
	// runs at once, before AfterFunc has returned it.
	x.stop = context.AfterFunc(ctx, func() { st.giveUp(p) })
	return x, nil
}

// errNotTaken is why a stretch was not sent: the plugin's stream had no
// room for it within its first stage's deadline.
var errNotTaken = errors.New("the plugin did not take the stretch within its first stage's deadline")

// stretch is one stretch under way on the host's side.
type stretch struct {
	c    *V2Client
	st   *stream
	p    *pending
	rows []*hookRow
	stop func() bool

	// mu keeps two calls of Next from interleaving; Close does not take
	// it, so that it can end a Next that waits.
	mu   sync.Mutex
	next int  // the stage the next message answers
	over bool // no more stages will come
	// early is set when the plugin marked its answer to a stage last where
	// the catalogue's rules do not end the stretch: the next stage's Next
	// reports it.
	early bool
}

var (
	_ hookstretch.Stretch = (*stretch)(nil)
	_ hookstretch.Ready   = (*stretch)(nil)
)

// Next waits for the next stage's answer, typed like Handle's answer for
// that stage's hook.
func (x *stretch) Next(ctx context.Context) (any, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.early {
		x.early = false
		return nil, &CallError{Plugin: x.c.current().Plugin, Hook: string(x.rows[x.next].name), Kind: ErrMalformed, Msg: fmt.Sprintf(
			"the plugin ended the stretch after stage %d, where the rules do not end it", x.next-1)}
	}
	if x.over {
		return nil, fmt.Errorf("host: Next called on a stretch that has no more stages (%d of %d answered)", x.next, len(x.rows))
	}
	m, err := x.st.await(ctx, x.p)
	if err != nil {
		x.over = true
		return nil, x.c.waitError(ctx, string(x.rows[x.next].name), err)
	}
	return x.took(m)
}

// TryNext gives the next stage's answer if it has come (see
// hookstretch.Ready).
func (x *stretch) TryNext() (any, bool, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.early || x.over {
		return nil, false, nil // Next says what is wrong
	}
	select {
	case m := <-x.p.answers:
		v, err := x.took(m)
		return v, true, err
	default:
		return nil, false, nil
	}
}

// took settles m, the answer to the next stage, and says whether the
// stretch goes on. x.mu is held.
func (x *stretch) took(m *pluginv2.PluginMessage) (any, error) {
	i := x.next
	x.next++
	v, err := x.c.settle(x.rows[i], i, m)
	if err != nil || m.GetLast() || x.next == len(x.rows) {
		x.over = true
		if !m.GetLast() && x.next < len(x.rows) {
			// Out of step with the plugin: stop it.
			x.st.giveUp(x.p)
		}
		// Only a failure, a block or a provide that gave nothing ends a
		// stretch before its last stage.
		x.early = err == nil && m.GetLast() && x.next < len(x.rows) && !stops(x.rows[i].name, v)
	}
	return v, err
}

// Close ends the exchange; unless the plugin already sent its last answer,
// it is told to cancel the stages not answered yet. Safe to call more than
// once and concurrently with Next.
func (x *stretch) Close() {
	x.stop()
	x.st.giveUp(x.p)
}
