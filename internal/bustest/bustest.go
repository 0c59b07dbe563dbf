// Package bustest builds a hookbus.Bus over in-process plugins for tests,
// in the order given, closed when the test ends.
package bustest

import (
	"context"
	"encoding/json"
	"fmt"
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

// CheckUnserved checks a bus over the SDK tests' "optional" plugin, which
// serves pre_llm_call_can_provide_response (answering "here") only when
// configured on, and pre_tool_call always (blocking, and saying how often
// it was asked to provide): that the bus neither subscribes to nor asks
// the hook the plugin does not serve as configured, and asks the one it
// serves.
func CheckUnserved(t *testing.T, bus *hookbus.Bus, on bool) {
	t.Helper()
	ctx := context.Background()
	if got := bus.Subscribed(hooks.PreLLMCallCanProvideResponse, ""); got != on {
		t.Errorf("subscribed to pre_llm_call_can_provide_response: %v, want %v", got, on)
	}
	p := bus.PreLLMCallCanProvideResponse(ctx, hooks.LLMRequest{SessionID: "s1", Request: hooks.ModelRequest{Model: "m"}})
	if on && (p == nil || p.Plugin != "optional" || p.Response.Message.Content != "here") {
		t.Errorf("pre_llm_call_can_provide_response with the hook on: %+v, want optional's answer", p)
	}
	if !on && p != nil {
		t.Errorf("pre_llm_call_can_provide_response was asked of the plugin, which does not serve it as configured: %+v", p)
	}
	// Asked after the provide call was answered: the count is final.
	asked := 0
	if on {
		asked = 1
	}
	pre := bus.PreToolCall(ctx, hooks.ToolCallRequest{SessionID: "s1", CallID: "c1", Name: "x", Arguments: json.RawMessage(`{}`)})
	if want := fmt.Sprintf("optional blocks x; asked to provide %d times", asked); !pre.Blocked || pre.Message != want {
		t.Errorf("pre_tool_call, which the plugin serves: %+v, want the block %q", pre, want)
	}
	for _, hs := range bus.Stats().Hooks {
		if len(hs.Failures) > 0 {
			t.Errorf("%s failed: %v", hs.Hook, hs.Failures)
		}
	}
}
