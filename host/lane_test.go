//go:build linux

package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hookhost/hookhost/hookbus"
	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/testenv"
	"github.com/hookhost/hookhost/internal/wire"
)

// laneGarbageAs returns a link to the lanegarbage test plugin under name.
func laneGarbageAs(t testing.TB, name string) string {
	t.Helper()
	return linkAs(t, filepath.Join(filepath.Dir(bins.echo), "lanegarbage"), name)
}

// returnsWithin runs call and fails the test when it does not return within
// the liveness bound: the calls of these tests must never hang.
func returnsWithin[T any](t *testing.T, what string, call func() (T, error)) (T, error) {
	t.Helper()
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := call()
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-time.After(livenessTimeout):
		t.Fatalf("%s did not return", what)
		var zero T
		return zero, nil
	}
}

// A Go SDK plugin the host starts serves its hook calls on its lane.
func TestGoPluginAnswersOnItsLane(t *testing.T) {
	t.Parallel()
	name := "laner"
	h := startOK(t, configOf(plug{name, entry(echoAs(t, name))}), fastOptions())
	s := memberOf(t, h, 0)
	before := s.Status()
	if before.Protocol != 2 {
		t.Fatalf("protocol = %d, want 2", before.Protocol)
	}
	r, err := callDirect(s, "lookup", "", livenessTimeout)
	if err != nil || r == nil || r.Content != "answered by "+name {
		t.Fatalf("call = %+v, %v; want the plugin's answer", r, err)
	}
	st := s.Status()
	if !st.Lane || st.Protocol != 2 {
		t.Errorf("status after a call: Lane %v, Protocol %d; want the lane, protocol 2", st.Lane, st.Protocol)
	}
	if st.Traffic.Sent <= before.Traffic.Sent || st.Traffic.Received <= before.Traffic.Received {
		t.Errorf("traffic %+v after a call on the lane, %+v before: the call's bytes are not counted", st.Traffic, before.Traffic)
	}
	for _, p := range h.Plugins() {
		if p.Name == name && !p.Lane {
			t.Errorf("Host.Plugins: %s has Lane false", name)
		}
	}
}

