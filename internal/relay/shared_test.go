package relay

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hookhost/hookhost/gateway/statestore"
	"github.com/hookhost/hookhost/gateway/statestore/statestoretest"
	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/dialect"
	"github.com/hookhost/hookhost/llm"
)

// shape writes a history as roles, call ids and the ids results answer.
func shape(msgs []hooks.Message) []string {
	var out []string
	for _, m := range msgs {
		s := string(m.Role)
		for _, c := range m.ToolCalls {
			s += ":" + c.ID
		}
		if m.ToolCallID != "" {
			s += "<" + m.ToolCallID
		}
		out = append(out, s)
	}
	return out
}

// A mixed response kept by one relay is continued on another sharing its
// backend, as two replicas: the hidden plugin round is spliced back, the
// client's result goes up under the upstream's id, and plugins see one
// session.
func TestSharedStoreContinuesOnAnotherReplica(t *testing.T) {
	for name, backend := range map[string]func(t *testing.T) statestore.Store{
		"memory": func(*testing.T) statestore.Store {
			return statestore.NewMemory(statestore.Limits{Entries: 100, Bytes: 1 << 20}, nil)
		},
		"redis": func(t *testing.T) statestore.Store {
			srv := statestoretest.StartRedis(t)
			r, err := statestore.NewRedis(statestore.RedisOptions{URL: srv.URL(), Prefix: "t:", TenantEntries: 100, TenantBytes: 1 << 20})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { r.Close() })
			return r
		},
	} {
		t.Run(name, func(t *testing.T) {
			shared := backend(t)
			rec := &recorder{}
			bus := newBus(t, kora(`{"usd":3}`), rec.observer())
			// Arguments that are not JSON and text that is not UTF-8 come
			// back byte for byte.
			odd := "caf\xe9 {"
			up := &scripted{steps: []step{
				calls("", 5, 1, tc("k1", "kora__burn", odd)),
				calls("", 6, 2, tc("c1", "read_file", `{"path":"a"}`)),
				text("The file says hi.", 7, 3),
			}}
			a := New(Config{Provider: up, Bus: bus, Store: NewSharedStore(shared, time.Minute)})
			b := New(Config{Provider: up, Bus: bus, Store: NewSharedStore(shared, time.Minute)})
			front := testFront{llm.ProtocolChat}

			res := runOK(t, a, front, userCall("read a", readFile), nil)
			if len(res.ToolCalls) != 1 || res.ToolCalls[0].Name != "read_file" {
				t.Fatalf("client got %+v, want only read_file", res.ToolCalls)
			}
			cid := res.ToolCalls[0].ID
			next := userCall("read a", readFile)
			next.Request.Messages = append(next.Request.Messages,
				hooks.Message{Role: hooks.RoleAssistant, ToolCalls: res.ToolCalls},
				hooks.Message{Role: hooks.RoleTool, ToolCallID: cid, Content: "hi"},
			)
			runOK(t, b, front, next, nil)
			got := up.calls()[2].req.Messages
			want := []string{"user", "assistant:k1", "tool<k1", "assistant:c1", "tool<c1"}
			if !reflect.DeepEqual(shape(got), want) {
				t.Fatalf("the continuation on the other replica sent %v, want %v", shape(got), want)
			}
			if string(got[1].ToolCalls[0].Arguments) != odd || got[4].Content != "hi" {
				t.Errorf("spliced arguments %q, result %q; want %q and hi", got[1].ToolCalls[0].Arguments, got[4].Content, odd)
			}
			flush(t, bus)
			rec.mu.Lock()
			defer rec.mu.Unlock()
			if len(rec.starts) != 1 || len(rec.ends) != 2 || rec.ends[0].SessionID != rec.ends[1].SessionID {
				t.Errorf("want one session across both replicas: starts %+v ends %+v", rec.starts, rec.ends)
			}
		})
	}
}

