package clienttest

import (
	"fmt"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// recorder is a testing.TB that keeps failures instead of reporting them,
// so the stream checks can be shown to fail on what they must refuse.
type recorder struct {
	testing.TB
	mu     sync.Mutex
	failed []string
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failed = append(r.failed, fmt.Sprintf(format, args...))
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	runtime.Goexit()
}

// failures runs fn against a recorder and returns what it reported.
func failures(t *testing.T, fn func(tb testing.TB)) []string {
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(r)
	}()
	<-done
	return r.failed
}

// TestStreamChecksRefuseWhatClientsReject feeds the stream checks the
// fakes' valid streams, each broken in one way the SDKs do not tolerate
// (per shared/WIRE.md), and expects each to be refused with a message
// naming the fault; the unbroken streams must pass.
func TestStreamChecksRefuseWhatClientsReject(t *testing.T) {
	rd := round{Text: "Hello there.", Calls: []call{{"call_a", "get_time", `{"zone":"CET"}`}, {"call_b", "get_time", `{"zone":"UTC"}`}}, In: 3, Out: 4}
	valid := func(proto string) string {
		return string((&upstream{proto: proto}).stream(rd, "m", 1, true))
	}
	cases := []struct {
		proto, name string
		breakIt     func(string) string
		want        string // a fragment of the expected failure
	}{
		{chat, "valid", nil, ""},
		{chat, "valid with keepalive comments", func(s string) string {
			return strings.Replace(s, "\n\n", "\n\n: ping\n\n", 3) + ": ping\n\n"
		}, ""},
		{chat, "a chunk with another id", func(s string) string {
			return strings.Replace(s, `"id":"chatcmpl-fake1"`, `"id":"chatcmpl-other"`, 3)
		}, "a changed id"},
		{chat, "a tool-call delta without index", func(s string) string {
			return strings.Replace(s, `{"function":{"arguments":"{\"zone\""},"index":0}`, `{"function":{"arguments":"{\"zone\""}}`, 1)
		}, "without index"},
		{chat, "no role in the first chunk", func(s string) string {
			return strings.Replace(s, `"role":"assistant"`, `"role":null`, 1)
		}, "delta.role"},
		{chat, "an event name", func(s string) string { return "event: chunk\n" + s }, "event: line"},
		{chat, "no usage chunk", func(s string) string {
			return regexp.MustCompile(`data: \{"choices":\[\][^\n]*\n\n`).ReplaceAllString(s, "")
		}, "usage chunks"},
		{chat, "no [DONE]", func(s string) string { return strings.TrimSuffix(s, "data: [DONE]\n\n") }, "[DONE]"},
		{chat, "two finish reasons", func(s string) string {
			return strings.Replace(s, `"finish_reason":null`, `"finish_reason":"stop"`, 1)
		}, "finish_reason"},

		{responses, "valid", nil, ""},
		{responses, "valid with keepalive comments", func(s string) string { return strings.Replace(s, "\n\n", "\n\n: ping\n\n", 4) }, ""},
		{responses, "no response.created", func(s string) string {
			return regexp.MustCompile(`(?s)^event: response.created\n[^\n]*\n\n`).ReplaceAllString(s, "")
		}, "response.created"},
		{responses, "a sequence number that goes back", func(s string) string {
			return strings.Replace(s, `"sequence_number":3`, `"sequence_number":1`, 1)
		}, "sequence_number"},
		{responses, "a delta before its item", func(s string) string {
			return regexp.MustCompile(`event: response.output_item.added\n[^\n]*"output_index":0[^\n]*\n\n`).ReplaceAllString(s, "")
		}, "added"},
		{responses, "a frame named after another type", func(s string) string {
			return strings.Replace(s, "event: response.in_progress", "event: response.progress", 1)
		}, "named"},
		{responses, "no response.completed", func(s string) string {
			return regexp.MustCompile(`event: response.completed\n[^\n]*\n\n`).ReplaceAllString(s, "")
		}, "ends with"},

		{messages, "valid", nil, ""},
		{messages, "valid with pings", func(s string) string {
			return strings.Replace(s, "event: content_block_stop", "event: ping\ndata: {\"type\":\"ping\"}\n\nevent: content_block_stop", 2)
		}, ""},
		{messages, "a ping before message_start", func(s string) string {
			return "event: ping\ndata: {\"type\":\"ping\"}\n\n" + s
		}, "before message_start"},
		{messages, "two message_start", func(s string) string {
			first := s[:strings.Index(s, "\n\n")+2]
			return s + first
		}, "message_start"},
		{messages, "an unnamed frame", func(s string) string {
			return strings.Replace(s, "event: content_block_delta\n", "", 1)
		}, "unnamed"},
		{messages, "content in message_start", func(s string) string {
			return strings.Replace(s, `"content":[]`, `"content":[{"type":"text","text":"x"}]`, 1)
		}, "duplicated"},
		{messages, "no input tokens", func(s string) string {
			return strings.Replace(s, `"input_tokens":3`, `"input_tokens":0`, 1)
		}, "input_tokens"},
		{messages, "a block index skipped", func(s string) string {
			return strings.ReplaceAll(s, `"index":2`, `"index":3`)
		}, "count up"},
		{messages, "no message_stop", func(s string) string {
			return regexp.MustCompile(`event: message_stop\n[^\n]*\n\n`).ReplaceAllString(s, "")
		}, "message_stop"},
		{messages, "no output_tokens in message_delta", func(s string) string {
			return strings.Replace(s, `"usage":{"output_tokens":4}`, `"usage":{}`, 1)
		}, "output_tokens"},
	}
	for _, c := range cases {
		t.Run(c.proto+"/"+c.name, func(t *testing.T) {
			s := valid(c.proto)
			if c.breakIt != nil {
				broken := c.breakIt(s)
				if broken == s {
					t.Fatalf("the case does not change the stream:\n%s", s)
				}
				s = broken
			}
			var v visible
			got := failures(t, func(tb testing.TB) { v = checkStream(tb, c.proto, []byte(s), true) })
			if c.want == "" {
				if len(got) > 0 {
					t.Fatalf("a valid stream was refused: %q\n%s", got, s)
				}
				if v.Text != rd.Text || !sameCalls(v.Calls, rd.Calls) || v.Out != rd.Out {
					t.Errorf("the check read %+v from a stream of %+v", v, rd)
				}
				return
			}
			for _, f := range got {
				if strings.Contains(f, c.want) {
					return
				}
			}
			t.Errorf("not refused with %q; failures: %q\n%s", c.want, got, s)
		})
	}
}
