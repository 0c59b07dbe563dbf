package host

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/hookhost/hookhost/config"
	"github.com/hookhost/hookhost/hookbus"
	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/childproc"
	"github.com/hookhost/hookhost/internal/hookstretch"
	"github.com/hookhost/hookhost/internal/wire"
)

// exitPoll is how often the supervisor looks for a plugin process that has
// exited. go-plugin offers no exit channel, and a crash between calls should
// be repaired before the next call needs the plugin.
const exitPoll = 100 * time.Millisecond

// reapTimeout bounds cleaning up after a dead plugin before its restart.
const reapTimeout = 10 * time.Second

// supervised is one remote plugin as the Bus sees it: a hooks.Plugin that
// forwards every call to the plugin's current process and keeps a process
// running (see Host for the lifecycle). While the plugin is down every call
// fails at once with an error wrapping hooks.ErrUnavailable.
type supervised struct {
	name     string
	entry    config.PluginEntry
	opts     Options
	log      hclog.Logger
	manifest hooks.Manifest // from the first start; what the Bus subscribed with

	mu       sync.Mutex
	state    string
	cur      *instance   // nil unless running
	dead     *instance   // went down, not yet cleaned up
	closed   bool        // no restart may be made or kept after this
	restarts int         // restart attempts, for Status
	reason   string      // for StateDown: why, and what to do
	protocol int         // the protocol version of the latest process
	late     uint64      // late answers dropped by processes no longer current
	traffic  Traffic     // bytes exchanged with processes no longer current
	recent   []time.Time // restart attempts within the circuit window

	invalidUTF8 atomic.Uint64 // requests whose text had to be repaired; users see the WARN
	warnedUTF8  sync.Map      // hook → struct{}: repaired text already warned

	kick   chan struct{} // wakes the supervisor when a call saw the plugin die
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{} // closed when the supervisor goroutine returns
}

var (
	_ hooks.Plugin             = (*supervised)(nil)
	_ hookstretch.Stretcher    = (*supervised)(nil)
	_ hookstretch.Batcher      = (*supervised)(nil)
	_ hookstretch.ModelStager  = (*supervised)(nil)
	_ hookbus.ContextHonouring = (*supervised)(nil)
)

func newSupervised(name string, entry config.PluginEntry, opts Options, first *instance) *supervised {
	ctx, cancel := context.WithCancel(context.Background())
	s := &supervised{
		name:     name,
		entry:    entry,
		opts:     opts,
		log:      opts.Logger.With("plugin", name),
		manifest: first.manifest,
		state:    StateRunning,
		cur:      first,
		protocol: first.version,
		kick:     make(chan struct{}, 1),
		ctx:      ctx,
		cancel:   cancel,
		done:     make(chan struct{}),
	}
	s.adopt(first)
	go s.supervise()
	return s
}

// adopt applies the plugin's message rules to a newly started process,
// before any hook call can reach it.
func (s *supervised) adopt(in *instance) {
	in.rpc.Apply(settings(s.name, s.entry, s.repaired))
}

// repaired counts a request whose text was not valid UTF-8 and went out
// repaired, and says so: WARN the first time per hook, DEBUG after. The
// call itself went ahead, so this is no failure of anyone's.
func (s *supervised) repaired(hook string, fields int) {
	s.invalidUTF8.Add(1)
	args := []any{"hook", hook, "fields", fields}
	if _, seen := s.warnedUTF8.LoadOrStore(hook, struct{}{}); !seen {
		s.log.Warn("request to plugin carried invalid UTF-8; sent it with U+FFFD in its place", args...)
		return
	}
	s.log.Debug("request to plugin carried invalid UTF-8; sent it with U+FFFD in its place", args...)
}

// Name is the plugin's name in plugins.enabled.
func (s *supervised) Name() string { return s.name }

// Manifest returns the manifest from the plugin's first start.
func (s *supervised) Manifest() hooks.Manifest { return s.manifest }

// HonoursContext reports true: calls either fail at once or go through the
// process's wire.Conn, which returns by the call's deadline whatever the
// process does, so the Bus needs no watchdog goroutine.
func (s *supervised) HonoursContext() bool { return true }

