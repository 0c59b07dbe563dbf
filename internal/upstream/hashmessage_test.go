package upstream

import (
	"crypto/sha256"
	"encoding/json"
	"testing"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/llm"
)

func hashOf(m llm.Message) [32]byte {
	h := sha256.New()
	HashMessage(h, m)
	var d [32]byte
	h.Sum(d[:0])
	return d
}

func TestHashMessageTellsMessagesApart(t *testing.T) {
	base := llm.Message{Role: hooks.RoleAssistant, Content: "ab", ToolCalls: []hooks.ToolCall{{ID: "1", Name: "f", Arguments: json.RawMessage(`{"a":1}`)}}}
	others := []llm.Message{
		{Role: hooks.RoleUser, Content: "ab", ToolCalls: base.ToolCalls},
		{Role: hooks.RoleAssistant, Content: "a", ToolName: "b", ToolCalls: base.ToolCalls},
		{Role: hooks.RoleAssistant, Content: "ab"},
		{Role: hooks.RoleAssistant, Content: "ab", IsError: true, ToolCalls: base.ToolCalls},
		{Role: hooks.RoleAssistant, Content: "ab", ToolCalls: []hooks.ToolCall{{ID: "1", Name: "f", Arguments: json.RawMessage(`{"a": 1}`)}}},
		{Role: hooks.RoleAssistant, Content: "ab", ToolCalls: []hooks.ToolCall{{ID: "1f", Name: "", Arguments: json.RawMessage(`{"a":1}`)}}},
		{Role: hooks.RoleAssistant, Content: "ab", ToolCalls: []hooks.ToolCall{{ID: "1", Name: "f", Arguments: json.RawMessage(`{"a":`)}}},
	}
	want := hashOf(base)
	copied := base
	copied.ToolCalls = append([]hooks.ToolCall(nil), base.ToolCalls...)
	if hashOf(copied) != want {
		t.Fatal("equal messages hash differently")
	}
	for i, m := range others {
		if hashOf(m) == want {
			t.Errorf("message %d %+v hashes as %+v", i, m, base)
		}
	}
}
