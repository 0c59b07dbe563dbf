package chat_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// streamed is what a client accumulates from a checked stream.
type streamed struct {
	ID, Model    string
	Created      int64
	Content      string
	Calls        []streamedCall
	Finish       string
	Usage        map[string]int
	Error        map[string]any
	Pings        int
	DataFrames   int
	UsageChunks  int
	FirstRoleSet bool
}

type streamedCall struct {
	ID, Name, Arguments string
}

// checkStream parses a Chat Completions event stream and fails the test
// on any breach of the rules the official clients rely on (WIRE.md):
// no event names, JSON payloads but the final [DONE], one id/created/model,
// the role on the first choice chunk, tool-call indices 0-based and stable
// with id/type/name on the first delta of each, exactly one finish_reason
// and nothing for the choice after it, and with include_usage one
// choices:[] chunk with usage right before [DONE] and "usage": null on
// every other chunk. A stream that failed ends with one error payload and
// no [DONE].
func checkStream(t testing.TB, raw []byte, includeUsage bool) streamed {
	t.Helper()
	var out streamed
	if !bytes.HasSuffix(raw, []byte("\n\n")) {
		t.Errorf("stream does not end with a blank line: %q", raw)
	}
	frames := strings.Split(strings.TrimSuffix(string(raw), "\n\n"), "\n\n")
	done := false
	pos := map[int]int{} // tool call index → position in out.Calls
	for n, frame := range frames {
		var data []string
		for _, line := range strings.Split(frame, "\n") {
			switch {
			case strings.HasPrefix(line, ":"):
				out.Pings++
			case strings.HasPrefix(line, "data: "):
				data = append(data, strings.TrimPrefix(line, "data: "))
			default:
				t.Errorf("frame %d: line %q is neither data nor a comment", n, line)
			}
		}
		if len(data) == 0 {
			continue
		}
		if len(data) > 1 {
			t.Errorf("frame %d has %d data lines", n, len(data))
		}
		if done {
			t.Errorf("frame %d after [DONE]: %q", n, frame)
		}
		if out.Error != nil {
			t.Errorf("frame %d after the error: %q", n, frame)
		}
		payload := data[0]
		if payload == "[DONE]" {
			done = true
			continue
		}
		out.DataFrames++
		var c struct {
			ID      string `json:"id"`
			Object  string `json:"object"`
			Created int64  `json:"created"`
			Model   string `json:"model"`
			Choices []struct {
				Index int `json:"index"`
				Delta struct {
					Role      *string `json:"role"`
					Content   *string `json:"content"`
					ToolCalls []struct {
						Index    *int    `json:"index"`
						ID       *string `json:"id"`
						Type     *string `json:"type"`
						Function struct {
							Name      *string `json:"name"`
							Arguments *string `json:"arguments"`
						} `json:"function"`
					} `json:"tool_calls"`
				} `json:"delta"`
				FinishReason *string `json:"finish_reason"`
			} `json:"choices"`
			Error json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal([]byte(payload), &c); err != nil {
			t.Fatalf("frame %d is not JSON: %v: %s", n, err, payload)
		}
		if len(c.Error) > 0 {
			if err := json.Unmarshal(c.Error, &out.Error); err != nil || out.Error["message"] == nil || out.Error["type"] == nil {
				t.Errorf("error payload %s lacks message or type", payload)
			}
			continue
		}
		var top map[string]json.RawMessage
		_ = json.Unmarshal([]byte(payload), &top)
		if out.ID == "" {
			out.ID, out.Created, out.Model = c.ID, c.Created, c.Model
			if !strings.HasPrefix(c.ID, "chatcmpl-") || c.Created == 0 {
				t.Errorf("first chunk's id %q / created %d", c.ID, c.Created)
			}
		} else if c.ID != out.ID || c.Created != out.Created || c.Model != out.Model {
			t.Errorf("frame %d changes id/created/model to %s/%d/%s from %s/%d/%s", n, c.ID, c.Created, c.Model, out.ID, out.Created, out.Model)
		}
		if c.Object != "chat.completion.chunk" {
			t.Errorf("frame %d object %q", n, c.Object)
		}
		u, hasUsage := top["usage"]
		if len(c.Choices) == 0 {
			out.UsageChunks++
			if !includeUsage || !hasUsage || string(u) == "null" {
				t.Errorf("frame %d has no choices and no usage: %s", n, payload)
			}
			if err := json.Unmarshal(u, &out.Usage); err != nil {
				t.Errorf("usage %s: %v", u, err)
			}
			continue
		}
		switch {
		case includeUsage && string(u) != "null":
			t.Errorf("frame %d: usage %s, want null on every chunk but the last", n, u)
		case !includeUsage && hasUsage:
			t.Errorf("frame %d carries usage though the client did not ask: %s", n, payload)
		}
		if out.UsageChunks > 0 {
			t.Errorf("frame %d: a choice chunk after the usage chunk", n)
		}
		if len(c.Choices) != 1 || c.Choices[0].Index != 0 {
			t.Errorf("frame %d: choices %s, want one with index 0", n, top["choices"])
			continue
		}
		ch := c.Choices[0]
		if out.Finish != "" {
			t.Errorf("frame %d: choice chunk after finish_reason %q", n, out.Finish)
		}
		if !out.FirstRoleSet {
			if ch.Delta.Role == nil || *ch.Delta.Role != "assistant" {
				t.Errorf("first choice chunk has no assistant role: %s", payload)
			}
			out.FirstRoleSet = true
		}
		if ch.Delta.Content != nil {
			out.Content += *ch.Delta.Content
		}
		for _, tc := range ch.Delta.ToolCalls {
			if tc.Index == nil {
				t.Errorf("frame %d: tool call delta without index", n)
				continue
			}
			i := *tc.Index
			at, seen := pos[i]
			if !seen {
				if i != len(out.Calls) {
					t.Errorf("frame %d: new tool call index %d, want %d", n, i, len(out.Calls))
				}
				if tc.ID == nil || *tc.ID == "" || tc.Type == nil || *tc.Type != "function" || tc.Function.Name == nil || *tc.Function.Name == "" {
					t.Errorf("frame %d: first delta of tool call %d lacks id, type or name", n, i)
				}
				at = len(out.Calls)
				pos[i] = at
				out.Calls = append(out.Calls, streamedCall{})
				if tc.ID != nil {
					out.Calls[at].ID = *tc.ID
				}
				if tc.Function.Name != nil {
					out.Calls[at].Name = *tc.Function.Name
				}
			} else if tc.ID != nil || tc.Type != nil || tc.Function.Name != nil {
				t.Errorf("frame %d: later delta of tool call %d repeats id, type or name", n, i)
			}
			if tc.Function.Arguments != nil {
				out.Calls[at].Arguments += *tc.Function.Arguments
			}
		}
		if ch.FinishReason != nil {
			out.Finish = *ch.FinishReason
		}
	}
	if out.Error != nil {
		if done {
			t.Error("a failed stream ends with [DONE]")
		}
		return out
	}
	if !done {
		t.Error("stream does not end with [DONE]")
	}
	if out.Finish == "" {
		t.Error("no finish_reason")
	}
	if includeUsage && out.UsageChunks != 1 {
		t.Errorf("%d usage chunks, want exactly 1", out.UsageChunks)
	}
	return out
}

// probe records the failures checkStream reports instead of failing the
// test, so the checker itself can be checked.
type probe struct {
	testing.TB
	failures []string
}

type probeStop struct{}

func (p *probe) Helper() {}
func (p *probe) Errorf(format string, args ...any) {
	p.failures = append(p.failures, format)
}
func (p *probe) Error(args ...any) { p.failures = append(p.failures, "error") }
func (p *probe) Fatalf(format string, args ...any) {
	p.failures = append(p.failures, format)
	panic(probeStop{})
}

func checkFails(t *testing.T, raw string, includeUsage bool) []string {
	t.Helper()
	p := &probe{TB: t}
	func() {
		defer func() {
			if r := recover(); r != nil {
				if _, ok := r.(probeStop); !ok {
					panic(r)
				}
			}
		}()
		checkStream(p, []byte(raw), includeUsage)
	}()
	return p.failures
}

func TestCheckerCatchesBreaches(t *testing.T) {
	chunk := func(id, delta, finish, usage string) string {
		return `data: {"id":"` + id + `","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":` + delta + `,"finish_reason":` + finish + `}]` + usage + "}\n\n"
	}
	role := `{"role":"assistant","content":""}`
	good := chunk("chatcmpl-1", role, "null", `,"usage":null`) + chunk("chatcmpl-1", `{}`, `"stop"`, `,"usage":null`) +
		`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}` + "\n\n" +
		"data: [DONE]\n\n"
	if f := checkFails(t, good, true); len(f) != 0 {
		t.Fatalf("a valid stream fails the checker: %q", f)
	}
	bad := map[string]string{
		"no [DONE]":          strings.TrimSuffix(good, "data: [DONE]\n\n"),
		"id changes":         strings.Replace(good, chunk("chatcmpl-1", `{}`, `"stop"`, `,"usage":null`), chunk("chatcmpl-2", `{}`, `"stop"`, `,"usage":null`), 1),
		"no role first":      strings.Replace(good, role, `{"content":""}`, 1),
		"no usage chunk":     chunk("chatcmpl-1", role, "null", `,"usage":null`) + chunk("chatcmpl-1", `{}`, `"stop"`, `,"usage":null`) + "data: [DONE]\n\n",
		"usage not null":     strings.Replace(good, `"finish_reason":null}],"usage":null`, `"finish_reason":null}],"usage":{"prompt_tokens":1}`, 1),
		"no finish":          strings.Replace(good, `"stop"`, `null`, 1),
		"named event":        "event: chunk\n" + good,
		"not JSON":           "data: {oops\n\n" + good,
		"tool call no index": chunk("chatcmpl-1", `{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":""}}]}`, "null", `,"usage":null`) + strings.SplitN(good, "\n\n", 2)[1],
		"tool call index 1":  chunk("chatcmpl-1", `{"role":"assistant","tool_calls":[{"index":1,"id":"c","type":"function","function":{"name":"f","arguments":""}}]}`, "null", `,"usage":null`) + strings.SplitN(good, "\n\n", 2)[1],
		"tool call no id":    chunk("chatcmpl-1", `{"role":"assistant","tool_calls":[{"index":0,"type":"function","function":{"name":"f","arguments":""}}]}`, "null", `,"usage":null`) + strings.SplitN(good, "\n\n", 2)[1],
		"chunk after finish": good[:strings.Index(good, `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[]`)] + chunk("chatcmpl-1", `{"content":"x"}`, "null", `,"usage":null`) + good[strings.Index(good, `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[]`):],
		"frame after [DONE]": good + chunk("chatcmpl-1", `{}`, "null", `,"usage":null`),
	}
	for name, raw := range bad {
		if f := checkFails(t, raw, true); len(f) == 0 {
			t.Errorf("%s: the checker passed\n%s", name, raw)
		}
	}
	if f := checkFails(t, good, false); len(f) == 0 {
		t.Error("usage without include_usage passed the checker")
	}
}
