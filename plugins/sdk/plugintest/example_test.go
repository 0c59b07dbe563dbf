package plugintest_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/plugins/sdk"
	"github.com/hookhost/hookhost/plugins/sdk/plugintest"
)

// guard blocks shell commands that delete things.
type guard struct{ sdk.Base }

func (guard) Info() sdk.Info {
	return sdk.Info{Name: "guard", Version: "1.0.0", Matchers: []string{"shell"}}
}

func (guard) PreToolCall(_ context.Context, call hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
	if strings.Contains(string(call.Arguments), "rm -rf") {
		return &hooks.PreToolCallDecision{Block: &hooks.Block{Message: "refusing to delete files"}}, nil
	}
	return nil, nil
}

func ExampleHarness_PreToolCall() {
	// In a test, pass the test's *testing.T instead.
	t := newExampleT()
	defer t.cleanup()

	h := plugintest.New(t, &guard{})

	out := h.PreToolCall("shell", `{"cmd":"rm -rf /"}`)
	fmt.Println(out.Blocked, out.BlockedBy, out.Message)

	out = h.PreToolCall("shell", `{"cmd":"ls"}`)
	fmt.Println(out.Blocked)

	// The guard's matchers do not cover this tool, so it is not even asked.
	out = h.PreToolCall("python", `{"code":"rm -rf"}`)
	fmt.Println(out.Blocked)
	// Output:
	// true guard refusing to delete files
	// false
	// false
}

// exampleT stands in for a *testing.T, which examples do not get.
type exampleT struct {
	testing.TB
	cleanups []func()
}

func newExampleT() *exampleT { return &exampleT{} }

func (*exampleT) Helper()                        {}
func (*exampleT) Log(...any)                     {}
func (t *exampleT) Cleanup(f func())             { t.cleanups = append(t.cleanups, f) }
func (*exampleT) Errorf(format string, a ...any) { panic(fmt.Sprintf(format, a...)) }
func (*exampleT) Fatalf(format string, a ...any) { panic(fmt.Sprintf(format, a...)) }

func (t *exampleT) cleanup() {
	for i := len(t.cleanups) - 1; i >= 0; i-- {
		t.cleanups[i]()
	}
}
