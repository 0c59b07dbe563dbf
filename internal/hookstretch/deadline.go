package hookstretch

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/gopool"
)

// The stages of a stretch or a model stage run one after the other on one
// goroutine, while the goroutine that called Run or RunModelStage watches
// the deadline of the stage under way and ctx (supervise). A handler that
// ignores its deadline is then abandoned, and the call answered, without
// a goroutine and a timer for each stage. A plugin that answers its hooks
// at once spent about a sixth of its processor time on those: a hand-off
// between goroutines each way per hook, and a runtime timer per hook (the
// handler's context.WithTimeout, which the watch waited on), which the
// runtime keeps in its heap for a while once stopped. Now an exchange
// hands off once each way, whatever its number of stages; the handler's
// context arms a timer only if the handler waits on Done, which one that
// just computes never does; and the watch is one pooled timer.

// stageContext is a stage handler's context: its parent's values and
// cancellation, and the stage's deadline. Until Done is called it holds no
// timer; Err still reports the deadline as passed by the clock, so a
// handler that polls Err sees it on time.
type stageContext struct {
	parent   context.Context
	deadline time.Time

	mu   sync.Mutex
	done chan struct{} // made by the first Done
	err  error         // why it ended, once it has
	// stopTimer and stopParent undo what the first Done armed.
	stopTimer, stopParent func() bool
}

var _ context.Context = (*stageContext)(nil)

func withStageDeadline(parent context.Context, timeout time.Duration) *stageContext {
	return &stageContext{parent: parent, deadline: time.Now().Add(timeout)}
}

// Deadline is the earlier of the stage's and the parent's.
func (c *stageContext) Deadline() (time.Time, bool) {
	if d, ok := c.parent.Deadline(); ok && d.Before(c.deadline) {
		return d, true
	}
	return c.deadline, true
}

func (c *stageContext) Value(key any) any { return c.parent.Value(key) }

// Err is nil while the parent has not ended and the deadline has not
// passed; else why it ended, and Done, once asked for, is closed.
func (c *stageContext) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.checkLocked()
}

// checkLocked ends c when its parent has ended or its deadline has
// passed, and returns why it ended, if it has.
func (c *stageContext) checkLocked() error {
	if c.err != nil {
		return c.err
	}
	if err := c.parent.Err(); err != nil {
		c.endLocked(err)
	} else if !time.Now().Before(c.deadline) {
		c.endLocked(context.DeadlineExceeded)
	}
	return c.err
}

func (c *stageContext) Done() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done != nil {
		return c.done
	}
	ended := c.checkLocked()
	c.done = make(chan struct{})
	if ended != nil {
		close(c.done)
		return c.done
	}
	c.stopTimer = time.AfterFunc(time.Until(c.deadline), func() { c.end(context.DeadlineExceeded) }).Stop
	c.stopParent = context.AfterFunc(c.parent, func() { c.end(c.parent.Err()) })
	return c.done
}

func (c *stageContext) end(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.endLocked(err)
}

func (c *stageContext) endLocked(err error) {
	if c.err != nil {
		return
	}
	c.err = err
	if c.done != nil {
		close(c.done)
	}
	if c.stopTimer != nil {
		c.stopTimer()
		c.stopParent()
	}
}

// WithTimeout is context.WithTimeout for a hook handler: its timer is
// armed only once something waits on Done. A plugin's plain hook call runs
// its handler under one.
func WithTimeout(parent context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	c := withStageDeadline(parent, timeout)
	return c, func() { c.end(context.Canceled) }
}

func (c *stageContext) String() string { return "hookstretch.stageContext" }

// watches are the timers exchanges are watched by, reused: a new timer
// per exchange cost three allocations and about a tenth more of an
// exchange's time in BenchmarkRunModelStage.
var watches = sync.Pool{New: func() any {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return t
}}

// watch returns a timer that fires after d; unwatch gives it back.
func watch(d time.Duration) *time.Timer {
	t := watches.Get().(*time.Timer)
	t.Reset(d)
	return t
}

func unwatch(t *time.Timer) {
	t.Stop()
	watches.Put(t)
}