// Status reports the plugin's current state.
func (s *supervised) Status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := Status{
		Name:     s.name,
		Version:  s.manifest.Version,
		Path:     s.entry.Path,
		State:    s.state,
		Restarts: s.restarts,
		Manifest: s.manifest,
		Reason:   s.reason,
		Protocol: s.protocol,
		Attached: s.entry.Reattach != nil,
	}
	st.LateAnswers = s.late
	st.Traffic = s.traffic
	if s.cur != nil {
		st.PID = s.cur.pid
		st.LateAnswers += s.cur.rpc.LateAnswers()
		t := s.cur.rpc.Traffic()
		st.Traffic.Sent += t.Sent
		st.Traffic.Received += t.Received
		if v2, ok := s.cur.rpc.(*wire.V2Client); ok {
			st.Lane = v2.OnLane()
		}
	}
	return st
}

// current returns the running instance, or an ErrUnavailable error without
// waiting when there is none: a call must never wait on a dead process.
func (s *supervised) current() (*instance, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur == nil {
		return nil, fmt.Errorf("plugin %s: %s: %w", s.name, s.state, hooks.ErrUnavailable)
	}
	return s.cur, nil
}

// call forwards one hook call to the running process. A failure that means
// the process is gone or unreachable marks the plugin down; only the first
// caller to see a given process fail does so, however many fail at once.
func call[T any](s *supervised, fn func(wire.Conn) (T, error)) (T, error) {
	in, err := s.current()
	if err != nil {
		var zero T
		return zero, err
	}
	v, err := fn(in.rpc)
	if err != nil {
		s.failed(in, err)
	}
	return v, err
}

// failed marks the plugin down when a call's failure means its process is
// gone or unreachable. A plugin the host attached to is unreachable only
// once its process is gone: the host could not start another, so a
// connection that fails while the process lives (say, stopped in a
// debugger) fails only that call.
func (s *supervised) failed(in *instance, err error) {
	if in.attached != nil {
		if in.client.Exited() || !childproc.Alive(in.pid) {
			s.markDown(in, err.Error())
		}
		return
	}
	if in.client.Exited() {
		s.markDown(in, err.Error())
		return
	}
	if !errors.Is(err, hooks.ErrUnavailable) {
		return
	}
	if in.version == 2 {
		// A protocol 2 hook stream, the lane or gRPC's Hooks stream, can
		// break while its process lives on (a lane the plugin garbled or
		// closed), and the next call opens another. Only a process that
		// no longer answers its health check is down; a crashed one fails
		// it at once.
		// One check at a time: the calls in flight on a stream all fail
		// together.
		if !in.checking.CompareAndSwap(false, true) {
			return
		}
		go func() {
			defer in.checking.Store(false)
			if !in.answersHealth(healthCheckTimeout) {
				s.markDown(in, err.Error())
			}
		}()
		return
	}
	s.markDown(in, err.Error())
}

// healthCheckTimeout bounds the health check of a process whose hook
// stream broke; one that does not answer by then is restarted.
const healthCheckTimeout = 2 * time.Second

// answersHealth reports whether the process answers go-plugin's health
// check within timeout.
func (in *instance) answersHealth(timeout time.Duration) bool {
	done := make(chan error, 1)
	// Ping has no deadline of its own; a hung process's ends when the
	// host stops it and closes its connection.
	go func() { done <- in.proto.Ping() }()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case err := <-done:
		return err == nil
	case <-t.C:
		return false
	}
}

// markDown takes in out of service and asks the supervisor to restart the
// plugin, unless in is no longer the current process.
func (s *supervised) markDown(in *instance, reason string) {
	s.mu.Lock()
	if s.cur != in || s.closed {
		s.mu.Unlock()
		return
	}
	s.late += in.rpc.LateAnswers()
	t := in.rpc.Traffic()
	s.traffic.Sent += t.Sent
	s.traffic.Received += t.Received
	if in.attached != nil {
		// The host did not start it and cannot start it again.
		s.cur, s.dead, s.state = nil, in, StateDown
		s.reason = fmt.Sprintf("the attached plugin at %s is gone (%s); the host does not restart a plugin it did not start; fix: %s",
			in.attached.where(), reason, reattachFix(s.name))
		s.mu.Unlock()
		s.log.Error("attached plugin is gone; it stays down until the host is restarted", "pid", in.pid,
			"reason", reason, "fix", reattachFix(s.name))
	} else {
		s.cur, s.dead, s.state = nil, in, StateRestarting
		s.mu.Unlock()
		s.log.Warn("plugin down; restarting it", "pid", in.pid, "reason", reason)
	}
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// supervise runs until close: it notices processes that exited on their own
// and restores the plugin whenever it is down.
func (s *supervised) supervise() {
	defer close(s.done)
	tick := time.NewTicker(exitPoll)
	defer tick.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-s.kick:
		case <-tick.C:
			s.mu.Lock()
			in := s.cur
			s.mu.Unlock()
			if in != nil && in.client.Exited() {
				s.markDown(in, "process exited")
			}
		}
		s.mu.Lock()
		dead := s.dead
		s.dead = nil
		down := s.state == StateRestarting
		s.mu.Unlock()
		if dead != nil {
			// The process may be gone, hung or merely unreachable; either
			// way it and its children must not outlive their replacement.
			ctx, cancel := context.WithTimeout(s.ctx, reapTimeout)
			_ = dead.stop(ctx, false)
			cancel()
		}
		if down {
			s.restore()
		}
	}
}

