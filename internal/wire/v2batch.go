package wire

import (
	"context"
	"errors"
	"fmt"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/hookstretch"
	pluginv2 "github.com/hookhost/hookhost/plugins/proto/v2"
)

var _ hookstretch.Batcher = (*V2Client)(nil)

// ObserveBatch delivers observer events in one exchange (see
// hookstretch.Batcher): one HookCall with a stage per event and the events'
// payloads in payloads, answered stage by stage. Each stage's answer is
// waited for at most that event's timeout, counted from the previous
// answer; a batch that stops being answered (deadline, broken stream, a
// message out of step) is cancelled, and the events after the one that
// ended it fail with the same kind, undelivered.
func (c *V2Client) ObserveBatch(ctx context.Context, events []hookstretch.Event, done func(int, error)) error {
	if !c.batches.Load() {
		return hookstretch.ErrNoBatch
	}
	// An event the host cannot send (a payload over max_request_size, of
	// the wrong type) fails on its own, in its place, and is left out of
	// the call.
	refused := make([]error, len(events))
	var (
		stages   []*pluginv2.Stage
		payloads [][]byte
		rows     []*hookRow
		at       []int // the event of each stage
	)
	for i, ev := range events {
		row, ok := rowOf(ev.Hook)
		if !ok || !ev.Hook.Observer() {
			refused[i] = fmt.Errorf("host: %q is not an observer hook; it cannot be in an observer batch", ev.Hook)
			continue
		}
		in, err := row.request(ev.Payload)
		if err != nil {
			refused[i] = err
			continue
		}
		b, err := c.encode(string(ev.Hook), in)
		if err != nil {
			refused[i] = err
			continue
		}
		stages = append(stages, &pluginv2.Stage{Hook: string(ev.Hook), TimeoutNs: int64(ev.Timeout)})
		payloads = append(payloads, b)
		rows = append(rows, row)
		at = append(at, i)
	}
	next := 0 // the next event whose outcome is reported
	reportUpTo := func(end int, cause func(i int) error) {
		for ; next < end; next++ {
			switch {
			case refused[next] != nil:
				done(next, refused[next])
			case cause != nil:
				done(next, cause(next))
			default:
				// Not reached: every event sent is reported by the loop
				// over the stages, with its outcome.
				done(next, fmt.Errorf("host: observer event %d of the batch has no outcome", next))
			}
		}
	}
	if len(stages) == 0 {
		reportUpTo(len(events), nil)
		return nil
	}
	first := stages[0].GetHook()
	fail := func(err error) {
		reportUpTo(len(events), func(i int) error { return retarget(err, events[i].Hook) })
	}
	if err := ctx.Err(); err != nil {
		fail(c.ctxError(first, err))
		return nil
	}
	// As for a stretch: sending may take no longer than the first event's
	// deadline, so that a plugin that stopped reading its stream costs no
	// more than a plain delivery would.
	st, p, err := c.open(ctx, first, &pluginv2.HookCall{Stages: stages, Payloads: payloads}, events[at[0]].Timeout)
	if err != nil {
		if errors.Is(err, errSendBound) {
			err = &CallError{Plugin: c.current().Plugin, Hook: first, Kind: context.DeadlineExceeded,
				Status: status.New(codes.DeadlineExceeded, errBatchNotTaken.Error()),
				Msg:    fmt.Sprintf("%v (%v): it is not reading its hook stream", errBatchNotTaken, events[at[0]].Timeout)}
		}
		fail(err)
		return nil
	}
	// Whatever ends the loop, the plugin is told to stop unless it sent
	// its last answer (then this only forgets the call).
	defer st.giveUp(p)
	for j, row := range rows {
		hook := string(row.name)
		reportUpTo(at[j], nil)
		m, err := c.awaitStage(ctx, st, p, hook, j, events[at[j]].Timeout)
		if err == nil {
			if f := m.GetFailure(); f != nil && len(m.GetAnswer()) == 0 && m.GetStage() == uint32(j) {
				// The plugin's own failure of this event: the batch goes on.
				err = failureError(c.current().Plugin, hook, f)
			} else if _, err = c.settle(row, j, m); err != nil {
				// Out of step with the plugin: nothing after this can be
				// trusted to answer the stage it claims.
				m = nil
			}
		}
		if m == nil {
			done(at[j], err)
			next = at[j] + 1
			fail(undelivered(err, j, hook))
			return nil
		}
		done(at[j], err)
		next = at[j] + 1
		if m.GetLast() && j < len(rows)-1 {
			// The next event is the one the early end broke; those after it
			// were not delivered.
			hook := string(rows[j+1].name)
			err := &CallError{Plugin: c.current().Plugin, Hook: hook, Kind: ErrMalformed,
				Msg: fmt.Sprintf("the plugin ended the batch after stage %d of %d", j, len(rows))}
			reportUpTo(at[j+1], nil)
			done(at[j+1], err)
			next = at[j+1] + 1
			fail(undelivered(err, j+1, hook))
			return nil
		}
	}
	reportUpTo(len(events), nil)
	return nil
}