// A client's result transformed on one replica is not transformed again
// when the same history reaches another.
func TestSharedStoreTransformsOnceAcrossReplicas(t *testing.T) {
	transforms := 0
	redact := &hooks.Funcs{Name: "redact", TransformToolResultFunc: func(_ context.Context, ev hooks.ToolCallOutcome) (*hooks.ToolResult, error) {
		transforms++ // one Run at a time
		return &hooks.ToolResult{Content: strings.ReplaceAll(ev.Result.Content, "secret", "[redacted]")}, nil
	}}
	bus := newBus(t, redact)
	shared := statestore.NewMemory(statestore.Limits{Entries: 100, Bytes: 1 << 20}, nil)
	up := &scripted{steps: []step{calls("", 1, 1, tc("c1", "read_file", `{"path":"a"}`))}}
	a := New(Config{Provider: up, Bus: bus, Store: NewSharedStore(shared, time.Minute)})
	b := New(Config{Provider: up, Bus: bus, Store: NewSharedStore(shared, time.Minute)})
	front := testFront{llm.ProtocolChat}
	res := runOK(t, a, front, userCall("read a", readFile), nil)

	history := []hooks.Message{
		{Role: hooks.RoleUser, Content: "read a"},
		{Role: hooks.RoleAssistant, ToolCalls: res.ToolCalls},
		{Role: hooks.RoleTool, ToolCallID: res.ToolCalls[0].ID, Content: "the secret is 42"},
	}
	up.steps = []step{text("It says 42.", 1, 1), text("You're welcome.", 1, 1)}
	second := userCall("")
	second.Request.Messages = append([]hooks.Message(nil), history...)
	runOK(t, b, front, second, nil)
	third := userCall("")
	third.Request.Messages = append(append([]hooks.Message(nil), history...),
		hooks.Message{Role: hooks.RoleAssistant, Content: "It says 42."},
		hooks.Message{Role: hooks.RoleUser, Content: "thanks"})
	runOK(t, a, front, third, nil)
	for i, c := range up.calls()[1:] {
		if m := c.req.Messages[2]; m.Content != "the [redacted] is 42" {
			t.Errorf("request %d sent the client's result as %q", i+2, m.Content)
		}
	}
	if transforms != 1 {
		t.Errorf("transform_tool_result fired %d times over two replicas, want 1", transforms)
	}
}

// failing is a shared backend that cannot be reached.
type failing struct{ err error }

func (f failing) Put(context.Context, string, string, []byte, time.Duration) error { return f.err }
func (f failing) Get(context.Context, string, string) ([]byte, bool, error)        { return nil, false, f.err }
func (f failing) Delete(context.Context, string, string) (bool, error)             { return false, f.err }

// While the shared backend fails, a request that needs it fails with its
// error (a continuation, a response whose calls would be handed over) and
// one that does not is served.
func TestSharedStoreFailureFailsWhatNeedsIt(t *testing.T) {
	down := &dialect.Error{Status: 503, Type: "api_error", Message: "hookhost: state backend redis at x is unreachable"}
	for name, cause := range map[string]error{"backend's own": down, "plain": errors.New("connection refused")} {
		t.Run(name, func(t *testing.T) {
			bus := newBus(t, kora(`{"usd":3}`))
			up := &scripted{steps: []step{text("Hello.", 1, 1), calls("", 1, 1, tc("c1", "read_file", `{}`))}}
			r := New(Config{Provider: up, Bus: bus, Store: NewSharedStore(failing{cause}, time.Minute)})
			front := testFront{llm.ProtocolChat}
			sink := &recSink{}
			call := userCall("hi", readFile)
			call.Stream = true
			if res := runOK(t, r, front, call, sink); !reflect.DeepEqual(res.Text, []string{"Hello."}) {
				t.Fatalf("a first turn answered in one round got %q", res.Text)
			}

			check := func(what string, err error) {
				t.Helper()
				var e *dialect.Error
				if !errors.As(err, &e) || e.Status != 503 || !strings.Contains(e.Message, "state backend") {
					t.Fatalf("%s: error %v, want a 503 naming the state backend", what, err)
				}
				if cause == error(down) && e != down {
					t.Errorf("%s: error %q, want the backend's own", what, e.Message)
				}
			}
			sink = &recSink{}
			call = userCall("read", readFile)
			call.Stream = true
			_, err := r.Run(context.Background(), front, call, sink)
			check("handing calls over", err)
			if sink.count("call:") != 0 {
				t.Errorf("the stream showed %q: calls handed over that could not be continued", sink.list())
			}

			next := userCall("read", readFile)
			next.Request.Messages = append(next.Request.Messages,
				hooks.Message{Role: hooks.RoleAssistant, ToolCalls: []hooks.ToolCall{tc("call_x", "read_file", `{}`)}},
				hooks.Message{Role: hooks.RoleTool, ToolCallID: "call_x", Content: "hi"})
			_, err = r.Run(context.Background(), front, next, nil)
			check("continuing", err)
			if n := len(up.calls()); n != 2 {
				t.Errorf("upstream called %d times, want 2: a continuation that cannot be restored goes nowhere", n)
			}
		})
	}
}
