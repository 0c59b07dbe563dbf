//go:build unix

package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/hookstretch"
)

// readRecord is what a test plugin wrote to path so far.
func readRecord(path string) string {
	data, _ := os.ReadFile(path)
	return string(data)
}

// When the host stops waiting for a call, the plugin's handler sees its
// context end: cancelled by the caller, or at the call's deadline.
func TestCancellationReachesThePlugin(t *testing.T) {
	t.Parallel()
	overProtocols(t, func(t *testing.T, v int) {
		name := named("patient", v)
		e := pinned(entry(echoAs(t, name)), v)
		e.Env = []string{hangDirVar}
		e.ToolTimeout = time.Minute
		record := filepath.Join(os.Getenv(hangDirVar), name+".waitcancel")
		if err := os.Remove(record); err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		h := startOK(t, configOf(plug{name, e}), fastOptions())
		wantProtocol(t, h, v)
		s := memberOf(t, h, 0)
		wait := func(ctx context.Context, line string) <-chan error {
			done := make(chan error, 1)
			go func() {
				_, err := hooks.Ask[*hooks.ToolResult](ctx, s, hooks.PreToolCallCanProvideResult,
					hooks.ToolCallRequest{Name: "waitcancel", Arguments: json.RawMessage(fmt.Sprintf(`{"line":%q}`, line))})
				done <- err
			}()
			return done
		}
		returned := func(done <-chan error) error {
			t.Helper()
			select {
			case err := <-done:
				return err
			case <-time.After(livenessTimeout):
				t.Fatal("the call did not return when the host stopped waiting")
				return nil
			}
		}

		// The caller gives up.
		ctx, cancel := context.WithCancel(context.Background())
		done := wait(ctx, "one")
		waitFor(t, "the call to be inside the plugin", func() bool { return strings.Contains(readRecord(record), "entered one") })
		cancel()
		if err := returned(done); !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled call: %v, want context.Canceled", err)
		}
		waitFor(t, "the plugin to see the cancellation", func() bool {
			return strings.Contains(readRecord(record), "ended one: context canceled")
		})

		// The deadline passes.
		ctx, cancel = context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer cancel()
		done = wait(ctx, "two")
		if err := returned(done); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("call past its deadline: %v, want context.DeadlineExceeded", err)
		}
		waitFor(t, "the plugin to see the deadline", func() bool { return strings.Contains(readRecord(record), "ended two: ") })

		// Neither is a failure of the plugin's.
		mustCall(t, s, "lookup", "", "answered by "+name)
		if st := s.Status(); st.Restarts != 0 || st.State != StateRunning {
			t.Errorf("status = %+v, want running without restarts", st)
		}
	})
}

// Many goroutines calling one plugin at once: on protocol v2 every call and
// answer shares one stream, and each caller must get its own answer.
func TestManyConcurrentCallsOnOneStream(t *testing.T) {
	t.Parallel()
	overProtocols(t, func(t *testing.T, v int) {
		name := named("busy", v)
		e := pinned(entry(echoAs(t, name)), v)
		e.ToolTimeout = time.Minute // a shared machine under -race is slow
		h := startOK(t, configOf(plug{name, e}), fastOptions())
		wantProtocol(t, h, v)
		s := memberOf(t, h, 0)

		const workers, each = 64, 50
		errs := make(chan error, workers)
		began := time.Now()
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				for i := range each {
					args := fmt.Sprintf(`{"worker":%d,"call":%d}`, w, i)
					r, err := callDirect(s, "mirror", args, time.Minute)
					if err != nil || r == nil || r.Content != args {
						errs <- fmt.Errorf("worker %d call %d: %+v, %v; want its own arguments back", w, i, r, err)
						return
					}
				}
			})
		}
		wg.Wait()
		took := time.Since(began)
		t.Logf("%d calls from %d goroutines over protocol %d in %v (%.0f calls/s, logged only)",
			workers*each, workers, v, took.Round(time.Millisecond), float64(workers*each)/took.Seconds())
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		st := s.Status()
		if st.Restarts != 0 || st.State != StateRunning || st.LateAnswers != 0 {
			t.Errorf("status = %+v, want running, no restarts, no late answers", st)
		}
		// Every call carried its arguments there and back, a dozen bytes
		// at least each way.
		if least := uint64(workers * each * 12); st.Traffic.Sent < least || st.Traffic.Received < least {
			t.Errorf("traffic = %+v, want at least %d bytes each way", st.Traffic, least)
		}
	})
}

