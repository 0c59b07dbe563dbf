package codec

import (
	"fmt"

	"github.com/hookhost/hookhost/hooks"
)

// MaxToolName is the longest tool name either side of the wire accepts.
const MaxToolName = 64

// FillCallIDs gives each call without an id one that no other call of the
// answer has: some compatible servers (Gemini's) send "id": "", and the
// loop pairs each tool result with its call by id.
func FillCallIDs(calls []hooks.ToolCall) {
	taken := map[string]bool{}
	for _, c := range calls {
		taken[c.ID] = true
	}
	n := 0
	for i := range calls {
		for calls[i].ID == "" {
			n++
			if id := fmt.Sprintf("call_%d", n); !taken[id] {
				calls[i].ID = id
				taken[id] = true
			}
		}
	}
}
