package history

import (
	"reflect"
	"testing"

	"github.com/hookhost/hookhost/hooks"
)

func call(id string) hooks.ToolCall { return hooks.ToolCall{ID: id, Name: "t" + id} }

func TestRepair(t *testing.T) {
	user := hooks.Message{Role: hooks.RoleUser, Content: "q"}
	asst := hooks.Message{Role: hooks.RoleAssistant, ToolCalls: []hooks.ToolCall{call("1"), call("2"), call("3")}}
	res := func(id string) hooks.Message {
		return hooks.Message{Role: hooks.RoleTool, ToolCallID: id, Content: "r" + id}
	}
	missing := func(id string) hooks.Message {
		return hooks.Message{Role: hooks.RoleTool, ToolCallID: id, ToolName: "t" + id, Content: CancelledResult, IsError: true}
	}
	answer := hooks.Message{Role: hooks.RoleAssistant, Content: "a"}

	tests := []struct {
		name     string
		in, want []hooks.Message
	}{
		{"complete history is untouched",
			[]hooks.Message{user, asst, res("1"), res("2"), res("3"), answer},
			[]hooks.Message{user, asst, res("1"), res("2"), res("3"), answer}},
		{"cancelled after the first call",
			[]hooks.Message{user, asst, res("1"), user},
			[]hooks.Message{user, asst, res("1"), missing("2"), missing("3"), user}},
		{"cancelled at the very end",
			[]hooks.Message{user, asst},
			[]hooks.Message{user, asst, missing("1"), missing("2"), missing("3")}},
		{"orphan result is dropped",
			[]hooks.Message{user, res("9"), answer},
			[]hooks.Message{user, answer}},
		{"results out of order are kept",
			[]hooks.Message{user, asst, res("3"), res("1"), res("2")},
			[]hooks.Message{user, asst, res("3"), res("1"), res("2")}},
	}
	for _, tt := range tests {
		in := append([]hooks.Message(nil), tt.in...)
		got := Repair(in)
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tt.name, got, tt.want)
		}
		if !reflect.DeepEqual(in, tt.in) {
			t.Errorf("%s: input was modified", tt.name)
		}
	}
}