// awaitStage waits for the message of stage j of a batch, at most timeout
// and its grace (none when 0).
func (c *V2Client) awaitStage(ctx context.Context, st *stream, p *pending, hook string, j int, timeout time.Duration) (*pluginv2.PluginMessage, error) {
	wctx, cancel := ctx, context.CancelFunc(func() {})
	if timeout > 0 {
		wctx, cancel = context.WithTimeout(ctx, timeout+batchGrace(timeout))
	}
	defer cancel()
	m, err := st.await(wctx, p)
	if err == nil {
		return m, nil
	}
	if ctx.Err() == nil && wctx.Err() != nil {
		return nil, &CallError{Plugin: c.current().Plugin, Hook: hook, Kind: context.DeadlineExceeded,
			Status: status.New(codes.DeadlineExceeded, context.DeadlineExceeded.Error()),
			Msg:    fmt.Sprintf("no answer to stage %d of the observer batch within its deadline (%v, and %v of grace)", j, timeout, batchGrace(timeout))}
	}
	return nil, c.waitError(ctx, hook, err)
}

// batchGrace is how much longer than a stage's deadline the host waits
// for its message: the plugin counts the deadline from when it starts the
// stage, about when it sent the previous answer, and answers
// DEADLINE_EXCEEDED then; without the grace that answer would race the
// host's own deadline, and losing the race would leave the rest of the
// batch undelivered.
func batchGrace(timeout time.Duration) time.Duration {
	return min(timeout/4, 250*time.Millisecond)
}

// errBatchNotTaken is why a batch was not sent: the plugin's stream had no
// room for it within its first event's deadline.
var errBatchNotTaken = errors.New("the plugin did not take the observer batch within its first event's deadline")

// retarget makes err, the failure of a whole batch, the failure of one of
// its events, of hook.
func retarget(err error, hook hooks.Name) error {
	var ce *CallError
	if !errors.As(err, &ce) {
		return err
	}
	e := *ce
	e.Hook = string(hook)
	return &e
}

// undelivered is the failure of the events after stage j, which ended a
// batch with err: the same kind, and a message saying they were not sent
// to the plugin's handler.
func undelivered(err error, j int, hook string) error {
	var ce *CallError
	if !errors.As(err, &ce) {
		return fmt.Errorf("not delivered: the observer batch ended at stage %d (%s): %w", j, hook, err)
	}
	e := *ce
	e.Msg = fmt.Sprintf("not delivered: the observer batch ended at stage %d (%s): %s", j, hook, ce.Msg)
	if ce.Msg == "" && ce.Kind != nil {
		e.Msg = fmt.Sprintf("not delivered: the observer batch ended at stage %d (%s): %v", j, hook, ce.Kind)
	}
	return &e
}

// batch answers an observer batch on the plugin's side: the events in
// order, each under its own deadline, each answered as soon as it is done,
// a failed one not ending the batch. A handler that outlives its deadline
// is answered DEADLINE_EXCEEDED and left to finish; the call keeps its
// in-flight slot until it has. A cancelled batch starts no further event
// and sends nothing more.
func (h *hookStream) batch(ctx context.Context, id uint64, call *pluginv2.HookCall) {
	stages, payloads := call.GetStages(), call.GetPayloads()
	if len(payloads) != len(stages) || len(call.GetPayload()) > 0 {
		h.fail(id, 0, &failure{pluginv2.Failure_BAD_REQUEST, fmt.Sprintf(
			"a malformed observer batch: %d stages, %d payloads, payload set: %t", len(stages), len(payloads), len(call.GetPayload()) > 0)})
		return
	}
	handlers := &stageHandlers{Plugin: h.s.p}
	defer handlers.wait()
	for i, st := range stages {
		if ctx.Err() != nil {
			return // cancelled, or the stream is gone: no one waits
		}
		f := h.batchEvent(ctx, handlers, st, payloads[i])
		if context.Cause(ctx) == errHostCancelled {
			return
		}
		m := &pluginv2.PluginMessage{Id: id, Stage: uint32(i), Last: i == len(stages)-1}
		if f != nil {
			m.Failure = f.pb()
		}
		h.send(m)
	}
}

// batchEvent runs one event of a batch: nil when the handler returned
// without error before the event's deadline.
func (h *hookStream) batchEvent(ctx context.Context, handlers *stageHandlers, st *pluginv2.Stage, payload []byte) *failure {
	hook := hooks.Name(st.GetHook())
	row, ok := rowOf(hook)
	if !ok || !hook.Observer() {
		return &failure{pluginv2.Failure_UNKNOWN_HOOK, fmt.Sprintf("the plugin does not know observer hook %q", st.GetHook())}
	}
	in := row.newRequest()
	if err := proto.Unmarshal(payload, in); err != nil {
		return &failure{pluginv2.Failure_BAD_REQUEST, fmt.Sprintf("undecodable %s request: %v", row.name, err)}
	}
	if t := st.GetTimeoutNs(); t > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(t))
		defer cancel()
	}
	done := make(chan *failure, 1)
	go func() {
		done <- guard(ctx, row.name, func() error {
			_, err := handlers.Handle(ctx, row.name, row.payload(in))
			return err
		})
	}()
	select {
	case f := <-done:
		if f == nil && ctx.Err() != nil {
			// Late, even if it raced the deadline and won: the host may
			// already count it as failed.
			return contextFailure(ctx.Err(), fmt.Sprintf("%s: %v", row.name, ctx.Err()))
		}
		return f
	case <-ctx.Done():
		return contextFailure(ctx.Err(), fmt.Sprintf("%s: %v", row.name, ctx.Err()))
	}
}