// restore brings the plugin back, or returns when the host closes it.
func (s *supervised) restore() {
	trialFailed := false
	for s.ctx.Err() == nil {
		n := s.recentRestarts()
		if trialFailed || n >= s.opts.CircuitFailures {
			s.setState(StateCircuitOpen)
			s.log.Warn("plugin circuit open: not restarting it for a while",
				"restarts", n, "window", s.opts.CircuitWindow, "cooldown", s.opts.CircuitCooldown)
			if !s.sleep(s.opts.CircuitCooldown) {
				return
			}
			s.setState(StateRestarting)
			s.log.Warn("plugin circuit cool-down over; trying one start")
			if s.attempt() {
				s.mu.Lock()
				s.recent = nil
				s.mu.Unlock()
				s.log.Warn("plugin circuit closed")
				return
			}
			trialFailed = true
			continue
		}
		if !s.sleep(s.opts.Backoff.delay(n)) {
			return
		}
		if s.attempt() {
			return
		}
	}
}

// recentRestarts forgets restarts older than the circuit window and counts
// the rest.
func (s *supervised) recentRestarts() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	cutoff := time.Now().Add(-s.opts.CircuitWindow)
	s.recent = slices.DeleteFunc(s.recent, func(t time.Time) bool { return t.Before(cutoff) })
	return len(s.recent)
}

// attempt makes one restart and reports whether the plugin is running (or
// closed, which also ends the restarting).
func (s *supervised) attempt() bool {
	s.mu.Lock()
	s.restarts++
	s.recent = append(s.recent, time.Now())
	attempt := s.restarts
	s.mu.Unlock()

	in, serr := launch(s.ctx, s.name, s.entry, &s.opts)
	if serr != nil {
		if s.ctx.Err() != nil {
			return true
		}
		s.log.Warn("plugin restart failed", "attempt", attempt, "reason", serr.Reason, "fix", serr.Fix)
		return false
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), reapTimeout)
		_ = in.stop(ctx, false)
		cancel()
		return true
	}
	s.adopt(in)
	s.cur, s.state, s.protocol = in, StateRunning, in.version
	s.mu.Unlock()
	s.log.Warn("plugin restarted", "pid", in.pid, "restarts", attempt)
	if !sameShape(s.manifest, in.manifest) {
		s.log.Warn("plugin manifest changed since its first start; hooks, matchers and tools stay as first declared until the host restarts",
			"first", fmt.Sprintf("%+v", s.manifest), "now", fmt.Sprintf("%+v", in.manifest))
	}
	return true
}

func (s *supervised) setState(state string) {
	s.mu.Lock()
	if !s.closed {
		s.state = state
	}
	s.mu.Unlock()
}

// sleep waits d, or returns false when the plugin is closed first.
func (s *supervised) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-s.ctx.Done():
		return false
	}
}

// close stops supervision and the plugin's processes, bounded by ctx.
func (s *supervised) close(ctx context.Context) error {
	s.mu.Lock()
	s.closed = true
	s.state = StateStopped
	cur, dead := s.cur, s.dead
	s.cur, s.dead = nil, nil
	s.mu.Unlock()
	s.cancel()

	var errs []error
	var wg sync.WaitGroup
	var emu sync.Mutex
	for _, in := range []*instance{cur, dead} {
		if in == nil {
			continue
		}
		wg.Go(func() {
			if err := in.stop(ctx, in == cur); err != nil {
				emu.Lock()
				errs = append(errs, fmt.Errorf("host: plugin %s (pid %d) not stopped: %w", s.name, in.pid, err))
				emu.Unlock()
			}
		})
	}
	wg.Wait()
	select {
	case <-s.done:
	case <-ctx.Done():
		// Only a start already under way can hold the supervisor this long;
		// it stops its process itself when it completes.
		errs = append(errs, fmt.Errorf("host: plugin %s: a restart was still under way: %w", s.name, ctx.Err()))
	}
	return errors.Join(errs...)
}

