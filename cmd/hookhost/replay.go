package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/hookhost/hookhost/config"
	"github.com/hookhost/hookhost/hookbus"
	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/host"
	"github.com/hookhost/hookhost/internal/decisionlog"
)

// outcomeNotAsked is what replay reports for a recorded call the plugin
// is no longer asked (its manifest or matchers changed).
const outcomeNotAsked = "not asked"

// recordedCall is one entry of the log to replay, with its line.
type recordedCall struct {
	line int
	decisionlog.Entry
}

// replayCmd re-sends one plugin's recorded calls to that plugin, started
// as the host starts it, and reports where its answers changed.
func replayCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("replay")
	plugin := fs.String("plugin", "", "the `name` of the plugin to replay (as in plugins.enabled); required")
	verbose := fs.Bool("v", false, "print every call replayed, the same ones too, and the plugin's log lines")
	inv, err := parseWithConfig(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(inv.words) != 1 {
		return usageErr("replay takes one decision log, got %d arguments (see hookhost replay --help)", len(inv.words))
	}
	if *plugin == "" {
		return usageErr("replay: -plugin is required: name the plugin whose calls to replay (see hookhost replay --help)")
	}
	path := inv.words[0]
	calls, err := readCalls(path, *plugin)
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	if _, ok := inv.cfg.Plugins.Entries[*plugin]; !ok {
		return &exitError{code: 2, err: fmt.Errorf("replay: plugin %q is not in the config (%s); enable it, or give its [plugins.entries.%s] table, with -c", *plugin, configName(inv), *plugin)}
	}

	log := logger(stderr, *verbose, false)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ph, startErrs := host.Start(ctx, []host.PluginSpec{{Name: *plugin, Entry: inv.cfg.Entry(*plugin)}}, host.Options{Logger: log})
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		ph.Close(cctx)
	}()
	if len(startErrs) > 0 {
		return &exitError{code: 2, err: fmt.Errorf("replay: %v", startErrs[0])}
	}
	var (
		mu  sync.Mutex
		got []hookbus.CallRecord
	)
	bus, err := hookbus.New(ph.Members(), hookbus.Config{Logger: log.Named("hooks"), OnCall: func(_ context.Context, c hookbus.CallRecord) {
		mu.Lock()
		got = append(got, c)
		mu.Unlock()
	}})
	if err != nil {
		return &exitError{code: 2, err: fmt.Errorf("replay: %w", err)}
	}
	defer bus.Close(context.Background())
	red := replayRedactor(inv.cfg)

	fmt.Fprintf(stdout, "replaying %d call(s) of plugin %s from %s\n", len(calls), *plugin, path)
	differ := 0
	for _, c := range calls {
		if ctx.Err() != nil {
			return errors.New("replay interrupted")
		}
		mu.Lock()
		got = got[:0]
		mu.Unlock()
		if err := fire(hookbus.WithRequestID(ctx, c.RequestID), bus, c.Entry); err != nil {
			return &exitError{code: 2, err: fmt.Errorf("replay: %s:%d: %s input: %v", path, c.line, c.Hook, err)}
		}
		mu.Lock()
		now := decisionlog.Entry{Outcome: outcomeNotAsked}
		if len(got) > 0 {
			now = decisionlog.FromCall(got[0], red)
		}
		mu.Unlock()
		same := now.Outcome == c.Outcome && sameJSON(now.Answer, c.Answer)
		if !same {
			differ++
		}
		if !same || *verbose {
			mark := "differs"
			if same {
				mark = "same"
			}
			fmt.Fprintf(stdout, "%s %s request %s (line %d)\n  recorded: %s\n  now:      %s\n",
				mark, c.Hook, orNone(c.RequestID), c.line, describe(c.Entry), describe(now))
		}
	}
	if differ > 0 {
		fmt.Fprintf(stdout, "%d of %d call(s) answered differently\n", differ, len(calls))
		return &exitError{code: 1, err: fmt.Errorf("replay: plugin %s answered %d of %d recorded call(s) differently", *plugin, differ, len(calls))}
	}
	fmt.Fprintf(stdout, "all %d call(s) answered as recorded\n", len(calls))
	return nil
}

func configName(inv *invocation) string {
	if !inv.fromFile {
		return "the built-in defaults: no -c, and no hookhost.toml here"
	}
	return "plugins.enabled"
}

