package hooks

import (
	"context"
	"fmt"
	"testing"
)

// benchBus builds a bus with n plugins that all subscribe to pre_tool_call
// and abstain, so every one of them is asked on every fire.
func benchBus(b *testing.B, n int) *Bus {
	members := make([]Member, n)
	for i := range members {
		members[i] = Member{Plugin: &Funcs{
			Name:            fmt.Sprintf("p%d", i),
			PreToolCallFunc: func(context.Context, ToolCallRequest) (*PreToolCallDecision, error) { return nil, nil },
		}}
	}
	bus, err := NewBus(members, Config{})
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
	members := make([]Member, 8)
	for i := range members {
		members[i] = Member{Plugin: &Funcs{
			Name:            fmt.Sprintf("p%d", i),
			Matchers:        []string{fmt.Sprintf("p%d__*", i)},
			PreToolCallFunc: func(context.Context, ToolCallRequest) (*PreToolCallDecision, error) { return nil, nil },
		}}
	}
	bus, err := NewBus(members, Config{})
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
	bus, err := NewBus([]Member{{Plugin: &Funcs{Name: "obs", PostToolCallFunc: func(context.Context, ToolCallOutcome) error { return nil }}}}, Config{ObserverQueue: 1 << 16})
	if err != nil {
		b.Fatal(err)
	}
	defer bus.Close(context.Background())
	ev := ToolCallOutcome{Name: "now"}
	b.ReportAllocs()
	for b.Loop() {
		bus.ToolCallDone(ev)
	}
}

// BenchmarkInlineSubscriber is one subscriber that honours its context, so
// the Bus calls it without a watchdog goroutine; against subscribers=1 of
// BenchmarkFirePreToolCall it shows what the watchdog costs.
func BenchmarkInlineSubscriber(b *testing.B) {
	bus, err := NewBus([]Member{{Plugin: honouring{&Funcs{
		Name:            "p0",
		PreToolCallFunc: func(context.Context, ToolCallRequest) (*PreToolCallDecision, error) { return nil, nil },
	}}}}, Config{})
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