// stageRun is one stretch or model stage under way: what its stages'
// goroutine and the goroutine watching it share.
type stageRun struct {
	ctx  context.Context
	send func(answer any, err error) // Run's emit

	mu   sync.Mutex
	over bool // the watcher has answered for the stages: send no more
	// hook is the stage running, "" between stages; stage is its
	// context, whose deadline the watcher holds it to.
	hook  hooks.Name
	stage *stageContext
}

// emit passes an answer on unless the watcher has already ended the run.
func (r *stageRun) emit(answer any, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.over {
		r.send(answer, err)
	}
}

// supervise runs stages on a goroutine of their own and returns when they
// have, or when the stage running is past its deadline or ctx ended,
// answering for that stage with its failure. Either way nothing is sent
// once it has returned. A panic of stages (not of a handler: Guarded
// catches those) is raised again on the calling goroutine. shortest is
// the shortest of the stages' timeouts: a stage that starts now cannot
// end before it.
func supervise(ctx context.Context, shortest time.Duration, emit func(answer any, err error), stages func(*stageRun)) {
	r := &stageRun{ctx: ctx, send: emit}
	done := make(chan any, 1)
	gopool.Go(func() {
		defer func() { done <- recover() }()
		stages(r)
	})
	w := watch(shortest)
	defer unwatch(w)
	ended := ctx.Done()
	for {
		select {
		case v := <-done:
			if v != nil {
				panic(v)
			}
			return
		case <-ended:
			if r.abandon(ctx.Err()) {
				return
			}
			// Between stages: none starts now (see begin), and the
			// stages' goroutine returns at once.
			ended = nil
		case <-w.C:
			left, late := r.left(shortest)
			if late {
				return
			}
			w.Reset(left)
		}
	}
}

// left is how long the stage running has before its deadline, or
// shortest between stages; late when its deadline has passed, and the
// run was then abandoned.
func (r *stageRun) left(shortest time.Duration) (left time.Duration, late bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stage == nil {
		return shortest, false
	}
	if left := time.Until(r.stage.deadline); left > 0 {
		return left, false
	}
	r.abandonLocked(context.DeadlineExceeded)
	return 0, true
}

// abandon answers for the stage running with cause, and sends nothing
// more; false when no stage is running.
func (r *stageRun) abandon(cause error) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stage == nil {
		return false
	}
	r.abandonLocked(cause)
	return true
}

func (r *stageRun) abandonLocked(cause error) {
	r.over = true
	r.stage.end(cause)
	r.send(nil, fmt.Errorf("%s: %w", r.hook, cause))
}

// begin marks st as running, under its own deadline; an error when it
// must not start: ctx ended, or the run is over.
func (r *stageRun) begin(st Stage) (*stageContext, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.ctx.Err(); err != nil {
		return nil, fmt.Errorf("%s not started: %w", st.Hook, err)
	}
	if r.over {
		return nil, fmt.Errorf("%s not started: the exchange was answered for", st.Hook)
	}
	r.hook, r.stage = st.Hook, withStageDeadline(r.ctx, st.Timeout)
	return r.stage, nil
}

// finish marks the stage over; the error when its answer came too late.
func (r *stageRun) finish(sctx *stageContext) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.hook, r.stage = "", nil
	err := sctx.Err()
	sctx.end(context.Canceled)
	return err
}

// runStage calls one stage's handler under the stage's deadline.
func runStage[T any](r *stageRun, p hooks.Plugin, st Stage, req any) (T, error) {
	var zero T
	sctx, err := r.begin(st)
	if err != nil {
		return zero, err
	}
	res := Guarded(context.Context(sctx), func(ctx context.Context) (T, error) { return hooks.Ask[T](ctx, p, st.Hook, req) })
	if err := r.finish(sctx); err != nil && res.Err == nil {
		// Late, even if it raced the deadline and won: the host has been
		// told, or will be, that the stage timed out.
		return zero, fmt.Errorf("%s: %w", st.Hook, err)
	}
	if res.Err != nil {
		return zero, fmt.Errorf("%s: %w", st.Hook, res.Err)
	}
	return res.V, nil
}

// shortest is the shortest of stages' timeouts.
func shortest(stages []Stage) time.Duration {
	d := stages[0].Timeout
	for _, st := range stages[1:] {
		d = min(d, st.Timeout)
	}
	return d
}
