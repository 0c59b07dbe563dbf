package messages

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/hookhost/hookhost/hooks"
)

// Reading a message upstream: its stop reason, which blocks need no
// answer, a streamed content block assembled from its deltas, and a
// tool_use input as neutral arguments.

// StopOf maps a message's stop_reason onto the neutral stop reason.
func StopOf(reason *string) hooks.StopReason {
	stop := ""
	if reason != nil {
		stop = *reason
	}
	switch stop {
	case "end_turn", "stop_sequence":
		return hooks.StopEndTurn
	case "tool_use":
		return hooks.StopToolUse
	case "max_tokens", "model_context_window_exceeded":
		return hooks.StopMaxTokens
	case "refusal":
		return hooks.StopRefusal
	}
	return hooks.StopOther
}

// ProviderRun reports whether a content block of type typ is one the
// provider finished itself or that carries no call (thinking, the server
// tools' calls and results): it needs no answer in the next request.
// Client tools, Anthropic-defined ones (bash, text_editor, computer)
// included, come back as tool_use blocks.
func ProviderRun(typ string) bool {
	switch typ {
	case "thinking", "redacted_thinking", "server_tool_use", "mcp_tool_use", "container_upload":
		return true
	}
	return strings.HasSuffix(typ, "_tool_result")
}

// ArgsOf is a tool_use input as ToolCall arguments: compact JSON when it is
// valid, {} when empty, and the text as it came otherwise.
func ArgsOf(input []byte) json.RawMessage {
	t := bytes.TrimSpace(input)
	if len(t) == 0 {
		return json.RawMessage("{}")
	}
	var b bytes.Buffer
	if json.Compact(&b, t) == nil {
		return b.Bytes()
	}
	return append(json.RawMessage(nil), input...)
}

// StreamBlock is a content block being assembled from a stream.
type StreamBlock struct {
	block   ResponseBlock
	text    strings.Builder // a text block's text after its start
	input   strings.Builder // a tool_use block's partial_json fragments
	stopped bool
}

// deltaFor names the block types each delta that is shown or kept may be
// applied to. Any other delta is passed over whatever its block, as are
// blocks of types hookhost does not know (Anthropic keeps adding them):
// neither is shown nor kept, here or in a whole response, so neither can
// make the two differ.
var deltaFor = map[string][]string{
	"text_delta":       {"text"},
	"input_json_delta": {"tool_use", "server_tool_use"},
}

// Check validates a block as content_block_start opened it.
func (b *StreamBlock) Check(i int) error {
	switch t := b.block.Type; {
	case t == "":
		return fmt.Errorf("content block %d has no type", i)
	case t == "tool_use" && (b.block.ID == "" || b.block.Name == ""):
		return fmt.Errorf("tool_use content block %d needs an id and a name (got id %q, name %q)", i, b.block.ID, b.block.Name)
	}
	return nil
}

// Apply adds one delta to the block, refusing a shown or kept delta aimed
// at a block of another kind.
func (b *StreamBlock) Apply(i int, d Delta) error {
	if owners, ok := deltaFor[d.Type]; ok && !slices.Contains(owners, b.block.Type) {
		return fmt.Errorf("%s for content block %d, which is of type %s", d.Type, i, b.block.Type)
	}
	switch d.Type {
	case "text_delta":
		b.text.WriteString(d.Text)
	case "input_json_delta":
		b.input.WriteString(d.PartialJSON)
	}
	return nil
}

// Carries reports whether a delta adds something to its block: the idle
// timeout restarts only for those, so that a stream of empty deltas is as
// idle as a stream of pings. A delta type hookhost does not read counts
// when it has any field besides its type.
func Carries(raw json.RawMessage, d Delta) bool {
	switch d.Type {
	case "text_delta":
		return d.Text != ""
	case "input_json_delta":
		return d.PartialJSON != ""
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil {
		return false
	}
	for k, v := range fields {
		if e := string(v); k != "type" && e != `""` && e != "null" && e != "[]" && e != "{}" {
			return true
		}
	}
	return false
}

// OpenBlock is block i, which must have been started and not stopped.
func OpenBlock(blocks []*StreamBlock, i int) (*StreamBlock, error) {
	if i < 0 || i >= len(blocks) {
		return nil, fmt.Errorf("content block %d was not started", i)
	}
	if blocks[i].stopped {
		return nil, fmt.Errorf("content block %d has already stopped", i)
	}
	return blocks[i], nil
}

// NewStreamBlock starts a block as content_block_start opened it.
func NewStreamBlock(b ResponseBlock) *StreamBlock { return &StreamBlock{block: b} }

// Started is the block as content_block_start opened it.
func (b *StreamBlock) Started() ResponseBlock { return b.block }

// Stop records content_block_stop: the block takes no more deltas.
func (b *StreamBlock) Stop() { b.stopped = true }

// Block is the block with every delta applied: text appended, a tool_use
// block's input replaced by its joined partial_json when it had any.
func (b *StreamBlock) Block() ResponseBlock {
	out := b.block
	out.Text += b.text.String()
	if out.Type == "tool_use" {
		if in := b.input.String(); in != "" {
			out.Input = json.RawMessage(in)
		}
	}
	return out
}
