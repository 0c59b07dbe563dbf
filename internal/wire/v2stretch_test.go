package wire_test

import (
	"context"
	"encoding/json"
	"errors"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/hookstretch"
	"github.com/hookhost/hookhost/internal/wire"
	pluginv1 "github.com/hookhost/hookhost/plugins/proto/v1"
	pluginv2 "github.com/hookhost/hookhost/plugins/proto/v2"
)

// standInStretch answers a stretch stage by stage, stopping where the
// catalogue's rules stop, for these tests only: the plugin's side of a
// stretch is package hooks' (hookstretch.Run), tested there.
func standInStretch(ctx context.Context, p hooks.Plugin, req hookstretch.Request, emit func(any, error)) {
	call := req.Call
	var provided *hooks.ToolResult
	for _, st := range req.Stages {
		sctx, cancel := context.WithTimeout(ctx, st.Timeout)
		switch st.Hook {
		case hooks.PreToolCall:
			d, err := hooks.Ask[*hooks.PreToolCallDecision](sctx, p, st.Hook, call)
			cancel()
			emit(d, err)
			if err != nil || (d != nil && d.Block != nil) {
				return
			}
			if d != nil && d.ModifiedArgs != nil {
				call.Arguments = d.ModifiedArgs
			}
		case hooks.PreToolCallCanProvideResult:
			r, err := hooks.Ask[*hooks.ToolResult](sctx, p, st.Hook, call)
			cancel()
			emit(r, err)
			if err != nil || r == nil {
				return
			}
			provided = r
		case hooks.TransformToolResult:
			r, err := hooks.Ask[*hooks.ToolResult](sctx, p, st.Hook, hooks.ToolCallOutcome{
				SessionID: call.SessionID, CallID: call.CallID, Name: call.Name, Arguments: call.Arguments,
				Result: *provided, Status: hooks.ProvidedBy(p.Manifest().Name),
			})
			cancel()
			emit(r, err)
			if err != nil {
				return
			}
		default:
			cancel()
		}
	}
}

type runStretchFunc = func(context.Context, hooks.Plugin, hookstretch.Request, func(any, error))

// overStretches runs test with the plugin's side of stretches as package
// hooks writes it and with the stand-in above.
func overStretches(t *testing.T, test func(t *testing.T, run runStretchFunc)) {
	t.Run("hookstretch.Run", func(t *testing.T) { test(t, hookstretch.Run) })
	t.Run("stand-in", func(t *testing.T) { test(t, standInStretch) })
}

func stretchServer(t *testing.T, run runStretchFunc, p hooks.Plugin) wire.Conn {
	t.Helper()
	t.Cleanup(wire.SetRunStretch(run)) // after the server stopped: cleanups run last first
	return serveV2(t, p).client
}

func stages(hs ...hooks.Name) []hookstretch.Stage {
	out := make([]hookstretch.Stage, len(hs))
	for i, h := range hs {
		out[i] = hookstretch.Stage{Hook: h, Timeout: 10 * time.Second}
	}
	return out
}

// toolPlugin modifies the arguments, provides a result from them, and
// transforms it; it blocks tool "blocked" and provides nothing for "none".
func toolPlugin(provideEntered chan<- struct{}, provideEnded chan<- error) *hooks.Funcs {
	return &hooks.Funcs{
		Name: "tools",
		PreToolCallFunc: func(_ context.Context, ev hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
			if ev.Name == "blocked" {
				return &hooks.PreToolCallDecision{Block: &hooks.Block{Message: "not today"}}, nil
			}
			return &hooks.PreToolCallDecision{ModifiedArgs: json.RawMessage(`{"x":2}`)}, nil
		},
		PreToolCallCanProvideResultFunc: func(ctx context.Context, ev hooks.ToolCallRequest) (*hooks.ToolResult, error) {
			switch ev.Name {
			case "blocked":
				panic("provide ran after a block")
			case "none":
				return nil, nil
			case "hang":
				provideEntered <- struct{}{}
				<-ctx.Done()
				provideEnded <- ctx.Err()
				return nil, ctx.Err()
			}
			return &hooks.ToolResult{Content: string(ev.Arguments)}, nil
		},
		TransformToolResultFunc: func(_ context.Context, ev hooks.ToolCallOutcome) (*hooks.ToolResult, error) {
			return &hooks.ToolResult{Content: strings.ToUpper(ev.Result.Content) + " " + string(ev.Status)}, nil
		},
	}
}

func TestV2StretchAnswersInOrder(t *testing.T) {
	overStretches(t, testStretchAnswersInOrder)
}

