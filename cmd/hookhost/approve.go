package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/termtext"
)

// maxShownArgs bounds the arguments printed at an approval prompt: enough
// to judge a call, not a screenful of a file the model is writing.
const maxShownArgs = 2000

// console is chat's terminal: the lines a person types, read by one
// goroutine and shared by the REPL and the approval prompt, and whether a
// prompt is waiting, so that Ctrl-C there denies the call instead of
// cancelling the turn.
type console struct {
	stdin  io.Reader
	stderr io.Writer

	startOnce sync.Once
	lines     chan readLine
	done      chan struct{} // closed when input ends; err says why
	err       error

	mu     sync.Mutex
	prompt chan struct{} // the waiting prompt's interrupt, nil when none waits
}

func newConsole(stdin io.Reader, stderr io.Writer) *console {
	return &console{stdin: stdin, stderr: stderr}
}

// input starts reading stdin on first use: a one-shot chat that asks
// nothing never touches it.
func (c *console) input() (<-chan readLine, <-chan struct{}) {
	c.startOnce.Do(func() {
		c.lines, c.done = make(chan readLine), make(chan struct{})
		go func() {
			defer close(c.done)
			in := newLineReader(c.stdin, maxLineBytes)
			for {
				line, err := in.next()
				if err != nil {
					if err != io.EOF {
						c.err = fmt.Errorf("reading standard input: %w", err)
					}
					return
				}
				c.lines <- line
			}
		}()
	})
	return c.lines, c.done
}

// interrupt hands a Ctrl-C to the approval prompt waiting, if one is, and
// reports whether one was.
func (c *console) interrupt() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.prompt == nil {
		return false
	}
	select {
	case c.prompt <- struct{}{}:
	default:
	}
	return true
}

// approve asks the person at the terminal whether a tool call a plugin
// answered ask on may go ahead: y or yes approves; n, an empty line, end
// of input and Ctrl-C deny.
func (c *console) approve(ctx context.Context, call hooks.ToolCall, reason string) (bool, error) {
	intr := make(chan struct{}, 1)
	c.mu.Lock()
	c.prompt = intr
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.prompt = nil
		c.mu.Unlock()
	}()

	args := string(call.Arguments)
	if len(args) > maxShownArgs {
		args = args[:maxShownArgs] + fmt.Sprintf("… (%d bytes in all)", len(call.Arguments))
	}
	fmt.Fprintf(c.stderr, "\napproval needed: tool %s\n  arguments: %s\n  reason: %s\n",
		termtext.Printable(call.Name), termtext.Printable(args), termtext.Printable(reason))
	lines, done := c.input()
	for {
		fmt.Fprint(c.stderr, "run it? [y/N] ")
		select {
		case in := <-lines:
			switch strings.ToLower(strings.TrimSpace(in.text)) {
			case "y", "yes":
				fmt.Fprintln(c.stderr, "approved")
				return true, nil
			case "", "n", "no":
				fmt.Fprintln(c.stderr, "denied")
				return false, nil
			}
			fmt.Fprintln(c.stderr, "answer y or n")
		case <-done:
			fmt.Fprintln(c.stderr, "\ndenied (end of input)")
			return false, nil
		case <-intr:
			fmt.Fprintln(c.stderr, "\ndenied (Ctrl-C)")
			return false, nil
		case <-ctx.Done():
			fmt.Fprintln(c.stderr)
			return false, ctx.Err()
		}
	}
}
