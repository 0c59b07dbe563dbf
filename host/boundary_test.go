//go:build unix

package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/hookhost/hookhost/dispatch"
	"github.com/hookhost/hookhost/hookbus"
	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/syncbuf"
)

// The tests in this file run the bigresult test plugin, which TestMain
// builds beside echo.

func bigresultAs(t testing.TB, name string) string {
	t.Helper()
	return linkAs(t, filepath.Join(filepath.Dir(bins.echo), "bigresult"), name)
}

// logLines returns the non-empty lines logged to b so far.
func logLines(b *syncbuf.Buffer) []string {
	var out []string
	for _, l := range strings.Split(b.String(), "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}

// panicLog runs n panicking calls through a real plugin speaking protocol
// v and a Bus that log to one sink at level, and returns what was logged
// once the plugin has stopped and its stderr has been relayed to the end.
func panicLog(t *testing.T, level hclog.Level, n, v int) []string {
	t.Helper()
	sink := &syncbuf.Buffer{}
	log := hclog.New(&hclog.LoggerOptions{Name: "hookhost", Output: sink, Level: level})
	opts := fastOptions()
	opts.Logger = log
	name := named("panicky", v)
	h, errs := Start(context.Background(), Specs(configOf(plug{name, pinned(entry(bigresultAs(t, name)), v)})), opts)
	for _, e := range errs {
		t.Fatalf("unexpected start error: %v", e)
	}
	wantProtocol(t, h, v)
	bus, err := hookbus.New(h.Members(), hookbus.Config{Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	defer bus.Close(context.Background())
	for range n {
		if r := provide(bus, "panic", ""); r != nil {
			t.Fatalf("a panicking plugin produced %+v", r)
		}
	}
	// A remote panic reaches the host as a panic over both versions.
	kind := hookbus.KindPanic
	if got := bus.Stats().Failures(name, hooks.PreToolCallCanProvideResult, kind); got != uint64(n) {
		t.Fatalf("%d failures of kind %v counted, want %d", got, kind, n)
	}
	// Close waits for go-plugin's stderr relay, so every line the plugin
	// wrote has reached the sink after it.
	if err := h.Close(context.Background()); err != nil {
		t.Fatalf("Close: %v", err)
	}
	return logLines(sink)
}

// A recovered panic is the plugin's failure like any other: the Bus warns
// once per plugin, hook and kind, and the stack is there for whoever asks
// for DEBUG. Counted on a real plugin, whose panic log goes through its
// stderr and go-plugin's relay into the host's log.
func TestPluginPanicsAreWarnedOnceAndTheirStackIsDebug(t *testing.T) {
	t.Parallel()
	overProtocols(t, func(t *testing.T, v int) {
		const n = 200
		lines := panicLog(t, hclog.Warn, n, v)
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

		debug := strings.Join(panicLog(t, hclog.Debug, 1, v), "\n")
		if !strings.Contains(debug, "boom from "+named("panicky", v)) || !strings.Contains(debug, "goroutine ") {
			t.Fatalf("the panic's stack is not logged at DEBUG:\n%s", debug)
		}
	})
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
	sink := &syncbuf.Buffer{}
	opts := fastOptions()
	opts.Logger = hclog.New(&hclog.LoggerOptions{Name: "hookhost", Output: sink, Level: hclog.Warn})
	h := startOK(t, configOf(plug{"utf", entry(bigresultAs(t, "utf"))}), opts)
	bus := busOf(t, h)
	ctx := context.Background()

	// Host to plugin: a message with a bad byte, three times.
	for range 3 {
		text, by := bus.TransformLLMOutput(ctx, hooks.LLMOutput{SessionID: "s\xc3", Text: "bad \xff byte"})
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
	if n := memberOf(t, h, 0).invalidUTF8.Load(); n != 3 {
		t.Fatalf("%d repaired requests counted, want 3", n)
	}

	if err := h.Close(ctx); err != nil {
		t.Fatal(err)
	}
	var host, plugin int
	for _, l := range logLines(sink) {
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

// bigArgs returns a JSON object of about n bytes asking for a result of
// size bytes.
func bigArgs(n, size int) string {
	pad := max(n-40, 0)
	return fmt.Sprintf(`{"size":%d,"pad":"%s"}`, size, strings.Repeat("p", pad))
}

// Size limits, both ways, on a real plugin process: an answer over the
// plugin's max_result_size is its malformed answer; a call over its
// max_request_size is the host's refusal; the plugin stays up through both,
// and a call the host may send is one the SDK's server accepts.
func TestMessageSizeLimits(t *testing.T) {
	t.Parallel()
	overProtocols(t, func(t *testing.T, v int) {
		smallName, roomyName, dfltName := named("small", v), named("roomy", v), named("dflt", v)
		sink := &syncbuf.Buffer{}
		opts := fastOptions()
		opts.Logger = hclog.New(&hclog.LoggerOptions{Name: "hookhost", Output: sink, Level: hclog.Warn})
		// A shared machine may be slow to move 8 MiB: a result that misses
		// its deadline would count as a timeout, not as what is tested here.
		small := pinned(entry(bigresultAs(t, smallName)), v)
		small.MaxRequestSize, small.ToolTimeout = 1<<20, time.Minute
		roomy := pinned(entry(bigresultAs(t, roomyName)), v)
		roomy.MaxResultSize, roomy.ToolTimeout = 16<<20, time.Minute
		dflt := pinned(entry(bigresultAs(t, dfltName)), v)
		dflt.ToolTimeout = time.Minute
		h := startOK(t, configOf(plug{smallName, small}, plug{roomyName, roomy}, plug{dfltName, dflt}), opts)
		bus, err := hookbus.New(h.Members(), hookbus.Config{Logger: opts.Logger})
		if err != nil {
			t.Fatal(err)
		}
		defer bus.Close(context.Background())
		ask := func(s *supervised, tool, args string) (*hooks.ToolResult, error) {
			return callDirect(s, tool, args, 30*time.Second)
		}
		small0, roomy1, dflt2 := memberOf(t, h, 0), memberOf(t, h, 1), memberOf(t, h, 2)

		// Over max_result_size (4 MiB by default): the plugin's malformed answer.
		_, err = ask(small0, "big", bigArgs(0, 8<<20))
		if !errors.Is(err, hooks.ErrMalformed) || !strings.Contains(err.Error(), "plugins.entries."+smallName+".max_result_size") {
			t.Fatalf("8 MiB result under a 4 MiB limit: got %v, want a malformed answer naming the key", err)
		}
		// Within a raised limit: accepted whole.
		r, err := ask(roomy1, "big", bigArgs(0, 8<<20))
		if err != nil || len(r.Content) != 8<<20 {
			t.Fatalf("8 MiB result under a 16 MiB limit: %v", err)
		}

		// Over max_request_size: refused by the host, nothing sent.
		_, err = ask(small0, "argsize", bigArgs(2<<20, 0))
		if !errors.Is(err, hooks.ErrRefused) || !strings.Contains(err.Error(), "plugins.entries."+smallName+".max_request_size") {
			t.Fatalf("2 MiB request under a 1 MiB limit: got %v, want the host's refusal naming the key", err)
		}
		// 8 MiB: over gRPC's default 4 MiB, within the default 16 MiB limit
		// the SDK's server must accept.
		args := bigArgs(8<<20, 0)
		r, err = ask(dflt2, "argsize", args)
		if err != nil || r.Content != strconv.Itoa(len(args)) {
			t.Fatalf("8 MiB request under the default limit: got %+v, %v", r, err)
		}

		// Through the Bus: counted against the right party, and both plugins
		// still answer.
		if got := provide(bus, "big", bigArgs(0, 8<<20)); got == nil || got.Plugin != roomyName {
			t.Fatalf("first plugin's oversized answer did not fall through to the next: %+v", got)
		}
		if got := bus.PreToolCallCanProvideResult(context.Background(), hooks.ToolCallRequest{Name: "argsize", Arguments: json.RawMessage(bigArgs(2<<20, 0))}); got == nil || got.Plugin != roomyName {
			t.Fatalf("refused call did not fall through to the next plugin: %+v", got)
		}
		st := bus.Stats()
		if st.Failures(smallName, hooks.PreToolCallCanProvideResult, hookbus.KindMalformed) != 1 ||
			st.Failures(smallName, hooks.PreToolCallCanProvideResult, hookbus.KindRefused) != 1 {
			t.Fatalf("stats %+v, want one malformed and one refused for small", st.Hooks)
		}
		for _, s := range []*supervised{small0, roomy1, dflt2} {
			if r, err := ask(s, "ping", ""); err != nil || r == nil {
				t.Fatalf("plugin %s not answering after the limits: %v", s.Name(), err)
			}
			if st := s.Status(); st.Restarts != 0 {
				t.Fatalf("plugin %s restarted %d times: a size limit is no crash", s.Name(), st.Restarts)
			}
		}
		var refused bool
		for _, l := range logLines(sink) {
			if strings.Contains(l, "[WARN]") && strings.Contains(l, "kind=refused") && strings.Contains(l, "host refused") {
				refused = true
			}
		}
		if !refused {
			t.Fatalf("no WARN line says the host refused the call:\n%s", strings.Join(logLines(sink), "\n"))
		}
		wantProtocol(t, h, v)
	})
}

// A plugin whose gRPC server accepts less than the host may send (an older
// SDK, a third-party server, gRPC's 4 MiB default) refuses the request
// itself. That is the plugin's limitation, counted as its error, and the
// message says so: it is not an oversized answer, and raising
// max_result_size would not help.
func TestRequestRefusedByThePluginsServer(t *testing.T) {
	t.Parallel()
	e := entry(bigresultAs(t, "oldsdk"))
	e.ToolTimeout = time.Minute // a shared machine may be slow to move 8 MiB
	h := startOK(t, configOf(plug{"oldsdk", e}), fastOptions())
	bus := busOf(t, h)
	s := memberOf(t, h, 0)

	args := bigArgs(8<<20, 0)
	_, err := callDirect(s, "argsize", args, time.Minute)
	if err == nil {
		t.Fatal("an 8 MiB request reached a plugin whose server accepts 4 MiB")
	}
	msg := err.Error()
	if errors.Is(err, hooks.ErrMalformed) || strings.Contains(msg, "max_result_size") ||
		!strings.Contains(msg, "oldsdk") || !strings.Contains(msg, "refused a request of") ||
		!strings.Contains(msg, "max_request_size") {
		t.Fatalf("got %v, want the plugin's refusal of the request, naming it and max_request_size", err)
	}
	if r := provide(bus, "argsize", args); r != nil {
		t.Fatalf("refused request produced %+v", r)
	}
	st := bus.Stats()
	if st.Failures("oldsdk", hooks.PreToolCallCanProvideResult, hookbus.KindError) != 1 ||
		st.Failures("oldsdk", hooks.PreToolCallCanProvideResult, hookbus.KindMalformed) != 0 {
		t.Fatalf("stats %+v, want one error and no malformed answer", st.Hooks)
	}
	// An answer over the limit from the same plugin is still its malformed
	// answer.
	if _, err := callDirect(s, "big", bigArgs(0, 8<<20), time.Minute); !errors.Is(err, hooks.ErrMalformed) || !strings.Contains(err.Error(), "max_result_size") {
		t.Fatalf("8 MiB answer: got %v, want a malformed answer naming max_result_size", err)
	}
	if r, err := callDirect(s, "ping", "", time.Minute); err != nil || r == nil {
		t.Fatalf("plugin not answering after the refusal: %v", err)
	}
}

// totalAlloc is what the Go heap has allocated since the process started,
// read after a collection.
func totalAlloc() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.TotalAlloc
}

// rss is the process's resident set where /proc reports it (see
// rssBytes), 0 elsewhere, so that the heap checks still run there.
func rss(t *testing.T) uint64 {
	if runtime.GOOS != "linux" {
		return 0
	}
	return rssBytes(t)
}

// Part of the plugin fault matrix: a plugin answering with results of
// 8–64 MiB, 25 of them, 932 MiB in all. The host rejects each from its
// length prefix, so its memory stays within a small multiple of the limit
// however much the plugin sends, and it keeps answering between them. Not
// parallel, so that nothing else allocates while it measures.
func TestLargeResultsKeepTheHostBounded(t *testing.T) {
	e := entry(bigresultAs(t, "huge"))
	// A 64 MiB answer may take longer than the default deadline to arrive
	// on a shared machine; a timeout is not the rejection tested here.
	e.ToolTimeout = time.Minute
	h := startOK(t, configOf(plug{"huge", e}), fastOptions())
	bus := busOf(t, h)
	var sizes []int
	var sent int
	for i := range 25 {
		size := (8 + (i*7)%57) << 20 // 8 MiB to 64 MiB
		sizes = append(sizes, size)
		sent += size
	}

	before, rssBefore := totalAlloc(), rss(t)
	var rssMax uint64
	for _, size := range sizes {
		if r := provide(bus, "big", bigArgs(0, size)); r != nil {
			t.Fatalf("a %d MiB result over the 4 MiB limit was accepted", size>>20)
		}
		rssMax = max(rssMax, rss(t))
		if r := provide(bus, "ping", ""); r == nil || r.Content != `"answered by huge"` {
			t.Fatalf("the host stopped getting answers after a %d MiB result: %+v", size>>20, r)
		}
	}
	after := totalAlloc()

	if n := bus.Stats().Failures("huge", hooks.PreToolCallCanProvideResult, hookbus.KindMalformed); n != uint64(len(sizes)) {
		t.Fatalf("%d of %d oversized results counted as malformed", n, len(sizes))
	}
	allocated := after - before
	t.Logf("plugin sent %d MiB in %d results; host allocated %d MiB in all; RSS %d MiB before, at most %d MiB after each result",
		sent>>20, len(sizes), allocated>>20, rssBefore>>20, rssMax>>20)
	const limit = 4 << 20
	if allocated > uint64(len(sizes))*limit {
		t.Fatalf("host allocated %d MiB to reject %d MiB of oversized results: more than the limit per result", allocated>>20, sent>>20)
	}
	if rssBefore > 0 && rssMax > rssBefore+8*limit {
		t.Fatalf("RSS grew from %d MiB to %d MiB: more than 8×limit", rssBefore>>20, rssMax>>20)
	}
}

// The same results under a limit raised to 80 MiB are accepted, one at a
// time: the host's memory is bounded by a small multiple of the limit, not
// by the 932 MiB the plugin sends in all.
func TestLargeResultsWithinARaisedLimit(t *testing.T) {
	const limit = 80 << 20
	e := entry(bigresultAs(t, "huge"))
	e.MaxResultSize = limit
	e.ToolTimeout = time.Minute // a shared machine may be slow to move 64 MiB
	h := startOK(t, configOf(plug{"huge", e}), fastOptions())
	bus := busOf(t, h)

	rssBefore := rss(t)
	var rssMax uint64
	var sent int
	var retained uint64
	for i := range 25 {
		size := (8 + (i*7)%57) << 20
		sent += size
		r := provide(bus, "big", bigArgs(0, size))
		if r == nil || len(r.Content) != size {
			t.Fatalf("a %d MiB result within the 80 MiB limit was not accepted whole", size>>20)
		}
		// What the host still holds once garbage is collected, with this
		// result still in hand: nothing may pile up from call to call.
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		retained = max(retained, ms.HeapAlloc)
		rssMax = max(rssMax, rss(t))
	}
	t.Logf("plugin sent %d MiB in 25 results; heap retained at most %d MiB; RSS %d MiB before, at most %d MiB after each result",
		sent>>20, retained>>20, rssBefore>>20, rssMax>>20)
	if retained > 3*limit {
		t.Fatalf("heap retained %d MiB between calls: more than 3×limit", retained>>20)
	}
	// RSS is logged, not asserted: it includes garbage the collector had
	// not reached yet, and the race detector's shadow memory.
}

// Text that is not valid UTF-8 in a plugin's answer is repaired once, the
// same way over either protocol: a later transform_tool_result sees U+FFFD
// in the result, never the escape text "\ufffd" that encoding the raw bytes
// as JSON would give (which is what the plugin's own transform saw over v2,
// where the host asks it to provide and transform in one exchange).
func TestInvalidUTF8ReachesALaterTransformAsTheSameText(t *testing.T) {
	t.Parallel()
	want, _ := json.Marshal(map[string]string{"saw": `"bad ` + "\uFFFD" + ` byte"`})
	got := map[int]string{}
	for _, v := range []int{1, 2} {
		name := named("chaos", v)
		h := startOK(t, configOf(plug{name, pinned(entry(linkAs(t, chaosBin(), name)), v)}), fastOptions())
		p := &dispatch.Pipeline{Registry: must(dispatch.NewRegistry()), Bus: busOf(t, h)}
		out := p.Run(context.Background(), "s1", hooks.ToolCall{ID: "c1", Name: name + "__bad", Arguments: json.RawMessage(`{}`)})
		if out.Path != dispatch.PathProvided || len(out.TransformedBy) != 1 {
			t.Fatalf("v%d: %+v, want a result provided and transformed by %s", v, out, name)
		}
		got[v] = out.Result.Content
	}
	if got[1] != got[2] || got[1] != string(want) {
		t.Fatalf("the transform saw\n v1: %s\n v2: %s\nwant both %s", got[1], got[2], want)
	}
}

// chaosBin is the chaos test plugin, built with the others.
func chaosBin() string { return filepath.Join(filepath.Dir(bins.echo), "chaos") }
