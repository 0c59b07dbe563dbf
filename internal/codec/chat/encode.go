package chat

import (
	"encoding/json"
	"errors"
	"sort"
	"strings"
	"time"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/codec"
	"github.com/hookhost/hookhost/internal/dialect"
	"github.com/hookhost/hookhost/internal/rawjson"
)

// finishReason maps a neutral stop reason onto Chat Completions'.
func finishReason(s hooks.StopReason) string {
	switch s {
	case hooks.StopToolUse:
		return "tool_calls"
	case hooks.StopMaxTokens:
		return "length"
	case hooks.StopRefusal:
		return "content_filter"
	}
	return "stop"
}

// wireCalls are the client's tool calls as a message carries them.
func wireCalls(calls []hooks.ToolCall) []ToolCall {
	out := make([]ToolCall, len(calls))
	for i, c := range calls {
		args := string(c.Arguments)
		if strings.TrimSpace(args) == "" {
			// What a model means by no arguments, and what clients parse.
			args = "{}"
		}
		out[i] = ToolCall{ID: c.ID, Type: "function", Function: Function{Name: c.Name, Arguments: codec.Args(args)}}
	}
	return out
}

func usageOf(u hooks.Usage) Usage {
	return Usage{PromptTokens: u.InputTokens, CompletionTokens: u.OutputTokens, TotalTokens: u.InputTokens + u.OutputTokens}
}

// Encode writes the whole response. The upstream's own top-level fields
// (system_fingerprint, service_tier, …) reach the client when it spoke
// this protocol; when the answer is exactly its message, so does the
// message (refusal, annotations, audio) and the choice (logprobs).
func (f *Front) Encode(call *dialect.Call, res *dialect.Result) ([]byte, error) {
	if res == nil {
		return nil, errors.New("chat: no result to encode (host error)")
	}
	top := map[string]json.RawMessage{}
	var wireMsg, wireChoice map[string]json.RawMessage
	if w := res.Wire; w != nil {
		for k, v := range w.Fields {
			if json.Valid(v) {
				top[k] = v
			}
		}
		delete(top, "choice")
		if res.WholeWire {
			if len(w.Message) == 1 {
				_ = json.Unmarshal(w.Message[0], &wireMsg)
			}
			_ = json.Unmarshal(w.Fields["choice"], &wireChoice)
		}
	}
	if !isID(top["id"]) {
		top["id"] = rawjson.MustMarshal(dialect.NewID("chatcmpl-"))
	}
	if _, ok := intOf(top["created"]); !ok {
		top["created"] = rawjson.MustMarshal(time.Now().Unix())
	}
	top["object"] = rawjson.MustMarshal("chat.completion")
	top["model"] = rawjson.MustMarshal(res.Model)

	text := strings.Join(res.Text, "")
	msg := wireMsg
	if msg == nil {
		msg = map[string]json.RawMessage{}
	}
	msg["role"] = rawjson.MustMarshal("assistant")
	switch refusal, _ := stringOf(msg["refusal"]); {
	case refusal != "" && refusal == text && isNull(msg["content"]):
		// The upstream refused: its refusal is the answer's text, and the
		// content it left null stays null.
	case text == "":
		msg["content"] = json.RawMessage("null")
	default:
		msg["content"] = rawjson.MustMarshal(text)
	}
	delete(msg, "tool_calls")
	if len(res.ToolCalls) > 0 {
		msg["tool_calls"] = rawjson.MustMarshal(wireCalls(res.ToolCalls))
	}
	choice := wireChoice
	if choice == nil {
		choice = map[string]json.RawMessage{}
	}
	delete(choice, "message")
	choice["index"] = rawjson.MustMarshal(0)
	choice["message"] = encodeObject(msg)
	choice["finish_reason"] = rawjson.MustMarshal(finishReason(res.Stop))
	if _, ok := choice["logprobs"]; !ok {
		choice["logprobs"] = json.RawMessage("null")
	}
	top["choices"] = json.RawMessage("[" + string(encodeObject(choice)) + "]")

	usage := rawjson.MustMarshal(usageOf(res.Usage))
	if res.WholeWire && res.Wire != nil {
		// The upstream's usage has details (cached and reasoning tokens)
		// worth keeping, as long as it counts what the client is billed.
		var u Usage
		if json.Unmarshal(res.Wire.Fields["usage"], &u) == nil && u == usageOf(res.Usage) {
			usage = res.Wire.Fields["usage"]
		}
	}
	top["usage"] = usage
	return encodeObject(top), nil
}

// encodeRank is each key's place in OpenAI's order (1 first), 0 for the
// keys it does not have.
var encodeRank = func() map[string]int {
	order := []string{"id", "object", "created", "model", "index", "role", "content", "refusal", "tool_calls", "message",
		"logprobs", "finish_reason", "choices", "usage"}
	rank := make(map[string]int, len(order))
	for i, k := range order {
		rank[k] = i + 1
	}
	return rank
}()

// encodeObject writes m with its keys in a stable order: OpenAI's own for
// the keys it has, then the rest sorted.
func encodeObject(m map[string]json.RawMessage) json.RawMessage {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		ri, rj := encodeRank[keys[i]], encodeRank[keys[j]]
		switch {
		case ri != 0 && rj != 0:
			return ri < rj
		case ri != 0 || rj != 0:
			return ri != 0
		}
		return keys[i] < keys[j]
	})
	var o rawjson.Object
	for _, k := range keys {
		o.Set(k, m[k])
	}
	return o.Bytes()
}

func isID(raw json.RawMessage) bool {
	s, ok := stringOf(raw)
	return ok && s != ""
}
