package history

import (
	"reflect"
	"runtime"
	"strconv"
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

// BenchmarkRepairManyResults is the shape a hostile client can send: one
// assistant message with many calls, all answered in order but the first.
// It must grow linearly with the number of calls.
func BenchmarkRepairManyResults(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			msgs := manyResults(n)
			for b.Loop() {
				Repair(msgs)
			}
		})
	}
}

func manyResults(n int) []hooks.Message {
	calls := make([]hooks.ToolCall, n)
	for i := range calls {
		calls[i] = hooks.ToolCall{ID: "c" + strconv.Itoa(i), Name: "f"}
	}
	msgs := []hooks.Message{{Role: hooks.RoleUser, Content: "go"}, {Role: hooks.RoleAssistant, ToolCalls: calls}}
	for i := 1; i < n; i++ { // the first call stays unanswered
		msgs = append(msgs, hooks.Message{Role: hooks.RoleTool, ToolCallID: calls[i].ID})
	}
	return msgs
}

// Repairing a history costs memory linear in its tool calls: twice the
// calls, about twice the bytes. Each answer used to copy the calls still
// pending, which made a request of 40k tool results cost 20 s of CPU.
// Bytes allocated are counted, not time, so the machine's load cannot
// change the outcome.
func TestRepairManyResultsInLinearMemory(t *testing.T) {
	allocated := func(n int) uint64 {
		msgs := manyResults(n)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		out := Repair(msgs)
		runtime.ReadMemStats(&after)
		if len(out) != len(msgs)+1 || out[len(out)-1].ToolCallID != "c0" || out[len(out)-1].Content != CancelledResult {
			t.Fatalf("repair of %d results: %d messages, last %+v", n, len(out), out[len(out)-1])
		}
		return after.TotalAlloc - before.TotalAlloc
	}
	small, large := allocated(20000), allocated(40000)
	if ratio := float64(large) / float64(small); ratio > 3 {
		t.Fatalf("twice the tool calls allocated %.1f× the bytes (%d vs %d); repair is no longer linear", ratio, large, small)
	}
}
