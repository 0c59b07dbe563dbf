package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"regexp"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/hookhost/hookhost"
	"github.com/hookhost/hookhost/config"
	"github.com/hookhost/hookhost/conversation"
	"github.com/hookhost/hookhost/hookbus"
	"github.com/hookhost/hookhost/hooks"
)

// defaultConfig is read when -c is not given and the file exists; without
// it the built-in defaults apply (offline model, no plugins).
const defaultConfig = "hookhost.toml"

func loadConfig(path string, explicit bool) (cfg *config.Config, fromFile bool, err error) {
	if !explicit {
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			return config.Default(), false, nil
		}
	}
	cfg, err = config.Load(path)
	if err != nil {
		return nil, false, &exitError{code: 2, err: err}
	}
	return cfg, true, nil
}

// logger is where the host's and the plugins' log lines go: warnings and
// errors always, the INFO lines (a plugin started, a plugin process exited)
// only with -v. A daemon's lines carry a time; a command a person runs and
// watches does not need one.
func logger(stderr io.Writer, verbose, daemon bool) hclog.Logger {
	level := hclog.Warn
	if verbose {
		level = hclog.Info
	}
	if !daemon {
		stderr = untimed{stderr}
	}
	// Independent levels let -v's decision lines (decisionLog) be DEBUG
	// while the rest stays at INFO, through the same writer and lock.
	return hclog.New(&hclog.LoggerOptions{Name: "hookhost", Output: stderr, Level: level, DisableTime: !daemon, IndependentLevels: true})
}

// untimed drops the timestamp pair go-plugin adds to each line it relays
// from a plugin, as DisableTime drops the host's own. hclog writes a line
// in one Write.
type untimed struct{ w io.Writer }

var relayedTime = regexp.MustCompile(` timestamp=\d{4}-\d\d-\d\dT[0-9:.]+(Z|[+-]\d\d:?\d\d)?`)

func (u untimed) Write(p []byte) (int, error) {
	if _, err := u.w.Write(relayedTime.ReplaceAll(p, nil)); err != nil {
		return 0, err
	}
	return len(p), nil
}

func chat(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("chat")
	verbose := fs.Bool("v", false, "print a trace of each turn, and the plugins' log lines, to stderr")
	stream := fs.Bool("stream", false, "print the model's text as it arrives (raw: before transform_llm_output)")
	inv, err := parseWithConfig(fs, args, stdout)
	if err != nil {
		return err
	}
	log := logger(stderr, *verbose, false)
	if *verbose {
		inv.decisions = decisionLog(log)
	}
	stopTelemetry, err := startTelemetry(inv)
	if err != nil {
		return err
	}
	defer stopTelemetry()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	h, err := open(ctx, inv, log, stderr)
	stop()
	if err != nil {
		return err
	}
	defer closeHost(h)

	var trace func(conversation.Event)
	if *verbose {
		trace = func(e conversation.Event) {
			if e.Iteration > 0 {
				fmt.Fprintf(stderr, "  [%d] %s\n", e.Iteration, e.Text)
				return
			}
			fmt.Fprintf(stderr, "  %s\n", e.Text)
		}
	}
	var out *streamOut
	var onText func(string)
	if *stream {
		out = &streamOut{w: stdout}
		onText = out.write
	}
	con := newConsole(stdin, stderr)
	sess, err := h.NewSession(hookhost.SessionOptions{Trace: trace, OnText: onText, Approve: con.approve})
	if err != nil {
		return err
	}

	message := strings.TrimSpace(strings.Join(inv.words, " "))
	if message != "" {
		err = turn(sess, con, message, stdout, stderr, *verbose, h.Bus(), out)
	} else {
		err = repl(sess, con, stdout, stderr, *verbose, h.Bus(), out)
	}
	return err
}

// streamOut prints streamed model text and remembers whether a turn
// printed any, so the answer is not printed twice.
type streamOut struct {
	w       io.Writer
	printed bool
}

func (s *streamOut) write(delta string) {
	if delta != "" {
		s.printed = true
		io.WriteString(s.w, delta)
	}
}