// A v2 plugin that stops reading its stream: what the host sends piles up
// in the stream's flow-control window until it is full. Calls to it must
// still fail as timeouts by their deadline, a second plugin must keep
// answering meanwhile, and Close must not wait on the stream.
func TestPluginThatStopsReadingItsStream(t *testing.T) {
	t.Parallel()
	const mute, steady = "mute", "steady"
	me := pinned(entry(linkAs(t, bins.mute, mute)), 2)
	me.Timeout, me.ToolTimeout = time.Second, time.Second
	h, errs := Start(context.Background(), Specs(configOf(plug{mute, me}, plug{steady, pinned(entry(echoAs(t, steady)), 2)})), fastOptions())
	closed := false
	t.Cleanup(func() {
		if !closed {
			h.Close(context.Background())
		}
	})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	wantProtocol(t, h, 2)
	bus := busOf(t, h)
	ms, ss := memberOf(t, h, 0), memberOf(t, h, 1)
	mutePID := ms.Status().PID

	// 24 calls of 1 MiB: more than any window gRPC grows a stream to.
	big := fmt.Sprintf(`{"pad":%q}`, strings.Repeat("x", 1<<20))
	const calls = 24
	results := make(chan error, calls)
	for range calls {
		go func() {
			_, err := callDirect(ms, "lookup", big, time.Second)
			results <- err
		}()
	}
	for i := range 20 {
		args := fmt.Sprintf(`{"meanwhile":%d}`, i)
		mustCall(t, ss, "mirror", args, args)
	}
	for i := range calls {
		select {
		case err := <-results:
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("call %d to the plugin that does not read: %v, want a timeout", i, err)
			}
		case <-time.After(livenessTimeout):
			t.Fatalf("call %d to the plugin that does not read did not return", i)
		}
	}
	// The window is full now; a small call fails by its deadline too, and
	// through the Bus the next plugin answers.
	if _, err := callDirect(ms, "lookup", "", time.Second); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("small call after the window filled: %v, want a timeout", err)
	}
	if r := provide(bus, "lookup", ""); r == nil || r.Plugin != steady {
		t.Errorf("result = %+v, want the steady plugin's answer after the mute one timed out", r)
	}
	mustCall(t, ss, "mirror", `{"after":true}`, `{"after":true}`)

	ctx, cancel := context.WithTimeout(context.Background(), DefaultCloseTimeout)
	defer cancel()
	closed = true
	if err := h.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	waitFor(t, "the mute plugin to be gone", func() bool { return gone(mutePID) })
}

// A plugin speaking protocol v1 cannot answer a stretch; the Bus is told
// so and asks hook by hook.
func TestStretchOverV1AnswersNoStretch(t *testing.T) {
	t.Parallel()
	name := "stretchy-v1"
	h := startOK(t, configOf(plug{name, pinned(entry(echoAs(t, name)), 1)}), fastOptions())
	s := memberOf(t, h, 0)
	_, err := s.Stretch(context.Background(), hookstretch.Request{
		Call: hooks.ToolCallRequest{Name: "lookup", Arguments: json.RawMessage("{}")},
		Stages: []hookstretch.Stage{
			{Hook: hooks.PreToolCall, Timeout: time.Second},
			{Hook: hooks.PreToolCallCanProvideResult, Timeout: time.Second},
		},
	})
	if !errors.Is(err, hookstretch.ErrNoStretch) {
		t.Fatalf("Stretch over v1: %v, want hookstretch.ErrNoStretch", err)
	}
	if st := s.Status(); st.State != StateRunning || st.Restarts != 0 {
		t.Errorf("status = %+v: no stretch is no failure", st)
	}
}

