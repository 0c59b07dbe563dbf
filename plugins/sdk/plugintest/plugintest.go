// Package plugintest runs an SDK plugin in-process against a real
// hookbus.Bus, so a plugin author can test what the host will make of the
// plugin's answers (combine rules, malformed results, matchers, deadlines)
// without building a binary or starting a process.
//
//	func TestGuardBlocksDeletes(t *testing.T) {
//		h := plugintest.New(t, &guard{})
//		if out := h.PreToolCall("delete_everything", `{}`); !out.Blocked {
//			t.Fatal("not blocked")
//		}
//	}
//
// The plugin goes through sdk.Adapt, exactly as under sdk.Serve (typed
// tools, matchers and per-hook matchers included), and the Bus applies the
// same rules as in the host: a handler that errors, panics or misses its
// deadline counts as no opinion, and the Bus's warning about it is written
// to the test log. WithProtocol puts the real plugin protocol between the
// Bus and the plugin, and Harness.ToolCall runs a tool call through the
// host's whole tool pipeline (argument checks against a plugin tool's
// schema included).
package plugintest

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/hookhost/hookhost/dispatch"
	"github.com/hookhost/hookhost/hookbus"
	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/wiretest"
	"github.com/hookhost/hookhost/plugins/sdk"
)

// SessionID is the session id of every payload the Harness builds.
const SessionID = "plugintest-session"

// Harness is one plugin on a Bus of its own. The firing helpers build a
// payload, fire the hook through Bus, and return what the Bus decided. For
// payloads the helpers do not cover, fire through Bus directly.
type Harness struct {
	Bus *hookbus.Bus
	// Plugin is the plugin as the Bus sees it, with its derived manifest.
	Plugin hooks.Plugin

	t     testing.TB
	calls atomic.Uint64
}

// Option configures New.
type Option func(*settings)

type settings struct {
	config    *string
	opts      hookbus.Options
	flushWait time.Duration
	protocol  int
}

// WithProtocol runs the plugin through the real plugin protocol, version 1
// or 2, over an in-memory gRPC connection, instead of calling it directly:
// its manifest comes from Describe, its config through Configure, and every
// hook call and answer is converted as it is between the host and a plugin
// process, so a test also covers what the protocol carries (sizes, UTF-8,
// JSON results, per-hook matchers). Version 0 is in-process, the default.
// To run a test every way:
//
//	for _, v := range []int{0, 1, 2} {
//		h := plugintest.New(t, &guard{}, plugintest.WithProtocol(v))
//		...
//	}
func WithProtocol(version int) Option {
	return func(s *settings) { s.protocol = version }
}

// WithConfig configures the plugin with configJSON, as the host does with
// the plugin's config table, before any hook fires.
func WithConfig(configJSON string) Option {
	return func(s *settings) { s.config = &configJSON }
}

// WithOptions sets the host options for the plugin (timeouts, fail_closed,
// allow_tool_override). The default is the zero Options, which is what the
// host uses for a plugin entry that sets none.
func WithOptions(o hookbus.Options) Option {
	return func(s *settings) { s.opts = o }
}