// readCalls reads the log at path whole, so that a bad line is reported
// before any call is made, and keeps plugin's calls.
func readCalls(path, plugin string) ([]recordedCall, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	defer f.Close()
	var calls []recordedCall
	err = decisionlog.Read(f, func(line int, e decisionlog.Entry) error {
		if e.Plugin == plugin {
			calls = append(calls, recordedCall{line, e})
		}
		return nil
	})
	if le := (*decisionlog.LineError)(nil); errors.As(err, &le) {
		return nil, fmt.Errorf("replay: %s:%d: %v (is this a decision log written by [trace] file?)", path, le.Line, le.Err)
	}
	if err != nil {
		return nil, fmt.Errorf("replay: %s: %w", path, err)
	}
	if len(calls) == 0 {
		return nil, fmt.Errorf("replay: %s has no call of plugin %q: nothing to replay (check the name against the log's \"plugin\" fields)", path, plugin)
	}
	return calls, nil
}

// fire sends e's input to the Bus as the hook it records, and waits for
// an observer's delivery.
func fire(ctx context.Context, bus *hookbus.Bus, e decisionlog.Entry) error {
	var err error
	switch e.Hook {
	case hooks.OnSessionStart:
		err = with(e.Input, bus.OnSessionStart)
	case hooks.OnSessionEnd:
		err = with(e.Input, bus.OnSessionEnd)
	case hooks.PostLLMCall:
		err = with(e.Input, bus.PostLLMCall)
	case hooks.PostToolCall:
		err = with(e.Input, bus.PostToolCall)
	case hooks.PreToolListFinalized:
		err = with(e.Input, func(p hooks.ToolListRequest) { bus.PreToolListFinalized(ctx, p) })
	case hooks.PreAPIRequestMutable:
		err = with(e.Input, func(p hooks.APIRequest) { bus.PreAPIRequestMutable(ctx, p) })
	case hooks.PostLLMCallCanReissue:
		err = with(e.Input, func(p hooks.LLMCall) { bus.PostLLMCallCanReissue(ctx, p) })
	case hooks.PreToolCall:
		err = with(e.Input, func(p hooks.ToolCallRequest) { bus.PreToolCall(ctx, p) })
	case hooks.PreToolCallCanProvideResult:
		err = with(e.Input, func(p hooks.ToolCallRequest) { bus.PreToolCallCanProvideResult(ctx, p) })
	case hooks.TransformToolResult:
		err = with(e.Input, func(p hooks.ToolCallOutcome) { bus.TransformToolResult(ctx, p) })
	case hooks.TransformLLMOutput:
		err = with(e.Input, func(p hooks.LLMOutput) { bus.TransformLLMOutput(ctx, p) })
	default:
		return fmt.Errorf("unknown hook %q", e.Hook)
	}
	if err != nil || !e.Hook.Observer() {
		return err
	}
	fctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	return bus.Flush(fctx)
}

// with decodes a hook's payload and hands it to send.
func with[T any](raw json.RawMessage, send func(T)) error {
	var p T
	if err := json.Unmarshal(raw, &p); err != nil {
		return err
	}
	send(p)
	return nil
}

// sameJSON compares two answers as JSON values, whatever their spacing
// and key order.
func sameJSON(a, b json.RawMessage) bool {
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return string(a) == string(b)
	}
	return reflect.DeepEqual(va, vb)
}

// describe is an outcome and its answer, short.
func describe(e decisionlog.Entry) string {
	s := e.Outcome
	if len(e.Answer) > 0 {
		a := string(e.Answer)
		if len(a) > 300 {
			a = a[:300] + "…"
		}
		s += " " + a
	}
	if e.Error != "" {
		s += " (" + e.Error + ")"
	}
	return s
}

func orNone(id string) string {
	if id == "" {
		return "(none: an observer delivery)"
	}
	return id
}

// replayRedactor blanks what the recording host blanked that replay can
// know: the keys the config's variables hold.
func replayRedactor(cfg *config.Config) *decisionlog.Redactor {
	var secrets []string
	if cfg.LLM.APIKeyEnv != "" {
		secrets = append(secrets, os.Getenv(cfg.LLM.APIKeyEnv))
	}
	if cfg.Server.APIKeyEnv != "" {
		secrets = append(secrets, strings.Split(os.Getenv(cfg.Server.APIKeyEnv), ",")...)
	}
	return decisionlog.NewRedactor(secrets...)
}