// A plugin SIGKILLed while a call is in flight on its lane: the call falls
// through as unavailable, the supervisor restarts the plugin, and the new
// process is on a lane of its own; the host keeps no descriptor of the old
// lanes. Not parallel: it counts the test process's descriptors.
func TestSIGKILLOnTheLaneRestartsOntoANewLane(t *testing.T) {
	name := "lanekill"
	e := entry(echoAs(t, name))
	e.ToolTimeout = time.Minute // only the kill may end the calls
	e.Env = []string{hangDirVar}
	entered := filepath.Join(os.Getenv(hangDirVar), name+".hang")
	if err := os.Remove(entered); err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	h := startOK(t, configOf(plug{name, e}), fastOptions())
	bus := busOf(t, h)
	s := memberOf(t, h, 0)
	mustAnswerOnLane := func() {
		t.Helper()
		if r := provide(bus, "lookup", ""); r == nil || r.Content != "answered by "+name {
			t.Fatalf("call = %+v, want the plugin's answer", r)
		}
		if st := s.Status(); !st.Lane || st.Protocol != 2 {
			t.Fatalf("status: Lane %v, Protocol %d; want the lane, protocol 2", st.Lane, st.Protocol)
		}
	}
	mustAnswerOnLane()
	baseline := openFDs(t)

	const kills = 3
	for i := range kills {
		pid := s.Status().PID
		result := make(chan *hookbus.ProvidedResult, 1)
		go func() { result <- provide(bus, "hang", "") }()
		waitFor(t, fmt.Sprintf("the hang call inside the plugin (pid %d)", pid), func() bool {
			return hangsIn(t, entered, pid) == 1
		})
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		select {
		case r := <-result:
			if r != nil {
				t.Fatalf("call on a killed plugin returned %+v, want nil", r)
			}
		case <-time.After(livenessTimeout):
			t.Fatal("call on a killed plugin did not return")
		}
		waitFor(t, "restart", func() bool {
			st := s.Status()
			return st.State == StateRunning && st.Restarts == i+1
		})
		if st := s.Status(); st.PID == pid {
			t.Fatalf("pid after restart = %d, the killed one's", st.PID)
		}
		mustAnswerOnLane()
	}
	stats := bus.Stats()
	if n := stats.Failures(name, hooks.PreToolCallCanProvideResult, hookbus.KindUnavailable); n != kills {
		t.Errorf("%d calls counted as unavailable, want %d", n, kills)
	}
	if n := stats.Failures(name, hooks.PreToolCallCanProvideResult, hookbus.KindTimeout); n != 0 {
		t.Errorf("%d calls counted as timeouts; the kills should have ended them", n)
	}
	// The killed processes' lanes, connections and pipes are closed as
	// the supervisor lets them go, not necessarily before the restart.
	deadline := time.Now().Add(livenessTimeout)
	for n := openFDs(t); n > baseline; n = openFDs(t) {
		if time.Now().After(deadline) {
			t.Fatalf("%d descriptors open after %d restarts, %d before: the host keeps descriptors of its killed plugins", n, kills, baseline)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A plugin that promises the lane and breaks it: the call in flight fails,
// naming the plugin, and the next one goes on the Hooks stream.
func TestBrokenLaneFallsBackToTheHooksStream(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"oversize", "undecodable", "cut"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			name := "lanebreak-" + mode
			e := entry(laneGarbageAs(t, name))
			e.ToolTimeout = time.Minute // only the broken lane may end the call
			e.Config = json.RawMessage(fmt.Sprintf(`{"lane":%q}`, mode))
			h := startOK(t, configOf(plug{name, e}), fastOptions())
			s := memberOf(t, h, 0)

			r, err := returnsWithin(t, "the call on the broken lane", func() (*hooks.ToolResult, error) {
				return callDirect(s, "lookup", "", time.Minute)
			})
			if err == nil {
				t.Fatalf("call on a broken lane = %+v, want an error", r)
			}
			t.Log(err)
			if !strings.Contains(err.Error(), name) {
				t.Errorf("error %q does not name the plugin", err)
			}
			if mode == "oversize" {
				if !errors.Is(err, wire.ErrMalformed) || !strings.Contains(err.Error(), "max_result_size") {
					t.Errorf("error %q: want malformed, mentioning max_result_size", err)
				}
			} else if !errors.Is(err, hooks.ErrUnavailable) {
				t.Errorf("error %q: want unavailable", err)
			}

			want := "answered by " + name + " on the hooks stream"
			r, err = returnsWithin(t, "the call after the lane broke", func() (*hooks.ToolResult, error) {
				return callDirect(s, "lookup", "", time.Minute)
			})
			if err != nil || r == nil || r.Content != want {
				t.Fatalf("call after the lane broke = %+v, %v; want %q", r, err, want)
			}
			// The client marks the lane off once the broken stream's
			// goroutine has closed it, which may come after the next call.
			waitFor(t, "Status.Lane false after the lane broke", func() bool { return !s.Status().Lane })
			st := s.Status()
			if st.Restarts != 0 || st.State != StateRunning {
				t.Errorf("status after the lane broke: %s with %d restarts, want running without restarts", st.State, st.Restarts)
			}
		})
	}
}

// A plugin that promises the lane and never reads it: its calls end by
// their deadlines, the host goes on serving, and Close returns.
func TestDeafLaneCallsEndByTheirDeadlines(t *testing.T) {
	t.Parallel()
	deaf := "lanedeaf"
	e := entry(laneGarbageAs(t, deaf))
	e.Timeout, e.ToolTimeout = 300*time.Millisecond, 300*time.Millisecond
	e.Config = json.RawMessage(`{"lane":"deaf"}`)
	other := "lanedeafneighbour"
	h, errs := Start(context.Background(), Specs(configOf(plug{deaf, e}, plug{other, entry(echoAs(t, other))})), fastOptions())
	for _, e := range errs {
		t.Fatalf("unexpected start error: %v", e)
	}
	closed := false
	t.Cleanup(func() {
		if !closed {
			_ = h.Close(context.Background())
		}
	})
	bus := busOf(t, h)

	const calls = 2
	for i := range calls {
		r, _ := returnsWithin(t, fmt.Sprintf("call %d on the deaf lane", i), func() (*hookbus.ProvidedResult, error) {
			return provide(bus, "lookup", `{"who":"`+deaf+`"}`), nil
		})
		// The neighbour answers every call; the deaf plugin, asked
		// first or not, must not hold its answer back.
		if r == nil || r.Content != "answered by "+other {
			t.Fatalf("call %d = %+v, want the neighbour's answer", i, r)
		}
	}
	waitFor(t, "the deaf plugin's calls to time out", func() bool {
		return bus.Stats().Failures(deaf, hooks.PreToolCallCanProvideResult, hookbus.KindTimeout) == calls
	})
	var st Status
	for _, p := range h.Plugins() {
		if p.Name == deaf {
			st = p
		}
	}
	if st.State != StateRunning || st.Restarts != 0 {
		t.Errorf("deaf plugin: %s with %d restarts, want running without restarts (a slow plugin is not a dead one)", st.State, st.Restarts)
	}
	_, err := returnsWithin(t, "Close", func() (struct{}, error) {
		return struct{}{}, h.Close(context.Background())
	})
	closed = true
	if err != nil {
		t.Errorf("Close: %v", err)
	}
}