func testStretchAnswersInOrder(t *testing.T, run runStretchFunc) {
	c := stretchServer(t, run, toolPlugin(nil, nil))
	s, err := c.Stretch(t.Context(), hookstretch.Request{
		Call:   hooks.ToolCallRequest{SessionID: "s", CallID: "c1", Name: "calc", Arguments: json.RawMessage(`{"x":1}`)},
		Stages: stages(hooks.PreToolCall, hooks.PreToolCallCanProvideResult, hooks.TransformToolResult),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	want := []any{
		&hooks.PreToolCallDecision{ModifiedArgs: json.RawMessage(`{"x":2}`)},
		&hooks.ToolResult{Content: `{"x":2}`},
		&hooks.ToolResult{Content: `{"X":2} provided_by:tools`},
	}
	for i, w := range want {
		v, err := s.Next(t.Context())
		if err != nil {
			t.Fatalf("stage %d: %v", i, err)
		}
		if !equalJSON(v, w) {
			t.Fatalf("stage %d: got %#v, want %#v", i, v, w)
		}
	}
	if _, err := s.Next(t.Context()); err == nil || !strings.Contains(err.Error(), "no more stages") {
		t.Fatalf("Next after the last stage: got %v", err)
	}
	s.Close()
	s.Close()
	if n := c.LateAnswers(); n != 0 {
		t.Fatalf("%d late answers", n)
	}
}

func equalJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

func TestV2StretchStopsAfterABlockOrNothingProvided(t *testing.T) {
	overStretches(t, testStretchStops)
}

func testStretchStops(t *testing.T, run runStretchFunc) {
	c := stretchServer(t, run, toolPlugin(nil, nil))
	for _, tc := range []struct {
		tool string
		want []any
	}{
		{"blocked", []any{&hooks.PreToolCallDecision{Block: &hooks.Block{Message: "not today"}}}},
		{"none", []any{&hooks.PreToolCallDecision{ModifiedArgs: json.RawMessage(`{"x":2}`)}, nil}},
	} {
		s, err := c.Stretch(t.Context(), hookstretch.Request{
			Call:   hooks.ToolCallRequest{Name: tc.tool},
			Stages: stages(hooks.PreToolCall, hooks.PreToolCallCanProvideResult, hooks.TransformToolResult),
		})
		if err != nil {
			t.Fatal(err)
		}
		for i, w := range tc.want {
			v, err := s.Next(t.Context())
			if err != nil || !equalJSON(v, w) {
				t.Fatalf("%s: stage %d: got (%#v, %v), want %#v", tc.tool, i, v, err, w)
			}
		}
		if _, err := s.Next(t.Context()); err == nil || !strings.Contains(err.Error(), "no more stages") {
			t.Fatalf("%s: Next after the plugin's last answer: got %v", tc.tool, err)
		}
		s.Close()
	}
	if n := c.LateAnswers(); n != 0 {
		t.Fatalf("%d late answers", n)
	}
}

func TestV2StretchCloseCancels(t *testing.T) {
	overStretches(t, testStretchCloseCancels)
}

func testStretchCloseCancels(t *testing.T, run runStretchFunc) {
	entered, ended := make(chan struct{}, 1), make(chan error, 1)
	c := stretchServer(t, run, toolPlugin(entered, ended))
	s, err := c.Stretch(t.Context(), hookstretch.Request{
		Call:   hooks.ToolCallRequest{Name: "hang"},
		Stages: stages(hooks.PreToolCall, hooks.PreToolCallCanProvideResult),
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Next(t.Context()); err != nil {
		t.Fatal(err)
	}
	<-entered
	s.Close()
	select {
	case err := <-ended:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("the provide stage saw %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("closing the stretch never reached the plugin")
	}
	if _, err := s.Next(t.Context()); err == nil {
		t.Fatal("Next after Close answered")
	}

	// The stretch's context ending cancels it too.
	ctx, cancel := context.WithCancel(t.Context())
	s, err = c.Stretch(ctx, hookstretch.Request{
		Call:   hooks.ToolCallRequest{Name: "hang"},
		Stages: stages(hooks.PreToolCall, hooks.PreToolCallCanProvideResult),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Next(t.Context()); err != nil {
		t.Fatal(err)
	}
	<-entered
	cancel()
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Fatal("the stretch's context ending never reached the plugin")
	}
}

// A plugin out of step with the stages it was asked for is malformed.
func TestV2StretchOutOfStep(t *testing.T) {
	r := &rawV2{onCall: func(s pluginv2.Plugin_HooksServer, c *pluginv2.HookCall, name string) bool {
		empty := answerOf(t, &pluginv1.PreToolCallResponse{})
		switch name {
		case "twice":
			_ = s.Send(&pluginv2.PluginMessage{Id: c.GetId(), Stage: 0, Answer: empty})
			_ = s.Send(&pluginv2.PluginMessage{Id: c.GetId(), Stage: 0, Answer: empty})
		case "skip":
			_ = s.Send(&pluginv2.PluginMessage{Id: c.GetId(), Stage: 1, Answer: empty})
		}
		return false
	}}
	c := dialRaw(t, r)
	for _, tc := range []struct {
		tool    string
		okFirst bool
		want    string
	}{
		{"twice", true, "answered stage 0 of the call, want stage 1"},
		{"skip", false, "answered stage 1 of the call, want stage 0"},
	} {
		s, err := c.Stretch(t.Context(), hookstretch.Request{
			Call:   hooks.ToolCallRequest{Name: tc.tool},
			Stages: stages(hooks.PreToolCall, hooks.PreToolCallCanProvideResult),
		})
		if err != nil {
			t.Fatal(err)
		}
		if tc.okFirst {
			if v, err := s.Next(t.Context()); err != nil || v != nil {
				t.Fatalf("%s: first stage (%v, %v)", tc.tool, v, err)
			}
		}
		_, err = s.Next(t.Context())
		if !errors.Is(err, wire.ErrMalformed) || !strings.Contains(err.Error(), tc.want) {
			t.Fatalf("%s: got %v, want malformed: %s", tc.tool, err, tc.want)
		}
		if _, err := s.Next(t.Context()); err == nil {
			t.Fatalf("%s: Next after a malformed stage answered", tc.tool)
		}
		s.Close()
	}
}

// Close ends the stream's goroutines and the plugin's handlers: the count of
// goroutines returns to what it was before the client was used.
func TestV2CloseLeaksNoGoroutine(t *testing.T) {
	entered, ended := make(chan struct{}, 64), make(chan error, 64)
	restore := wire.SetRunStretch(standInStretch)
	defer restore()
	cn := dial(t, 2, func(s *grpc.Server) { wire.RegisterV2(s, toolPlugin(entered, ended), nil) })
	c := cn.client
	if _, err := c.Describe(t.Context()); err != nil {
		t.Fatal(err)
	}
	base := runtime.NumGoroutine()

	// Calls answered, calls hanging in the plugin, a stretch under way.
	var answered atomic.Int32
	for range 50 {
		if _, err := c.Handle(t.Context(), hooks.PreToolCall, hooks.ToolCallRequest{Name: "x"}); err == nil {
			answered.Add(1)
		}
	}
	errs := make(chan error, 3)
	for range 3 {
		go func() {
			_, err := c.Handle(context.Background(), hooks.PreToolCallCanProvideResult, hooks.ToolCallRequest{Name: "hang"})
			errs <- err
		}()
	}
	s, err := c.Stretch(t.Context(), hookstretch.Request{Call: hooks.ToolCallRequest{Name: "x"}, Stages: stages(hooks.PreToolCall, hooks.PreToolCallCanProvideResult)})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		<-entered
	}
	c.Close()
	for range 3 {
		select {
		case err := <-errs:
			if !errors.Is(err, hooks.ErrUnavailable) {
				t.Errorf("a call in flight at Close: got %v, want unavailable", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("a call in flight at Close never returned")
		}
		select {
		case <-ended:
		case <-time.After(10 * time.Second):
			t.Fatal("a handler in flight at Close never saw its context end")
		}
	}
	s.Close()
	if answered.Load() != 50 {
		t.Fatalf("%d of 50 calls answered", answered.Load())
	}
	if _, err := c.Handle(t.Context(), hooks.PreToolCall, evCall); !errors.Is(err, hooks.ErrUnavailable) {
		t.Fatalf("a call after Close: got %v, want unavailable", err)
	}
	eventually(t, "the goroutine count to return to its baseline", func() bool { return runtime.NumGoroutine() <= base })
}

// The plugin's side of a stretch that stops early says so, and one that
// panics costs the call, not the process.
func TestV2StretchEndsEarlyOrPanics(t *testing.T) {
	t.Cleanup(wire.SetRunStretch(func(ctx context.Context, p hooks.Plugin, req hookstretch.Request, emit func(any, error)) {
		switch req.Call.Name {
		case "early":
			emit(nil, nil)
		case "panic":
			emit(nil, nil)
			panic("stretch bug")
		default:
			standInStretch(ctx, p, req, emit)
		}
	}))
	c := serveV2(t, toolPlugin(nil, nil)).client
	for _, tc := range []struct {
		tool string
		kind error
		want string
	}{
		{"early", nil, "the plugin ended the stretch before stage 1"},
		{"panic", hooks.ErrPanicked, "panic answering a stretch: stretch bug"},
	} {
		s, err := c.Stretch(t.Context(), hookstretch.Request{Call: hooks.ToolCallRequest{Name: tc.tool}, Stages: stages(hooks.PreToolCall, hooks.PreToolCallCanProvideResult)})
		if err != nil {
			t.Fatal(err)
		}
		if v, err := s.Next(t.Context()); err != nil || v != nil {
			t.Fatalf("%s: first stage (%v, %v)", tc.tool, v, err)
		}
		_, err = s.Next(t.Context())
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Fatalf("%s: got %v, want %v: %s", tc.tool, err, tc.kind, tc.want)
		}
		if tc.kind != nil && !errors.Is(err, tc.kind) {
			t.Fatalf("%s: got %v, want %v", tc.tool, err, tc.kind)
		}
		if tc.kind == nil && (errors.Is(err, context.Canceled) || errors.Is(err, hooks.ErrPanicked)) {
			// The plugin ended it, not the host: the plugin's error.
			t.Fatalf("%s: got %v, want a plain plugin error", tc.tool, err)
		}
		s.Close()
	}
	// The process serves on.
	if v, err := c.Handle(t.Context(), hooks.PreToolCall, hooks.ToolCallRequest{Name: "x"}); err != nil || v == nil {
		t.Fatalf("after: (%v, %v)", v, err)
	}
}