// sameShape reports whether two manifests subscribe to the same hooks for
// the same tools and declare the same tools: what the Bus fixed at start.
func sameShape(a, b hooks.Manifest) bool {
	if !slices.Equal(a.Hooks, b.Hooks) || !slices.Equal(a.Matchers, b.Matchers) || len(a.Tools) != len(b.Tools) ||
		!maps.EqualFunc(a.HookMatchers, b.HookMatchers, slices.Equal) {
		return false
	}
	for i := range a.Tools {
		if a.Tools[i].Name != b.Tools[i].Name || a.Tools[i].Description != b.Tools[i].Description ||
			string(a.Tools[i].InputSchema) != string(b.Tools[i].InputSchema) {
			return false
		}
	}
	return true
}

// Handle forwards one hook call to the plugin's current process.
func (s *supervised) Handle(ctx context.Context, hook hooks.Name, req any) (any, error) {
	return call(s, func(c wire.Conn) (any, error) { return c.Handle(ctx, hook, req) })
}

// Stretch forwards a stretch of the tool pipeline to the plugin's current
// process. One speaking protocol v1 answers hookstretch.ErrNoStretch, and the Bus
// then asks hook by hook.
func (s *supervised) Stretch(ctx context.Context, req hookstretch.Request) (hookstretch.Stretch, error) {
	in, err := s.current()
	if err != nil {
		return nil, err
	}
	st, err := in.rpc.Stretch(ctx, req)
	if err != nil {
		s.failed(in, err)
		return nil, err
	}
	return &supervisedStretch{Stretch: st, s: s, in: in}, nil
}

// ObserveBatch forwards an observer batch to the plugin's current process.
// One that cannot take batches (protocol v1, a plugin whose manifest does
// not set observer_batches), or no process at all, answers
// hookstretch.ErrNoBatch, and the Bus then delivers the events one by one,
// each failing as a plain call would.
func (s *supervised) ObserveBatch(ctx context.Context, events []hookstretch.Event, done func(int, error)) error {
	in, err := s.current()
	if err != nil {
		return hookstretch.ErrNoBatch
	}
	b, ok := in.rpc.(hookstretch.Batcher)
	if !ok {
		return hookstretch.ErrNoBatch
	}
	return b.ObserveBatch(ctx, events, func(i int, err error) {
		if err != nil {
			s.failed(in, err)
		}
		done(i, err)
	})
}

// ModelStage forwards a model-side stage to the plugin's current process.
// One speaking protocol v1, or whose manifest does not set model_stages,
// answers hookstretch.ErrNoStretch, and the Bus asks hook by hook.
func (s *supervised) ModelStage(ctx context.Context, req hookstretch.ModelStageRequest) (hookstretch.Stretch, error) {
	in, err := s.current()
	if err != nil {
		return nil, err
	}
	st, err := in.rpc.ModelStage(ctx, req)
	if err != nil {
		s.failed(in, err)
		return nil, err
	}
	return &supervisedStretch{Stretch: st, s: s, in: in}, nil
}

// supervisedStretch watches a stretch's answers for a process that went
// away, as call does for single calls.
type supervisedStretch struct {
	hookstretch.Stretch
	s  *supervised
	in *instance
}

func (t *supervisedStretch) Next(ctx context.Context) (any, error) {
	v, err := t.Stretch.Next(ctx)
	if err != nil {
		t.s.failed(t.in, err)
	}
	return v, err
}

// TryNext is the stretch's TryNext (see hookstretch.Ready), watched as
// Next is.
func (t *supervisedStretch) TryNext() (any, bool, error) {
	r, ok := t.Stretch.(hookstretch.Ready)
	if !ok {
		return nil, false, nil
	}
	v, got, err := r.TryNext()
	if got && err != nil {
		t.s.failed(t.in, err)
	}
	return v, got, err
}
