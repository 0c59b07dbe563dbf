package hookbus_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/hookhost/hookhost/hookbus"
	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/hookstretch"
	"github.com/hookhost/hookhost/internal/wiretest"
)

// The rule tests run every plugin each way a host can hold it
// (wiretest.Ways: in-process, and through protocol versions 1 and 2), so a
// rule cannot hold on one path and not on another. The tool pipeline's
// rules run over stretches too (pipeline_test.go).

var call = hooks.ToolCallRequest{SessionID: "s1", CallID: "c1", Name: "now", Arguments: json.RawMessage(`{}`)}

// rig builds the Bus of one test for one way of holding its plugins.
type rig struct {
	t   *testing.T
	way wiretest.Way
}

// eachWay runs fn once per way, as a subtest.
func eachWay(t *testing.T, fn func(t *testing.T, r rig)) {
	t.Helper()
	for _, w := range wiretest.Ways {
		t.Run(w.Name, func(t *testing.T) { fn(t, rig{t, w}) })
	}
}

// sub is r for a subtest of its test.
func (r rig) sub(t *testing.T) rig { return rig{t, r.way} }

// plugin returns p as the host sees it this way.
func (r rig) plugin(p hooks.Plugin) hooks.Plugin { return wiretest.Over(r.t, r.way, p) }

// in is p on the Bus with default options.
func (r rig) in(p hooks.Plugin) hookbus.Member { return hookbus.Member{Plugin: r.plugin(p)} }

// with is p on the Bus with opts.
func (r rig) with(p hooks.Plugin, opts hookbus.Options) hookbus.Member {
	return hookbus.Member{Plugin: r.plugin(p), Options: opts}
}

// quick is p with deadlines short enough for a test to wait them out.
func (r rig) quick(p hooks.Plugin) hookbus.Member { return r.with(p, short) }

// down is p as an adapter reports it when its process is not running.
func (r rig) down(p hooks.Plugin, opts hookbus.Options) hookbus.Member {
	return hookbus.Member{Plugin: down{r.plugin(p)}, Options: opts}
}

var short = hookbus.Options{Timeout: 50 * time.Millisecond, ToolTimeout: 50 * time.Millisecond}

func newBus(t *testing.T, members ...hookbus.Member) *hookbus.Bus {
	t.Helper()
	return newBusConfig(t, hookbus.Config{}, members...)
}

func newBusConfig(t *testing.T, cfg hookbus.Config, members ...hookbus.Member) *hookbus.Bus {
	t.Helper()
	b, err := hookbus.New(members, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close(context.Background()) })
	return b
}

func testLogger(buf *syncBuffer) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{Output: buf, Level: hclog.Debug, JSONFormat: true})
}

// syncBuffer is a log sink that may be written by the Bus's workers while
// the test reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// hang blocks until the test ends, ignoring ctx, to prove deadlines are
// enforced on plugins that do not honour them.
func hang(t *testing.T) func() {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	return func() { <-release }
}

// within fails the test if fn does not return in a generous bound: it checks
// that a call returns at all, not how fast.
func within(t *testing.T, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { fn(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("call did not return: the deadline was not enforced")
	}
}

func str(s string) *string { return &s }

// --- host-side views of a plugin ------------------------------------------

// down is a plugin whose process is not running: every call fails with
// ErrUnavailable before reaching it, as a host adapter reports it.
type down struct{ hooks.Plugin }

func (down) Handle(context.Context, hooks.Name, any) (any, error) { return nil, hooks.ErrUnavailable }

// honouring declares that its calls return when their context ends, as
// remote adapters do, so that the Bus calls it inline.
type honouring struct{ hooks.Plugin }

func (honouring) HonoursContext() bool { return true }

// honours reports what p says about its contexts, for wrappers that must
// not change it.
func honours(p hooks.Plugin) bool {
	h, ok := p.(hookbus.ContextHonouring)
	return ok && h.HonoursContext()
}

// stretching answers stretches in-process the way a protocol v2 plugin
// process does: RunStretch on a goroutine, its answers handed over as they
// come.
type stretching struct{ hooks.Plugin }

var _ hookstretch.Stretcher = stretching{}

func (s stretching) Stretch(ctx context.Context, req hookstretch.Request) (hookstretch.Stretch, error) {
	ctx, cancel := context.WithCancel(ctx)
	ls := &localStretch{answers: make(chan emitted, len(req.Stages)+1), cancel: cancel}
	go func() {
		defer close(ls.answers)
		hookstretch.Run(ctx, s.Plugin, req, func(a any, err error) { ls.answers <- emitted{a, err} })
	}()
	return ls, nil
}

// emitted is one stage's answer, as hookstretch.Run emits it.
type emitted struct {
	answer any
	err    error
}

type localStretch struct {
	answers chan emitted
	cancel  context.CancelFunc
}

func (s *localStretch) Next(ctx context.Context) (any, error) {
	select {
	case e, ok := <-s.answers:
		if !ok {
			return nil, errors.New("the stretch ended without answering this stage")
		}
		return e.answer, e.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (s *localStretch) Close() { s.cancel() }

// noStretch hides a plugin's Stretcher, so that the host asks it hook by
// hook.
type noStretch struct{ hooks.Plugin }

func (n noStretch) HonoursContext() bool { return honours(n.Plugin) }

// counted records the stretches a Stretcher is asked for.
type counted struct {
	hooks.Plugin
	mu        sync.Mutex
	stretches [][]hooks.Name
}

var _ hookstretch.Stretcher = (*counted)(nil)

func (c *counted) Stretch(ctx context.Context, req hookstretch.Request) (hookstretch.Stretch, error) {
	var stages []hooks.Name
	for _, s := range req.Stages {
		stages = append(stages, s.Hook)
	}
	c.mu.Lock()
	c.stretches = append(c.stretches, stages)
	c.mu.Unlock()
	return c.Plugin.(hookstretch.Stretcher).Stretch(ctx, req)
}

func (c *counted) HonoursContext() bool { return honours(c.Plugin) }

func (c *counted) asked() [][]hooks.Name {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([][]hooks.Name(nil), c.stretches...)
}
