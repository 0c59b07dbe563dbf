package hookbus_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"strings"

	"github.com/hookhost/hookhost/hookbus"
	"github.com/hookhost/hookhost/hooks"
)

// A Bus over one in-process plugin, a guard that blocks shell commands
// which delete files and adds a note to every tool result; the Bus asks it
// for the hooks its Funcs set and combines the answers.
func ExampleNew() {
	guard := &hooks.Funcs{
		Name: "guard",
		PreToolCallFunc: func(_ context.Context, call hooks.ToolCallRequest) (*hooks.PreToolCallDecision, error) {
			if call.Name == "shell" && strings.Contains(string(call.Arguments), "rm ") {
				return &hooks.PreToolCallDecision{Block: &hooks.Block{Message: "deleting files is not allowed"}}, nil
			}
			return nil, nil // no opinion: the call goes on
		},
		TransformToolResultFunc: func(_ context.Context, ev hooks.ToolCallOutcome) (*hooks.ToolResult, error) {
			return &hooks.ToolResult{Content: `{"checked_by":"guard","result":` + ev.Result.Content + `}`}, nil
		},
	}
	bus, err := hookbus.New([]hookbus.Member{{Plugin: guard}}, hookbus.Config{})
	if err != nil {
		log.Fatal(err) // a manifest the Bus refuses: the error names the plugin
	}
	defer bus.Close(context.Background())
	ctx := context.Background()

	rm := hooks.ToolCallRequest{SessionID: "s1", CallID: "c1", Name: "shell", Arguments: json.RawMessage(`{"cmd":"rm -rf /"}`)}
	out := bus.PreToolCall(ctx, rm)
	fmt.Println(out.Blocked, out.BlockedBy, out.Message)

	ls := hooks.ToolCallRequest{SessionID: "s1", CallID: "c2", Name: "shell", Arguments: json.RawMessage(`{"cmd":"ls"}`)}
	out = bus.PreToolCall(ctx, ls)
	fmt.Println(out.Blocked)

	result, by := bus.TransformToolResult(ctx, hooks.ToolCallOutcome{
		SessionID: "s1", CallID: "c2", Name: "shell", Arguments: ls.Arguments,
		Result: hooks.ToolResult{Content: `"a.txt"`}, Status: hooks.StatusOK,
	})
	fmt.Println(result.Content, by)
	fmt.Println(bus.Stats().SyncCalls(), "calls")
	// Output:
	// true guard deleting files is not allowed
	// false
	// {"checked_by":"guard","result":"a.txt"} [guard]
	// 3 calls
}
