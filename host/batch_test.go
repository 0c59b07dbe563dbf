package host

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/hookstretch"
)

// ledgerAs returns a link to the ledger test plugin under name, and the
// files it writes: the events it handled, and the hangs it entered.
func ledgerAs(t *testing.T, name string) (bin, seen, hang string) {
	t.Helper()
	dir := os.Getenv(hangDirVar)
	seen, hang = filepath.Join(dir, name+".seen"), filepath.Join(dir, name+".hang")
	for _, f := range []string{seen, hang} {
		if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
	}
	return linkAs(t, filepath.Join(filepath.Dir(bins.echo), "ledger"), name), seen, hang
}

func observeBatch(s *supervised, timeout time.Duration, names ...string) ([]error, error) {
	events := make([]hookstretch.Event, len(names))
	for i, n := range names {
		events[i] = hookstretch.Event{Hook: hooks.PostToolCall, Payload: hooks.ToolCallOutcome{Name: n, Arguments: []byte(`{}`)}, Timeout: timeout}
	}
	var got []error
	err := s.ObserveBatch(context.Background(), events, func(i int, err error) { got = append(got, err) })
	return got, err
}

func batchKinds(errs []error) string {
	out := make([]string, len(errs))
	for i, err := range errs {
		switch {
		case err == nil:
			out[i] = "ok"
		case errors.Is(err, hooks.ErrUnavailable):
			out[i] = "unavailable"
		case errors.Is(err, context.DeadlineExceeded):
			out[i] = "timeout"
		default:
			out[i] = "error"
		}
	}
	return strings.Join(out, " ")
}

// A Go plugin process over protocol v2 takes observer batches: a failed
// event and one past its deadline do not end the batch; killed mid-batch,
// the event it was handling is unavailable and the ones after it are
// counted as not delivered, never handled twice; restarted, it takes
// batches again.
func TestObserverBatchOverAPluginProcess(t *testing.T) {
	t.Parallel()
	name := "ledger-v2"
	bin, seen, hang := ledgerAs(t, name)
	e := pinned(entry(bin), 2)
	e.Env = []string{hangDirVar}
	h := startOK(t, configOf(plug{name, e}), fastOptions())
	wantProtocol(t, h, 2)
	s := memberOf(t, h, 0)
	handled := func() string { return strings.Join(strings.Fields(readRecord(seen)), " ") }

	got, err := observeBatch(s, time.Minute, "a", "fail", "b")
	if err != nil || batchKinds(got) != "ok error ok" {
		t.Fatalf("batch: %v %v, want ok error ok", got, err)
	}
	got, err = observeBatch(s, time.Second, "c", "hang", "d")
	if err != nil || batchKinds(got) != "ok timeout ok" {
		t.Fatalf("batch with a hang: %v %v, want ok timeout ok", got, err)
	}
	if handled() != "a b c d" {
		t.Fatalf("handled %q", handled())
	}

	pid := s.Status().PID
	type result struct {
		got []error
		err error
	}
	done := make(chan result, 1)
	go func() {
		got, err := observeBatch(s, time.Minute, "e", "hang", "f")
		done <- result{got, err}
	}()
	waitFor(t, "the second hang to be inside the plugin", func() bool { return hangsIn(t, hang, pid) == 2 })
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var r result
	select {
	case r = <-done:
	case <-time.After(livenessTimeout):
		t.Fatal("the batch did not end when the plugin died")
	}
	if r.err != nil || batchKinds(r.got) != "ok unavailable unavailable" || !strings.Contains(r.got[2].Error(), "not delivered") {
		t.Fatalf("batch to a killed plugin: %v %v, want ok, unavailable, and unavailable not delivered", r.got, r.err)
	}
	waitFor(t, "restart", func() bool {
		st := s.Status()
		return st.State == StateRunning && st.Restarts == 1
	})
	wantProtocol(t, h, 2)
	got, err = observeBatch(s, time.Minute, "g")
	if err != nil || batchKinds(got) != "ok" {
		t.Fatalf("batch after the restart: %v %v", got, err)
	}
	if handled() != "a b c d e g" {
		t.Fatalf("handled %q, want f never handled", handled())
	}
}

// A plugin process speaking protocol v1 declines batches: the Bus then
// delivers one by one.
func TestObserverBatchOverV1IsDeclined(t *testing.T) {
	t.Parallel()
	name := "ledger-v1"
	bin, _, _ := ledgerAs(t, name)
	h := startOK(t, configOf(plug{name, pinned(entry(bin), 1)}), fastOptions())
	wantProtocol(t, h, 1)
	if _, err := observeBatch(memberOf(t, h, 0), time.Minute, "a"); !errors.Is(err, hookstretch.ErrNoBatch) {
		t.Fatalf("batch over v1: %v, want ErrNoBatch", err)
	}
}
