package anthropic_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/hookhost/hookhost/internal/fakeapi"
	"github.com/hookhost/hookhost/llm"
	"github.com/hookhost/hookhost/llm/anthropic"
)

// A content block of a kind not known here, beside tool calls, might be a
// call needing an answer: the conversation must not go on upstream without
// it. Server tools' blocks and thinking pass, and Anthropic-defined client
// tools (bash, text_editor, computer) come back as ordinary tool_use.
func TestBlockOfUnmodelledKindBesideToolCalls(t *testing.T) {
	const use = `{"type":"tool_use","id":"toolu_1","name":"bash","input":{"command":"ls"}}`
	tests := []struct {
		name, blocks, want string
	}{
		{"unknown block beside a call", `{"type":"future_tool_use","id":"ftu_1"},` + use, "future_tool_use"},
		{"unknown block ending the turn", `{"type":"future_note"},{"type":"text","text":"hi"}`, ""},
		{"server tool and thinking beside a call", `{"type":"thinking","thinking":"hm","signature":"s"},{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"x"}},{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[]},` + use, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := fakeapi.New(t, jsonReply(200, `{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[`+tt.blocks+`],"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}`))
			resp, err := newProvider(t, f, anthropic.Config{}).Complete(context.Background(), userReq("go"))
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if strings.Contains(tt.blocks, "bash") && (len(resp.Message.ToolCalls) != 1 || resp.Message.ToolCalls[0].Name != "bash") {
					t.Errorf("calls = %+v, want the bash tool_use as a call", resp.Message.ToolCalls)
				}
				return
			}
			var pe *llm.ProviderError
			if !errors.As(err, &pe) || !strings.Contains(pe.Message, tt.want) || !strings.Contains(pe.Message, "does not model") {
				t.Errorf("error %v, want a provider error naming the %s", err, tt.want)
			}
		})
	}
}
