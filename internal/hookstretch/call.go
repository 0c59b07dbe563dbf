package hookstretch

import (
	"context"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/hookhost/hookhost/hooks"
)

// CallResult is what one guarded plugin call gave.
type CallResult[T any] struct {
	V   T
	Err error
}

// PastDeadline reports whether ctx has ended or its deadline has passed.
// The clock decides, not only ctx.Err: a context's timer may fire a little
// after its deadline, and an answer that a remote plugin sent once its own
// copy of the deadline had passed must not slip into that gap.
func PastDeadline(ctx context.Context) bool {
	if ctx.Err() != nil {
		return true
	}
	d, ok := ctx.Deadline()
	return ok && !time.Now().Before(d)
}

// Ended is why ctx is over, for a context PastDeadline reported.
func Ended(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return context.DeadlineExceeded
}

// PanicError is a plugin handler's recovered panic, with the stack for
// whoever debugs the plugin.
type PanicError struct {
	Value any
	Stack []byte
}

func (p *PanicError) Error() string { return fmt.Sprintf("panic: %v", p.Value) }

// Unwrap makes a recovered panic ErrPanicked to errors.Is, so that it
// reads the same once it has crossed the wire.
func (p *PanicError) Unwrap() error { return hooks.ErrPanicked }

// Guarded calls fn with ctx and turns a panic into a *PanicError.
func Guarded[T any](ctx context.Context, fn func(context.Context) (T, error)) (r CallResult[T]) {
	defer func() {
		if v := recover(); v != nil {
			r = CallResult[T]{Err: &PanicError{Value: v, Stack: debug.Stack()}}
		}
	}()
	v, err := fn(ctx)
	return CallResult[T]{V: v, Err: err}
}
