package hooks_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/hookhost/hookhost/hooks"
)

var call = hooks.ToolCallRequest{SessionID: "s1", CallID: "c1", Name: "now", Arguments: json.RawMessage(`{}`)}

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
