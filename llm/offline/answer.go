package offline

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/hookhost/hookhost/llm"
)

const maxResult = 2000

// fromResults turns the tool messages at the given indexes into one answer.
// hedge reports whether the answer is a deliberate hedge.
func fromResults(msgs []llm.Message, results []int, large bool) (text string, hedge bool) {
	sentences := make([]string, 0, len(results))
	failures := 0
	for _, i := range results {
		s, failed := describeResult(toolName(msgs, i), msgs[i])
		if failed {
			failures++
		}
		sentences = append(sentences, s)
	}
	text = strings.Join(sentences, " ")
	if !large && failures == len(results) {
		// Every sentence starts "The tool", which reads on after the dash.
		return "I'm not sure — t" + strings.TrimPrefix(text, "T"), true
	}
	return text, false
}

// toolName names the tool behind the result at index i.
func toolName(msgs []llm.Message, i int) string {
	if n := msgs[i].ToolName; n != "" {
		return n
	}
	if id := msgs[i].ToolCallID; id != "" {
		for j := i - 1; j >= 0; j-- {
			for _, c := range msgs[j].ToolCalls {
				if c.ID == id && c.Name != "" {
					return c.Name
				}
			}
		}
	}
	return "tool"
}

func describeResult(name string, m llm.Message) (string, bool) {
	content := strings.TrimSpace(m.Content)
	var obj map[string]json.RawMessage
	isObj := json.Unmarshal([]byte(content), &obj) == nil && obj != nil

	if isObj {
		if msg, ok := errorMessage(obj); ok {
			return failed(name, msg), true
		}
	}
	if m.IsError {
		return failed(name, content), true
	}
	if isObj {
		if len(obj) == 0 {
			return "From " + name + ": (no data).", false
		}
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		pairs := make([]string, len(keys))
		for i, k := range keys {
			pairs[i] = k + ": " + valueText(obj[k])
		}
		return sentence("From " + name + ": " + clip(strings.Join(pairs, "; "))), false
	}
	if json.Valid([]byte(content)) {
		content = valueText(json.RawMessage(content))
	}
	if content == "" {
		return "From " + name + ": (no data).", false
	}
	return sentence("From " + name + ": " + clip(content)), false
}

// errorMessage reports the "error" member of a result object, the shape
// tools and plugins use to report a failure the model can recover from.
func errorMessage(obj map[string]json.RawMessage) (string, bool) {
	raw, ok := obj["error"]
	if !ok {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, s != ""
	}
	var inner struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(raw, &inner) == nil && inner.Message != "" {
		return inner.Message, true
	}
	v := valueText(raw)
	return v, v != "null"
}

func failed(name, msg string) string {
	msg = strings.TrimRight(strings.TrimSpace(msg), ".")
	if msg == "" {
		msg = "unknown error"
	}
	return "The tool " + name + " failed: " + clip(msg) + "."
}

// valueText renders a JSON value for reading: strings without quotes,
// everything else as compact JSON.
func valueText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

func clip(s string) string {
	if utf8.RuneCountInString(s) <= maxResult {
		return s
	}
	return string([]rune(s)[:maxResult]) + "…"
}

func sentence(s string) string {
	if strings.HasSuffix(s, ".") || strings.HasSuffix(s, "!") || strings.HasSuffix(s, "?") || strings.HasSuffix(s, "…") {
		return s
	}
	return s + "."
}