// On protocol v2 an answer that arrives after the host stopped waiting is
// dropped and counted, and the plugin stays in service.
func TestLateAnswersAreDroppedAndCounted(t *testing.T) {
	t.Parallel()
	const name = "late"
	e := pinned(entry(linkAs(t, bins.mute, name)), 2)
	e.Timeout, e.ToolTimeout = 300*time.Millisecond, 300*time.Millisecond
	h := startOK(t, configOf(plug{name, e}), fastOptions())
	wantProtocol(t, h, 2)
	s := memberOf(t, h, 0)
	const calls = 3
	for i := range calls {
		if r, err := callDirect(s, "lookup", "", 300*time.Millisecond); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("call %d: %+v, %v; want a timeout (the plugin answers only once cancelled)", i, r, err)
		}
	}
	waitFor(t, fmt.Sprintf("%d late answers counted", calls), func() bool { return s.Status().LateAnswers == calls })
	if st := s.Status(); st.State != StateRunning || st.Restarts != 0 {
		t.Errorf("status = %+v: late answers are no crash", st)
	}
}

// On protocol v2 a stretch of the tool pipeline goes to the plugin in one
// exchange, stage by stage; a process killed in the middle of one is
// marked down and restarted, as for a single call.
func TestStretchOverV2(t *testing.T) {
	t.Parallel()
	name := "stretchy-v2"
	e := pinned(entry(echoAs(t, name)), 2)
	e.Env = []string{hangDirVar}
	entered := filepath.Join(os.Getenv(hangDirVar), name+".hang")
	if err := os.Remove(entered); err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	h := startOK(t, configOf(plug{name, e}), fastOptions())
	wantProtocol(t, h, 2)
	s := memberOf(t, h, 0)
	stretch := func(tool string) hookstretch.Stretch {
		t.Helper()
		st, err := s.Stretch(context.Background(), hookstretch.Request{
			Call: hooks.ToolCallRequest{Name: tool, Arguments: json.RawMessage("{}")},
			Stages: []hookstretch.Stage{
				{Hook: hooks.PreToolCall, Timeout: time.Minute},
				{Hook: hooks.PreToolCallCanProvideResult, Timeout: time.Minute},
			},
		})
		if err != nil {
			t.Fatalf("Stretch over v2: %v", err)
		}
		t.Cleanup(st.Close)
		return st
	}
	next := func(st hookstretch.Stretch) (any, error) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		return st.Next(ctx)
	}

	st := stretch("lookup")
	if a, err := next(st); err != nil || !isNil(a) {
		t.Fatalf("pre_tool_call stage: %v, %v; want no opinion (the plugin does not subscribe to it)", a, err)
	}
	a, err := next(st)
	if r, ok := a.(*hooks.ToolResult); err != nil || !ok || r.Content != "answered by "+name {
		t.Fatalf("provide stage: %#v, %v; want the plugin's answer", a, err)
	}

	pid := s.Status().PID
	st = stretch("hang")
	if _, err := next(st); err != nil {
		t.Fatalf("pre_tool_call stage: %v", err)
	}
	waitFor(t, "the provide stage to be inside the plugin", func() bool { return hangsIn(t, entered, pid) == 1 })
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if _, err := next(st); !errors.Is(err, hooks.ErrUnavailable) {
		t.Fatalf("stage of a killed plugin: %v, want ErrUnavailable", err)
	}
	waitFor(t, "restart", func() bool {
		st := s.Status()
		return st.State == StateRunning && st.Restarts == 1
	})
	wantProtocol(t, h, 2)
	mustCall(t, s, "lookup", "", "answered by "+name)
}

// isNil reports whether an answer is no opinion: nil, or a typed nil.
func isNil(a any) bool {
	if a == nil {
		return true
	}
	switch v := a.(type) {
	case *hooks.PreToolCallDecision:
		return v == nil
	case *hooks.ToolResult:
		return v == nil
	}
	return false
}
