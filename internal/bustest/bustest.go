// Package bustest builds a hookbus.Bus over in-process plugins for tests,
// in the order given, closed when the test ends.
package bustest

import (
	"context"
	"testing"
	"time"

	"github.com/hookhost/hookhost/hookbus"
	"github.com/hookhost/hookhost/hooks"
)

// New returns a Bus over plugins with the default config.
func New(t testing.TB, plugins ...hooks.Plugin) *hookbus.Bus {
	t.Helper()
	members := make([]hookbus.Member, len(plugins))
	for i, p := range plugins {
		members[i] = hookbus.Member{Plugin: p}
	}
	b, err := hookbus.New(members, hookbus.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = b.Close(ctx)
	})
	return b
}

// Flush waits until b has delivered every observer event queued so far.
func Flush(t testing.TB, b *hookbus.Bus) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := b.Flush(ctx); err != nil {
		t.Fatal(err)
	}
}
