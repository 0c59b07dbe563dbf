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

// A 200 answer without what the protocol requires is an error naming what
// is missing, never an empty answer.
func TestMissingFieldsAreErrors(t *testing.T) {
	tests := []struct {
		name, body string
		want       []string
	}{
		{"id only", `{"id":"x"}`, []string{"missing", "content", "stop_reason"}},
		{"no stop_reason", `{"id":"x","type":"message","role":"assistant","content":[{"type":"text","text":"hi"}]}`, []string{"missing", "stop_reason"}},
		{"not a message", `{"id":"x","type":"completion","content":[],"stop_reason":"end_turn"}`, []string{"type", "completion"}},
		{"tool_use without id and name", `{"id":"x","type":"message","role":"assistant","content":[{"type":"tool_use","input":{}}],"stop_reason":"tool_use"}`,
			[]string{"content block 0", "id", "name"}},
		{"block without type", `{"id":"x","type":"message","role":"assistant","content":[{"text":"hi"}],"stop_reason":"end_turn"}`,
			[]string{"content block 0", "type"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := fakeapi.New(t, jsonReply(200, tt.body))
			resp, err := newProvider(t, f, anthropic.Config{}).Complete(context.Background(), userReq("hi"))
			var pe *llm.ProviderError
			if !errors.As(err, &pe) {
				t.Fatalf("got %+v, %v; want a ProviderError", resp, err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("err = %v, want it to name %q", err, w)
				}
			}
		})
	}
}
