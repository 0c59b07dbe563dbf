package wire

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/hookhost/hookhost/hooks"
	pluginv2 "github.com/hookhost/hookhost/plugins/proto/v2"
)

// Stretch asks the plugin for consecutive stages of the tool pipeline for
// one call in one exchange (see hooks.Stretcher): one HookCall with a stage
// per hook, each carrying its own timeout, answered stage by stage. The
// exchange ends, and the plugin is told to cancel what it has not
// answered, when ctx ends or the stretch is closed.
func (c *V2Client) Stretch(ctx context.Context, req hooks.StretchRequest) (hooks.Stretch, error) {
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
	first := string(rows[0].name)
	payload, err := c.encode(first, toolCallRequestToPB(req.Call))
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, c.ctxError(first, err)
	}
	st, p, err := c.open(ctx, first, stages, payload)
	if err != nil {
		return nil, err
	}
	x := &stretch{c: c, st: st, p: p, rows: rows}
	x.stop = context.AfterFunc(ctx, x.Close)
	return x, nil
}

// stretch is one stretch under way on the host's side.
type stretch struct {
	c    *V2Client
	st   *stream
	p    *pending
	rows []*hookRow
	stop func() bool

	mu   sync.Mutex // Next is called by one goroutine, but Close may race it
	next int        // the stage the next message answers
	over bool       // no more stages will come
}

var _ hooks.Stretch = (*stretch)(nil)

// Next waits for the next stage's answer, typed like Handle's answer for
// that stage's hook.
func (x *stretch) Next(ctx context.Context) (any, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.over {
		return nil, fmt.Errorf("host: Next called on a stretch that has no more stages (%d of %d answered)", x.next, len(x.rows))
	}
	i := x.next
	hook := string(x.rows[i].name)
	m, err := x.st.await(ctx, x.p)
	if err != nil {
		x.over = true
		return nil, x.c.waitError(ctx, hook, err)
	}
	x.next++
	v, err := x.c.settle(x.rows[i], i, m)
	if err != nil || m.GetLast() || x.next == len(x.rows) {
		x.over = true
		if !m.GetLast() && x.next < len(x.rows) {
			// Out of step with the plugin: stop it.
			x.st.giveUp(x.p)
		}
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
