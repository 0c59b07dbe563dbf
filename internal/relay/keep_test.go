package relay

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/upstream"
	"github.com/hookhost/hookhost/llm"
)

// With no plugins at all, a streamed Anthropic round's thinking block (and
// its signature), which the client's stream never carried, goes back
// upstream when the client continues: the upstream refuses a tool_result
// whose tool_use lost the thinking before it.
func TestForwardedRoundKeptWithoutPlugins(t *testing.T) {
	thinking := json.RawMessage(`{"type":"thinking","thinking":"let me read it","signature":"SIG"}`)
	up := &forwarding{proto: llm.ProtocolMessages, scripted: scripted{steps: []step{
		{resp: calls("", 5, 1, tc("toolu_1", "read_file", `{"path":"a"}`)).resp, wire: &upstream.WireResponse{
			Fields: map[string]json.RawMessage{"id": json.RawMessage(`"msg_1"`)},
			Message: []json.RawMessage{thinking,
				json.RawMessage(`{"type":"tool_use","id":"toolu_1","name":"read_file","input":{"path":"a"}}`)},
		}},
		text("It says hi.", 7, 3),
	}}}
	r := New(Config{Provider: up, Store: NewStore(time.Minute, 10)})
	front := testFront{llm.ProtocolMessages}
	call := userCall("read a", readFile)
	call.Pass = &upstream.Passthrough{}
	call.Stream = true
	sink := &recSink{}
	res := runOK(t, r, front, call, sink)
	if len(res.ToolCalls) != 1 || !strings.HasPrefix(res.ToolCalls[0].ID, "toolu_") || !mintedID.MatchString(res.ToolCalls[0].ID) {
		t.Fatalf("client got %+v", res.ToolCalls)
	}
	cid := res.ToolCalls[0].ID
	if sink.count("call:"+cid+":") != 1 {
		t.Fatalf("stream = %q, want the call under the id in the result", sink.list())
	}

	// The client echoes what its stream showed: the tool_use alone, and
	// its result with a field the neutral types do not model.
	next := userCall("read a", readFile)
	next.Pass = &upstream.Passthrough{}
	echo := hooks.Message{Role: hooks.RoleAssistant, ToolCalls: res.ToolCalls}
	next.Pass.KeepMessage(echo, json.RawMessage(`{"role":"assistant","content":[{"type":"tool_use","id":"`+cid+`","name":"read_file","input":{"path":"a"}}]}`))
	result := hooks.Message{Role: hooks.RoleTool, ToolCallID: cid, Content: "hi"}
	next.Pass.KeepMessage(result, json.RawMessage(`{"type":"tool_result","tool_use_id":"`+cid+`","content":"hi","cache_control":{"type":"ephemeral"}}`))
	next.Request.Messages = append(next.Request.Messages, echo, result)
	runOK(t, r, front, next, nil)

	got := up.calls()[1]
	if len(got.req.Messages) != 3 || got.req.Messages[1].ToolCalls[0].ID != "toolu_1" || got.req.Messages[2].ToolCallID != "toolu_1" {
		t.Fatalf("continuation = %+v, want the upstream's own ids", got.req.Messages)
	}
	if w := got.wires[1]; len(w) != 1 || !strings.Contains(string(w[0]), `"signature":"SIG"`) || !strings.Contains(string(w[0]), `"id":"toolu_1"`) {
		t.Errorf("the assistant message went upstream as %s, want the round's wire form with its thinking block", w)
	}
	if w := got.wires[2]; len(w) != 1 || !strings.Contains(string(w[0]), `"tool_use_id":"toolu_1"`) || !strings.Contains(string(w[0]), `"cache_control"`) {
		t.Errorf("the client's result went upstream as %s, want its wire form under the upstream's id", w)
	}
}
