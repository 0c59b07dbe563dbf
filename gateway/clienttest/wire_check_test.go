package clienttest

import (
	"testing"

	"github.com/hookhost/hookhost/internal/streamcheck"
)

// TestFakeUpstreamStreamsKeepTheRules holds the fake providers' own streams
// to the rules the SDKs rely on, so what the gateway is tested against is
// what real providers send, and checks they carry the round they were
// given.
func TestFakeUpstreamStreamsKeepTheRules(t *testing.T) {
	rd := round{Text: "Hello there.", Calls: []call{{"call_a", "get_time", `{"zone":"CET"}`}, {"call_b", "get_time", `{"zone":"UTC"}`}}, In: 3, Out: 4}
	for _, proto := range []string{chat, responses, messages} {
		for _, includeUsage := range []bool{true, false} {
			if proto != chat && !includeUsage {
				continue
			}
			raw := (&upstream{proto: proto}).stream(rd, "m", 1, includeUsage)
			var v visible
			var err error
			switch proto {
			case chat:
				var s *streamcheck.ChatStream
				s, err = streamcheck.Chat(raw, includeUsage)
				v = visible{Text: s.Text, Calls: calls(s.Calls), Out: s.OutputTokens()}
			case responses:
				var s *streamcheck.ResponsesStream
				s, err = streamcheck.Responses(raw)
				v = visible{Text: s.Text, Calls: calls(s.Calls), Out: s.OutputTokens}
			case messages:
				var s *streamcheck.MessagesStream
				s, err = streamcheck.Messages(raw)
				v = visible{Text: s.Text, Calls: calls(s.Calls), Out: s.OutputTokens}
			}
			if err != nil {
				t.Errorf("%s (include_usage %v): the fake's stream breaks the rules: %v\n%s", proto, includeUsage, err, raw)
			}
			wantOut := rd.Out
			if !includeUsage {
				wantOut = 0
			}
			if v.Text != rd.Text || !sameCalls(v.Calls, rd.Calls) || v.Out != wantOut {
				t.Errorf("%s (include_usage %v): the fake streamed %+v for %+v", proto, includeUsage, v, rd)
			}
		}
	}
}
