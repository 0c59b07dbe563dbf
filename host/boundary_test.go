//go:build unix

package host

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/hookhost/hookhost/dispatch"
	"github.com/hookhost/hookhost/hooks"
)

// The tests in this file run the bigresult test plugin, which TestMain
// builds beside echo.

func bigresultAs(t testing.TB, name string) string {
	t.Helper()
	return linkAs(t, filepath.Join(filepath.Dir(bins.echo), "bigresult"), name)
}

func linkAs(t testing.TB, target, name string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
	return p
}

// logSink collects log output written from several goroutines (the host's
// own and go-plugin's stderr relay).
type logSink struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *logSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

func (s *logSink) lines() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, l := range strings.Split(s.buf.String(), "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}

// panicLog runs n panicking calls through a real plugin and a Bus that log
// to one sink at level, and returns what was logged once the plugin has
// stopped and its stderr has been relayed to the end.
func panicLog(t *testing.T, level hclog.Level, n int) []string {
	t.Helper()
	sink := &logSink{}
	log := hclog.New(&hclog.LoggerOptions{Name: "hookhost", Output: sink, Level: level})
	opts := fastOptions()
	opts.Logger = log
	h, errs := Start(context.Background(), configOf(plug{"panicky", entry(bigresultAs(t, "panicky"))}), opts)
	for _, e := range errs {
		t.Fatalf("unexpected start error: %v", e)
	}
	bus, err := hooks.NewBus(h.Members(), hooks.Config{Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	defer bus.Close(context.Background())
	for range n {
		if r := provide(bus, "panic", ""); r != nil {
			t.Fatalf("a panicking plugin produced %+v", r)
		}
	}
	// A remote panic reaches the host as the plugin's error.
	if got := bus.Stats().Failures("panicky", hooks.PreToolCallCanProvideResult, hooks.KindError); got != uint64(n) {
		t.Fatalf("%d failures counted, want %d", got, n)
	}
	// Close waits for go-plugin's stderr relay, so every line the plugin
	// wrote has reached the sink after it.
	if err := h.Close(context.Background()); err != nil {
		t.Fatalf("Close: %v", err)
	}
	return sink.lines()
}

// A recovered panic is the plugin's failure like any other: the Bus warns
// once per plugin, hook and kind, and the stack is there for whoever asks
// for DEBUG. Counted on a real plugin, whose panic log goes through its
// stderr and go-plugin's relay into the host's log.
func TestPluginPanicsAreWarnedOnceAndTheirStackIsDebug(t *testing.T) {
	t.Parallel()
	const n = 200
	lines := panicLog(t, hclog.Warn, n)
	for _, l := range lines {
		t.Log(l)
	}
	var warns int
	for _, l := range lines {
		if strings.Contains(l, "stack") || strings.Contains(l, "goroutine ") {
			t.Errorf("a stack reached the default log level: %.200s", l)
		}
		if strings.Contains(l, "[WARN]") && strings.Contains(l, "panic") {
			warns++
		}
	}
	if len(lines) > 5 || warns != 1 {
		t.Fatalf("%d panics gave %d log lines at the default level, %d of them a panic WARN; want a handful with exactly one WARN", n, len(lines), warns)
	}

	debug := strings.Join(panicLog(t, hclog.Debug, 1), "\n")
	if !strings.Contains(debug, "boom from panicky") || !strings.Contains(debug, "goroutine ") {
		t.Fatalf("the panic's stack is not logged at DEBUG:\n%s", debug)
	}
}

// A remote plugin's plain-text answers, provided and transformed, reach the
// conversation as JSON strings, as an in-process plugin's do.
func TestRemotePluginTextResultsBecomeJSONStrings(t *testing.T) {
	t.Parallel()
	h := startOK(t, configOf(plug{"texty", entry(bigresultAs(t, "texty"))}), fastOptions())
	p := &dispatch.Pipeline{Registry: must(dispatch.NewRegistry()), Bus: busOf(t, h)}
	out := p.Run(context.Background(), "s1", hooks.ToolCall{ID: "c1", Name: "text", Arguments: json.RawMessage(`{}`)})
	// The transform saw the provided text already as a JSON string, and
	// its own text answer became one in turn.
	want, _ := json.Marshal(`texty transformed "plain text from texty"`)
	if out.Path != dispatch.PathProvided || out.Result.Content != string(want) {
		t.Fatalf("got %+v, want content %s", out, want)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// Text that is not valid UTF-8 cannot travel in a proto string field; it is
// repaired with U+FFFD at the boundary, both ways, so the hook still works,
// and the repair is counted and logged once per plugin and hook.
func TestInvalidUTF8CrossesTheBoundaryRepaired(t *testing.T) {
	t.Parallel()
	sink := &logSink{}
	opts := fastOptions()
	opts.Logger = hclog.New(&hclog.LoggerOptions{Name: "hookhost", Output: sink, Level: hclog.Warn})
	h := startOK(t, configOf(plug{"utf", entry(bigresultAs(t, "utf"))}), opts)
	bus := busOf(t, h)
	ctx := context.Background()

	// Host to plugin: a message with a bad byte, three times.
	for range 3 {
		text, by := bus.TransformOutput(ctx, hooks.LLMOutput{SessionID: "s\xc3", Text: "bad \xff byte"})
		if text != "seen: bad \uFFFD byte" || len(by) != 1 {
			t.Fatalf("transform_llm_output with invalid UTF-8 = %q by %v, want the repaired text echoed", text, by)
		}
	}
	// Plugin to host: a result with bad bytes.
	r := provide(bus, "badutf8", "")
	if r == nil || r.Content != "{\"s\":\"bad \uFFFD byte\"}" {
		t.Fatalf("result with invalid UTF-8 = %+v, want it repaired", r)
	}
	for _, hs := range bus.Stats().Hooks {
		if hs.Failures != nil {
			t.Fatalf("repaired text counted as a failure: %+v", hs)
		}
	}
	if n := supervised(t, h, 0).InvalidUTF8(); n != 3 {
		t.Fatalf("%d repaired requests counted, want 3", n)
	}

	if err := h.Close(ctx); err != nil {
		t.Fatal(err)
	}
	var host, plugin int
	for _, l := range sink.lines() {
		t.Log(l)
		if !strings.Contains(l, "[WARN]") || !strings.Contains(l, "invalid UTF-8") {
			continue
		}
		switch {
		case strings.Contains(l, "plugin=utf") && strings.Contains(l, "hook=transform_llm_output"):
			host++
		case strings.Contains(l, "plugin.utf") && strings.Contains(l, "pre_tool_call_can_provide_result"):
			plugin++
		}
	}
	if host != 1 || plugin != 1 {
		t.Fatalf("want one WARN from the host (got %d) and one relayed from the plugin (got %d), each naming plugin and hook", host, plugin)
	}
}
