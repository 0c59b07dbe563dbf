package upstream

import (
	"net/http"
	"reflect"
	"testing"

	"github.com/hookhost/hookhost/llm"
)

func TestFeatureHeader(t *testing.T) {
	in := http.Header{
		"Anthropic-Beta":    {"a-1,b-2"},
		"Anthropic-Version": {"2023-06-01"},
		"Openai-Beta":       {"assistants=v2"},
		"Authorization":     {"Bearer k"},
		"X-Api-Key":         {"k"},
		"Cookie":            {"c=1"},
		"Connection":        {"close"},
	}
	for p, want := range map[llm.Protocol]http.Header{
		llm.ProtocolMessages:  {"Anthropic-Beta": {"a-1,b-2"}, "Anthropic-Version": {"2023-06-01"}},
		llm.ProtocolChat:      {"Openai-Beta": {"assistants=v2"}},
		llm.ProtocolResponses: {"Openai-Beta": {"assistants=v2"}},
		"other":               nil,
	} {
		if got := FeatureHeader(p, in); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %v, want %v", p, got, want)
		}
	}
	if got := FeatureHeader(llm.ProtocolMessages, http.Header{"Cookie": {"c"}}); got != nil {
		t.Errorf("no feature header gives %v, want nil", got)
	}
}

func TestWithFeatureHeaders(t *testing.T) {
	base := http.Header{"X-Api-Key": {"own"}, "Anthropic-Version": {"2023-06-01"}, "Anthropic-Beta": {"configured-1, shared-2"}}
	pass := &Passthrough{Header: http.Header{
		"Anthropic-Beta":    {"shared-2,client-3", " client-4 "},
		"Anthropic-Version": {"2024-01-01"},
		"X-Api-Key":         {"client"}, // not a feature header: never sent
	}}
	got := WithFeatureHeaders(llm.ProtocolMessages, base, pass)
	want := http.Header{"X-Api-Key": {"own"}, "Anthropic-Version": {"2024-01-01"}, "Anthropic-Beta": {"configured-1,shared-2,client-3,client-4"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v\nwant %v", got, want)
	}
	if base.Get("Anthropic-Beta") != "configured-1, shared-2" || base.Get("Anthropic-Version") != "2023-06-01" {
		t.Errorf("the provider's own header was changed: %v", base)
	}
	for _, p := range []*Passthrough{nil, {}, {Header: http.Header{"Cookie": {"c"}}}} {
		if got := WithFeatureHeaders(llm.ProtocolMessages, base, p); !reflect.DeepEqual(got, base) {
			t.Errorf("pass %v: %v, want the provider's header as it is", p, got)
		}
	}
}