// A plugin written with the Python SDK serves its hook calls on its lane,
// as a Go SDK plugin does.
func TestPythonPluginAnswersOnItsLane(t *testing.T) {
	t.Parallel()
	testenv.NeedDebianPython(t)
	script, err := filepath.Abs("../plugins/python/conform/conform.py")
	if err != nil {
		t.Fatal(err)
	}
	e := entry(script)
	e.Timeout, e.ToolTimeout = 10*time.Second, 10*time.Second // Python starts slowly under load
	h := startOK(t, configOf(plug{"conform", e}), fastOptions())
	s := memberOf(t, h, 0)
	before := s.Status()
	for i := range 2 {
		r, err := callDirect(s, "conform__echo", `{"text":"hi"}`, livenessTimeout)
		if err != nil || r == nil || !strings.Contains(r.Content, `"echo":"hi"`) {
			t.Fatalf("call %d = %+v, %v; want the echo of hi", i, r, err)
		}
	}
	st := s.Status()
	if st.Protocol != 2 || !st.Lane {
		t.Errorf("status: Protocol %d, Lane %v; want protocol 2 on the lane", st.Protocol, st.Lane)
	}
	if st.Traffic.Sent <= before.Traffic.Sent || st.Traffic.Received <= before.Traffic.Received {
		t.Errorf("traffic %+v after calls on the lane, %+v before: the calls' bytes are not counted", st.Traffic, before.Traffic)
	}
}

// The lane is the plugin's alone: a process the plugin starts inherits
// neither the descriptor nor the variable that names it.
func TestLaneIsNotInherited(t *testing.T) {
	t.Parallel()
	name := "laneprivate"
	h := startOK(t, configOf(plug{name, entry(echoAs(t, name))}), fastOptions())
	s := memberOf(t, h, 0)

	r, err := callDirect(s, "lanechild", "", livenessTimeout)
	if err != nil || r == nil {
		t.Fatalf("lanechild = %+v, %v", r, err)
	}
	t.Logf("the child saw:\n%s", r.Content)
	fds := 0
	for line := range strings.Lines(r.Content) {
		if !strings.Contains(line, " -> ") {
			continue
		}
		fds++
		if strings.Contains(line, "socket:") {
			t.Errorf("the plugin's child inherited a socket: %s", strings.TrimSpace(line))
		}
	}
	if fds == 0 {
		t.Fatalf("the child listed no descriptors:\n%s", r.Content)
	}
	if !strings.Contains(r.Content, wire.LaneFDEnv+"=unset") {
		t.Errorf("the plugin's child sees %s:\n%s", wire.LaneFDEnv, r.Content)
	}
	if !s.Status().Lane {
		t.Errorf("the plugin is not on its lane, so its child's view proves nothing")
	}

	// Nor does the plugin itself keep the variable once it took the lane.
	r, err = callDirect(s, "env", fmt.Sprintf(`{"name":%q}`, wire.LaneFDEnv), livenessTimeout)
	if err != nil || r == nil || r.Content != `{"set":false,"value":""}` {
		t.Errorf("the plugin's %s = %+v, %v; want it unset", wire.LaneFDEnv, r, err)
	}
}
