package hookstretch

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

type ctxKey struct{}

// A stage's context is a context.Context like WithTimeout's, though its
// timer is armed only by Done: each way a handler can look at it sees the
// deadline.
func TestStageContextEndsAtItsDeadline(t *testing.T) {
	parent := context.WithValue(context.Background(), ctxKey{}, "v")
	const timeout = 30 * time.Millisecond

	t.Run("waiting on Done", func(t *testing.T) {
		c := withStageDeadline(parent, timeout)
		if c.Err() != nil {
			t.Fatalf("Err = %v before the deadline", c.Err())
		}
		waitEnded(t, c.Done(), "Done was not closed at the deadline")
		if !errors.Is(c.Err(), context.DeadlineExceeded) {
			t.Fatalf("Err = %v, want DeadlineExceeded", c.Err())
		}
		if !errors.Is(context.Cause(c), context.DeadlineExceeded) {
			t.Fatalf("Cause = %v, want DeadlineExceeded", context.Cause(c))
		}
	})
	t.Run("polling Err", func(t *testing.T) {
		c := withStageDeadline(parent, timeout)
		for c.Err() == nil {
			time.Sleep(time.Millisecond)
		}
		if !errors.Is(c.Err(), context.DeadlineExceeded) {
			t.Fatalf("Err = %v, want DeadlineExceeded", c.Err())
		}
		// Done asked for once it ended is closed already.
		if !closed(c.Done()) {
			t.Fatal("Done is open though Err said the context ended")
		}
	})
	t.Run("a context derived from it", func(t *testing.T) {
		c := withStageDeadline(parent, timeout)
		child, cancel := context.WithCancel(c)
		defer cancel()
		waitEnded(t, child.Done(), "a child of the stage's context did not end at its deadline")
		if !errors.Is(child.Err(), context.DeadlineExceeded) {
			t.Fatalf("child Err = %v, want DeadlineExceeded", child.Err())
		}
		if child.Value(ctxKey{}) != "v" {
			t.Fatal("a child lost the parent's values")
		}
	})
	t.Run("values and deadline", func(t *testing.T) {
		before := time.Now()
		c := withStageDeadline(parent, time.Hour)
		if c.Value(ctxKey{}) != "v" {
			t.Fatal("the parent's values are lost")
		}
		d, ok := c.Deadline()
		if !ok || d.Before(before.Add(time.Hour)) || d.After(time.Now().Add(time.Hour)) {
			t.Fatalf("Deadline = %v, %v; want an hour from now", d, ok)
		}
		soon := time.Now().Add(time.Minute)
		p, cancel := context.WithDeadline(parent, soon)
		defer cancel()
		if d, _ := withStageDeadline(p, time.Hour).Deadline(); !d.Equal(soon) {
			t.Fatalf("Deadline = %v, want the parent's earlier %v", d, soon)
		}
	})
}

// The parent's end ends the stage's context, whether it came before or
// after Done was first asked for.
func TestStageContextEndsWithItsParent(t *testing.T) {
	for _, doneFirst := range []bool{true, false} {
		p, cancel := context.WithCancel(context.Background())
		c := withStageDeadline(p, time.Hour)
		var done <-chan struct{}
		if doneFirst {
			done = c.Done()
		}
		cancel()
		if !doneFirst {
			done = c.Done()
		}
		waitEnded(t, done, fmt.Sprintf("doneFirst=%v: Done stayed open after the parent was cancelled", doneFirst))
		if !errors.Is(c.Err(), context.Canceled) {
			t.Fatalf("doneFirst=%v: Err = %v, want Canceled", doneFirst, c.Err())
		}
	}
}

// A stage that is over ends its context, so that a handler still holding
// it stops, and what Done armed is released.
func TestStageContextEndsWithItsStage(t *testing.T) {
	r := &stageRun{ctx: context.Background(), send: func(any, error) {}}
	sctx, err := r.begin(Stage{Hook: "h", Timeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	done := sctx.Done()
	if err := r.finish(sctx); err != nil {
		t.Fatalf("finish = %v for a stage on time", err)
	}
	if !closed(done) {
		t.Fatal("the context of a finished stage is still open")
	}
	if !errors.Is(sctx.Err(), context.Canceled) {
		t.Fatalf("Err = %v, want Canceled", sctx.Err())
	}
}

// The watch's timers are reused: one given back and taken again fires
// after its new duration, not its old one, and not at once.
func TestWatchReusesItsTimers(t *testing.T) {
	w := watch(time.Hour)
	unwatch(w)
	start := time.Now()
	w = watch(20 * time.Millisecond)
	defer unwatch(w)
	select {
	case <-w.C:
		if time.Since(start) < 20*time.Millisecond {
			t.Fatal("a reused timer fired early")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a reused timer did not fire")
	}
}

// WithTimeout's cancel ends the context as context.WithTimeout's does.
func TestWithTimeoutCancel(t *testing.T) {
	ctx, cancel := WithTimeout(context.Background(), time.Hour)
	done := ctx.Done()
	cancel()
	if !closed(done) {
		t.Fatal("cancel left Done open")
	}
	if !errors.Is(ctx.Err(), context.Canceled) {
		t.Fatalf("Err = %v, want Canceled", ctx.Err())
	}
}

// waitEnded fails the test with msg unless done is closed within a
// generous bound: it checks that the context ends at all, not how fast.
func waitEnded(t *testing.T, done <-chan struct{}, msg string) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal(msg)
	}
}

// closed reports whether done is closed already.
func closed(done <-chan struct{}) bool {
	select {
	case <-done:
		return true
	default:
		return false
	}
}