// New adapts p, configures it if WithConfig is given, and puts it on a new
// Bus, failing the test if any step fails (an invalid manifest included).
// The Bus is closed when the test ends, after delivering queued observer
// events.
func New(t testing.TB, p sdk.Plugin, opts ...Option) *Harness {
	t.Helper()
	s := settings{flushWait: 10 * time.Second}
	for _, o := range opts {
		o(&s)
	}
	var impl hooks.Plugin = sdk.Adapt(p)
	var configure func(context.Context, json.RawMessage) error
	if c, ok := p.(sdk.Configurer); ok {
		configure = c.Configure
	}
	switch s.protocol {
	case 0:
	case 1, 2:
		conn := wiretest.Connect(t, s.protocol, impl, configure)
		remote := &wiretest.Remote{Conn: conn}
		impl = remote
		configure = func(ctx context.Context, cfg json.RawMessage) error {
			unserved, err := conn.Configure(ctx, cfg)
			remote.Unserved = unserved
			return err
		}
	default:
		t.Fatalf("plugintest: WithProtocol(%d): there are protocol versions 1 and 2 (0: in-process)", s.protocol)
	}
	if s.config != nil {
		if _, ok := p.(sdk.Configurer); !ok {
			t.Fatalf("plugintest: WithConfig given but %T has no Configure method (implement sdk.Configurer)", p)
		}
		if !json.Valid([]byte(*s.config)) {
			t.Fatalf("plugintest: WithConfig: %q is not valid JSON", *s.config)
		}
		// The host refuses a key the manifest does not declare before
		// Configure; so does the harness, so a test sees what a start would.
		if decl := impl.Manifest().Config; decl != nil {
			var table map[string]json.RawMessage
			if err := json.Unmarshal([]byte(*s.config), &table); err != nil {
				t.Fatalf("plugintest: WithConfig: %q is not a JSON object", *s.config)
			}
			for _, k := range slices.Sorted(maps.Keys(table)) {
				if !slices.Contains(decl.Keys, k) {
					t.Fatalf("plugintest: plugin %q: config key %q is not one it declares (it takes %q); the host refuses it before Configure", impl.Manifest().Name, k, decl.Keys)
				}
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), s.flushWait)
		err := configure(ctx, json.RawMessage(*s.config))
		cancel()
		if err != nil {
			t.Fatalf("plugintest: plugin %q: configure: %v", impl.Manifest().Name, err)
		}
	}

	logw := &testLogWriter{t: t}
	bus, err := hookbus.New([]hookbus.Member{{Plugin: impl, Options: s.opts}}, hookbus.Config{
		Logger: hclog.New(&hclog.LoggerOptions{Name: "bus", Output: logw, Level: hclog.Warn}),
	})
	if err != nil {
		t.Fatalf("plugintest: %v", err)
	}
	h := &Harness{Bus: bus, Plugin: impl, t: t}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), s.flushWait)
		defer cancel()
		if err := bus.Close(ctx); err != nil {
			t.Errorf("plugintest: %v", err)
		}
		logw.close()
	})
	return h
}

func (h *Harness) ctx() context.Context { return context.Background() }

func (h *Harness) callID() string { return fmt.Sprintf("call-%d", h.calls.Add(1)) }

func args(argsJSON string) json.RawMessage {
	if argsJSON == "" {
		return nil
	}
	return json.RawMessage(argsJSON)
}

// ToolCall runs one tool call the whole way the host runs it, through
// dispatch.Pipeline on the Bus: pre_tool_call, the check of a plugin
// tool's arguments against the schema its owner declared (a typed tool's
// included), pre_tool_call_can_provide_result, the native tool of that
// name among natives if no plugin answered, post_tool_call and
// transform_tool_result, asked in one exchange where the host would (see
// hookbus.ToolRun). Call Flush before asserting on what post_tool_call
// recorded.
func (h *Harness) ToolCall(name, argsJSON string, natives ...dispatch.Tool) dispatch.Outcome {
	h.t.Helper()
	reg, err := dispatch.NewRegistry(natives...)
	if err != nil {
		h.t.Fatalf("plugintest: native tools: %v", err)
	}
	p := &dispatch.Pipeline{Registry: reg, Bus: h.Bus}
	id := h.callID()
	return p.Run(h.ctx(), SessionID, hooks.ToolCall{ID: id, Name: name, Arguments: args(argsJSON)})
}

// Flush waits until every observer event fired so far has been delivered to
// the plugin, failing the test if that takes more than ten seconds.
func (h *Harness) Flush() {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := h.Bus.Flush(ctx); err != nil {
		h.t.Fatalf("plugintest: observer events not delivered: %v", err)
	}
}

// Calls returns how many times the Bus has called the plugin for hook, so a
// test can check that its matchers keep it out of calls it cannot change.
func (h *Harness) Calls(hook hooks.Name) uint64 {
	name := h.Plugin.Manifest().Name
	for _, hs := range h.Bus.Stats().Hooks {
		if hs.Plugin == name && hs.Hook == hook {
			return hs.Calls
		}
	}
	return 0
}

// Failures returns how many calls of hook failed with kind (an error, a
// panic, a timeout, a malformed result): each counted as no opinion.
func (h *Harness) Failures(hook hooks.Name, kind hookbus.FailureKind) uint64 {
	return h.Bus.Stats().Failures(h.Plugin.Manifest().Name, hook, kind)
}

// testLogWriter sends the Bus's log to the test log until the test ends;
// logging to a finished test panics.
type testLogWriter struct {
	mu     sync.Mutex
	t      testing.TB
	closed bool
}

func (w *testLogWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.closed {
		w.t.Log(strings.TrimRight(string(p), "\n"))
	}
	return len(p), nil
}

func (w *testLogWriter) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
}
