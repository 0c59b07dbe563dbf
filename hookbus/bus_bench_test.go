package hookbus_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/hookhost/hookhost/hookbus"
	"github.com/hookhost/hookhost/hooks"
)

// benchBus builds a bus with n plugins that all subscribe to pre_tool_call
// and abstain, so every one of them is asked on every fire.
func benchBus(b *testing.B, n int) *hookbus.Bus {
	members := make([]hookbus.Member, n)
	for i := range members {
		members[i] = hookbus.Member{Plugin: &hooks.Funcs{
			Name:            fmt.Sprintf("p%d", i),
			PreToolCallFunc: func(context.Context, hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) { return nil, nil },
		}}
	}
	bus, err := hookbus.New(members, hookbus.Config{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { bus.Close(context.Background()) })
	return bus
}

func BenchmarkFirePreToolCall(b *testing.B) {
	for _, n := range []int{0, 1, 8} {
		b.Run(fmt.Sprintf("subscribers=%d", n), func(b *testing.B) {
			bus := benchBus(b, n)
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				bus.PreToolCall(ctx, call)
			}
		})
	}
}

// BenchmarkFireUnmatchedTool measures a tool hook whose subscribers'
// matchers all exclude the tool: no call is made.
func BenchmarkFireUnmatchedTool(b *testing.B) {
	members := make([]hookbus.Member, 8)
	for i := range members {
		members[i] = hookbus.Member{Plugin: &hooks.Funcs{
			Name:            fmt.Sprintf("p%d", i),
			Matchers:        []string{fmt.Sprintf("p%d__*", i)},
			PreToolCallFunc: func(context.Context, hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) { return nil, nil },
		}}
	}
	bus, err := hookbus.New(members, hookbus.Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer bus.Close(context.Background())
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		bus.PreToolCall(ctx, call)
	}
}

// BenchmarkObserverEmit measures what an observer hook costs the caller:
// queueing only, never the delivery.
func BenchmarkObserverEmit(b *testing.B) {
	bus, err := hookbus.New([]hookbus.Member{{Plugin: &hooks.Funcs{Name: "obs", PostToolCallFunc: func(context.Context, hooks.ToolCallOutcome) error { return nil }}}}, hookbus.Config{ObserverQueue: 1 << 16})
	if err != nil {
		b.Fatal(err)
	}
	defer bus.Close(context.Background())
	ev := hooks.ToolCallOutcome{Name: "now"}
	b.ReportAllocs()
	for b.Loop() {
		bus.PostToolCall(ev)
	}
}

// BenchmarkInlineSubscriber is one subscriber that honours its context, so
// the Bus calls it without a watchdog goroutine; against subscribers=1 of
// BenchmarkFirePreToolCall it shows what the watchdog costs.
func BenchmarkInlineSubscriber(b *testing.B) {
	bus, err := hookbus.New([]hookbus.Member{{Plugin: honouring{&hooks.Funcs{
		Name:            "p0",
		PreToolCallFunc: func(context.Context, hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) { return nil, nil },
	}}}}, hookbus.Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer bus.Close(context.Background())
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		bus.PreToolCall(ctx, call)
	}
}