// finish ends a turn's streamed output and says whether the answer has
// been shown. Streamed text is the model's raw text: a transform_llm_output
// rewrite cannot reach what is already on the screen, so it is not printed
// a second time. An answer the model never wrote (the iteration budget ran
// out) or one from a provider that does not stream still has to be.
func (s *streamOut) finish(t *conversation.Turn, err error) (answered bool) {
	printed := s.printed
	s.printed = false
	if printed {
		fmt.Fprintln(s.w)
	}
	if err != nil || t == nil {
		return true
	}
	return printed && t.EndReason == hooks.EndCompleted
}

// turn runs one message; Ctrl-C cancels it, except at an approval prompt,
// where it denies that one tool call and the turn goes on.
func turn(sess *conversation.Session, con *console, message string, stdout, stderr io.Writer, verbose bool, bus *hookbus.Bus, stream *streamOut) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	interrupts := make(chan os.Signal, 1)
	signal.Notify(interrupts, os.Interrupt)
	defer signal.Stop(interrupts)
	go func() {
		for {
			select {
			case <-interrupts:
				if !con.interrupt() {
					cancel()
					return
				}
			case <-ctx.Done():
				return
			}
		}
	}()
	before := bus.Stats().Calls()
	start := time.Now()
	t, err := sess.Send(ctx, message)
	answered := false
	if stream != nil {
		answered = stream.finish(t, err)
	}
	if verbose {
		// Observers run asynchronously; wait briefly so the count is whole.
		fctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		bus.Flush(fctx)
		cancel()
		calls := bus.Stats().Calls() - before
		hooksLine := fmt.Sprintf("%d plugin hook calls", calls)
		if sess.Route() == hooks.RouteBypass || calls == 0 {
			hooksLine = "no hook fired"
		}
		fmt.Fprintf(stderr, "  end: %s after %d iteration(s), %d model call(s), %d in / %d out tokens, %s, %s\n",
			t.EndReason, t.Iterations, len(t.Inferences), t.Usage.InputTokens, t.Usage.OutputTokens,
			hooksLine, time.Since(start).Round(time.Millisecond))
	}
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return fmt.Errorf("turn cancelled")
		}
		return err
	}
	if !answered {
		fmt.Fprintln(stdout, t.Answer)
	}
	return nil
}

// repl reads messages line by line until /exit, end of input or Ctrl-C at
// the prompt; Ctrl-C during a turn cancels only that turn. Either way the
// deferred shutdown runs, so plugins stop cleanly and queued observer
// events are delivered.
func repl(sess *conversation.Session, con *console, stdout, stderr io.Writer, verbose bool, bus *hookbus.Bus, stream *streamOut) error {
	lines, done := con.input()
	interrupts := make(chan os.Signal, 1)
	signal.Notify(interrupts, os.Interrupt)
	defer signal.Stop(interrupts)

	fmt.Fprintln(stderr, "type a message; /exit, Ctrl-D or Ctrl-C at the prompt ends the session, Ctrl-C during a turn cancels it")
	for {
		fmt.Fprint(stderr, "> ")
		var line string
		select {
		case in := <-lines:
			if in.tooLong > 0 {
				fmt.Fprintf(stderr, "hookhost: line refused: %d bytes is longer than the %d MiB limit for one line; put long text in a file under tools.read_root and ask for it to be read\n",
					in.tooLong, maxLineBytes>>20)
				continue
			}
			line = in.text
		case <-done:
			fmt.Fprintln(stderr)
			return con.err
		case <-interrupts:
			fmt.Fprintln(stderr)
			return nil
		}
		switch line = strings.TrimSpace(line); line {
		case "":
			continue
		case "/exit", "/quit":
			return nil
		}
		if err := turn(sess, con, line, stdout, stderr, verbose, bus, stream); err != nil {
			// A failed turn is reported, not fatal: the session goes on.
			fmt.Fprintln(stderr, "hookhost:", err)
		}
		// The turn handled its own Ctrl-C; it must not also end the session.
		select {
		case <-interrupts:
		default:
		}
	}
}
